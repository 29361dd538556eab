"""Complete: every gold slot filled by the top k, 0/1 (``slot_metrics``)."""

from chunklab_core.evaluation.measures import EVERY_K, Measure, register_measure
from chunklab_core.evaluation.measures._tables import SLOT, slot_table

MEASURE = register_measure(Measure(
    "complete", "every gold slot filled by the top k (0/1)", EVERY_K,
    "defined in this series (slot_metrics)", compute=slot_table, params=SLOT))
