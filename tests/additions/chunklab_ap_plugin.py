"""A measure an outside package adds through the entry-point group ``chunklab.measures``: AP@k.

AP@k = (sum over i <= k of P@i * rel_i) / min(R, k) (ml_metrics' ``apk``; trec_eval's
``map_cut_k`` times R / min(R, k)), with rel_i = the context at rank i fills a gold slot, and
R = the relevant contexts among those the run returned (no exhaustive judgments); NaN when R = 0.
Used by tests/test_proof_by_addition."""

import numpy as np
import pandas as pd

from chunklab_core.evaluation.measures import EVERY_K, Measure, column, register_measure


def ap_table(run, ks, threshold=0.90, **_context):
    from chunklab_core.evaluation.slot_metrics import judge_run

    relevant = judge_run(run, threshold).fills.any(axis=2).astype(float)  # (questions, depth)
    precision = np.cumsum(relevant, axis=1) / np.arange(1, relevant.shape[1] + 1)
    found = relevant.sum(axis=1)
    table = {}
    for k in ks:
        bound = np.minimum(found, k)
        total = (precision[:, :k] * relevant[:, :k]).sum(axis=1)
        table[column("ap", k)] = np.divide(total, bound, out=np.full(len(total), np.nan), where=bound > 0)
    return pd.DataFrame(table)


MEASURE = register_measure(Measure("ap", "average precision of the top k, relevant = fills a gold slot", EVERY_K,
                                   "ml_metrics apk; trec_eval map_cut", compute=ap_table,
                                   params={"threshold": 0.90}))
