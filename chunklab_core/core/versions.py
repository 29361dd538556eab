"""The package versions a notebook ran with, printed in its first code cell.

Handles: installed versions (:func:`package_versions`), and the versions that produced the
recorded LLM calls a post replays (:func:`recorded_versions`, read from each record's ``runtime``),
so a post that only replays records reports the version that made them whether or not the
package is installed on the machine re-executing it. Not handled: checking the records
(``chunklab_core.llm.record_schema`` does).
"""

from __future__ import annotations

import json
import platform
from importlib import metadata
from pathlib import Path

import pandas as pd

DEFAULT_PACKAGES = (
    "chunklab_core", "numpy", "pandas", "scipy", "scikit-learn", "matplotlib", "tiktoken",
    "rapidfuzz", "sentence-transformers", "torch", "papermill",
)


# package name -> the key of a record's ``runtime`` that holds the version it ran with
RECORDED_RUNTIME_KEYS = {"llama-cpp-python": "llama_cpp"}


def recorded_versions(package: str, folder: Path | None = None) -> list[str]:
    """The distinct versions of ``package`` that produced the recorded calls in ``folder`` (sorted).

    Reads ``runtime[<key>]`` of every record of every ``*.jsonl`` file (the key from
    :data:`RECORDED_RUNTIME_KEYS`); records without it are skipped. ``folder`` defaults to
    ``data/records``.
    """
    from chunklab_core.core import paths

    key = RECORDED_RUNTIME_KEYS[package]
    found = set()
    for path in sorted(Path(folder or paths.RECORDS_DIR).glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if f'"{key}"' not in line:
                continue
            runtime = json.loads(line).get("runtime") or {}
            if runtime.get(key):
                found.add(str(runtime[key]))
    return sorted(found)


def package_versions(packages=DEFAULT_PACKAGES, recorded=(), records_folder: Path | None = None) -> pd.DataFrame:
    """One row per package with its installed version ("not installed" when absent).

    Packages in ``recorded`` are reported by the versions that made the recorded calls
    (:func:`recorded_versions`, e.g. "0.3.36 (recorded calls)"), not by what is installed: a
    replay reproduces the committed notebook on a machine without the package.
    """
    rows = [{"package": "python", "version": platform.python_version()}]
    for name in packages:
        try:
            version = metadata.version(name)
        except metadata.PackageNotFoundError:
            version = "not installed"
        rows.append({"package": name, "version": version})
    for name in recorded:
        versions = recorded_versions(name, records_folder)
        rows.append({"package": name, "version": (", ".join(versions) + " (recorded calls)") if versions
                     else "no recorded calls"})
    return pd.DataFrame(rows).set_index("package").T
