"""Stage 7, rerank: re-scoring a first stage's top N.

Modules: ``stage`` (the prefix-only reranking stage and its before/after measures),
``scorers`` (bi-encoder, cross-encoder, and a recorded LLM YES/NO judge), ``study`` (the
depth sweep behind post 07; ``chunklab-record-rerank`` records its LLM calls). It comes after
``llm`` because one scorer is a recorded LLM. Not held: post 07's tables and figures
(``reports.post07``).
"""
