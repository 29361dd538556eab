"""Crash-safe file replacement, shared by every writer whose file must never be left torn.

Handles: :func:`atomic_write` (a callback writes a temporary file in the target's folder; it
is fsynced, renamed over the target with ``os.replace`` -- atomic on POSIX and Windows --
and the folder is fsynced so the rename itself is durable) and :func:`atomic_write_text`;
:func:`replace_folder`, the same for a whole folder (a callback fills a temporary folder
beside the target; an existing target is renamed aside, the new folder renamed in, the old one
removed; a failure removes the temporary folder and leaves the target as it was).
A process killed mid-write leaves the old file intact and at most a hidden
``.NAME.*<suffix>`` temporary file; any other failure removes the temporary file.
Permissions: a new file gets what ``open()`` would give it (``0o666`` less the umask, so a
``umask 077`` keeps an audit key private); a replaced file keeps its mode. A target that is a
symbolic link is written through: its final target is replaced, the link stays a link.
Not handled: appends (``llm.records`` appends with one ``os.write`` + ``fsync`` per record),
verify-then-rename flows that need the temporary file after writing (``llm.models``).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Callable, TypeVar

T = TypeVar("T")


def _fsync_path(path: Path, flags: int) -> None:
    try:
        fd = os.open(path, flags)
    except OSError:  # folders cannot be opened on every platform
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def current_umask() -> int:
    """The process's umask, read without changing it where ``/proc`` tells it (Linux)."""
    try:
        with open("/proc/self/status", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    old = os.umask(0o022)  # elsewhere: set and restore (not thread-safe, but brief)
    os.umask(old)
    return old


def resolved_target(target: str | os.PathLike) -> Path:
    """``target``, or the file a symbolic link (chain) at ``target`` finally points to."""
    target = Path(target)
    return Path(os.path.realpath(target)) if target.is_symlink() else target


def file_mode_for(target: Path) -> int:
    """Permission bits for a write to ``target``: its own if it exists, else 0o666 less the umask."""
    try:
        return target.stat().st_mode & 0o7777
    except FileNotFoundError:
        return 0o666 & ~current_umask()


def atomic_write(target: str | os.PathLike, write: Callable[[Path], None], suffix: str = ".tmp",
                 mode: int | None = None) -> None:
    """Call ``write(tmp_path)``, then durably replace ``target`` with what it wrote.

    The result gets permission bits ``mode``; by default (None) those of the file it replaces,
    or, for a new file, ``0o666 & ~umask`` as ``open()`` would give. A symbolic link at
    ``target`` is followed: the file it points to is replaced, the link kept.
    """
    target = resolved_target(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    if mode is None:
        mode = file_mode_for(target)
    fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=suffix, dir=target.parent)
    os.close(fd)
    tmp = Path(name)
    try:
        write(tmp)
        os.chmod(tmp, mode)  # mkstemp creates 0600
        _fsync_path(tmp, os.O_RDONLY)
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _fsync_path(target.parent, os.O_RDONLY)


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    """Replace ``path`` with ``text`` (UTF-8, newlines written as given) atomically."""
    atomic_write(path, lambda tmp: tmp.write_text(text, encoding="utf-8", newline=""))


def replace_folder(target: str | os.PathLike, fill: Callable[[Path], T], tmp_tag: str = "tmp-",
                   old_tag: str = "old-") -> T:
    """Call ``fill(work)`` on a new hidden folder ``.NAME.<tmp_tag>*`` beside ``target``, then swap it in.

    An existing ``target`` is first renamed into a hidden ``.NAME.<old_tag>*`` folder, which is
    removed once the new folder is in place. Any failure of ``fill`` (Ctrl-C included) removes
    the work folder and re-raises, ``target`` untouched. Returns what ``fill`` returned. Between
    the two renames ``target`` is briefly absent (no folder rename over a folder is atomic).
    """
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{target.name}.{tmp_tag}", dir=target.parent))
    try:
        result = fill(work)
        old = None
        if target.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{target.name}.{old_tag}", dir=target.parent))
            os.replace(target, old / "previous")
        os.replace(work, target)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    return result
