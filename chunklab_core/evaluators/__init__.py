"""Stage 13, evaluators: score each stage of a pipeline you already run, from its outputs alone.

Seven stage evaluators, each taking plain inputs (ids, texts, spans, numpy vectors, latencies)
and returning a ``common.StageResult`` (per-query values and their means; "not measured" is
``None``, never 0, never in a mean): ``chunking`` (reuses ``chunking.health``), ``embedding``
(vectors and index against exact search), ``retrieval`` (reuses ``evaluation.ranking_metrics``
and ``span_metrics``), ``reranking`` (reuses ``rerank.stage``), ``augmentation`` (the packed
context), ``generation`` (reuses ``answers.metrics``) and ``end_to_end``. Shared rules live in
``common`` (the word token, the percentile rule, a repeated id counted once at its first rank).

Then: ``records`` (the records, chunk and TREC files, validated), ``from_records`` (which field
feeds which metric), ``funnel`` (per query, the step that loses the answer), ``scorecard`` (tables with bootstrap intervals from ``stats``, A vs B by
``stats.claims``), ``report_files`` (CSV, JSON, HTML, all or nothing), ``cli``
(``chunklab-evaluate``) and ``vector_db`` (a chromadb adapter, optional dependency).

Not held: the series' own pipelines and posts (``own``, ``reports``). Imports the stages above it.
"""
