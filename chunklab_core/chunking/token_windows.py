"""Fixed-size windows counted in cl100k_base tokens, as exact character offsets.

Handles: mapping tiktoken's token boundaries (byte offsets into the UTF-8 encoding) back to
Python character offsets, and cutting a text into consecutive spans of at most N tokens.

Why by hand: a token may end inside a multi-byte character (cl100k_base splits many emoji,
CJK and mathematical letters into byte pieces), so a token boundary is not always a valid
character offset. A window therefore ends at the last token boundary that falls on a
character boundary within N tokens. Each window is then re-encoded on its own and shortened
if the standalone count exceeds N (BPE is not compositional, so a substring can in rare
cases take one token more than its share of the whole text's tokens): the guarantee is
``count_tokens(text[start:end]) <= N`` for every window, as a downstream reader counts.

Overlap (``fixed_tokens(..., overlap=m)``, ``recursive_tokens(..., overlap=m)``): each window
after the first begins up to ``m`` tokens before the previous window's end (at an aligned token
boundary, never at or before the previous window's start), so consecutive windows share about
``m`` tokens, as LangChain's ``TokenTextSplitter(chunk_size, chunk_overlap)`` does; every window
still holds at most its ceiling of tokens standalone.

Not handled: other tokenisers (an embedding model's own tokeniser decides its truncation).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Sequence

import numpy as np

from chunklab_core.core.tokens import count_tokens, count_tokens_many, encoding
from chunklab_core.chunking.spans import ChunkSpan, Span


@lru_cache(maxsize=1)
def _token_byte_lengths() -> np.ndarray:
    """Byte length of every token id of the encoding (0 for unused ids)."""
    enc = encoding()
    lengths = np.zeros(enc.max_token_value + 1, dtype=np.int64)
    for token in range(enc.max_token_value + 1):
        try:
            lengths[token] = len(enc.decode_single_token_bytes(token))
        except KeyError:
            continue
    return lengths


def _char_byte_ends(text: str) -> np.ndarray:
    """Cumulative UTF-8 byte offset at the end of each character (lone surrogates count 3
    bytes, as the U+FFFD that replaces them for tokenisation)."""
    code_points = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype="<u4")
    widths = 1 + (code_points >= 0x80) + (code_points >= 0x800) + (code_points >= 0x10000)
    widths = np.where((code_points >= 0xD800) & (code_points < 0xE000), 3, widths)
    return np.cumsum(widths, dtype=np.int64)


def _tokenizable(text: str) -> str:
    """``text`` with lone surrogates replaced by U+FFFD (same length in characters)."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


SPANS_KEPT_CHARS = 20_000_000  # texts whose token spans are kept (about 16 bytes a token, ~80 MB at most)
_SPANS: dict[str, tuple[np.ndarray, np.ndarray]] = {}  # insertion-ordered: the oldest is dropped first
_KEPT = [0]  # characters of the texts in _SPANS


def token_char_spans(text: str) -> tuple[np.ndarray, np.ndarray]:
    """Character span ``[start, end)`` of every token of ``text`` in its full tokenisation:
    a token that begins or ends inside a character is widened to whole characters.

    Kept per text (read-only arrays, up to :data:`SPANS_KEPT_CHARS` characters of texts, the oldest
    dropped first): every token-counted strategy of a run measures the same documents, which are
    then tokenised once."""
    if not text:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    kept = _SPANS.get(text)
    if kept is None:
        kept = _token_char_spans(text)
        for array in kept:
            array.setflags(write=False)
        if len(text) <= SPANS_KEPT_CHARS:
            while _SPANS and _KEPT[0] + len(text) > SPANS_KEPT_CHARS:
                _KEPT[0] -= len(next(iter(_SPANS)))
                del _SPANS[next(iter(_SPANS))]
            _SPANS[text] = kept
            _KEPT[0] += len(text)
    return kept


def _token_char_spans(text: str) -> tuple[np.ndarray, np.ndarray]:
    ids = np.asarray(encoding().encode(_tokenizable(text), disallowed_special=()), dtype=np.int64)
    byte_ends = np.cumsum(_token_byte_lengths()[ids])
    byte_starts = byte_ends - _token_byte_lengths()[ids]
    char_ends = _char_byte_ends(text)
    starts = np.searchsorted(char_ends, byte_starts, side="right")
    ends = np.searchsorted(char_ends, byte_ends) + 1
    return starts, ends


def token_boundaries(text: str) -> tuple[np.ndarray, np.ndarray]:
    """``(n_tokens, char_offset)`` pairs for every point where a prefix of the token sequence
    ends exactly on a character boundary, starting with ``(0, 0)``, ending at the full text.
    """
    starts, ends = token_char_spans(text)
    # the prefix of k tokens ends on a character boundary iff token k starts a new character
    aligned = np.append(ends[:-1] == starts[1:], True) if len(ends) else np.zeros(0, dtype=bool)
    n_tokens = np.concatenate(([0], np.flatnonzero(aligned) + 1))
    char_offsets = np.concatenate(([0], ends[aligned]))
    return n_tokens, char_offsets


def _greedy_windows(n_tokens: np.ndarray, offsets: np.ndarray, size: int, k: int) -> list[int]:
    """Boundary indices ``[k, ...]`` of consecutive windows from aligned boundary ``k``, each
    as long as ``size`` tokens allow (at least one boundary step, so a single character that
    needs more than ``size`` tokens is still taken whole)."""
    bounds = [k]
    while offsets[k] < offsets[-1]:
        j = int(np.searchsorted(n_tokens, n_tokens[k] + size, side="right")) - 1
        k = max(j, k + 1)
        bounds.append(k)
    return bounds


def token_window_spans(text: str, size: int, start: int = 0, end: int | None = None) -> list[Span]:
    """Consecutive spans tiling ``text[start:end]``, each ``<= size`` tokens standalone.

    The range is tokenised on its own. All windows are re-counted standalone in one batch;
    the first one over ``size`` (rare: none on the SQuAD and NQ data) is shortened one
    boundary at a time and the windows after it are recomputed.
    """
    end = len(text) if end is None else end
    piece = text[start:end]
    if not piece:
        return []
    n_tokens, offsets = token_boundaries(piece)
    bounds = _greedy_windows(n_tokens, offsets, size, 0)
    verified = 0  # windows before this index are known to fit
    while True:
        pairs = list(zip(bounds[verified:], bounds[verified + 1 :]))
        counts = count_tokens_many(piece[offsets[a] : offsets[b]] for a, b in pairs)
        over = np.flatnonzero(counts > size)
        if over.size == 0:
            break
        w = verified + int(over[0])
        a, b = bounds[w], bounds[w + 1]
        while b > a + 1 and count_tokens(piece[offsets[a] : offsets[b]]) > size:
            b -= 1
        bounds = bounds[: w + 1] + _greedy_windows(n_tokens, offsets, size, b)
        verified = w + 1
    return [(start + int(offsets[a]), start + int(offsets[b])) for a, b in zip(bounds, bounds[1:])]


def _check_overlap(overlap, ceiling: int) -> None:
    if not isinstance(overlap, int) or isinstance(overlap, bool) or not 0 <= overlap < ceiling:
        raise ValueError(f"overlap must be an integer number of tokens in [0, {ceiling}), got {overlap!r}")


def overlapping_token_windows(text: str, size: int, overlap: int) -> list[Span]:
    """Windows of at most ``size`` tokens (standalone), each after the first starting at the
    first aligned token boundary at or after ``overlap`` tokens before the previous window's
    end (and after the previous start), the stride ``size - overlap`` of a sliding window."""
    if not text:
        return []
    n_tokens, offsets = token_boundaries(text)
    spans: list[Span] = []
    k = 0
    while True:
        j = max(int(np.searchsorted(n_tokens, n_tokens[k] + size, side="right")) - 1, k + 1)
        while j > k + 1 and count_tokens(text[offsets[k]:offsets[j]]) > size:
            j -= 1
        spans.append((int(offsets[k]), int(offsets[j])))
        if offsets[j] >= offsets[-1]:
            return spans
        k = max(int(np.searchsorted(n_tokens, n_tokens[j] - overlap, side="left")), k + 1)


def fixed_tokens(text: str, size: int, overlap: int = 0) -> list[ChunkSpan]:
    """Windows of at most ``size`` cl100k_base tokens; consecutive windows share ``overlap`` tokens.

    Without overlap they tile the text: each window holds as many tokens as fit (the last one
    the rest); it ends earlier only where a boundary would split a character or the standalone
    re-count exceeds ``size``. With overlap, see ``overlapping_token_windows``.
    """
    if not isinstance(size, int) or isinstance(size, bool) or size < 1:
        raise ValueError(f"size must be a positive integer number of tokens, got {size!r}")
    _check_overlap(overlap, size)
    spans = overlapping_token_windows(text, size, overlap) if overlap else token_window_spans(text, size)
    return [(s, e, s, e) for s, e in spans]


class TokenMeasure:
    """Size in cl100k_base tokens: ``size`` counts a span on its own (exact), ``sizes``
    estimates many spans at once as the number of the full text's tokens each overlaps
    (one tokenisation of the whole text; a token cut by a span edge counts on both sides),
    ``hard_cut`` cuts token windows. Callers verify estimated merges with ``size``."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._token_starts, self._token_ends = token_char_spans(text)

    def size(self, start: int, end: int) -> int:
        return count_tokens(self.text[start:end])

    def sizes(self, spans: Sequence[Span]) -> list[int]:
        if not spans:
            return []
        bounds = np.asarray(spans, dtype=np.int64)
        begun = np.searchsorted(self._token_starts, bounds[:, 1], side="left")
        finished = np.searchsorted(self._token_ends, bounds[:, 0], side="right")
        return (begun - finished).tolist()

    def hard_cut(self, start: int, end: int, limit: int) -> list[Span]:
        return token_window_spans(self.text, limit, start, end)


def recursive_tokens(text: str, max_tokens: int, overlap: int = 0) -> list[ChunkSpan]:
    """The recursive splitter of ``characters.recursive_characters`` (paragraph > line >
    sentence > whitespace > hard cut, greedy merge) under a ceiling of ``max_tokens``
    cl100k_base tokens instead of characters.

    With ``overlap`` m > 0 the text is first split under a ceiling of ``max_tokens - m``; then
    each piece after the first is extended back over the end of the previous piece by at most m
    tokens (``extend_back``): it starts at the earliest aligned token boundary within m tokens
    before its own start, moved forward until the whole chunk holds at most ``max_tokens``
    tokens standalone. The new material of each chunk keeps the recursive split points; the
    shared prefix is a token-exact stand-in for LangChain's ``chunk_overlap`` (which reuses
    whole pieces, so its overlap varies with the piece sizes).
    """
    from chunklab_core.chunking.spans import LEVELS, recursive_spans

    if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1:
        raise ValueError(f"max_tokens must be a positive integer number of tokens, got {max_tokens!r}")
    _check_overlap(overlap, max_tokens)
    spans = recursive_spans(text, 0, len(text), max_tokens - overlap, TokenMeasure(text), LEVELS)
    if overlap:
        spans = extend_back(text, spans, overlap, max_tokens)
    return [(s, e, s, e) for s, e in spans]


def extend_back(text: str, spans: Sequence[Span], overlap: int, ceiling: int) -> list[Span]:
    """Each span after the first starts up to ``overlap`` tokens earlier (aligned token
    boundaries of the whole text; never at or before the previous span's start), as long as
    it stays ``<= ceiling`` tokens standalone."""
    if len(spans) < 2:
        return list(spans)
    n_tokens, offsets = token_boundaries(text)
    out = [tuple(spans[0])]
    for (previous_start, _), (start, end) in zip(spans, spans[1:]):
        at = int(np.searchsorted(offsets, start, side="right")) - 1  # the boundary at or before start
        k = int(np.searchsorted(n_tokens, n_tokens[at] - overlap, side="left"))
        candidates = [int(o) for o in offsets[k:at + 1] if previous_start < o <= start]
        new_start = start
        for offset in candidates:
            if count_tokens(text[offset:end]) <= ceiling:
                new_start = offset
                break
        out.append((new_start, end))
    return out
