"""Writing a batch of grades into a grading sheet, with the grader's id and kind.

Handles: grades made outside the terminal grader (a spreadsheet column, a model reading the
sheet) written into the sheet through the same validation as the import
(:func:`chunklab_core.audit.sheets.sheet_problems`): a batch is a CSV with ``item_id, grade, note``;
every row must name an item of the sheet that is not graded yet (a finished grade is never
overwritten), every grade is ``correct``/``partial``/``wrong``; the grader id and kind
(``human`` or ``model:<name>``) are required and stamped on every row with the time of the
write (UTC, ISO-8601). All problems are listed at once and nothing is written when there is
one; the sheet is saved through :mod:`chunklab_core.audit.sheet_file` while holding its grader
lock: atomically (a failed write leaves the previous sheet), never while another grader has
it open, never over a version changed on disk meanwhile, and keeping unknown cells and
columns, the BOM, line endings and file mode.

CLI: ``chunklab-grade-batch SHEET BATCH --grader ID --grader-kind KIND``; every problem
(a missing or non-UTF-8 file, a read-only sheet, bad rows, a full disk) is printed alone, with
no traceback, and exits non-zero (2 bad input, 3 locked or changed, 5 save failed).

Not handled: grading itself (a person uses ``chunklab-grade``), changing a
grade (edit the sheet by hand, on purpose).
"""

from __future__ import annotations

import argparse
import os
import sys
from datetime import datetime, timezone
from pathlib import Path

from chunklab_core.audit.sheet_file import (SheetChanged, SheetFile, SheetLock, SheetLocked, SheetUnreadable,
                                            sheet_access_problem)
from chunklab_core.audit.sheets import (GRADE_COLUMNS, SheetError, grader_kind_problem, normalize_label, read_sheet, sheet_problems)
from chunklab_core.core.cli_errors import command_edge


def apply_grades(sheet_path: str | os.PathLike, batch: list[dict[str, str]], grader: str,
                 grader_kind: str, now: datetime | None = None) -> int:
    """Write ``batch`` (dicts with ``item_id``, ``grade``, optional ``note``) into the sheet.

    Returns the number of grades written. Raises :class:`SheetError` listing every problem
    (unknown or repeated ids, items already graded, bad labels, a missing grader or a bad
    kind); nothing is written then. ``SheetLocked`` while a grader has the sheet open.
    """
    problem = sheet_access_problem(sheet_path)
    if problem:
        raise SheetUnreadable(problem)
    with SheetLock(sheet_path):
        return _apply_locked(sheet_path, batch, grader, grader_kind, now)


def _apply_locked(sheet_path, batch, grader, grader_kind, now) -> int:
    sheet = SheetFile.read(sheet_path)
    rows = sheet.rows
    problems = []
    if not (grader or "").strip():
        problems.append("a grader id is needed")
    kind_problem = grader_kind_problem(grader_kind)
    if kind_problem:
        problems.append(kind_problem)
    position = {row.get("item_id", "").strip(): i for i, row in enumerate(rows)}
    seen: set[str] = set()
    for number, entry in enumerate(batch, start=2):
        item_id = (entry.get("item_id") or "").strip()
        if item_id not in position:
            problems.append(f"batch row {number}: item_id {item_id!r} is not on the sheet")
            continue
        if item_id in seen:
            problems.append(f"batch row {number}: item_id {item_id!r} repeats in the batch")
        seen.add(item_id)
        try:
            if normalize_label(entry.get("grade")) is None:
                problems.append(f"batch row {number}: item {item_id} has no grade")
        except ValueError as err:
            problems.append(f"batch row {number}: {err}")
        if normalize_label(rows[position[item_id]].get("grade")) is not None:
            problems.append(f"batch row {number}: item {item_id} is already graded "
                            f"({rows[position[item_id]]['grade']}); grades are never overwritten")
    if problems:
        raise SheetError(sheet_path, problems)
    stamp = (now or datetime.now(timezone.utc)).isoformat(timespec="seconds")
    sheet.add_columns(GRADE_COLUMNS)
    for entry in batch:
        row = rows[position[entry["item_id"].strip()]]
        row.update(grade=normalize_label(entry["grade"]), grader=grader.strip(),
                   grader_kind=grader_kind.strip(), graded_at=stamp,
                   note=(entry.get("note") or "").strip())
    problems = sheet_problems(rows, require_kind=True)
    if problems:  # cannot happen after the checks above; never write a sheet that fails import
        raise SheetError(sheet_path, problems)
    sheet.save()
    return len(batch)


@command_edge
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Write a batch of grades (item_id, grade, note) "
                                                 "into a grading sheet.")
    parser.add_argument("sheet", type=Path)
    parser.add_argument("batch", type=Path, help="CSV with columns item_id, grade, note")
    parser.add_argument("--grader", required=True, help="the grader's id")
    parser.add_argument("--grader-kind", required=True,
                        help="'human' for a person, 'model:<name>' for a model or script")
    args = parser.parse_args(argv)
    try:
        _, batch = read_sheet(args.batch)
    except SheetUnreadable as err:  # missing, not UTF-8, a column twice: the message alone
        print(f"batch: {err}", file=sys.stderr)
        return 2
    try:
        written = apply_grades(args.sheet, batch, args.grader, args.grader_kind)
    except (SheetLocked, SheetChanged) as err:
        print(err, file=sys.stderr)
        return 3
    except (SheetError, SheetUnreadable) as err:
        print(f"{err}\nnothing was written.", file=sys.stderr)
        return 2
    except OSError as err:  # a full disk: the atomic save left the sheet as it was
        print(f"{args.sheet} could not be saved ({err.strerror or err}); the sheet is unchanged and "
              f"the batch {args.batch} still holds every grade: free the space and run again.",
              file=sys.stderr)
        return 5
    _, rows = read_sheet(args.sheet)
    done = sum(normalize_label(r.get("grade")) is not None for r in rows)
    print(f"{written} grades written to {args.sheet}: {done}/{len(rows)} graded")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
