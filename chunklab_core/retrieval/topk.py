"""Deterministic top-k selection shared by every retriever (BM25, dense).

Handles: :func:`top_k_rows`, the top columns of each row of a score matrix with ties broken
by column index, so two runs -- or two retrievers given equal scores -- return the same
ranking. Written by hand because ``numpy.argpartition`` leaves ties in an unspecified order
and a full ``argsort`` of every row costs O(n log n) per query. Not handled: scoring.
"""

from __future__ import annotations

import numpy as np


def top_k_rows(scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Top ``min(k, n_cols)`` columns of each row of ``scores`` by descending score.

    Ties break by column index, lower first, also at the k-th place: ``np.argpartition``
    picks candidates; rows whose k-th score is shared with columns outside the candidates are
    re-selected exactly (all columns above that score, then the lowest-index columns at it);
    a stable sort of the candidates, taken in index order, then orders them.
    Returns ``(ids int64, scores)``, each of shape ``(n_rows, min(k, n_cols))``.
    """
    n_rows, n_cols = scores.shape
    k = min(k, n_cols)
    if k == n_cols:
        ids = np.argsort(-scores, axis=1, kind="stable").astype(np.int64, copy=False)
        return ids, np.take_along_axis(scores, ids, axis=1)
    candidates = np.argpartition(-scores, k - 1, axis=1)[:, :k]
    candidates.sort(axis=1)
    candidate_scores = np.take_along_axis(scores, candidates, axis=1)
    kth = candidate_scores.min(axis=1)
    tied_rows = np.flatnonzero((scores >= kth[:, None]).sum(axis=1) > k)
    if tied_rows.size:
        block, threshold = scores[tied_rows], kth[tied_rows, None]
        above = block > threshold
        at = block == threshold
        needed = k - above.sum(axis=1)
        chosen = above | (at & (np.cumsum(at, axis=1) <= needed[:, None]))
        candidates[tied_rows] = np.nonzero(chosen)[1].reshape(tied_rows.size, k)
        candidate_scores[tied_rows] = np.take_along_axis(block, candidates[tied_rows], axis=1)
    order = np.argsort(-candidate_scores, axis=1, kind="stable")
    ids = np.take_along_axis(candidates, order, axis=1).astype(np.int64, copy=False)
    return ids, np.take_along_axis(candidate_scores, order, axis=1)
