"""Rewrite the committed tables ``data/NN_*.csv`` whose bytes change under the sheet-safe writer
(issue 49, class 2), from their current content -- no post is re-executed.

Each table's text columns (those the old reader, ``pd.read_csv``, reads as text) have every raw
cell passed through ``core.csv_cells``' rule (restored first, so a table already rewritten stays
as it is) and every row is written again with ``csv_line``; every other cell keeps its bytes
(the post's float format included), exactly as ``reports.tables.save_table`` would now write
the post's frame. A table whose bytes would not change is left alone. Any other must read back
with the new reader (``core.csv_cells.read_frame``) equal to the old reader's frame of the old
file cell for cell (``DataFrame.equals``, dtypes included), or nothing is written. Running it
again changes nothing. ``--check`` only lists the tables that would change.

Not handled: ``.csv.gz`` tables (checked: one with a hostile cell is reported, not rewritten),
the audit's recorded files (``data/audit/``: irreplaceable, read by the audit's own readers,
which already restore cells), the report's published tables (``data/reference/``).
"""

from __future__ import annotations

import argparse
import csv
import io
import sys
import tempfile
from pathlib import Path

import pandas as pd

from chunklab_core.core.atomic_files import atomic_write_text
from chunklab_core.core.csv_cells import csv_line, neutral_cell, read_frame, restored_cell
from chunklab_core.core.paths import TABLES_DIR


def _text_columns(frame: pd.DataFrame) -> list[int]:
    return [i for i, c in enumerate(frame.columns)
            if frame[c].dtype == object or pd.api.types.is_string_dtype(frame[c].dtype)]


def rewritten(path: Path) -> str:
    """The table at ``path`` with the rule applied to the raw cells of its text columns."""
    text_columns = _text_columns(pd.read_csv(path))
    rows = list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"), newline="")))
    out = [rows[0]] + [[neutral_cell(restored_cell(cell)) if i in text_columns and cell else cell
                        for i, cell in enumerate(row)] for row in rows[1:]]
    return "".join(csv_line(row) for row in out)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="list the tables that would change; write nothing")
    args = parser.parse_args(argv)
    changed = []
    for path in sorted(TABLES_DIR.glob("[0-9][0-9]_*.csv.gz")):
        frame = pd.read_csv(path)
        if not read_frame(path).equals(frame) or any(
                neutral_cell(v) != v or "\r" in v for c in _text_columns(frame) for v in frame.iloc[:, c].dropna()):
            print(f"{path}: holds cells the rule changes; rewrite it by re-executing its post", file=sys.stderr)
            return 1
    tables = sorted(TABLES_DIR.glob("[0-9][0-9]_*.csv"))
    for path in tables:
        text = rewritten(path)
        if text == path.read_text(encoding="utf-8"):
            continue
        with tempfile.TemporaryDirectory() as tmp:
            written = Path(tmp) / path.name
            written.write_text(text, encoding="utf-8", newline="")
            back = read_frame(written)
        old = pd.read_csv(path)  # the old reader, on the table as it was written (raw)
        if not back.equals(old):
            print(f"{path}: read back with the new reader differs from the old table; not rewritten", file=sys.stderr)
            return 1
        changed.append(path)
        if not args.check:
            atomic_write_text(path, text)
        print(f"{path.relative_to(TABLES_DIR.parent)}: {'would change' if args.check else 'rewritten'}; "
              "read back with the new reader it equals the old table cell for cell")
    print(f"{len(changed)} of {len(tables)} tables {'would change' if args.check else 'rewritten'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
