"""Ranking metrics over a per-question relevance matrix, one function per formula.

Input convention: ``rel`` is an array of shape (n_questions, depth) holding the relevance
grade of the context returned at each rank (rank 1 in column 0; 0 = not relevant; padding
for ranks beyond what was returned is 0), and ``n_relevant`` (n_questions,) is how many
contexts in the whole indexed collection are relevant to each question (the judged set the
ideal ranking is built from). All functions are vectorised over questions and return one
value per question, so intervals can be bootstrapped from them.

Conventions match trec_eval (and are cross-checked against pytrec_eval in the tests):
precision divides by k even when fewer than k contexts were returned; reciprocal rank is 0
when nothing relevant is returned; nDCG uses linear gains and the log2(rank + 1) discount.

Not handled: recall, F1 and AP of judged ids (``evaluation/measures/id_recall.py``, ``f1.py``,
``map.py``, one module per measure), deciding relevance (``evaluation.scoring`` for exact normalised containment,
``textmatch`` for fuzzy gold and slots), aggregation and intervals (``stats``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class JudgedIds:
    """A run judged against relevant ids, the input convention above as one value: ``rel``
    (n_questions, depth) 0/1 grades and ``n_relevant`` (n_questions,) distinct relevant ids per
    question. The run of the measures ``id_recall``, ``f1`` and ``map`` (``evaluation/measures/``);
    ``evaluators.common.EncodedRun`` has the same two fields and serves as one."""

    rel: np.ndarray
    n_relevant: np.ndarray


def _check(rel: np.ndarray, k: int) -> np.ndarray:
    rel = np.asarray(rel, dtype=float)
    if rel.ndim != 2:
        raise ValueError(f"rel must be 2-D (questions x ranks), got shape {rel.shape}")
    if not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"k must be an integer >= 1, got {k!r}")
    return rel


def hit_at_k(rel: np.ndarray, k: int) -> np.ndarray:
    """Hit rate ("recall@k" in the chunking literature): 1 if any of the top k is relevant.

    hit@k = 1[ sum_{i<=k} rel_i > 0 ]  (trec_eval ``success_k``).
    """
    rel = _check(rel, k)
    return (rel[:, :k] > 0).any(axis=1).astype(float)


def precision_at_k(rel: np.ndarray, k: int) -> np.ndarray:
    """P@k = |relevant in top k| / k  (trec_eval ``P_k``: the divisor is k, always)."""
    rel = _check(rel, k)
    return (rel[:, :k] > 0).sum(axis=1) / k


def reciprocal_rank_at_k(rel: np.ndarray, k: int) -> np.ndarray:
    """RR@k = 1 / rank of the first relevant context within the top k, else 0 (MRR@k is its mean)."""
    rel = _check(rel, k)
    relevant = rel[:, :k] > 0
    first = relevant.argmax(axis=1)
    return np.where(relevant.any(axis=1), 1.0 / (first + 1), 0.0)


def dcg_at_k(gains: np.ndarray, k: int) -> np.ndarray:
    """DCG@k = sum_{i=1..k} gain_i / log2(i + 1)  (Järvelin & Kekäläinen 2002, linear gains)."""
    gains = _check(gains, k)[:, :k]
    discounts = 1.0 / np.log2(np.arange(2, gains.shape[1] + 2))
    return gains @ discounts


def ndcg_at_k(rel: np.ndarray, k: int, ideal_gains: np.ndarray) -> np.ndarray:
    """nDCG@k = DCG@k(returned) / DCG@k(ideal), 0 when nothing is relevant.

    ``ideal_gains`` (n_questions, >= k): the grades of the judged relevant contexts sorted in
    decreasing order (zero-padded). For binary relevance with R relevant contexts this is
    IDCG = sum_{i=1..min(R,k)} 1/log2(i+1). Every relevant returned context is credited.
    """
    rel = _check(rel, k)
    ideal = dcg_at_k(np.asarray(ideal_gains, dtype=float), k)
    dcg = dcg_at_k(rel, k)
    return np.divide(dcg, ideal, out=np.zeros_like(dcg), where=ideal > 0)


def binary_ideal_gains(n_relevant: np.ndarray, k: int) -> np.ndarray:
    """Ideal gain rows for binary relevance: min(R, k) ones then zeros."""
    n_relevant = np.asarray(n_relevant)
    return (np.arange(k)[None, :] < n_relevant[:, None]).astype(float)


def tokens_at_k(context_tokens: np.ndarray, k: int) -> np.ndarray:
    """Returned tokens@k = sum of the token counts of the top k returned contexts.

    ``context_tokens`` (n_questions, depth) with 0 where fewer contexts were returned.
    """
    context_tokens = _check(context_tokens, k)
    return context_tokens[:, :k].sum(axis=1)


def context_cost(mean_hit_by_k: dict[int, float], mean_tokens_by_k: dict[int, float], target: float = 0.90):
    """Mean returned tokens at the first k whose aggregate hit rate exceeds ``target``.

    Returns ``(k, tokens)``, or ``(None, None)`` when no k reaches the target ("n/a").
    """
    for k in sorted(mean_hit_by_k):
        if mean_hit_by_k[k] > target:
            return k, mean_tokens_by_k[k]
    return None, None
