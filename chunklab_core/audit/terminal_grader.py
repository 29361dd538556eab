"""Terminal grader: a person grades an audit sheet one item at a time, one key each.

Usage::

    chunklab-grade SHEET [--grader NAME] [--start N]   (or: python -m chunklab_core.audit.terminal_grader ...)

Shows one item at a time ("item 7/60", the question, the reference answer(s), the model's
answer) and takes one key per verdict:

    c  correct        p  partial        w  wrong
    s  skip (leave it blank for now)    b  back to the previous item
    v  view the reference passage       n  write a note on this item
    q  quit        ?  help

On a terminal a single keypress is enough (no Enter); when stdin is not a terminal (a pipe,
a script) it reads one line per key instead. Every verdict is saved at once, with the grader
(kind ``human``: this program is for people) and an ISO-8601 UTC timestamp, by an atomic replace of the sheet (temporary file in the same
folder, fsync, ``os.replace``), so quitting, Ctrl-C, a closed window or a crash loses
nothing already graded and never leaves a half-written sheet. Running it again resumes at
the first ungraded item (``--start N`` opens item N instead, e.g. to review). Going back to a
graded item and pressing another verdict asks "overwrite correct with wrong? [y/N]"; the
same verdict keeps the grade and its timestamp. The grader name comes from ``--grader``,
else from the sheet when one person has graded it so far, else it is asked once. The end
prints how many items are graded, skipped (this session) and remaining.

The sheet is a plain CSV (see :mod:`chunklab_core.audit.sheets`), so it can also be filled in a
spreadsheet; :func:`chunklab_core.audit.sheets.import_grades` reads either. For agreement between
people, give each grader their own copy of the sheet.

Nothing is lost (:mod:`chunklab_core.audit.sheet_file`): one grader per sheet at a time (a
``SHEET.lock`` file names the holder; a lock left by a dead process on this host is cleared,
any other is refused, exit status 3); a save never overwrites a sheet that changed on disk
since it was read (e.g. saved from a spreadsheet meanwhile): the grader stops with exit status
4, writes what it held to ``<sheet>.unsaved-<time>.csv`` next to it and asks for a re-run;
columns and cells it does not know, the BOM, line endings and file mode are kept as they were.
A save that fails for any other reason (a full disk, the folder made read-only meanwhile)
stops the grader the same way (exit status 5), the session's rows kept aside, or, when the
disk cannot take that file either, printed (item, grade, note) so that nothing typed is lost.
A sheet that cannot take grades (missing, read-only, in a read-only folder, not UTF-8, a column
named twice) is refused before the first item is shown (exit status 2).
``n`` writes a note on the current item (the ``note`` column; Enter alone keeps the old note,
``-`` clears it).

Not handled: curses-style screens, merging two people's edits of one file. The
terminal is switched to raw mode only while one key is read and restored right after, even
on errors, Ctrl-C, SIGTERM or SIGHUP; only SIGKILL during that read can leave it raw
(type ``reset``). Standard library only, so it starts instantly and runs anywhere Python
does (raw keys need POSIX ``termios``; elsewhere it falls back to line input).
"""

from __future__ import annotations

import argparse
import os
import select
import shutil
import signal
import sys
import textwrap
from datetime import datetime, timezone
from pathlib import Path
from typing import TextIO

from chunklab_core.core import bounds
from chunklab_core.audit.sheet_file import (SheetChanged, SheetFile, SheetLock, SheetLocked, SheetUnreadable,
                                            keep_aside, sheet_access_problem, unwritable_text)
from chunklab_core.audit.sheets import GRADE_COLUMNS, LETTERS, normalize_label, sheet_problems
from chunklab_core.core.cli_errors import command_edge

try:
    import termios
    import tty
except ImportError:  # pragma: no cover - Windows
    termios = tty = None

KEYS_HELP = """keys:
  c  correct   the answer gives what the reference gives
  p  partial   part of it right, or right but incomplete
  w  wrong     wrong, unsupported, or no answer
  s  skip      leave it ungraded for now, go to the next item
  b  back      go to the previous item (to check or change a grade)
  v  view      show the reference passage
  n  note      write a note on this item (Enter keeps the old one, - clears it)
  q  quit      every grade is already saved; run again to resume
  ?  help      this list"""
PROMPT = "[c]orrect [p]artial [w]rong  [s]kip [b]ack [v]iew passage [n]ote [q]uit [?]help > "
REQUIRED = ("item_id", "question", "reference", "answer")


class KeyReader:
    """One key per call: raw single keypress on a TTY, one line per key otherwise."""

    def __init__(self, stream: TextIO, out: TextIO):
        self.stream, self.out = stream, out
        try:
            self.fd = stream.fileno()
        except (AttributeError, OSError, ValueError):
            self.fd = None
        self.raw = termios is not None and self.fd is not None and os.isatty(self.fd)

    def key(self, prompt: str) -> str:
        """Lower-cased key pressed ('' for Enter, 'q' at end of input); Ctrl-C raises."""
        self.out.write(prompt)
        self.out.flush()
        if not self.raw:
            line = self.stream.readline()
            key = line.strip().lower()[:1] if line else "q"
            if not line or self.fd is None or not os.isatty(self.fd):
                self.out.write(key + "\n")  # nothing echoed it: keep the transcript readable
            return key
        saved = termios.tcgetattr(self.fd)
        try:
            tty.setraw(self.fd, termios.TCSANOW)  # not TCSAFLUSH: keep keys typed ahead
            data = os.read(self.fd, 1)
            if data and (data[0] == 0x1b or data[0] >= 0x80):  # arrow key, non-ASCII char
                while select.select([self.fd], [], [], 0.02)[0] and len(data) < 16:
                    data += os.read(self.fd, 1)
        finally:
            termios.tcsetattr(self.fd, termios.TCSADRAIN, saved)
        first = data[:1]
        if first == b"\x03":
            raise KeyboardInterrupt
        if first in (b"", b"\x04"):
            key = "q"
        elif first in (b"\r", b"\n"):
            key = ""
        elif first == b"\x1b":
            key = "esc"
        else:
            key = data.decode("utf-8", errors="replace")[:1].lower()
        self.out.write((key if len(key) == 1 and key.isprintable() else "") + "\n")
        return key

    def line(self, prompt: str) -> str:
        """One line of text (the terminal is in its normal mode between keys)."""
        self.out.write(prompt)
        self.out.flush()
        return self.stream.readline().strip()


def wrap(text: str, width: int, indent: str = "  ") -> str:
    """``text`` wrapped to ``width`` columns, paragraphs (line breaks) kept."""
    if not text.strip():
        return indent + "(empty)"
    lines = []
    for paragraph in text.strip().splitlines():
        if paragraph.strip():
            lines += textwrap.wrap(paragraph, width=width, initial_indent=indent,
                                   subsequent_indent=indent, break_on_hyphens=False)
        else:
            lines.append("")
    return "\n".join(lines)


class SaveFailed(RuntimeError):
    """A save failed (not a conflict: a full disk, a permission taken away); rows were kept aside."""


class Session:
    """The grading loop over one sheet; every verdict is saved before the next item."""

    def __init__(self, sheet: SheetFile, grader: str, keys: KeyReader, out: TextIO):
        self.sheet, self.path, self.rows = sheet, sheet.path, sheet.rows
        self.grader, self.keys, self.out = grader, keys, out
        self.skipped: set[int] = set()
        self.graded_now = 0

    def say(self, text: str = "") -> None:
        self.out.write(text + "\n")
        self.out.flush()

    @property
    def width(self) -> int:
        return max(20, shutil.get_terminal_size((80, 24)).columns - 1)

    def label(self, i: int) -> str | None:
        return normalize_label(self.rows[i].get("grade"))

    def n_graded(self) -> int:
        return sum(self.label(i) is not None for i in range(len(self.rows)))

    def show(self, i: int) -> None:
        row, n = self.rows[i], len(self.rows)
        done = self.n_graded()
        head = f"=== item {i + 1}/{n}  [{row['item_id']}]  ({done} graded, {n - done} to go) "
        self.say("\n" + head.ljust(self.width, "="))
        self.say("QUESTION\n" + wrap(row["question"], self.width))
        alternatives = [a for a in row["reference"].split(" | ")]
        reference = "\n".join(f"- {a}" for a in alternatives) if len(alternatives) > 1 \
            else row["reference"]
        self.say("REFERENCE\n" + wrap(reference, self.width))
        self.say("ANSWER\n" + wrap(row["answer"], self.width))
        if self.label(i):
            self.say(f"already graded: {self.label(i)} by {row.get('grader') or '?'}"
                     f" at {row.get('graded_at') or '?'}")
        if row.get("note", "").strip():
            self.say("NOTE\n" + wrap(row["note"], self.width))

    def save(self) -> None:
        """Save the sheet; ``SheetChanged`` (after keeping the rows aside) if it changed on disk."""
        try:
            self.sheet.save()
        except SheetChanged as err:
            aside = self.sheet.save_aside()
            raise SheetChanged(f"{err}.\nThis session's grades and notes are kept in {aside}; "
                               "run the grader again to reload the sheet, and copy over what is "
                               "missing from that file.") from None
        except OSError as err:
            raise SaveFailed(f"{self.path} could not be saved ({err.strerror or err}); "
                             f"{self.keep_aside()}") from None

    def keep_aside(self) -> str:
        """Write the rows beside the sheet, else print this session's grades; says where they are."""
        return keep_aside(self.sheet)

    def note(self, i: int) -> None:
        """Ask for a note on item ``i`` and save it (Enter keeps the old note, '-' clears it)."""
        old = self.rows[i].get("note", "")
        text = self.keys.line(f"note for item {i + 1} (Enter keeps{' the old one' if old else ' none'}, "
                              "- clears): ")
        if not text:
            self.say("note unchanged")
            return
        problem = unwritable_text(text)
        if problem:  # bytes the terminal could not decode: a sheet cannot store them, the note is refused
            self.say(f"note not saved: it holds {problem}, which no UTF-8 sheet can store; type it again")
            return
        self.rows[i]["note"] = "" if text == "-" else text
        self.save()
        self.say("note cleared" if text == "-" else "note saved")

    def grade(self, i: int, label: str) -> bool:
        """Record ``label`` for item ``i`` (asking before a change); True to move on."""
        old = self.label(i)
        if old == label:
            self.say(f"kept {label}")
            return True
        if old is not None:
            answer = self.keys.key(f"overwrite {old} with {label}? [y/N] ")
            if answer != "y":
                self.say(f"kept {old}")
                return False
        stamp = datetime.now(timezone.utc).isoformat(timespec="seconds")
        self.rows[i].update(grade=label, grader=self.grader, grader_kind="human", graded_at=stamp)
        self.save()
        self.graded_now += 1
        self.say(f"saved: {label}")
        return True

    def run(self, i: int) -> None:
        n = len(self.rows)
        self.show(i)
        while True:
            key = self.keys.key(PROMPT)
            if key in LETTERS or key == "s":
                if key == "s":
                    self.skipped.add(i)
                elif not self.grade(i, LETTERS[key]):
                    continue
                if i + 1 == n:
                    self.say("\nthat was the last item.")
                    return
                i += 1
                self.show(i)
            elif key == "b":
                if i == 0:
                    self.say("this is the first item.")
                else:
                    i -= 1
                    self.show(i)
            elif key == "v":
                passage = self.rows[i].get("passage", "")
                self.say("PASSAGE\n" + wrap(passage, self.width))
            elif key == "n":
                self.note(i)
            elif key == "q":
                return
            elif key in ("?", "h"):
                self.say(KEYS_HELP)
            elif key:
                self.say(f"unknown key {key!r}; press ? for help")

    def summary(self) -> str:
        graded = self.n_graded()
        skipped = sum(self.label(i) is None for i in self.skipped)
        remaining = len(self.rows) - graded - skipped
        text = (f"graded {graded}/{len(self.rows)}, skipped {skipped}, remaining {remaining} "
                f"({self.graded_now} saved in this session) -> {self.path}")
        if graded < len(self.rows):
            text += f"\nrun again to continue: chunklab-grade {self.path}"
        return text


def resolve_grader(name: str | None, rows: list[dict[str, str]], keys: KeyReader,
                   out: TextIO) -> str:
    """``--grader``, else the sheet's only grader so far, else asked once."""
    if name and name.strip():
        return name.strip()
    names = sorted({row.get("grader", "").strip() for row in rows} - {""})
    if len(names) == 1:
        out.write(f"grader: {names[0]} (from the sheet; --grader NAME to change)\n")
        return names[0]
    if names:
        out.write(f"this sheet has grades by {', '.join(names)}\n")
    return keys.line("your name or initials (saved with each grade): ")


def grade_sheet(path: str | os.PathLike, grader: str | None = None, start: int | None = None,
                stdin: TextIO | None = None, stdout: TextIO | None = None) -> int:
    """Run the grader on ``path``; returns the exit status (0 ok, 2 bad or unwritable sheet, 3 sheet
    locked by another grader, 4 sheet changed on disk (this session's rows kept aside), 5 a save
    failed (full disk; rows kept aside or printed), 130 Ctrl-C)."""
    path, out = Path(path), stdout or sys.stdout
    problem = sheet_access_problem(path)
    if problem:
        out.write(f"{problem}\n")
        return 2
    lock = SheetLock(path)
    try:
        lock.acquire()
    except SheetLocked as err:
        out.write(f"{err}\n")
        return 3
    try:
        if lock.cleared is not None:
            out.write(f"cleared a stale lock left by pid {lock.cleared.get('pid')} "
                      f"(user {lock.cleared.get('user')}, no longer running)\n")
        return _grade_locked(path, grader, start, KeyReader(stdin or sys.stdin, out), out)
    finally:
        lock.release()


def _grade_locked(path: Path, grader: str | None, start: int | None, keys: KeyReader,
                  out: TextIO) -> int:
    try:
        sheet = SheetFile.read(path)
    except SheetUnreadable as err:
        out.write(f"{err}\n")
        return 2
    fieldnames, rows = sheet.fieldnames, sheet.rows
    absent = [c for c in REQUIRED if c not in fieldnames]
    problems = ([f"row 1: the header lacks column(s) {absent}"] if absent else
                sheet_problems(rows, require_grader=False))
    if problems:
        out.write(f"{path}: cannot grade this sheet:\n" + "".join(f"  - {p}\n" for p in problems))
        return 2
    sheet.add_columns(GRADE_COLUMNS)
    if not rows:
        out.write(f"{path}: the sheet has no items\n")
        return 0
    if start is not None and not 1 <= start <= len(rows):
        out.write(f"--start must be between 1 and {len(rows)}\n")
        return 2
    todo = [i for i, row in enumerate(rows) if normalize_label(row["grade"]) is None]
    if start is None and not todo:
        out.write(f"all {len(rows)} items of {path} are graded (--start N to review one)\n")
        return 0
    name = resolve_grader(grader, rows, keys, out)
    if not name:
        out.write("a grader name is needed (--grader NAME)\n")
        return 2
    session = Session(sheet, name, keys, out)
    status = 0
    try:
        session.run(start - 1 if start is not None else todo[0])
    except KeyboardInterrupt:
        out.write("\ninterrupted; every grade so far is saved.\n")
        status = 130
    except SheetChanged as err:
        out.write(f"\nnot saved: {err}\n")
        status = 4
    except SaveFailed as err:
        out.write(f"\nnot saved: {err}\n")
        status = 5
    out.write(session.summary() + "\n")
    out.flush()
    return status


def _exit_on_signal(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)  # unwinds through the finally that restores the terminal


@command_edge
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="chunklab-grade", epilog=KEYS_HELP,
        description="Grade an audit sheet in the terminal, one key per item.",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sheet", type=Path, help="the sheet CSV (written by sheets.write_sheet)")
    parser.add_argument("--grader", help="your name or initials, saved with each grade")
    parser.add_argument("--start", type=bounds.int_in("count", low=1), metavar="N",
                        help="open item N (1-based) instead of the first ungraded one")
    args = parser.parse_args(argv)
    for name in ("SIGTERM", "SIGHUP"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), _exit_on_signal)
    return grade_sheet(args.sheet, grader=args.grader, start=args.start)


if __name__ == "__main__":
    sys.exit(main())
