"""Character-count strategies: fixed windows, recursive splitting, parent documents, whole.

Handles: fixed windows of ``size`` characters (with an optional overlap), the recursive
paragraph > line > sentence > whitespace > hard-cut splitter under a character ceiling,
small children indexed inside large parents, and one chunk per document. Sizes are Python
code points (``len(str)``), not bytes or tokens.

Not handled: token-counted windows (``token_windows``), sentence, semantic and structure
strategies (their own modules).
"""

from __future__ import annotations

from chunklab_core.chunking.spans import LEVELS, CharMeasure, ChunkSpan, recursive_spans


def _check_size(name: str, value: object) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ValueError(f"{name} must be a positive integer number of characters, got {value!r}")


def fixed_characters(text: str, size: int, overlap: int = 0) -> list[ChunkSpan]:
    """Windows ``[i * stride, i * stride + size)`` with ``stride = size - overlap``, until
    one window reaches the end of the text. Every window holds exactly ``size`` characters
    except the last; with ``overlap == 0`` the windows tile the text.

    Example: 1,234 characters, size 500, overlap 125 -> starts 0, 375, 750; the last ends at
    1,234.
    """
    _check_size("size", size)
    if not isinstance(overlap, int) or isinstance(overlap, bool) or not 0 <= overlap < size:
        raise ValueError(f"overlap must be an integer with 0 <= overlap < size={size}, got {overlap!r}")
    stride = size - overlap
    spans: list[ChunkSpan] = []
    start = 0
    while start < len(text):
        end = min(start + size, len(text))
        spans.append((start, end, start, end))
        if end == len(text):
            break
        start += stride
    return spans


def recursive_characters(text: str, max_chars: int) -> list[ChunkSpan]:
    """Recursive splitting (LangChain's ``RecursiveCharacterTextSplitter`` scheme, without
    overlap, on offsets): cut at blank lines, then line breaks, then sentence ends
    (``text.sentence_spans``), then whitespace, then hard cuts; merge adjacent pieces
    greedily while they fit in ``max_chars``. Separators stay with the piece before them.
    """
    _check_size("max_chars", max_chars)
    spans = recursive_spans(text, 0, len(text), max_chars, CharMeasure(text), LEVELS)
    return [(s, e, s, e) for s, e in spans]


def parent_document(text: str, parent_size: int, child_size: int) -> list[ChunkSpan]:
    """Parents are consecutive ``parent_size``-character spans; each is cut into consecutive
    ``child_size``-character children. Children are indexed and return their parent:
    ``(child_start, child_end, parent_start, parent_end)``.
    """
    _check_size("parent_size", parent_size)
    _check_size("child_size", child_size)
    if child_size > parent_size:
        raise ValueError(f"child_size ({child_size}) must not exceed parent_size ({parent_size})")
    spans: list[ChunkSpan] = []
    for parent_start in range(0, len(text), parent_size):
        parent_end = min(parent_start + parent_size, len(text))
        for child_start in range(parent_start, parent_end, child_size):
            spans.append((child_start, min(child_start + child_size, parent_end), parent_start, parent_end))
    return spans


def whole_document(text: str) -> list[ChunkSpan]:
    """One chunk holding the whole document (the degenerate end of the size axis)."""
    return [(0, len(text), 0, len(text))] if text else []
