"""The reranking stage: re-score the first N candidates of a first-stage run, keep the rest.

Handles: :func:`rerank_prefix`, the stage itself on a matrix of ranked ids (pure numpy: the
top ``depth`` candidates of each row are re-ordered by a second scorer, everything after them
keeps its first-stage order, nothing outside the row enters it); :func:`relevance_matrix`
(ranked context ids -> 0/1 grades by the question's relevant ids); and :func:`stage_metrics`,
the per-question measures of the stage, one row per question:

* ``ndcg_before`` / ``ndcg_after`` (nDCG@k, ``evaluation.ranking_metrics.ndcg_at_k``, ideal from every relevant
  context of the collection), ``rr_before`` / ``rr_after`` (RR@k, MRR@k is its mean),
  ``p_before`` / ``p_after`` (P@k); their differences are the stage's ΔnDCG, ΔMRR and ΔP@k;
* ``ceiling``: first-stage hit@N (``evaluation.ranking_metrics.hit_at_k`` at the depth) -- the most a reranker
  of depth N can reach, because it only reorders what the first stage found;
* ``hit_before`` / ``hit_after``: hit@k before and after;
* ``same_set``: 1 when the top-k *set* is unchanged (a reranker that only reorders inside the
  top k scores 1), else 0;
* ``rescued`` / ``pushed_out``: relevant contexts that entered the top k from ranks k+1..N,
  and relevant contexts that left it.

Why by hand: the stage is three lines of numpy, but its two guarantees (prefix-only
reordering; nothing from outside the candidates) are the research question of post 07, so
they are written out and pinned by tests. Ties in the second score keep first-stage order
(a stable sort), so a constant scorer changes nothing.

Not handled: scoring (``rerank.scorers``), intervals (``stats``), listwise rerankers.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from chunklab_core.evaluation import ranking_metrics as metrics


def rerank_prefix(ranked: np.ndarray, prefix_scores: np.ndarray, depth: int) -> np.ndarray:
    """Re-order the first ``depth`` ids of each row by ``prefix_scores``, descending.

    ``ranked``: (n_rows, width) int ids in first-stage order, ``-1`` padding at the end of a
    row. ``prefix_scores``: (n_rows, >= min(depth, width)) second-stage scores of
    ``ranked[:, :depth]`` (values at padded positions are ignored). Ties keep first-stage
    order. Ranks beyond ``depth`` and padding are returned unchanged. Returns a new array.
    """
    ranked = np.asarray(ranked)
    if ranked.ndim != 2:
        raise ValueError(f"ranked must be 2-D (rows x ranks), got shape {ranked.shape}")
    if not isinstance(depth, (int, np.integer)) or depth < 1:
        raise ValueError(f"depth must be an integer >= 1, got {depth!r}")
    depth = int(min(depth, ranked.shape[1]))
    scores = np.asarray(prefix_scores, dtype=float)
    if scores.ndim != 2 or scores.shape[0] != ranked.shape[0] or scores.shape[1] < depth:
        raise ValueError(f"prefix_scores must have shape ({ranked.shape[0]}, >= {depth}), got {scores.shape}")
    prefix = ranked[:, :depth]
    valid = prefix >= 0
    if np.isnan(scores[:, :depth][valid]).any():
        raise ValueError("prefix_scores has NaN for a real candidate; every candidate needs a score")
    keyed = np.where(valid, -scores[:, :depth], np.inf)  # padding sorts last
    order = np.argsort(keyed, axis=1, kind="stable")
    out = ranked.copy()
    out[:, :depth] = np.take_along_axis(prefix, order, axis=1)
    return out


def relevance_matrix(ranked: np.ndarray, relevant: Sequence[np.ndarray]) -> np.ndarray:
    """0/1 grades of ``ranked`` (-1 padding counts 0) given each row's relevant ids."""
    ranked = np.asarray(ranked)
    if len(relevant) != ranked.shape[0]:
        raise ValueError(f"{len(relevant)} relevant-id lists for {ranked.shape[0]} ranked rows")
    rel = np.zeros(ranked.shape, dtype=float)
    for row, ids in enumerate(relevant):
        valid = ranked[row] >= 0
        rel[row, valid] = np.isin(ranked[row, valid], np.asarray(ids))
    return rel


def same_top_set(before: np.ndarray, after: np.ndarray, k: int) -> np.ndarray:
    """1.0 per row when the top-k id sets of ``before`` and ``after`` are equal, else 0.0."""
    b = np.sort(np.asarray(before)[:, :k], axis=1)
    a = np.sort(np.asarray(after)[:, :k], axis=1)
    return (a == b).all(axis=1).astype(float)


def moved_relevant(before_rel: np.ndarray, after_rel: np.ndarray, before: np.ndarray, after: np.ndarray,
                   k: int) -> tuple[np.ndarray, np.ndarray]:
    """Per row: (relevant ids that entered the top k, relevant ids that left it), as counts."""
    rescued = np.zeros(before.shape[0])
    pushed = np.zeros(before.shape[0])
    for row in range(before.shape[0]):
        top_before = set(before[row, :k][before_rel[row, :k] > 0].tolist())
        top_after = set(after[row, :k][after_rel[row, :k] > 0].tolist())
        rescued[row] = len(top_after - top_before)
        pushed[row] = len(top_before - top_after)
    return rescued, pushed


def stage_metrics(before: np.ndarray, after: np.ndarray, relevant: Sequence[np.ndarray], k: int,
                  depth: int) -> pd.DataFrame:
    """Per-question measures of one reranking stage (see the module docstring for the columns).

    ``before``/``after``: ranked ids (n_questions, width >= k) of the first stage and of the
    reranked run; ``relevant``: each question's relevant ids in the whole collection.
    """
    before, after = np.asarray(before), np.asarray(after)
    if before.shape != after.shape:
        raise ValueError(f"before {before.shape} and after {after.shape} must have the same shape")
    if k > before.shape[1]:
        raise ValueError(f"k={k} exceeds the ranked width {before.shape[1]}")
    rel_before = relevance_matrix(before, relevant)
    rel_after = relevance_matrix(after, relevant)
    n_relevant = np.array([len(r) for r in relevant])
    ideal = metrics.binary_ideal_gains(n_relevant, k)
    rescued, pushed = moved_relevant(rel_before, rel_after, before, after, k)
    return pd.DataFrame({
        "ndcg_before": metrics.ndcg_at_k(rel_before, k, ideal),
        "ndcg_after": metrics.ndcg_at_k(rel_after, k, ideal),
        "rr_before": metrics.reciprocal_rank_at_k(rel_before, k),
        "rr_after": metrics.reciprocal_rank_at_k(rel_after, k),
        "p_before": metrics.precision_at_k(rel_before, k),
        "p_after": metrics.precision_at_k(rel_after, k),
        "hit_before": metrics.hit_at_k(rel_before, k),
        "hit_after": metrics.hit_at_k(rel_after, k),
        "ceiling": metrics.hit_at_k(rel_before, min(depth, before.shape[1])),
        "same_set": same_top_set(before, after, k),
        "rescued": rescued,
        "pushed_out": pushed,
    })
