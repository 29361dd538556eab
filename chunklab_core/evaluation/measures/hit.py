"""Hit: some context in the top k is relevant, 0/1 (trec_eval ``success``; ``slot_metrics``)."""

from chunklab_core.evaluation.measures import EVERY_K, Measure, register_measure
from chunklab_core.evaluation.measures._tables import SLOT, slot_table

MEASURE = register_measure(Measure(
    "hit", "some context in the top k is relevant (0/1); the chunking literature's recall@k", EVERY_K,
    "trec_eval success measure (m_success.c); called recall@k by chunking benchmarks", "success_{k}",
    "hit_rate@{k}", compute=slot_table, params=SLOT))
