"""Context efficiency: tokens of the found gold over tokens of the top k (``slot_metrics``)."""

from chunklab_core.evaluation.measures import EVERY_K, Measure, register_measure
from chunklab_core.evaluation.measures._tables import SLOT, slot_table

MEASURE = register_measure(Measure(
    "context_efficiency", "tokens of the found gold / tokens of the top k", EVERY_K,
    "defined in this series (slot_metrics)", compute=slot_table, params=SLOT))
