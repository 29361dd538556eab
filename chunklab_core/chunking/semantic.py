"""Semantic chunking: break between adjacent sentences that are far apart in vector space.

Handles two sentence representations and one grouping rule:

- ``semantic_tfidf``: TF-IDF vectors fitted on the document's own sentences with
  scikit-learn's ``TfidfVectorizer`` defaults (raw term counts, smoothed idf
  ``ln((1 + n) / (1 + df)) + 1``, rows L2-normalised, lower-cased ``\\b\\w\\w+\\b`` tokens).
  It is a cheap, fully deterministic stand-in for an embedding model, and is labelled
  "Semantic (TF-IDF proxy)" everywhere so no one mistakes it for embedding-based chunking.
- ``semantic_embedding``: vectors from a caller-supplied ``embed(list[str]) -> ndarray``
  (L2-normalised rows; re-normalised here defensively), with a minimum group size (floor);
  ``semantic_embedding_tokens`` is the same with floor and ceiling in cl100k_base tokens.

Rule (after Kamradt's "semantic chunking" and LangChain's ``SemanticChunker`` percentile
mode): distance ``d_i = 1 - cos(v_i, v_{i+1})`` between adjacent sentences; break after
sentence ``i`` when ``d_i`` exceeds the ``percentile``-th percentile of the document's
distances (``numpy.percentile``, linear interpolation); a zero vector (a sentence with no
term) has cosine 0 with everything. Groups under ``min_chars`` merge into the neighbour
across the smaller distance, smallest group first. Then the ceiling: a group over
``max_chars`` is packed greedily at sentence boundaries (a single sentence over it is split
recursively as in ``recursive_500``), and a last piece under the floor takes sentences from
the piece before it where both then fit between floor and ceiling; where no sentence
boundary allows that, the ceiling wins and a piece under the floor remains. A document with fewer than 3 sentences is one group.

Not handled: embedding the sentences (``dense`` supplies ``embed``), breakpoint rules other
than the percentile one (standard deviation, interquartile, gradient).
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from chunklab_core.chunking.sentences import sentence_units
from chunklab_core.chunking.spans import LEVELS, CharMeasure, ChunkSpan, Span, pack

Embed = Callable[[list[str]], np.ndarray]
MIN_SENTENCES = 3


def tfidf_vectors(sentences: list[str]):
    """Sparse TF-IDF rows (scikit-learn defaults, fitted on ``sentences``); ``None`` when
    no sentence has a term (scikit-learn's empty-vocabulary case)."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    try:
        return TfidfVectorizer().fit_transform(sentences)
    except ValueError:  # empty vocabulary: no sentence has a two-character word
        return None


def adjacent_cosine_distances(vectors) -> np.ndarray:
    """``1 - cos(v_i, v_{i+1})`` for L2-normalised rows (dense or scipy sparse), clipped to
    [0, 2]; a zero row has cosine 0."""
    if hasattr(vectors, "multiply"):
        cosines = np.asarray(vectors[:-1].multiply(vectors[1:]).sum(axis=1)).ravel()
    else:
        cosines = np.einsum("ij,ij->i", vectors[:-1], vectors[1:])
    return np.clip(1.0 - cosines, 0.0, 2.0)


def percentile_breaks(distances: np.ndarray, percentile: float) -> np.ndarray:
    """Indices ``i`` with ``distances[i] > numpy.percentile(distances, percentile)``: break
    after sentence ``i``."""
    if distances.size == 0:
        return np.zeros(0, dtype=np.int64)
    threshold = np.percentile(distances, percentile)
    return np.flatnonzero(distances > threshold)


def merge_small_groups(groups: list[Span], lengths: list[int], distances: np.ndarray,
                       min_chars: int) -> list[Span]:
    """Merge groups (sentence-index ranges ``[a, b)``) shorter than ``min_chars`` characters,
    smallest first (ties: leftmost), into the neighbour across the smaller distance (ties: left)."""
    groups, lengths = list(groups), list(lengths)
    while len(groups) > 1:
        small = [g for g, n in enumerate(lengths) if n < min_chars]
        if not small:
            break
        g = min(small, key=lambda k: (lengths[k], k))
        left = distances[groups[g][0] - 1] if g > 0 else np.inf
        right = distances[groups[g + 1][0] - 1] if g + 1 < len(groups) else np.inf
        a = g - 1 if left <= right else g
        groups[a : a + 2] = [(groups[a][0], groups[a + 1][1])]
        lengths[a : a + 2] = [lengths[a] + lengths[a + 1]]
    return groups


def _group_spans(text: str, units: list[Span], vectors, percentile: float, min_chars: int,
                 max_chars: int, measure=None) -> list[ChunkSpan]:
    """Break, apply the floor, then the ceiling; ``vectors is None`` means one group.
    ``measure`` counts sizes (``CharMeasure`` by default; ``token_windows.TokenMeasure`` for
    floors and ceilings in tokens)."""
    n = len(units)
    if n == 0:
        return []
    measure = CharMeasure(text) if measure is None else measure
    if vectors is None or n < MIN_SENTENCES:
        groups, distances = [(0, n)], np.zeros(max(n - 1, 0))
    else:
        distances = adjacent_cosine_distances(vectors)
        bounds = [0, *(percentile_breaks(distances, percentile) + 1).tolist(), n]
        groups = list(zip(bounds, bounds[1:]))
    if min_chars > 0:
        lengths = measure.sizes([(units[a][0], units[b - 1][1]) for a, b in groups])
        groups = merge_small_groups(groups, lengths, distances, min_chars)
    spans: list[ChunkSpan] = []
    for a, b in groups:
        pieces = pack(text, units[a:b], max_chars, measure, LEVELS)
        spans.extend((s, e, s, e) for s, e in rebalance_tail(pieces, units[a:b], min_chars, max_chars, measure))
    return spans


def rebalance_tail(pieces: list[Span], units: list[Span], min_chars: int, max_chars: int,
                   measure=None) -> list[Span]:
    """After the ceiling split a group, lift a last piece shorter than ``min_chars`` by moving
    the cut before it left to an earlier sentence start, the first one that gives it
    ``min_chars`` while both pieces stay within ``[min_chars, max_chars]``; else leave it.
    Sizes are characters unless ``measure`` says otherwise."""
    size = (lambda a, b: b - a) if measure is None else measure.size
    if min_chars == 0 or len(pieces) < 2 or size(*pieces[-1]) >= min_chars:
        return pieces
    (prev_start, prev_end), (_, last_end) = pieces[-2], pieces[-1]
    for cut in reversed([s for s, _ in units if prev_start < s < prev_end]):
        if size(cut, last_end) > max_chars or size(prev_start, cut) < min_chars:
            break
        if size(cut, last_end) >= min_chars:
            return [*pieces[:-2], (prev_start, cut), (cut, last_end)]
    return pieces


def _check(percentile: float, min_chars: int, max_chars: int) -> None:
    if not isinstance(percentile, (int, float)) or not 0 <= percentile <= 100:
        raise ValueError(f"percentile must be a number in [0, 100], got {percentile!r}")
    if not isinstance(max_chars, int) or isinstance(max_chars, bool) or max_chars < 1:
        raise ValueError(f"max_chars must be a positive integer, got {max_chars!r}")
    if not isinstance(min_chars, int) or isinstance(min_chars, bool) or not 0 <= min_chars <= max_chars:
        raise ValueError(f"min_chars must be an integer in [0, max_chars={max_chars}], got {min_chars!r}")


def semantic_tfidf(text: str, percentile: float, max_chars: int) -> list[ChunkSpan]:
    """Semantic (TF-IDF proxy): percentile breaks on TF-IDF sentence vectors, no floor,
    a ``max_chars`` ceiling."""
    _check(percentile, 0, max_chars)
    units = sentence_units(text)
    vectors = None
    if len(units) >= MIN_SENTENCES:
        vectors = tfidf_vectors([text[s:e] for s, e in units])
    return _group_spans(text, units, vectors, percentile, 0, max_chars)


def semantic_embedding(text: str, embed: Embed | None, percentile: float, min_chars: int,
                       max_chars: int) -> list[ChunkSpan]:
    """Semantic chunking on ``embed``'s sentence vectors, with a ``min_chars`` floor
    (0 = no floor: the fragment trap) and a ``max_chars`` ceiling."""
    _require_embed(embed)
    _check(percentile, min_chars, max_chars)
    units, vectors = _embedded_units(text, embed)
    return _group_spans(text, units, vectors, percentile, min_chars, max_chars)


def _require_embed(embed: Embed | None) -> None:
    if embed is None or not callable(embed):
        raise ValueError(
            "semantic_embedding needs embed=: a function list[str] -> np.ndarray of "
            "L2-normalised rows (one per sentence), e.g. from chunklab_core.retrieval.dense"
        )


def _embedded_units(text: str, embed: Embed | None):
    """The sentence units of ``text`` and their L2-normalised ``embed`` vectors (None below
    ``MIN_SENTENCES`` units)."""
    _require_embed(embed)
    units = sentence_units(text)
    vectors = None
    if len(units) >= MIN_SENTENCES:
        vectors = np.asarray(embed([text[s:e].strip() for s, e in units]), dtype=np.float64)
        if vectors.ndim != 2 or vectors.shape[0] != len(units):
            raise ValueError(f"embed returned shape {vectors.shape}, expected ({len(units)}, dim)")
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        vectors = np.divide(vectors, norms, out=np.zeros_like(vectors), where=norms > 0)
    return units, vectors


def semantic_embedding_tokens(text: str, embed: Embed | None, percentile: float, min_tokens: int,
                              max_tokens: int) -> list[ChunkSpan]:
    """``semantic_embedding`` with the floor ``min_tokens`` and the ceiling ``max_tokens`` in
    cl100k_base tokens (``token_windows.TokenMeasure``: floors compare the estimated token count
    of a group, ceilings are re-counted exactly), as the peer tool chunklab 0.5.0 sizes them."""
    from chunklab_core.chunking.token_windows import TokenMeasure

    _require_embed(embed)
    try:
        _check(percentile, min_tokens, max_tokens)
    except ValueError as exc:
        raise ValueError(str(exc).replace("max_chars", "max_tokens").replace("min_chars", "min_tokens")) from None
    units, vectors = _embedded_units(text, embed)
    return _group_spans(text, units, vectors, percentile, min_tokens, max_tokens, TokenMeasure(text))
