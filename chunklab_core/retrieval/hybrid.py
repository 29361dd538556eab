"""Hybrid retrieval by Reciprocal Rank Fusion (RRF) of several rankings.

Handles: fusing the ranked id lists of any number of retrievers (``rrf_fuse``), and a
retriever with the common ``fit``/``search`` interface that runs its components to a fixed
depth and fuses them (``HybridRetriever``).

Formula (Cormack, Clarke & Büttcher, "Reciprocal Rank Fusion outperforms Condorcet and
individual Rank Learning Methods", SIGIR 2009, eq. 1, with their k = 60)::

    RRF(d) = sum over rankings r that contain d of  1 / (rrf_k + rank_r(d)),  rank starting at 1

A document absent from a ranking contributes nothing for it. Ties in RRF(d) break by the best
(smallest) rank d reached in any ranking, then by lower id. Each document's terms are summed in
ascending rank order, so the float sum, and hence the whole result, is bit-for-bit the same
whatever order the rankings are listed in. (Two documents whose *different* rank multisets
have mathematically equal sums may still differ in the last bit; that order is then decided
by the float values, consistently.)

Written by hand because the tie rule and the order-independence must be exact and it is a
few vectorised lines; the tests check it against a plain-Python dictionary implementation.

Not handled: weighted fusion, score-based fusion (CombSUM, CombMNZ), rankings of different
documents collections.
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from chunklab_core.retrieval.registry import RECORD_DEPTH


def rrf_term(rank: np.ndarray, rrf_k: float = 60.0) -> np.ndarray:
    """``1 / (rrf_k + rank)``, rank starting at 1 (Cormack et al. 2009, eq. 1)."""
    return 1.0 / (rrf_k + np.asarray(rank, dtype=np.float64))


def rrf_fuse(rankings: Sequence[np.ndarray], k: int, rrf_k: float = 60.0) -> tuple[np.ndarray, np.ndarray]:
    """Fuse ranked id matrices ``(n_queries, k_i)`` into the top ``k`` by RRF.

    Negative ids are padding (no document at that rank) and are skipped; an id repeated within
    one row of one ranking is an error. Returns ``(ids int64, scores float64)`` of shape
    ``(n_queries, w)`` with ``w = min(k, largest number of distinct ids in a row)``; rows with
    fewer distinct ids are padded with id -1 and score 0.0.
    """
    if not isinstance(k, (int, np.integer)) or isinstance(k, bool) or k < 1:
        raise ValueError(f"k must be an integer >= 1, got {k!r}")
    if rrf_k < 0:
        raise ValueError(f"rrf_k must be >= 0, got {rrf_k}")
    if len(rankings) == 0:
        raise ValueError("rrf_fuse needs at least one ranking")
    mats = [np.asarray(r) for r in rankings]
    if any(m.ndim != 2 for m in mats):
        raise ValueError("every ranking must be a 2-D array (n_queries, depth)")
    n_queries = mats[0].shape[0]
    if any(m.shape[0] != n_queries for m in mats):
        raise ValueError(f"rankings disagree on the number of queries: {[m.shape[0] for m in mats]}")
    if any(m.size and not np.issubdtype(m.dtype, np.integer) for m in mats):
        raise ValueError("rankings must hold integer ids")
    _check_no_duplicates(mats)

    # One entry per (query, ranking, position): the query row, the id, its rank (from 1).
    rows = np.concatenate([np.repeat(np.arange(n_queries), m.shape[1]) for m in mats]).astype(np.int64)
    ids = np.concatenate([m.reshape(-1) for m in mats]).astype(np.int64)
    ranks = np.concatenate([np.tile(np.arange(1, m.shape[1] + 1), n_queries) for m in mats]).astype(np.int64)
    keep = ids >= 0
    rows, ids, ranks = rows[keep], ids[keep], ranks[keep]

    # Group by (query, id); inside a group the entries are in ascending rank (canonical sum order).
    order = np.lexsort((ranks, ids, rows))
    rows, ids, ranks = rows[order], ids[order], ranks[order]
    new_group = np.ones(len(ids), dtype=bool)
    new_group[1:] = (rows[1:] != rows[:-1]) | (ids[1:] != ids[:-1])
    group = np.cumsum(new_group) - 1
    n_groups = int(group[-1]) + 1 if len(group) else 0
    counts = np.bincount(group, minlength=n_groups)  # at most len(mats): no duplicates in a row
    fused = np.zeros(n_groups)
    starts = np.flatnonzero(new_group)
    for position in range(len(mats)):  # add the j-th smallest rank of every group, j = 0, 1, ...
        take = counts > position
        fused[take] += rrf_term(ranks[starts[take] + position], rrf_k)
    group_rows = rows[new_group]
    group_ids = ids[new_group]
    best_rank = ranks[new_group]  # first entry of each group has its smallest rank

    # Order within each query: score desc, best rank asc, id asc.
    final = np.lexsort((group_ids, best_rank, -fused, group_rows))
    group_rows, group_ids, fused = group_rows[final], group_ids[final], fused[final]
    per_row = np.bincount(group_rows, minlength=n_queries)
    width = int(min(k, per_row.max())) if n_queries and per_row.size else 0
    out_ids = np.full((n_queries, width), -1, dtype=np.int64)
    out_scores = np.zeros((n_queries, width), dtype=np.float64)
    row_start = np.concatenate([[0], np.cumsum(per_row)[:-1]]) if n_queries else np.zeros(0, dtype=np.int64)
    position_in_row = np.arange(len(group_rows)) - row_start[group_rows]
    keep = position_in_row < width
    out_ids[group_rows[keep], position_in_row[keep]] = group_ids[keep]
    out_scores[group_rows[keep], position_in_row[keep]] = fused[keep]
    return out_ids, out_scores


def _check_no_duplicates(mats: list[np.ndarray]) -> None:
    """Raise if some row of some ranking lists the same (non-negative) id twice."""
    for index, m in enumerate(mats):
        if m.shape[1] < 2:
            continue
        sorted_rows = np.sort(m, axis=1)
        repeated = (sorted_rows[:, 1:] == sorted_rows[:, :-1]) & (sorted_rows[:, 1:] >= 0)
        if repeated.any():
            row = int(np.flatnonzero(repeated.any(axis=1))[0])
            raise ValueError(f"ranking {index} lists an id twice in row {row}")


class HybridRetriever:
    """Fusion of several retrievers that share ``fit(texts)`` / ``search(queries, k)``.

    ``search`` asks each component for its top ``max(depth, k)`` texts and fuses them with
    ``fuse(rankings, k)`` (default ``rrf_fuse`` with ``rrf_k``; a fused registry spec passes its
    own); a text outside every component's list gets no score, so ``depth`` bounds what can
    surface (Cormack et al. fused full runs of depth 1000).
    """

    def __init__(self, retrievers: Sequence, depth: int = RECORD_DEPTH, rrf_k: float = 60.0,
                 fuse: Callable[[Sequence[np.ndarray], int], tuple[np.ndarray, np.ndarray]] | None = None) -> None:
        if len(retrievers) == 0:
            raise ValueError("HybridRetriever needs at least one retriever")
        if depth < 1:
            raise ValueError(f"depth must be >= 1, got {depth}")
        if rrf_k < 0:
            raise ValueError(f"rrf_k must be >= 0, got {rrf_k}")
        self.retrievers = list(retrievers)
        self.depth, self.rrf_k = int(depth), float(rrf_k)
        self.fuse = fuse if fuse is not None else (lambda rankings, k: rrf_fuse(rankings, k=k, rrf_k=self.rrf_k))
        self.n_docs = 0

    def fit(self, texts: Sequence[str]) -> "HybridRetriever":
        if isinstance(texts, str):
            raise TypeError("texts must be a sequence of strings, not one string; wrap it: [texts]")
        if len(texts) == 0:
            raise ValueError("fit needs at least one text")
        for retriever in self.retrievers:
            retriever.fit(texts)
        self.n_docs = len(texts)
        return self

    def search(self, queries: Sequence[str], k: int) -> tuple[np.ndarray, np.ndarray]:
        """Top ``min(k, n)`` text indices and RRF scores per query, best first."""
        if not isinstance(k, (int, np.integer)) or isinstance(k, bool) or k < 1:
            raise ValueError(f"k must be an integer >= 1, got {k!r}")
        if self.n_docs == 0:
            raise ValueError("call fit(texts) before search")
        depth = max(self.depth, int(k))
        rankings = [retriever.search(queries, depth)[0] for retriever in self.retrievers]
        width = min(int(k), self.n_docs)
        if len(queries) == 0:
            return np.empty((0, width), dtype=np.int64), np.empty((0, width), dtype=np.float64)
        return self.fuse(rankings, width)
