"""Recall of relevant ids: the share of a question's relevant ids found in the top k (trec_eval ``recall``).

recall@k = |relevant ids in the top k| / R, with R the question's distinct relevant ids (its
qrels); NaN ("not measured") where R = 0, as trec_eval leaves out a query without relevant
documents. Source: trec_eval ``recall_k`` (m_recall.c); ranx ``recall@k``; Manning, Raghavan &
Schütze, *Introduction to Information Retrieval* (2008), §8.3.

Its run is judged ids (``ranking_metrics.JudgedIds``: ``rel`` 0/1 per rank, ``n_relevant`` per
question; ``evaluators.common.encode_ranked`` makes one from ranked id lists), which the stage
evaluators have and the series' slot-graded runs do not: ``run_matrix`` does not score it
(``matrix=False``). Not slot ``recall`` (the share of a question's gold *answer slots*, ``recall.py``).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from chunklab_core.evaluation.measures import EVERY_K, Measure, column, register_measure


def recall_at_k(rel: np.ndarray, n_relevant: np.ndarray, k: int) -> np.ndarray:
    """recall@k = |relevant in top k| / R per query; NaN (not measured) where R = 0
    (trec_eval ``recall_k``, which leaves such queries out)."""
    hits = (np.asarray(rel)[:, :k] > 0).sum(axis=1).astype(float)
    n_relevant = np.asarray(n_relevant, dtype=float)
    return np.divide(hits, n_relevant, out=np.full_like(hits, np.nan), where=n_relevant > 0)


def id_recall_table(run, ks: Sequence[int], **_context):
    """One row per question of ``run`` (judged ids), columns ``id_recall@k`` for every k."""
    import pandas as pd

    return pd.DataFrame({column("id_recall", k): recall_at_k(run.rel, run.n_relevant, k) for k in ks})


MEASURE = register_measure(Measure(
    "id_recall", "recall of the relevant ids: relevant ids in the top k / the question's relevant ids", EVERY_K,
    "trec_eval recall (m_recall.c); Manning, Raghavan & Schütze, Introduction to Information Retrieval (2008) 8.3",
    "recall_{k}", "recall@{k}", compute=id_recall_table, matrix=False))
