"""Precision at k: relevant contexts in the top k over k (trec_eval ``P``; ``slot_metrics``)."""

from chunklab_core.evaluation.measures import EVERY_K, Measure, register_measure
from chunklab_core.evaluation.measures._tables import SLOT, slot_table

MEASURE = register_measure(Measure(
    "p", "precision: relevant contexts in the top k, divided by k", EVERY_K,
    "trec_eval P (m_P.c); Manning, Raghavan & Schütze, Introduction to IR (2008), ch. 8", "P_{k}",
    "precision@{k}", compute=slot_table, params=SLOT))
