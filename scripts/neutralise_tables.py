"""Rewrite the committed tables ``data/NN_*.csv`` (and ``.csv.gz``) whose bytes change under the
sheet-safe writer (issue 49, class 2), from their current content -- no post is re-executed.

Each table is read as the old readers read it (``pd.read_csv``); a table none of whose text
cells starts a formula or holds a CR is left alone (its bytes would not change). Any other is
written again through ``reports.tables`` (``core.csv_cells.frame_csv``) and read back with the
new reader (``core.csv_cells.read_frame``), which must equal the old frame cell for cell
(``DataFrame.equals``, dtypes included), or nothing is written. ``--check`` only lists the tables.

Not handled: the audit's recorded files (``data/audit/``: irreplaceable, read by the audit's own
readers, which already restore cells) and the report's published tables (``data/reference/``).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import pandas as pd

from chunklab_core.core.csv_cells import neutral_frame, read_frame
from chunklab_core.core.paths import TABLES_DIR
from chunklab_core.reports.tables import save_compressed_table, save_table


def _needs_rewrite(frame: pd.DataFrame) -> bool:
    text = [c for c in frame.columns if frame[c].dtype == object or pd.api.types.is_string_dtype(frame[c].dtype)]
    has_cr = any(frame[c].map(lambda v: isinstance(v, str) and "\r" in v).any() for c in text)
    return has_cr or not neutral_frame(frame).equals(frame)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="list the tables that would change; write nothing")
    args = parser.parse_args(argv)
    tables = sorted([*TABLES_DIR.glob("[0-9][0-9]_*.csv"), *TABLES_DIR.glob("[0-9][0-9]_*.csv.gz")])
    changed = []
    for path in tables:
        old = pd.read_csv(path)
        if not _needs_rewrite(old):
            continue
        gz = path.name.endswith(".gz")
        name = path.name.removesuffix(".gz").removesuffix(".csv")
        with tempfile.TemporaryDirectory() as tmp:
            (save_compressed_table if gz else save_table)(old, name, True, folder=Path(tmp))
            written = Path(tmp) / path.name
            back = read_frame(written)
            if not back.equals(old):
                print(f"{path}: read back differs from the old table; not rewritten", file=sys.stderr)
                return 1
            data = written.read_bytes()
        before = path.read_bytes()
        if data != before:
            changed.append(path)
            if not args.check:
                path.write_bytes(data)
        print(f"{path.relative_to(TABLES_DIR.parent)}: {'would change' if args.check else 'rewritten'}"
              f"{'' if data != before else ' (bytes unchanged)'}; read back equals the old table cell for cell")
    print(f"{len(changed)} of {len(tables)} tables {'would change' if args.check else 'rewritten'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
