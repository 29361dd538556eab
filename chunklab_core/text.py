"""Small text utilities shared by chunking, metrics and answer grading.

Handles: the case/whitespace normalisation used for gold containment, and sentence
boundaries as character spans. Not handled: fuzzy matching and number guards (``textmatch``),
retrieval tokenisation (``bm25``).

Sentence splitting is a deliberate, transparent rule (end punctuation ``.!?`` optionally
followed by closing quotes/brackets, then whitespace; a CJK full stop ``。！？`` with or
without whitespace; or a blank line) rather than a
trained model, so every boundary in the write-up can be explained by reading this file.
"""

from __future__ import annotations

import re

_WS = re.compile(r"\s+")
_SENT_END = re.compile(r"""(?<=[.!?])["')\]]*\s+|(?<=[。！？])[」』）]*\s*|\n\s*\n""")


def normalize(text: str) -> str:
    """Lower-case and collapse every run of whitespace to one space, stripped."""
    return _WS.sub(" ", text).strip().lower()


def sentence_spans(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """Sentence spans ``[(s, e), ...]`` covering ``text[start:end]`` exactly, in order.

    Each span ends after the whitespace that follows its sentence, so the spans tile the
    range with no gaps and no overlap; an empty range gives ``[]``.
    """
    end = len(text) if end is None else end
    if end <= start:
        return []
    spans: list[tuple[int, int]] = []
    cursor = start
    for match in _SENT_END.finditer(text, start, end):
        if match.end() > cursor and match.end() < end:
            spans.append((cursor, match.end()))
            cursor = match.end()
    spans.append((cursor, end))
    return spans
