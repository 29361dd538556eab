"""Graded nDCG at the depth, pooled ideal (``slot_metrics``, ``ranking_metrics.ndcg_at_k``)."""

from chunklab_core.evaluation.measures import DEPTH, Measure, register_measure
from chunklab_core.evaluation.measures._tables import SLOT, slot_table

MEASURE = register_measure(Measure(
    "ndcg", "normalised discounted cumulative gain at the depth, linear gains, log2 discount", DEPTH,
    "Järvelin & Kekäläinen, Cumulated gain-based evaluation of IR techniques, ACM TOIS 20(4), 2002; "
    "trec_eval ndcg_cut (m_ndcg_cut.c)", "ndcg_cut_{k}", "ndcg@{k}", compute=slot_table, params=SLOT))
