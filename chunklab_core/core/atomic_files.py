"""Crash-safe file replacement, shared by every writer whose file must never be left torn.

Handles: :func:`atomic_write` (a callback writes a temporary file in the target's folder; it
is fsynced, renamed over the target with ``os.replace`` -- atomic on POSIX and Windows --
and the folder is fsynced so the rename itself is durable) and :func:`atomic_write_text`.
A process killed mid-write leaves the old file intact and at most a hidden
``.NAME.*<suffix>`` temporary file; any other failure removes the temporary file.
Not handled: appends (``llm.records`` appends with one ``os.write`` + ``fsync`` per record),
verify-then-rename flows that need the temporary file after writing (``llm.models``).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Callable


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


def atomic_write(target: str | os.PathLike, write: Callable[[Path], None], suffix: str = ".tmp",
                 mode: int | None = None) -> None:
    """Call ``write(tmp_path)``, then durably replace ``target`` with what it wrote.

    The result gets permission bits ``mode`` (default ``0o644``, an ordinary readable file);
    pass the old file's mode to keep e.g. a private ``0o600`` sheet private.
    """
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=suffix, dir=target.parent)
    os.close(fd)
    tmp = Path(name)
    try:
        write(tmp)
        os.chmod(tmp, 0o644 if mode is None else mode)  # mkstemp creates 0600
        _fsync_path(tmp, os.O_RDONLY)
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _fsync_path(target.parent, os.O_RDONLY)


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    """Replace ``path`` with ``text`` (UTF-8, newlines written as given) atomically."""
    atomic_write(path, lambda tmp: tmp.write_text(text, encoding="utf-8", newline=""))
