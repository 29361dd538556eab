"""Reciprocal rank of the first relevant context within the depth (trec_eval ``recip_rank``; ``slot_metrics``)."""

from chunklab_core.evaluation.measures import DEPTH, Measure, register_measure
from chunklab_core.evaluation.measures._tables import SLOT, slot_table

MEASURE = register_measure(Measure(
    "rr", "reciprocal rank of the first relevant context within the depth (MRR is its mean)", DEPTH,
    "trec_eval recip_rank (m_recip_rank.c); Voorhees, The TREC-8 Question Answering Track Report (1999)",
    "recip_rank", "mrr@{k}", compute=slot_table, params=SLOT))
