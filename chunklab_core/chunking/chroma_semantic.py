"""Chroma's embedding-based chunkers, reproduced from the report's description, on offsets.

Source: Smith & Troynikov, "Evaluating Chunking Strategies for Retrieval", Chroma technical
report (2024), research.trychroma.com/evaluating-chunking, and its code (the repository
brandonstarxel/chunking_evaluation, read, not imported). The methods are re-implemented from the
text; the cluster chunker's size cap and tie rule follow the code. Every chunk is a span of the
untouched text.

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
- ``cluster_semantic`` (the report's ClusterSemanticChunker, as ``chunking_evaluation``'s
  ``cluster_semantic_chunker.py`` computes it): embed every small piece; with ``S`` the pieces'
  cosine similarity matrix centred by its mean off-diagonal value (diagonal set to 0), choose
  the partition of the piece sequence into contiguous groups of at most
  ``max_pieces = max_tokens // piece_tokens`` pieces (Chroma's ``max_cluster =
  max_chunk_size // min_chunk_size``: 8 pieces for 400, 4 for 200; a cap on the number of
  pieces, not on summed tokens) that maximises ``sum over groups g of sum_{a,b in g} S[a, b]``,
  by Chroma's dynamic programme: ``dp[i] = max(0, max_{size <= max_pieces} dp[i - size] +
  reward(i - size + 1, i))`` with ``dp`` starting at 0 and a strict improvement needed (so on a
  tie the smaller last group wins, and where no group ending at ``i`` has a positive total the
  group runs from piece 0 to ``i``, whatever its size: Chroma's code keeps its default start 0
  there; with centred similarities this happens only at a document's start).

``embed`` is ``embed(list[str]) -> ndarray`` (rows L2-normalised; re-normalised here), as for
``semantic.semantic_embedding``; ``evaluation.matrix`` passes the first model's.

Not handled: the LLM chunker (``llm_split``); Chroma's exact piece splitter (its
``RecursiveTokenChunker`` packs separator-split pieces under 50 cl100k_base tokens and strips
them; ``small_pieces`` packs under the same limit by the series' recursive splitter and keeps
the whitespace, so piece boundaries differ in detail); Chroma joins a group's stripped pieces
with a space and finds the result again in the text, here a group is the span of its pieces.
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


def chroma_partition(similarity: np.ndarray, max_pieces: int) -> list[int]:
    """End indices (exclusive) of the groups Chroma's ``_optimal_segmentation`` chooses.

    ``dp[i]`` (best total over pieces ``0..i``) starts at 0; for ``size`` 1..``max_pieces`` the
    candidate ``reward(i - size + 1, i) + dp[i - size]`` (``dp[-1] = 0``) replaces it only when
    strictly larger, recording the group's start (0 until replaced). ``reward(a, b)`` is the sum
    of ``similarity[a:b+1, a:b+1]`` (both triangles; pass a zero diagonal). Source: Smith &
    Troynikov (2024), ClusterSemanticChunker, ``chunking_evaluation`` repository.
    """
    _positive("max_pieces", max_pieces)
    n = len(similarity)
    prefix = np.zeros((n + 1, n + 1))
    prefix[1:, 1:] = np.cumsum(np.cumsum(similarity, axis=0), axis=1)
    dp = np.zeros(n)
    start = np.zeros(n, dtype=np.int64)
    for i in range(n):
        for size in range(1, max_pieces + 1):
            a = i - size + 1
            if a < 0:
                break
            reward = prefix[i + 1, i + 1] - prefix[a, i + 1] - prefix[i + 1, a] + prefix[a, a]
            candidate = reward + (dp[a - 1] if a >= 1 else 0.0)
            if candidate > dp[i]:
                dp[i], start[i] = candidate, a
    ends, i = [], n - 1
    while i >= 0:
        ends.append(i + 1)
        i = int(start[i]) - 1
    return ends[::-1]


def cluster_semantic(text: str, embed: Embed | None, max_tokens: int = 400, piece_tokens: int = 50) -> list[ChunkSpan]:
    """ClusterSemanticChunker: Chroma's partition of small pieces, at most
    ``max_tokens // piece_tokens`` pieces a group (``chroma_partition``)."""
    embed = _need_embed(embed)
    _positive("max_tokens", max_tokens)
    _positive("piece_tokens", piece_tokens)
    if max_tokens < piece_tokens:
        raise ValueError(f"max_tokens ({max_tokens}) must be at least piece_tokens ({piece_tokens})")
    pieces = small_pieces(text, piece_tokens)
    if len(pieces) < 2:
        return _groups(pieces, [])
    similarity = centred_similarity(embed([text[s:e] for s, e in pieces]))
    ends = chroma_partition(similarity, max_tokens // piece_tokens)
    return _groups(pieces, [e - 1 for e in ends[:-1]])
