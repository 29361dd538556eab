"""Sentence units and the sentence-window strategy.

Handles: sentences as character spans from ``sentence_split.sentence_spans`` (the one
sentence rule of the package: ``.!?`` plus whitespace, the terminators of Devanagari, Arabic,
Urdu, Armenian, Ethiopic, Myanmar, Khmer and CJK with or without whitespace, Thai/Lao spaces,
closing quotes, brackets and emphasis markers, blank lines; read its docstring), with
whitespace-only pieces merged into the next sentence; indexing one sentence and returning it
with ``window`` sentences on each side.

Not handled: abbreviations ("e.g." is split like any full stop here; the abbreviation-aware
option of ``sentence_split`` is not used by the registered strategies); a text without a
recognised boundary is one sentence.
"""

from __future__ import annotations

from chunklab_core.core.sentence_split import sentence_spans
from chunklab_core.chunking.spans import ChunkSpan, Span, merge_blank_pieces


def sentence_units(text: str) -> list[Span]:
    """Sentence spans tiling ``text``, none of them whitespace only (unless the text is)."""
    return merge_blank_pieces(text, sentence_spans(text)) if text else []


def sentence_window(text: str, window: int) -> list[ChunkSpan]:
    """Each sentence ``i`` is indexed and returns sentences ``i - window .. i + window``
    (clipped at the document edges): ``(s_i, e_i, s_{i-w}, e_{i+w})``.
    """
    if not isinstance(window, int) or isinstance(window, bool) or window < 0:
        raise ValueError(f"window must be a non-negative integer number of sentences, got {window!r}")
    units = sentence_units(text)
    last = len(units) - 1
    return [
        (start, end, units[max(0, i - window)][0], units[min(last, i + window)][1])
        for i, (start, end) in enumerate(units)
    ]
