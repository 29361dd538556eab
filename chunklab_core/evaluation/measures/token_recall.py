"""Token recall: gold word tokens inside the top k; read by post 02 on long gold, not scored in every cell."""

from chunklab_core.evaluation.measures import EVERY_K, Measure, register_measure
from chunklab_core.evaluation.measures._tables import token_recall_table

MEASURE = register_measure(Measure(
    "token_recall", "gold word tokens inside the top k / gold word tokens", EVERY_K,
    "defined in this series (span recall with tokens for characters)", compute=token_recall_table,
    matrix=False))
