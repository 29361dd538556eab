"""Tables that fit where they are read: a wide table split into views, a long one shown as a head.

Handles: :func:`csv_link` (the Markdown link from a post to the full table it saves under
``data/``: ``../data/<name>.csv``, which the website copies beside its pages), :func:`show_views`
(a wide table shown as several narrow views, each the key columns plus the columns of one
question, then the link to the whole table), :func:`show_head` (a long table's first rows with a
sentence that says it is a head and how many rows the CSV holds). A post says in words what it
shows: a view or a head is never a silently cut table (pandas' elision column or its
"rows × columns" footer; ``tests/test_notebook_tables.py`` fails on those).

Not handled: what the columns mean (each post's tables module), saving the CSV (``reports.tables``),
how the site styles tables (``reports.website``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from chunklab_core.core import numbers

MAX_ROWS = 30  # a longer table is shown as a head (or grouped) with the CSV linked


def csv_link(name: str, what: str = "the full table") -> str:
    """Markdown linking ``data/<name>.csv`` from a post in ``notebooks/`` (the site copies the file)."""
    return f"[{what} as CSV](../data/{name}.csv)"


def show_views(table: pd.DataFrame, key: Sequence[str], views: Mapping[str, Sequence[str]],
               csv: str | None = None) -> None:
    """Display ``table`` as one narrow table per view: the ``key`` columns, then the view's columns.

    ``views`` maps a view's caption (a sentence saying what it answers) to its columns; every
    column of ``table`` must be in the key or in a view (``ValueError`` naming the rest), so no
    column is lost without the post saying so. ``csv`` names the saved full table to link.
    """
    from IPython.display import Markdown, display

    used = set(key).union(*map(set, views.values()))
    missing = [c for c in table.columns if c not in used]
    if missing:
        raise ValueError(f"columns in no view: {missing}; add them to a view or drop them from the table")
    for caption, columns in views.items():
        display(Markdown(f"*{caption}*"))
        display(table[list(key) + [c for c in columns if c not in key]])
    if csv:
        display(Markdown(f"Every column in one table: {csv_link(csv)}."))


def head_text(shown: int, total: int, csv: str | None) -> str:
    """The sentence under a head: which rows are shown, of how many, and where the rest are."""
    rest = f"; {csv_link(csv, 'all of them')}" if csv else ""
    return (f"*The first {numbers.count(shown, 'row')} of {numbers.count(total, 'row')} are shown{rest}.*")


def show_head(table: pd.DataFrame, csv: str | None = None, rows: int = MAX_ROWS) -> None:
    """Display ``table`` whole when it has at most ``rows`` rows, else its first ``rows`` with :func:`head_text`."""
    from IPython.display import Markdown, display

    if len(table) <= rows:
        display(table)
        return
    display(table.head(rows))
    display(Markdown(head_text(rows, len(table), csv)))
