"""Cells that cannot start a formula: CSV injection neutralised (OWASP's rule), reversibly.

Handles: every CSV the project writes for a person to open in a spreadsheet (audit sheets, keys
and populations, ``chunklab-own``'s answers and tables, ``chunklab-evaluate``'s scorecard, the
posts' regenerated tables ``data/NN_*.csv`` through ``reports.tables``) passes
its text cells through :func:`neutral_cell` (or :func:`neutral_frame` / :func:`neutral_row`): a
value beginning with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return gets a leading single
quote, so a model answer ``=HYPERLINK(...)`` shows as text instead of running (OWASP, "CSV
Injection": https://owasp.org/www-community/attacks/CSV_Injection). A value that already begins
with a quote followed by one of those characters (or another quote) is quoted too, so the rule
is a bijection and :func:`restored_cell` -- used by the project's own readers of those files --
strips exactly the quote it added and nothing else ("'abc" stays "'abc"); :func:`read_frame`
reads such a table back as it was before writing (every reader of a committed table uses it).

Every such file is also written by :func:`csv_line` / :func:`csv_rows` / :func:`frame_csv`
(RFC 4180): a cell holding a comma, a double quote, a line feed *or a lone carriage return* is
quoted. Python's ``csv`` module and pandas leave a lone CR unquoted when the line ending is
``\n``, and a spreadsheet (and Python's own reader) then breaks the row there.

The same rule in the browser: ``chunklab_core/reports/static/csv_cells.js`` (``csvCell``,
``csvText``), for every page that writes a CSV; ``tests/test_faults_round4_csv`` runs both on
the same hostile rows (the JavaScript with node) and requires identical bytes.

Not handled: numbers (numeric columns are written as numbers; a spreadsheet does not evaluate
``-0.5``), column names (the project's own labels), other programs' CSV files (the report's
published tables under ``data/reference/``).
"""

from __future__ import annotations

import csv
import io
from typing import Iterable, Sequence

import pandas as pd

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
QUOTE = "'"


def neutral_cell(value):
    """``value`` with a leading ``'`` when it could start a formula (strings only; others as given)."""
    if not isinstance(value, str) or not value:
        return value
    if value[0] in FORMULA_STARTS or (value[0] == QUOTE and value[1:2] and value[1] in (*FORMULA_STARTS, QUOTE)):
        return QUOTE + value
    return value


def restored_cell(value):
    """The inverse of :func:`neutral_cell`: the one quote it added removed, nothing else."""
    if isinstance(value, str) and value[:1] == QUOTE and value[1:2] and value[1] in (*FORMULA_STARTS, QUOTE):
        return value[1:]
    return value


def neutral_row(values: Iterable) -> list:
    """A row for ``csv.writer`` with every text cell neutralised."""
    return [neutral_cell(v) for v in values]


def _map_text(frame: pd.DataFrame, func) -> pd.DataFrame:
    out = frame.copy()
    for column in out.columns:
        if out[column].dtype == object or pd.api.types.is_string_dtype(out[column].dtype):
            out[column] = out[column].map(func)
    return out


def neutral_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``frame`` with every text cell neutralised (numeric columns untouched)."""
    return _map_text(frame, neutral_cell)


def restored_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``frame`` read from a neutralised CSV with every text cell restored."""
    return _map_text(frame, restored_cell)


NEEDS_QUOTES = (",", '"', "\n", "\r")


def csv_field(value) -> str:
    """One field as RFC 4180 writes it: quoted (``"`` doubled) when it holds ``,``, ``"``, LF or CR."""
    text = "" if value is None else str(value)
    return f'"{text.replace(chr(34), chr(34) * 2)}"' if any(c in text for c in NEEDS_QUOTES) else text


def csv_line(cells: Sequence, lineterminator: str = "\n") -> str:
    """One row of fields (not neutralised: see :func:`neutral_row`), ``lineterminator`` ended.
    A row of one empty field is ``""`` (as ``csv.writer`` writes it: an empty line is no row)."""
    if len(cells) == 1 and csv_field(cells[0]) == "":
        return '""' + lineterminator
    return ",".join(csv_field(c) for c in cells) + lineterminator


def csv_rows(rows: Iterable[Sequence], lineterminator: str = "\n") -> str:
    """Rows of cells as CSV text, every text cell neutralised and every CR/LF quoted."""
    return "".join(csv_line(neutral_row(row), lineterminator) for row in rows)


def frame_csv_lines(frame: pd.DataFrame, lineterminator: str = "\n", **to_csv) -> list[str]:
    """The rows of :func:`frame_csv`, one string each (a writer that must write row by row, as
    pandas does, to give a compressor the same pieces)."""
    text = neutral_frame(frame).to_csv(lineterminator="\r\n", **to_csv)  # CRLF: pandas quotes both then
    rows = csv.reader(io.StringIO(text, newline=""))
    return [csv_line(row, lineterminator) for row in rows]


def frame_csv(frame: pd.DataFrame, lineterminator: str = "\n", **to_csv) -> str:
    """``frame`` as CSV text: its text cells neutralised, pandas' formatting of everything else
    (``index``, ``float_format``, ... as ``DataFrame.to_csv`` takes them), every CR/LF quoted."""
    return "".join(frame_csv_lines(frame, lineterminator, **to_csv))


def read_frame(path, **read_csv) -> pd.DataFrame:
    """The table a writer here wrote to ``path``, as it was: ``pd.read_csv(path, **read_csv)``
    with every text cell restored (:func:`restored_frame`); numbers are read as pandas reads them."""
    return restored_frame(pd.read_csv(path, **read_csv))


def torn_table_problem(path, expected_rows: int | None = None, counted_by: str = "") -> str | None:
    """Why the CSV file ``path`` the project wrote is not a whole table, or None: a row wider or
    narrower than the header (a file cut mid-row, an edit that shifted cells), another number of
    rows than ``expected_rows`` (``counted_by`` names who counted them), a file that is not UTF-8
    CSV. Never read half a file as if it were whole. (Sheets a person edits may drop trailing
    empty cells: check those with the sheet reader instead.)"""
    from pathlib import Path

    path = Path(path)
    try:
        rows = [row for row in csv.reader(io.StringIO(path.read_text(encoding="utf-8-sig"), newline="")) if row]
    except (UnicodeDecodeError, csv.Error) as err:
        return f"{path}: not a readable UTF-8 CSV table ({err})"
    if not rows:
        return f"{path}: empty (no header)"
    width = len(rows[0])
    uneven = next((n for n, row in enumerate(rows[1:], start=2) if len(row) != width), None)
    if uneven is not None:
        return f"{path}: row {uneven} has {len(rows[uneven - 1])} fields, the header {width}"
    if isinstance(expected_rows, int) and len(rows) - 1 != expected_rows:
        return f"{path}: {len(rows) - 1} rows, but {counted_by or 'its manifest'} {expected_rows}"
    return None
