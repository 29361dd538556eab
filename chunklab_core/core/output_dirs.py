"""The one guard of every output folder a command replaces or writes into (issue 41).

Handles: :func:`output_folder_problem`, the own-documents marker rule made general. A command
that writes a folder (``chunklab-own run``, ``chunklab-own answers``, ``chunklab-evaluate``)
names its marker file (``.chunklab-own``, ``.chunklab-evaluate``, ...); the folder given as
``--out`` is refused, with the reason and the fix, when it

- exists and is not a folder;
- is an input of the command, or holds one (``--out`` pointed at the records it scores);
- is the current folder or a parent of it (replacing it would delete where you stand);
- is, holds or lies inside an irreplaceable folder (:data:`chunklab_core.core.paths.IRREPLACEABLE_DIRS`);
- holds files tracked by git (a user's run never writes a tracked file);
- is non-empty and holds no marker, or holds files the marker does not list (files of yours).

:func:`write_marker` writes the marker: a header line, then one written file per line.
:func:`require_output_folder` raises :class:`OutputFolderRefused` with that problem (every
command's edge, :func:`chunklab_core.core.cli_errors.user_errors`, prints it and exits 2). The
commands that write a folder and their markers: ``chunklab-own run`` / ``answers``,
``chunklab-evaluate``, ``chunklab-trec``, ``chunklab-synthetic-audit``, ``make site``
(``reports.website``, the lab's data included) and ``scripts/check_site.py --screenshots``
(``tests/test_faults_round4_outputs`` walks every one).

Not handled: writing the folder (each command's own all-or-nothing swap), folders under a
command's control only (caches).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Iterable

from chunklab_core.core import paths


class OutputFolderRefused(ValueError):
    """An output folder a command will not write (the message names it, the reason and the fix)."""


def tracked_files(folder: Path) -> list[str]:
    """Files under ``folder`` tracked by the git repository around it (none outside a repository)."""
    folder = Path(folder)
    anchor = folder if folder.is_dir() else folder.parent
    while not anchor.exists() and anchor != anchor.parent:
        anchor = anchor.parent
    try:
        result = subprocess.run(["git", "-C", str(anchor), "ls-files", "--", str(folder.resolve())],
                                capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return []
    return result.stdout.split() if result.returncode == 0 else []


def written_files(folder: Path, marker: str) -> list[str]:
    """Every file under ``folder``, relative, sorted (what the marker lists), the marker excepted."""
    return sorted(str(p.relative_to(folder)) for p in Path(folder).rglob("*") if not p.is_dir() and p.name != marker)


def write_marker(folder: Path, marker: str, command: str) -> None:
    """The marker of a finished run of ``command``: a header line, then one written file per line."""
    files = written_files(folder, marker)
    (Path(folder) / marker).write_text(f"output of {command}; replaced by the next run into this folder:\n"
                                       + "".join(f"{name}\n" for name in files), encoding="utf-8")


def foreign_files(out: Path, marker: str, append_only: bool = False) -> list[str]:
    """Files in ``out`` that no earlier run wrote (all of them when there is no marker).

    ``append_only``: the marker is a header only and the command owns the whole folder (a
    folder a command appends to, such as ``chunklab-own answers``' records): nothing is foreign.
    """
    try:
        lines = (Path(out) / marker).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return written_files(out, marker)
    if append_only:
        return []
    listed = set(lines[1:])
    return [name for name in written_files(out, marker) if name not in listed]


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def output_folder_problem(out: str | os.PathLike, marker: str, *, inputs: Iterable[str | os.PathLike | None] = (),
                          option: str = "--out", append_only: bool = False) -> str | None:
    """A problem with ``out`` as a command's output folder (the module's rules), or ``None``."""
    given = Path(out)
    out = given.resolve()
    fix = f"choose another {option}"
    if out.exists() and not out.is_dir():
        return f"{given}: exists and is not a folder; {fix}"
    cwd = Path.cwd().resolve()
    if _inside(cwd, out):
        return (f"{given}: is the current folder or a parent of it; replacing it would delete the folder you "
                f"run from. {fix[0].upper() + fix[1:]} (a new folder, e.g. {option} results)")
    for folder in paths.IRREPLACEABLE_DIRS:
        folder = Path(folder).resolve()
        if _inside(out, folder) or _inside(folder, out):
            return (f"{given}: is or holds the irreplaceable folder {folder} (recorded calls, runs or graded "
                    f"sheets that no command can redo); {fix}")
    if tracked_files(out):
        return f"{given}: holds files tracked by git; choose an output folder outside the repository's tracked files"
    for item in inputs:
        if item is None:
            continue
        item = Path(item).resolve()
        if _inside(item, out):
            return (f"{given}: holds the input {item}; replacing the folder would delete it. Choose an {option} "
                    "outside your inputs")
    if out.is_dir() and any(out.iterdir()):
        if not (out / marker).is_file():
            return (f"{given}: a non-empty folder that is not the output of an earlier run (no {marker} marker); "
                    f"a new run would replace it and delete its files. {fix[0].upper() + fix[1:]}")
        foreign = foreign_files(out, marker, append_only)
        if foreign:
            shown = ", ".join(foreign[:10]) + (f" and {len(foreign) - 10} more" if len(foreign) > 10 else "")
            return (f"{given}: holds file(s) that no earlier run wrote ({shown}); a new run would replace the "
                    f"folder and delete them. Move them out, or {fix}")
    return None


def require_output_folder(out: str | os.PathLike, marker: str, *, inputs: Iterable[str | os.PathLike | None] = (),
                          option: str = "--out", append_only: bool = False) -> None:
    """Raise :class:`OutputFolderRefused` when :func:`output_folder_problem` finds a problem with ``out``."""
    problem = output_folder_problem(out, marker, inputs=inputs, option=option, append_only=append_only)
    if problem:
        raise OutputFolderRefused(problem)
