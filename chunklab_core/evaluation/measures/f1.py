"""F1 of the top k against the relevant ids: the harmonic mean of precision@k and recall@k.

F1@k = 2 P R / (P + R), with P = |relevant ids in the top k| / k (``ranking_metrics.precision_at_k``,
trec_eval ``P_k``) and R = ``id_recall@k`` (``id_recall.py``); 0 when P + R = 0, NaN ("not
measured") where R is (the question has no relevant id). Source: van Rijsbergen, *Information
Retrieval* (2nd ed., 1979), ch. 7, the F measure with beta = 1; ranx ``f1@k``. trec_eval has none.

Its run is judged ids (``ranking_metrics.JudgedIds``), as ``id_recall``'s: ``run_matrix`` does
not score it (``matrix=False``).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from chunklab_core.evaluation.measures import EVERY_K, Measure, column, register_measure
from chunklab_core.evaluation.measures.id_recall import recall_at_k


def f1_at_k(precision: np.ndarray, recall: np.ndarray) -> np.ndarray:
    """F1@k = 2 P R / (P + R), 0 when P + R = 0, NaN where recall is not measured (the
    harmonic mean of ``precision@k`` and ``recall@k``; ranx ``f1@k``)."""
    p, r = np.asarray(precision, dtype=float), np.asarray(recall, dtype=float)
    total = p + r
    out = np.divide(2 * p * r, total, out=np.zeros_like(p), where=total > 0)
    out[np.isnan(r)] = np.nan
    return out


def f1_table(run, ks: Sequence[int], **_context):
    """One row per question of ``run`` (judged ids), columns ``f1@k`` for every k."""
    import pandas as pd

    from chunklab_core.evaluation.ranking_metrics import precision_at_k

    return pd.DataFrame({column("f1", k): f1_at_k(precision_at_k(run.rel, k), recall_at_k(run.rel, run.n_relevant, k))
                         for k in ks})


MEASURE = register_measure(Measure(
    "f1", "harmonic mean of precision and recall of the relevant ids in the top k", EVERY_K,
    "van Rijsbergen, Information Retrieval (1979), ch. 7 (F, beta = 1); ranx f1", None, "f1@{k}",
    compute=f1_table, matrix=False))
