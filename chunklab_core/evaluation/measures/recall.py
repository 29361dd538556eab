"""Slot recall: the share of a question's gold slots filled by the top k (``slot_metrics``)."""

from chunklab_core.evaluation.measures import EVERY_K, Measure, register_measure
from chunklab_core.evaluation.measures._tables import SLOT, slot_table

MEASURE = register_measure(Measure(
    "recall", "slot recall: share of the question's gold slots filled by the top k", EVERY_K,
    "defined in this series (slot_metrics); equals hit@k for one slot", compute=slot_table, params=SLOT))
