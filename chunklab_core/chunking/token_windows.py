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

Not handled: other tokenisers (an embedding model's own tokeniser decides its truncation);
overlap between token windows.
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


def token_char_spans(text: str) -> tuple[np.ndarray, np.ndarray]:
    """Character span ``[start, end)`` of every token of ``text`` in its full tokenisation:
    a token that begins or ends inside a character is widened to whole characters."""
    if not text:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
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


def fixed_tokens(text: str, size: int) -> list[ChunkSpan]:
    """Consecutive windows of at most ``size`` cl100k_base tokens, tiling the text.

    Each window holds as many tokens as fit (the last one the rest); it ends earlier only
    where a boundary would split a character or the standalone re-count exceeds ``size``.
    """
    if not isinstance(size, int) or isinstance(size, bool) or size < 1:
        raise ValueError(f"size must be a positive integer number of tokens, got {size!r}")
    return [(s, e, s, e) for s, e in token_window_spans(text, size)]


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


def recursive_tokens(text: str, max_tokens: int) -> list[ChunkSpan]:
    """The recursive splitter of ``characters.recursive_characters`` (paragraph > line >
    sentence > whitespace > hard cut, greedy merge) under a ceiling of ``max_tokens``
    cl100k_base tokens instead of characters."""
    from chunklab_core.chunking.spans import LEVELS, recursive_spans

    if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1:
        raise ValueError(f"max_tokens must be a positive integer number of tokens, got {max_tokens!r}")
    spans = recursive_spans(text, 0, len(text), max_tokens, TokenMeasure(text), LEVELS)
    return [(s, e, s, e) for s, e in spans]
