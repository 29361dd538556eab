"""A grading sheet on disk, read and saved without losing anything a person or program put there.

Handles, for the terminal grader (:mod:`chunklab_core.audit.terminal_grader`) and anything else that edits a
sheet in place:

* **Format kept**: a UTF-8 byte-order mark, the line ending (``\\r\\n`` as Excel writes it, or
  ``\\n``) and the file mode (e.g. ``0600``) are read and written back as they were.
* **Unknown cells kept**: columns the program does not know (another tool's, a person's) are
  ordinary fields and round-trip; cells beyond the header (a note typed in an unnamed column
  of one row) are kept per row, in place; a short row is not padded unless a cell past its
  end is filled.
* **No lost update**: :meth:`SheetFile.save` refuses (:class:`SheetChanged`) when the file
  changed on disk since it was read -- compared by modification time (ns), size and sha256 of
  the bytes -- instead of overwriting what a spreadsheet or another program saved.
* **One grader at a time**: :class:`SheetLock`, a ``<sheet>.lock`` file created exclusively
  (``O_CREAT | O_EXCL``) that names the holder (pid, host, user, start time). A lock whose
  holder process is gone (same host, pid not running: a ``kill -9``, a closed laptop lid) is
  cleared with a message; a live holder, or one on another host that cannot be checked, is
  refused with a message saying who holds it and how to clear it by hand.

* **Refused before any work** (:func:`sheet_access_problem`, :class:`SheetUnreadable`): a
  missing sheet, a read-only one (it would be replaced anyway by a rename), a folder where the
  lock and the temporary file cannot be written, a sheet that is not UTF-8 (a Windows-1252
  "CSV" from an older Excel: the message says how to convert it) and a header that names a
  column twice (one of the two columns' text would be lost on the first save).
* **Symbolic links**: a sheet reached through a link is locked and saved at the link's
  target (the link stays a link, the real file gets the grades).

Saving goes through :func:`chunklab_core.core.atomic_files.atomic_write` (temporary file, fsync,
``os.replace``), so a crash leaves the old or the new sheet, never a torn one.

Not handled: merging concurrent edits (a refused save keeps the unsaved rows in a side file and
asks for a re-run), locks on network filesystems without working ``O_EXCL``, quoting styles
(cells are re-quoted minimally, as the ``csv`` module does: the values are unchanged).
Standard library only, so the grader starts instantly.
"""

from __future__ import annotations

import codecs
import csv
import getpass
import hashlib
import io
import json
import os
import socket
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Sequence

from chunklab_core.core.atomic_files import atomic_write
from chunklab_core.core.csv_cells import csv_line, neutral_row, restored_cell


class SheetChanged(RuntimeError):
    """The sheet on disk is not the one that was read; nothing was written over it."""


class SheetLocked(RuntimeError):
    """Another grader holds the sheet's lock."""


class SheetUnreadable(ValueError):
    """A sheet that cannot be graded safely (missing, read-only, not UTF-8, a column named twice)."""


def unwritable_text(value: str) -> str | None:
    """What in ``value`` no UTF-8 sheet can store (a lone surrogate such as ``\\ud83d``: half an emoji
    from a browser, or bytes a terminal could not decode), or None."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as err:
        return f"a lone surrogate character ({value[err.start]!r} at position {err.start})"
    return None


def sheet_access_problem(path: str | os.PathLike) -> str | None:
    """Why grades cannot be saved into ``path`` (message naming the file and the fix), or None.

    Checked before a grading session starts, so no grade is typed into a sheet that cannot
    take it: the sheet must exist and be a writable file, and its folder (of the link's target,
    for a link) must be writable, for the lock file and the temporary file of each save.
    """
    path = Path(path)
    real = Path(os.path.realpath(path))
    if not real.exists():
        return f"{path}: no such sheet" + (f" (the link points to {real}, which does not exist)"
                                           if path.is_symlink() else "")
    if not real.is_file():
        return f"{path}: not a file"
    mode = real.stat().st_mode & 0o777
    if not os.access(real, os.W_OK) or not mode & 0o222:  # 0444 is read-only for root too
        return (f"{path}: the sheet is read-only (mode {mode:04o}); grades could not be saved into it. "
                f"Make it writable (chmod u+w {path}) or grade a copy")
    if not os.access(real.parent, os.W_OK | os.X_OK):
        return (f"{path}: its folder {real.parent} is not writable; the grader needs to write the lock "
                "file and each save's temporary file there. Make the folder writable or grade a copy "
                "in a folder of yours")
    return None


def keep_aside(sheet: "SheetFile", again: str = "run the grader again") -> str:
    """After a failed save: write ``sheet``'s rows beside it, else list this session's grades
    and notes that the file on disk lacks; says where they are (the message's second half)."""
    try:
        aside = sheet.save_aside()
        return (f"this session's grades and notes are kept in {aside}. Free the space (or fix "
                f"the permission), {again}, and copy over what is missing from that file.")
    except OSError:
        on_disk = {}
        try:
            on_disk = {row.get("item_id"): row for row in SheetFile.read(sheet.path).rows}
        except (OSError, ValueError):
            pass
        lines = [f"  {row['item_id']}: {row.get('grade') or '(no grade)'}"
                 + (f" -- note: {row['note']}" if row.get("note") else "")
                 for row in sheet.rows
                 if any(row.get(c, "") != on_disk.get(row["item_id"], {}).get(c, "") for c in ("grade", "note"))]
        return ("nor could a copy be written beside it. Not saved, copy them by hand:\n"
                + "\n".join(lines or ["  (nothing beyond what the sheet holds)"]))


def decode_sheet(path: str | os.PathLike, data: bytes) -> str:
    """The text of a sheet's bytes (UTF-8, optional BOM); :class:`SheetUnreadable` otherwise."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        line = data[:err.start].count(b"\n") + 1
        raise SheetUnreadable(
            f"{path}: line {line}: not UTF-8 (byte 0x{data[err.start]:02x}); probably saved as "
            "Windows-1252 by a spreadsheet. Save it as 'CSV UTF-8', or convert it: "
            f"iconv -f cp1252 -t utf-8 {path} > fixed.csv") from None


def duplicate_columns_problem(path: str | os.PathLike, header: Sequence[str]) -> str | None:
    """A message naming every column the header gives more than once, or None."""
    counts: dict[str, int] = {}
    for name in header:
        counts[name] = counts.get(name, 0) + 1
    twice = [name for name, n in counts.items() if n > 1]
    if not twice:
        return None
    return (f"{path}: row 1: the header names column(s) {twice} more than once; a save would keep "
            "only one of them. Rename or merge the repeated columns, then run again")


def _fingerprint(path: Path) -> tuple[int, int, str]:
    """``(mtime_ns, size, sha256)`` of a file as it is now."""
    data = path.read_bytes()
    stat = path.stat()
    return stat.st_mtime_ns, len(data), hashlib.sha256(data).hexdigest()


@dataclass
class SheetFile:
    """One sheet as read from ``path``; edit ``rows`` (dicts of strings) and call :meth:`save`."""

    path: Path
    fieldnames: list[str]
    rows: list[dict[str, str]]
    extras: list[list[str]] = field(default_factory=list)   # cells past the header, per row
    widths: list[int] = field(default_factory=list)          # cells each row had when read
    bom: bool = False
    newline: str = "\n"
    mode: int | None = None
    fingerprint: tuple[int, int, str] | None = None

    @classmethod
    def read(cls, path: str | os.PathLike) -> "SheetFile":
        """Parse ``path`` (UTF-8, optional BOM, any line ending), remembering its format."""
        path = Path(path)
        csv.field_size_limit(max(csv.field_size_limit(), 1 << 30))  # long passages
        data = path.read_bytes()
        stat = path.stat()
        bom = data.startswith(codecs.BOM_UTF8)
        text = decode_sheet(path, data)
        first_end = text.find("\n")
        newline = "\r\n" if first_end > 0 and text[first_end - 1] == "\r" else "\n"
        records = list(csv.reader(io.StringIO(text, newline="")))
        header = records[0] if records else []
        problem = duplicate_columns_problem(path, header)
        if problem:
            raise SheetUnreadable(problem)
        rows, extras, widths = [], [], []
        for cells in records[1:]:
            if not cells:  # a blank line: csv.DictReader skips it too
                continue
            rows.append({name: restored_cell(cells[i] if i < len(cells) else "") for i, name in enumerate(header)})
            extras.append(cells[len(header):])
            widths.append(len(cells))
        return cls(path, list(header), rows, extras, widths, bom, newline,
                   stat.st_mode & 0o7777, (stat.st_mtime_ns, len(data), hashlib.sha256(data).hexdigest()))

    def add_columns(self, names: Sequence[str]) -> None:
        """Append the named columns that the header lacks (rows get ``''``)."""
        for name in names:
            if name not in self.fieldnames:
                self.fieldnames.append(name)
            for row in self.rows:
                row.setdefault(name, "")

    def render(self) -> bytes:
        """The sheet's bytes: header, then each row's named cells and its extra cells."""
        lines = [csv_line(self.fieldnames, self.newline)]  # RFC 4180: a lone CR in a cell is quoted too
        for i, row in enumerate(self.rows):
            cells = neutral_row(row.get(name, "") for name in self.fieldnames)  # no cell starts a formula
            extra = self.extras[i] if i < len(self.extras) else []
            if not extra and i < len(self.widths):  # keep a short row short when nothing was added
                width = self.widths[i]
                while len(cells) > width and cells[-1] == "":
                    cells.pop()
            lines.append(csv_line(cells + list(extra), self.newline))
        return (codecs.BOM_UTF8 if self.bom else b"") + "".join(lines).encode("utf-8")

    def changed_on_disk(self) -> str | None:
        """Why the file on disk differs from what was read (or last saved), or None."""
        if self.fingerprint is None:
            return None
        try:
            now = _fingerprint(self.path)
        except FileNotFoundError:
            return "it was deleted or renamed"
        if now == self.fingerprint:
            return None
        if now[2] == self.fingerprint[2]:  # same bytes, touched: nothing to lose
            return None
        return (f"its size went from {self.fingerprint[1]} to {now[1]} bytes" if now[1] != self.fingerprint[1]
                else "its content differs")

    def save(self) -> None:
        """Write the rows back atomically, refusing if the file changed on disk since read."""
        reason = self.changed_on_disk()
        if reason is not None:
            raise SheetChanged(f"{self.path} changed on disk since it was read ({reason}), by another "
                               "program or person; it was NOT overwritten")
        data = self.render()

        def write(tmp: Path) -> None:
            tmp.write_bytes(data)

        atomic_write(self.path, write, mode=self.mode)
        self.fingerprint = _fingerprint(self.path)

    def save_aside(self, suffix: str = "unsaved") -> Path:
        """Write the rows as they are in memory next to the sheet (``<stem>.<suffix>-<time>.csv``)."""
        stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
        target = self.path.with_name(f"{self.path.stem}.{suffix}-{stamp}{self.path.suffix}")
        data = self.render()
        atomic_write(target, lambda tmp: tmp.write_bytes(data), mode=self.mode)
        return target


# ---------------------------------------------------------------- the one-grader lock

def _process_alive(pid: int) -> bool:
    if os.name == "nt":  # os.kill(pid, 0) would terminate the process there: assume alive
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    return True


class SheetLock:
    """``<sheet>.lock`` held while one grader has the sheet open (a context manager)."""

    def __init__(self, sheet: str | os.PathLike):
        self.sheet = Path(os.path.realpath(sheet))  # through a link: the file that is saved
        self.path = self.sheet.with_name(self.sheet.name + ".lock")
        self.cleared: dict | None = None  # the stale holder cleared on acquire, if any
        self._mine: str | None = None

    def holder(self) -> dict | None:
        """The recorded holder, ``{}`` for an unreadable lock file, None when unlocked."""
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        try:
            holder = json.loads(text)
            return holder if isinstance(holder, dict) else {}
        except ValueError:
            return {}

    def _stale(self, holder: dict) -> bool:
        pid = holder.get("pid")
        return (holder.get("host") == socket.gethostname() and isinstance(pid, int)
                and not _process_alive(pid))

    def acquire(self) -> None:
        """Take the lock, clearing a dead holder's; :class:`SheetLocked` if someone holds it."""
        try:
            user = getpass.getuser()
        except Exception:  # no user name in some containers
            user = str(os.getuid()) if hasattr(os, "getuid") else "?"
        me = {"pid": os.getpid(), "host": socket.gethostname(), "user": user,
              "started": datetime.now(timezone.utc).isoformat(timespec="seconds")}
        text = json.dumps(me)
        for _ in range(3):
            try:
                fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            except FileExistsError:
                holder = self.holder()
                if holder is None:
                    continue  # released between our open and our read: try again
                if holder and self._stale(holder):
                    self.path.unlink(missing_ok=True)
                    self.cleared = holder
                    continue
                who = (f"pid {holder.get('pid')} of user {holder.get('user')} on host "
                       f"{holder.get('host')} since {holder.get('started')}" if holder else "an unreadable holder")
                raise SheetLocked(
                    f"{self.sheet} is being graded by another grader ({who}): one grader per sheet at a "
                    f"time. If no grader is running there, delete {self.path} and run again.") from None
            try:
                os.write(fd, text.encode("utf-8"))
                os.fsync(fd)
            finally:
                os.close(fd)
            self._mine = text
            return
        raise SheetLocked(f"could not take the lock {self.path}; run again")

    def release(self) -> None:
        """Remove the lock file if it is still ours."""
        if self._mine is not None:
            try:
                if self.path.read_text(encoding="utf-8") == self._mine:
                    self.path.unlink()
            except FileNotFoundError:
                pass
            self._mine = None

    def __enter__(self) -> "SheetLock":
        self.acquire()
        return self

    def __exit__(self, *exc) -> None:
        self.release()
