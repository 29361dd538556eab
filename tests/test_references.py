"""Every dotted ``chunklab_core.…`` name written in the code, docs and notebook sources resolves.

After the move into stage subpackages, a stale ``chunklab_core.answer_study`` in a docstring,
an error message, the README or a post's prose would send a reader to a module that does not
exist. This test reads every tracked Python file, the README, the Makefile, ``.ci/run``,
``examples/`` and ``notebooks/src/*.ipynb`` (not the executed posts, which ``make`` rewrites),
and imports each dotted package name it finds: a module, or an attribute of the longest
importable prefix. Package file paths written out must exist.
"""

from __future__ import annotations

import importlib
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOTTED = re.compile(r"(?<![\w/.])chunklab_core(?:\.[A-Za-z_][A-Za-z_0-9]*)+")
FILE_PATH = re.compile(r"(?<![\w.])chunklab_core/[\w/]+\.py")
# Names that are made up on purpose, each with where and why.
FICTIONAL = {
    "chunklab_core.retrieval.example": "test_layout_imports: a made-up module for the import checker's own test",
    "chunklab_core.answer_study": "this file: the stale name the resolver must reject",
    "chunklab_core.stats.bootstrap.no_such_function": "this file: a missing attribute the resolver must reject",
    "chunklab_core.retrieval.retrievers.bm25_tfidf_first": "test_proof_by_addition: dropped into a copy of the package only",
    "chunklab_core.retrieval.retrievers.broken": "test_proof_by_addition: a broken module dropped into a copy only",
    "chunklab_core.reports.post09": "test_posts_registry: the post 09 a scratch copy registers",
}


def tracked_texts() -> list[Path]:
    files = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    keep = []
    for name in files:
        path = ROOT / name
        if name.startswith("notebooks/") and not name.startswith("notebooks/src/"):
            continue
        if path.suffix in {".py", ".md", ".ipynb", ".yaml", ".toml"} or name in {"Makefile", ".ci/run"}:
            keep.append(path)
    return keep


def resolves(dotted: str) -> bool:
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attribute in parts[cut:]:
            if not hasattr(obj, attribute):
                return False
            obj = getattr(obj, attribute)
        return True
    return False


def test_the_resolver_tells_good_from_stale():
    assert resolves("chunklab_core.evaluation.measures.column")
    assert resolves("chunklab_core.stats")
    assert not resolves("chunklab_core.answer_study")
    assert not resolves("chunklab_core.stats.bootstrap.no_such_function")


def test_every_dotted_package_name_resolves():
    stale = []
    for path in tracked_texts():
        text = path.read_text(encoding="utf-8", errors="replace")
        for match in sorted(set(DOTTED.findall(text))):
            name = match.rstrip(".")
            if name not in FICTIONAL and not resolves(name):
                stale.append(f"{path.relative_to(ROOT)}: {name}")
    assert not stale, "names that do not resolve:\n" + "\n".join(stale)


def test_every_package_file_path_exists():
    missing = []
    for path in tracked_texts():
        text = path.read_text(encoding="utf-8", errors="replace")
        for match in sorted(set(FILE_PATH.findall(text))):
            if not (ROOT / match).is_file():
                missing.append(f"{path.relative_to(ROOT)}: {match}")
    assert not missing, "paths that do not exist:\n" + "\n".join(missing)
