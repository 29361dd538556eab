"""Stage 4, evaluation: how good a ranked list is.

Modules: ``measures`` (the registry: every measure once, its k, trec_eval name, source, and
the metric column names), ``ranking_metrics`` (hit, P, RR, nDCG, tokens@k), ``gold_slots``,
``slot_metrics`` and ``span_metrics`` (fuzzy gold slots and character-offset evidence for long
documents), ``token_metrics`` (token span recall, for gold longer than a chunk), ``chroma_metrics`` (Chroma's report's recall, precision, precision_Ω and IoU, its
overlap counting), ``budget`` (recall at a token budget), ``judgment_store`` (judgments and token counts
stored beside the recorded rankings, read by a replay), ``judgment_checks`` (their arrays
checked on load, their counts recounted in a sample when used), ``scoring`` (a retrieval run judged and
scored per question), ``scoreability`` (which questions a measure can score at all, and the
corpus without those none can), ``matrix`` (corpus x strategy x retriever x model), ``trec_export``
(TREC run and qrels files; ``chunklab-trec``), ``report_view`` (a run's spans as Chroma's report's code
locates its chunks, to score it as that code does).

Not held: intervals and verdicts (``stats``). Imports the stages above it.
"""
