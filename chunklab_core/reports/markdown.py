"""Prose helpers every post shares: showing Markdown in a cell, and counts worded as shares.

Handles: :func:`md` (display a Markdown string in the notebook cell that calls it) and
:func:`share` ("k of n (p%)"). Not handled: composing a post's sentences (each post's
report module does that and returns strings; the notebook shows them with :func:`md`).
"""

from __future__ import annotations


def md(text: str) -> None:
    """Display ``text`` as Markdown in the current notebook cell."""
    from IPython.display import Markdown, display

    display(Markdown(text))


def share(count: int, total: int) -> str:
    """``"count of total (percent)"``, percent rounded to a whole number; ``"0 of 0"`` when total is 0."""
    return f"{count} of {total} ({count / total:.0%})" if total else "0 of 0"
