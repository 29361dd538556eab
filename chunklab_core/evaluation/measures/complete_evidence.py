"""Complete evidence: every evidence span inside the top k, 0/1 (``span_metrics``)."""

from chunklab_core.evaluation.measures import EVERY_K, Measure, register_measure
from chunklab_core.evaluation.measures._tables import span_table

MEASURE = register_measure(Measure(
    "complete_evidence", "every evidence span lies inside the top k (0/1)", EVERY_K,
    "defined in this series (span_metrics)", compute=span_table))
