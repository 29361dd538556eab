"""Stage 4, evaluation: how good a ranked list is.

Holds: the measure registry, the ranking metrics (hit, P, RR, nDCG, tokens@k), gold slots and
slot/span metrics for long documents, token budgets, scoring of a retrieval run into
per-question tables, the corpus x strategy x retriever matrix, and TREC run/qrels export.
Not held: intervals and verdicts (``stats``). Imports the stages above it.
"""
