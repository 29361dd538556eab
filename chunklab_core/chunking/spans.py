"""Span plumbing shared by every chunking strategy: blank handling, recursive splitting.

Handles: character spans ``(start, end)`` into one text; merging whitespace-only pieces into
a neighbour; splitting a range at paragraph, line, sentence and whitespace boundaries and
merging the pieces greedily under a size limit (the recursive scheme of LangChain's
``RecursiveCharacterTextSplitter``, re-implemented on offsets); measuring size in characters.

Written by hand rather than calling LangChain because every boundary must be an exact offset
into the untouched source (LangChain strips whitespace and re-joins strings, so its chunks
cannot be mapped back to offsets reliably), and because a separator must stay attached to the
piece before it so that the pieces tile the text with no gap.

Not handled: token sizes (``token_windows.TokenMeasure`` plugs into the same splitter), the
strategy registry (``chunking/__init__``).
"""

from __future__ import annotations

import re
from typing import Protocol, Sequence

from chunklab_core.core.text import sentence_spans

Span = tuple[int, int]
ChunkSpan = tuple[int, int, int, int]  # (start, end, ctx_start, ctx_end)

NON_SPACE = re.compile(r"\S")
# A separator swallows the whitespace after it, so the next piece starts at a visible char.
PARAGRAPH_BREAK = re.compile(r"\n\s*\n\s*")
LINE_BREAK = re.compile(r"\n\s*")
WHITESPACE = re.compile(r"\s+")
# Before an item of HTML-like markup (table row, list item, definition term or description).
MARKUP_ITEM = re.compile(r"\s*(?=<(?:Tr|Li|Dt|Dd)[\s_>])", re.IGNORECASE)
LEVELS = ("paragraph", "line", "sentence", "whitespace")
_LEVEL_PATTERNS = {"paragraph": PARAGRAPH_BREAK, "line": LINE_BREAK, "whitespace": WHITESPACE,
                   "markup_item": MARKUP_ITEM}


class Measure(Protocol):
    """How a size limit is counted (characters or tokens) and how a range is hard-cut."""

    def size(self, start: int, end: int) -> int: ...

    def sizes(self, spans: Sequence[Span]) -> list[int]: ...

    def hard_cut(self, start: int, end: int, limit: int) -> list[Span]: ...


def is_blank(text: str, start: int, end: int) -> bool:
    """True when ``text[start:end]`` holds no visible character (empty or whitespace only)."""
    return NON_SPACE.search(text, start, end) is None


def merge_blank_pieces(text: str, pieces: Sequence[Span]) -> list[Span]:
    """Merge every whitespace-only piece of a tiling into the next piece (the last into the
    previous one); the result still tiles the same range. A wholly blank range stays one piece."""
    out: list[Span] = []
    carry: int | None = None  # start of blank pieces waiting for a visible piece
    for start, end in pieces:
        if is_blank(text, start, end):
            if carry is None:
                carry = start
            continue
        out.append((carry if carry is not None else start, end))
        carry = None
    if carry is not None:
        if out:
            out[-1] = (out[-1][0], pieces[-1][1])
        else:
            out.append((pieces[0][0], pieces[-1][1]))
    return out


def absorb_blank_spans(text: str, spans: Sequence[ChunkSpan]) -> list[ChunkSpan]:
    """Drop whitespace-only chunks by extending a neighbour over them (the previous chunk,
    or the next one for leading blanks); context spans grow to keep containing their span.

    This is the only step that can push a chunk past its strategy's ceiling, and only by
    whitespace. A text with no visible character gives ``[]``.
    """
    out: list[ChunkSpan] = []
    lead: tuple[int, int] | None = None  # (start, ctx_start) of leading blank chunks
    for start, end, ctx_start, ctx_end in spans:
        if is_blank(text, start, end):
            if out:
                s, e, cs, ce = out[-1]
                out[-1] = (s, max(e, end), cs, max(ce, end))
            elif lead is None:
                lead = (start, ctx_start)
            continue
        if lead is not None:
            start, ctx_start = min(start, lead[0]), min(ctx_start, lead[1], start)
            lead = None
        out.append((start, end, ctx_start, ctx_end))
    return out


def split_at_level(text: str, start: int, end: int, level: str) -> list[Span]:
    """Pieces tiling ``[start, end)``, cut after each separator of ``level``; blank pieces
    are merged into a neighbour, so a range without an inner separator gives one piece."""
    if level == "sentence":
        pieces = sentence_spans(text, start, end)
    else:
        cuts = [m.end() for m in _LEVEL_PATTERNS[level].finditer(text, start, end) if m.end() < end]
        bounds = [start, *cuts, end]
        pieces = [(a, b) for a, b in zip(bounds, bounds[1:]) if b > a]
    return merge_blank_pieces(text, pieces) if pieces else []


def recursive_spans(text: str, start: int, end: int, limit: int, measure: Measure,
                    levels: Sequence[str] = LEVELS) -> list[Span]:
    """Spans tiling ``[start, end)``, each of size ``<= limit`` under ``measure``.

    LangChain's recursive scheme on offsets: cut at the first level in ``levels`` that
    occurs in the range, merge adjacent pieces greedily up to the limit, recurse with the
    remaining levels into any piece still over the limit, and hard-cut when no level is left.
    """
    if end <= start:
        return []
    if measure.size(start, end) <= limit:
        return [(start, end)]
    for index, level in enumerate(levels):
        pieces = split_at_level(text, start, end, level)
        if len(pieces) > 1:
            break
    else:
        return measure.hard_cut(start, end, limit)
    rest = levels[index + 1 :]
    return pack(text, pieces, limit, measure, rest)


def pack(text: str, pieces: Sequence[Span], limit: int, measure: Measure,
         levels: Sequence[str] = LEVELS, sizes: Sequence[int] | None = None) -> list[Span]:
    """Merge adjacent pieces left to right while their summed size stays ``<= limit``;
    a piece over the limit ends the run and is split by ``recursive_spans``.

    Character sizes add up exactly. Token sizes do not (BPE merges across a seam), so with
    a token measure the sum is an estimate: each merged span is re-counted and gives pieces
    back until it fits, and a single piece still over the limit is split recursively.
    ``sizes`` may be given when the caller already has them (exact or estimated).
    """
    sizes = measure.sizes(pieces) if sizes is None else sizes
    exact = not isinstance(measure, CharMeasure)
    out: list[Span] = []
    i, n = 0, len(pieces)
    while i < n:
        j, total = i, sizes[i]
        while total <= limit and j + 1 < n and total + sizes[j + 1] <= limit:
            j += 1
            total += sizes[j]
        if exact:
            while j > i and measure.size(pieces[i][0], pieces[j][1]) > limit:
                j -= 1
            if j == i:
                total = measure.size(*pieces[i])
        if j == i and total > limit:
            out.extend(recursive_spans(text, pieces[i][0], pieces[i][1], limit, measure, levels))
        else:
            out.append((pieces[i][0], pieces[j][1]))
        i = j + 1
    return out


class CharMeasure:
    """Size in characters (Python code points); hard cuts every ``limit`` characters."""

    def __init__(self, text: str) -> None:
        self.text = text

    def size(self, start: int, end: int) -> int:
        return end - start

    def sizes(self, spans: Sequence[Span]) -> list[int]:
        return [e - s for s, e in spans]

    def hard_cut(self, start: int, end: int, limit: int) -> list[Span]:
        """Cuts every ``limit`` characters; a blank tail is avoided by moving the last cut
        back to the last visible character, so no piece is whitespace only."""
        bounds = list(range(start, end, limit)) + [end]
        if len(bounds) > 2 and is_blank(self.text, bounds[-2], end):
            visible = [m.start() for m in NON_SPACE.finditer(self.text, bounds[-3], bounds[-2])]
            if visible and visible[-1] > bounds[-3]:
                bounds[-2] = visible[-1]
        return [(a, b) for a, b in zip(bounds, bounds[1:]) if b > a]


def check_spans(text: str, spans: Sequence[ChunkSpan], tiles: bool) -> None:
    """Raise ``RuntimeError`` if a strategy broke the span contract (a bug, not bad input)."""
    previous_end = 0
    for i, (s, e, cs, ce) in enumerate(spans):
        if not (0 <= cs <= s < e <= ce <= len(text)):
            raise RuntimeError(f"chunk {i}: bad span ({s}, {e}) / context ({cs}, {ce})")
        if i and s < spans[i - 1][0]:
            raise RuntimeError(f"chunk {i}: spans not sorted by start")
        if tiles and s != previous_end:
            raise RuntimeError(f"chunk {i}: starts at {s}, previous ended at {previous_end}")
        previous_end = e if tiles else max(previous_end, e)
    if tiles and spans and previous_end != len(text):
        raise RuntimeError(f"last chunk ends at {previous_end}, text has {len(text)} characters")
