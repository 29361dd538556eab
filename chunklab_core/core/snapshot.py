"""Noticing writes into folders that must not change: file snapshots and their difference.

Handles: :func:`snapshot` (every file under some folders, recursively, hidden ones included:
its path, size and sha256; a missing folder holds no file), :func:`compare` (the files added,
changed and removed between two snapshots) and :func:`describe` (the files named, one a line).
The notebook runner (:mod:`chunklab_core.reports.notebook_run`) snapshots
``paths.IRREPLACEABLE_DIRS`` before and after executing a notebook, so a notebook that writes
into the recorded LLM calls or the graded sheets fails.

Not handled: telling who wrote a file (a person grading a sheet while a notebook runs is
reported like the notebook), undoing a write (git has the committed version: ``git status
data/records data/audit``), permission bits and timestamps (only the content counts).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, NamedTuple

from chunklab_core.core.hashing import file_sha256


class FileState(NamedTuple):
    """What a snapshot keeps of one file."""

    size: int
    sha256: str


def snapshot(folders: Iterable[str | os.PathLike]) -> dict[Path, FileState]:
    """``{absolute file path: (size, sha256)}`` for every file under ``folders``."""
    state: dict[Path, FileState] = {}
    for folder in folders:
        folder = Path(folder).resolve()
        if not folder.is_dir():
            continue
        for root, _, files in os.walk(folder):
            for name in files:
                path = Path(root) / name
                if path.is_file():
                    state[path] = FileState(path.stat().st_size, file_sha256(path))
    return state


@dataclass(frozen=True)
class Changes:
    """Files added, changed (size or sha256) and removed between two snapshots, each sorted."""

    added: tuple[Path, ...] = ()
    changed: tuple[Path, ...] = ()
    removed: tuple[Path, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.added or self.changed or self.removed)


def compare(before: dict[Path, FileState], after: dict[Path, FileState]) -> Changes:
    """What differs from ``before`` to ``after`` (two :func:`snapshot` results)."""
    return Changes(added=tuple(sorted(after.keys() - before.keys())),
                   changed=tuple(sorted(p for p in before.keys() & after.keys() if before[p] != after[p])),
                   removed=tuple(sorted(before.keys() - after.keys())))


def describe(changes: Changes) -> str:
    """One line per file: ``added PATH``, ``changed PATH``, ``removed PATH``."""
    return "\n".join(f"  {word} {path}" for word, paths in
                     (("added", changes.added), ("changed", changes.changed), ("removed", changes.removed))
                     for path in paths)
