"""Chroma's embedding-based chunkers, reproduced from the report's description, on offsets.

Source: Smith & Troynikov, "Evaluating Chunking Strategies for Retrieval", Chroma technical
report (2024), research.trychroma.com/evaluating-chunking. The methods are re-implemented from
its text; its code is not used. Every chunk is a span of the untouched text.

Handles:

- ``small_pieces``: the text cut into pieces of at most ``piece_tokens`` cl100k_base tokens by
  the series' recursive splitter (paragraph > line > sentence > whitespace > hard cut); the
  report's chunkers start from pieces of about 50 tokens.
- ``kamradt_semantic`` (Kamradt's semantic chunker): sentences, each embedded together with
  ``buffer`` neighbours on each side; distance ``d_i = 1 - cos(w_i, w_{i+1})`` between
  consecutive windows; break after piece ``i`` when ``d_i`` exceeds the ``percentile``-th
  percentile of the document's distances (Kamradt's default 95).
- ``kamradt_modified`` (the report's KamradtModifiedChunker): the same distances over small
  pieces, but the threshold is searched so that chunks average ``avg_tokens`` tokens instead
  of a fixed percentile. With ``T`` the text's tokens, the mean chunk size is ``T / (b + 1)``
  for ``b`` breaks, so the search ends at ``b = ceil(T / avg_tokens) - 1`` breaks, placed at the
  ``b`` largest distances (ties broken by position): the threshold a binary search would find.
- ``cluster_semantic`` (the report's ClusterSemanticChunker): embed every small piece; with
  ``S`` the pieces' cosine similarity matrix centred by its mean off-diagonal value, choose the
  partition of the piece sequence into contiguous groups, each of at most ``max_tokens``
  tokens (summed piece counts), that maximises ``sum over groups g of sum_{a<b in g} S[a, b]``,
  by dynamic programming ``best[i] = max_j best[j] + reward(j, i)`` with ``reward`` from 2-D
  prefix sums (O(n · m) for at most m pieces per group). Centring is our reading of the method:
  with raw similarities (almost all positive) every pair adds reward and the optimum
  degenerates to packing the largest groups the limit allows.

``embed`` is ``embed(list[str]) -> ndarray`` (rows L2-normalised; re-normalised here), as for
``semantic.semantic_embedding``; ``evaluation.matrix`` passes the first model's.

Not handled: the LLM chunker (``llm_split``); Chroma's exact piece splitter (theirs counts
tokens with its own recursive splitter; the boundaries differ in detail).
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

from chunklab_core.chunking.sentences import sentence_units
from chunklab_core.chunking.spans import LEVELS, ChunkSpan, Span, recursive_spans
from chunklab_core.chunking.token_windows import TokenMeasure
from chunklab_core.core.tokens import count_tokens_many

Embed = Callable[[list[str]], np.ndarray]


def _positive(name: str, value) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")


def _need_embed(embed) -> Embed:
    if embed is None or not callable(embed):
        raise ValueError("this strategy needs embed= (a function list[str] -> ndarray of row vectors)")
    return embed


def small_pieces(text: str, piece_tokens: int = 50) -> list[Span]:
    """Spans tiling ``text``, each at most ``piece_tokens`` cl100k_base tokens (recursive splitter)."""
    _positive("piece_tokens", piece_tokens)
    if not text.strip():
        return []
    return recursive_spans(text, 0, len(text), piece_tokens, TokenMeasure(text), LEVELS)


def _normalised(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float64)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return np.divide(vectors, norms, out=np.zeros_like(vectors), where=norms > 0)


def window_distances(text: str, pieces: list[Span], embed: Embed, buffer: int) -> np.ndarray:
    """``1 - cos`` between the embeddings of consecutive windows (piece ``i`` with ``buffer``
    pieces on each side), length ``len(pieces) - 1``."""
    if buffer < 0:
        raise ValueError(f"buffer must be >= 0, got {buffer!r}")
    n = len(pieces)
    windows = [text[pieces[max(0, i - buffer)][0] : pieces[min(n - 1, i + buffer)][1]] for i in range(n)]
    vectors = _normalised(embed(windows))
    return np.clip(1.0 - np.einsum("ij,ij->i", vectors[:-1], vectors[1:]), 0.0, 2.0)


def _groups(pieces: list[Span], breaks) -> list[ChunkSpan]:
    """Chunks from pieces with a break after each index in ``breaks``."""
    cuts = sorted({int(b) for b in breaks})
    bounds = [0, *[b + 1 for b in cuts], len(pieces)]
    return [(pieces[a][0], pieces[b - 1][1], pieces[a][0], pieces[b - 1][1])
            for a, b in zip(bounds, bounds[1:]) if b > a]


def kamradt_semantic(text: str, embed: Embed | None, percentile: float = 95.0, buffer: int = 1) -> list[ChunkSpan]:
    """Kamradt's rule over sentences: break where the window distance exceeds its percentile."""
    embed = _need_embed(embed)
    if not 0 <= percentile <= 100:
        raise ValueError(f"percentile must lie in [0, 100], got {percentile!r}")
    pieces = sentence_units(text) if text.strip() else []
    if len(pieces) < 2:
        return _groups(pieces, [])
    distances = window_distances(text, pieces, embed, buffer)
    return _groups(pieces, np.flatnonzero(distances > np.percentile(distances, percentile)))


def kamradt_modified(text: str, embed: Embed | None, avg_tokens: int = 300, piece_tokens: int = 50,
                     buffer: int = 3) -> list[ChunkSpan]:
    """Breaks at the ``ceil(T / avg_tokens) - 1`` largest window distances over small pieces."""
    embed = _need_embed(embed)
    _positive("avg_tokens", avg_tokens)
    pieces = small_pieces(text, piece_tokens)
    if len(pieces) < 2:
        return _groups(pieces, [])
    total = int(count_tokens_many(text[s:e] for s, e in pieces).sum())
    n_breaks = min(len(pieces) - 1, max(0, math.ceil(total / avg_tokens) - 1))
    distances = window_distances(text, pieces, embed, buffer)
    order = np.lexsort((np.arange(len(distances)), -distances))  # largest first, then by position
    return _groups(pieces, order[:n_breaks])


def centred_similarity(vectors: np.ndarray) -> np.ndarray:
    """Cosine similarities minus their mean off-diagonal value (diagonal kept at 0)."""
    unit = _normalised(vectors)
    similarity = unit @ unit.T
    n = len(similarity)
    if n > 1:
        similarity = similarity - (similarity.sum() - np.trace(similarity)) / (n * n - n)
    np.fill_diagonal(similarity, 0.0)
    return similarity


def best_partition(similarity: np.ndarray, sizes: np.ndarray, limit: int) -> list[int]:
    """End indices (exclusive) of the contiguous groups maximising the summed within-group
    pair similarity ``sum_{a<b in g} S[a, b]`` with each group's ``sizes`` sum ``<= limit``
    (a single piece over the limit stands alone). On a tie the longer last group wins."""
    n = len(sizes)
    prefix = np.zeros((n + 1, n + 1))
    prefix[1:, 1:] = np.cumsum(np.cumsum(similarity, axis=0), axis=1)
    size_prefix = np.concatenate(([0], np.cumsum(sizes)))
    best = np.full(n + 1, -np.inf)
    best[0] = 0.0
    back = np.zeros(n + 1, dtype=np.int64)
    for i in range(1, n + 1):
        j = i - 1
        while True:  # groups (j, i]; extend j left while the group fits
            block = prefix[i, i] - prefix[j, i] - prefix[i, j] + prefix[j, j]
            score = best[j] + block / 2.0
            if score >= best[i]:
                best[i], back[i] = score, j
            if j == 0 or size_prefix[i] - size_prefix[j - 1] > limit:
                break
            j -= 1
    ends, i = [], n
    while i > 0:
        ends.append(i)
        i = int(back[i])
    return ends[::-1]


def cluster_semantic(text: str, embed: Embed | None, max_tokens: int = 400, piece_tokens: int = 50) -> list[ChunkSpan]:
    """ClusterSemanticChunker: the best partition of small pieces under ``max_tokens``."""
    embed = _need_embed(embed)
    _positive("max_tokens", max_tokens)
    pieces = small_pieces(text, piece_tokens)
    if len(pieces) < 2:
        return _groups(pieces, [])
    similarity = centred_similarity(embed([text[s:e] for s, e in pieces]))
    sizes = count_tokens_many(text[s:e] for s, e in pieces)
    ends = best_partition(similarity, sizes, max_tokens)
    return _groups(pieces, [e - 1 for e in ends[:-1]])
