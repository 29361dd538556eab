"""Post 00 (the decision guide and the series' findings), read from the tables the posts commit.

Modules: ``sources`` (which table each post commits, reading one with a clear error naming the
post to re-execute, and the key that cites one of its rows), ``tables`` (the decision guide: per kind of document and
retriever: the strategies that cannot be ruled out, the cheapest of them, its verdict and what
would decide; the retriever, embedding-model and reranking comparisons counted; every judge of
post 06), ``findings`` (each post's findings, every row citing its source row by key; the
reading order) and ``prose`` (the sentences, from the Markdown templates in ``prose.md``).

Nothing here re-runs an experiment or re-estimates an interval a post already reports.
"""

from chunklab_core.reports.post00.findings import (READING_ORDER, POST_FINDINGS, post_findings, findings_table, findings_view, posts_with_findings,
                                                   reading_order, small_rows)
from chunklab_core.reports.post00.tables import (pool_budgets, model_windows, pool_candidates, pool_guide, KINDS, chunking_guide, cost_aware_guide, series_comparisons, comparison_counts, decision_counts, guide_comparisons,
                                                judge_accuracy, judge_agreement, judge_trust, ppi_gaps, questions_to_decide)
from chunklab_core.reports.post00.prose import (pool_guide_text, pool_guide_view, cost_text, counts_text, findings_text, guide_text, guide_view, judge_text,
                                                limitations, model_text, rerank_text, retriever_text)
from chunklab_core.reports.post00.sources import SOURCES, MissingTable, key_text, parse_key, read_table, row_by_key

__all__ = ["pool_budgets", "model_windows", "pool_candidates", "pool_guide", "pool_guide_text", "pool_guide_view", "READING_ORDER", "POST_FINDINGS", "post_findings", "findings_table", "findings_view", "posts_with_findings", "reading_order", "small_rows", "KINDS",
           "chunking_guide", "cost_aware_guide", "cost_text", "series_comparisons", "comparison_counts", "decision_counts", "guide_comparisons", "judge_accuracy", "judge_agreement", "judge_trust",
           "ppi_gaps", "questions_to_decide", "counts_text", "findings_text", "guide_text", "guide_view",
           "judge_text", "limitations", "model_text", "rerank_text", "retriever_text", "SOURCES", "MissingTable", "key_text", "parse_key", "read_table",
           "row_by_key"]
