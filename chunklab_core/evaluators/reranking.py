"""The reranking stage evaluator: your list before and after your reranker, on the same queries.

Per query at cutoff ``k`` (ids encoded with one codebook for both lists, a repeated id counted
once at its first rank; ``common.encode_ranked``), reusing the series' functions
(``evaluation.ranking_metrics``, ``rerank.stage.same_top_set``, ``rerank.stage.moved_relevant``):

* ``ndcg@k_before`` / ``_after`` / ``delta_ndcg@k`` (after - before), the same for ``rr@k``
  (ΔMRR) and ``precision@k`` (ΔP@k);
* ``same_set@k`` = 1[the top-k id sets are equal] (a reranker that only reorders inside the top k);
* ``rescued@k`` / ``pushed_out@k``: relevant ids that entered / left the top k;
* ``first_relevant_rank_change`` = rank of the first relevant id before - after (positive:
  the reranker moved it up); measured when both lists hold a relevant id.

Metrics that need relevance are not measured without ``gold_ids``; ``same_set@k`` needs only
the two lists. Not handled: scoring (your reranker did it), listwise diagnostics.
"""

from __future__ import annotations

from typing import Collection, Sequence

import numpy as np
import pandas as pd

from chunklab_core.evaluation import ranking_metrics as rm
from chunklab_core.evaluators.common import StageResult, encode_ranked, none_where
from chunklab_core.rerank.stage import moved_relevant, same_top_set


def first_relevant_rank(rel: np.ndarray) -> np.ndarray:
    """1-based rank of the first relevant entry per row; NaN when the row holds none."""
    rel = np.asarray(rel) > 0
    return np.where(rel.any(axis=1), rel.argmax(axis=1) + 1.0, np.nan)


def first_relevant_rank_change(rel_before: np.ndarray, rel_after: np.ndarray) -> np.ndarray:
    """rank_before - rank_after of the first relevant id; NaN unless both lists hold one."""
    return first_relevant_rank(rel_before) - first_relevant_rank(rel_after)


def evaluate_reranking(qids: Sequence[str], before_ids: Sequence[Sequence[str] | None] | None = None,
                       after_ids: Sequence[Sequence[str] | None] | None = None,
                       gold_ids: Sequence[Collection[str] | None] | None = None, k: int = 5) -> StageResult:
    """Score a reranker from its input and output lists; ``None`` = not given."""
    n = len(qids)
    stage = StageResult("reranking", list(qids))
    names = [f"ndcg@{k}_before", f"ndcg@{k}_after", f"delta_ndcg@{k}", f"rr@{k}_before", f"rr@{k}_after",
             f"delta_rr@{k}", f"precision@{k}_before", f"precision@{k}_after", f"delta_precision@{k}",
             f"rescued@{k}", f"pushed_out@{k}", "first_relevant_rank_change"]
    if before_ids is None or after_ids is None:
        for name in names + [f"same_set@{k}"]:
            stage.not_measured[name] = "retrieved_ids + reranked_ids" + ("" if name.startswith("same") else " + gold_ids")
        return stage
    if len(before_ids) != n or len(after_ids) != n or (gold_ids is not None and len(gold_ids) != n):
        raise ValueError(f"before, after and gold must each hold one entry per query ({n})")
    missing = np.array([b is None or a is None for b, a in zip(before_ids, after_ids)], dtype=bool)
    before = [list(b or []) for b in before_ids]
    after = [list(a or []) for a in after_ids]
    gold = [list(g or []) for g in gold_ids] if gold_ids is not None else [[] for _ in range(n)]
    codebook = pd.Index(pd.unique(pd.Series([i for lst in before + after + gold for i in lst], dtype=object)))
    depth = max(k, max((len(x) for x in before + after), default=1))
    enc_b = encode_ranked(before, gold, depth, codebook)
    enc_a = encode_ranked(after, gold, depth, codebook)
    stage.values[f"same_set@{k}"] = none_where(same_top_set(enc_b.ids, enc_a.ids, k), missing)
    if gold_ids is None:
        for name in names:
            stage.not_measured[name] = "gold_ids"
        return stage
    unmeasured = missing | np.array([g is None for g in gold_ids], dtype=bool) | (enc_b.n_relevant == 0)
    ideal = rm.binary_ideal_gains(enc_b.n_relevant, k)
    for metric, fn in (("ndcg", lambda r: rm.ndcg_at_k(r, k, ideal)), ("rr", lambda r: rm.reciprocal_rank_at_k(r, k)),
                       ("precision", lambda r: rm.precision_at_k(r, k))):
        b = none_where(fn(enc_b.rel), unmeasured)
        a = none_where(fn(enc_a.rel), unmeasured)
        stage.values[f"{metric}@{k}_before"], stage.values[f"{metric}@{k}_after"] = b, a
        stage.values[f"delta_{metric}@{k}"] = a - b
    rescued, pushed = moved_relevant(enc_b.rel, enc_a.rel, enc_b.ids, enc_a.ids, k)
    stage.values[f"rescued@{k}"] = none_where(rescued, unmeasured)
    stage.values[f"pushed_out@{k}"] = none_where(pushed, unmeasured)
    stage.values["first_relevant_rank_change"] = none_where(first_relevant_rank_change(enc_b.rel, enc_a.rel), unmeasured)
    return stage
