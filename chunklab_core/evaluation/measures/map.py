"""Average precision of the top k, bounded by min(R, k): ``map@k`` (its mean over questions is MAP@k).

AP@k = (sum_{i=1..k} P@i rel_i) / min(R, k), with P@i = (sum_{j<=i} rel_j) / i, rel_i = 1 when
the id at rank i is relevant, R the question's distinct relevant ids; NaN ("not measured")
where R = 0. Bounded by min(#relevant, k), so a perfect top k scores 1 even when R > k. Source:
Hamner's ml_metrics ``apk`` (average_precision.py); it equals trec_eval's ``map_cut_k`` (and
ranx's ``map@k``), which divide by R, times R / min(R, k): the same whenever R <= k, so neither
is its counterpart name here.

Its run is judged ids (``ranking_metrics.JudgedIds``), as ``id_recall``'s: ``run_matrix`` does
not score it (``matrix=False``).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from chunklab_core.evaluation.measures import EVERY_K, Measure, column, register_measure


def map_at_k(rel: np.ndarray, n_relevant: np.ndarray, k: int) -> np.ndarray:
    """AP@k = (sum_{i=1..k} P@i * rel_i) / min(R, k); NaN where R = 0.

    P@i = (sum_{j<=i} rel_j) / i. Bounded by min(#relevant, K) (ml_metrics ``apk``); equals
    trec_eval ``map_cut_k`` times R / min(R, k). MAP@k is the mean over queries.
    """
    hits = (np.asarray(rel)[:, :k] > 0).astype(float)
    precision_at_i = np.cumsum(hits, axis=1) / np.arange(1, hits.shape[1] + 1)
    total = (precision_at_i * hits).sum(axis=1)
    bound = np.minimum(np.asarray(n_relevant, dtype=float), k)
    return np.divide(total, bound, out=np.full_like(total, np.nan), where=bound > 0)


def map_table(run, ks: Sequence[int], **_context):
    """One row per question of ``run`` (judged ids), columns ``map@k`` for every k."""
    import pandas as pd

    return pd.DataFrame({column("map", k): map_at_k(run.rel, run.n_relevant, k) for k in ks})


MEASURE = register_measure(Measure(
    "map", "average precision of the relevant ids in the top k, divided by min(R, k) (MAP@k is its mean)", EVERY_K,
    "Hamner, ml_metrics apk (average_precision.py); trec_eval map_cut times R / min(R, k)",
    compute=map_table, matrix=False))
