"""Tokens: cl100k_base tokens of the top k returned contexts (``ranking_metrics.tokens_at_k``)."""

from chunklab_core.evaluation.measures import EVERY_K, Measure, register_measure
from chunklab_core.evaluation.measures._tables import SLOT, slot_table

MEASURE = register_measure(Measure(
    "tokens", "cl100k_base tokens of the top k returned contexts", EVERY_K,
    "defined in this series (tiktoken cl100k_base counts)", compute=slot_table, params=SLOT))
