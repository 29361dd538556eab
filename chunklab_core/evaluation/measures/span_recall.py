"""Span recall: evidence characters covered by the top k (``span_metrics``)."""

from chunklab_core.evaluation.measures import EVERY_K, Measure, register_measure
from chunklab_core.evaluation.measures._tables import span_table

MEASURE = register_measure(Measure(
    "span_recall", "evidence characters covered by the top k / evidence characters", EVERY_K,
    "Smith & Troynikov, Evaluating Chunking Strategies for Retrieval, Chroma technical report (2024)",
    compute=span_table))
