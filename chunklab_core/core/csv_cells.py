"""Cells that cannot start a formula: CSV injection neutralised (OWASP's rule), reversibly.

Handles: every CSV the project writes for a person to open in a spreadsheet (audit sheets, keys
and populations, ``chunklab-own``'s answers and tables, ``chunklab-evaluate``'s scorecard) passes
its text cells through :func:`neutral_cell` (or :func:`neutral_frame` / :func:`neutral_row`): a
value beginning with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return gets a leading single
quote, so a model answer ``=HYPERLINK(...)`` shows as text instead of running (OWASP, "CSV
Injection": https://owasp.org/www-community/attacks/CSV_Injection). A value that already begins
with a quote followed by one of those characters (or another quote) is quoted too, so the rule
is a bijection and :func:`restored_cell` -- used by the project's own readers of those files --
strips exactly the quote it added and nothing else ("'abc" stays "'abc").

Not handled: numbers (numeric columns are written as numbers; a spreadsheet does not evaluate
``-0.5``), the posts' regenerated tables ``data/NN_*.csv`` (only the project's own labels and
numbers), other programs' CSV files.
"""

from __future__ import annotations

from typing import Iterable

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
