"""Stage 7, reranking: re-scoring a first stage's top N.

Holds: the prefix-only reranking stage, its scorers (bi-encoder, cross-encoder, a recorded
LLM YES/NO judge) and the depth-sweep study behind post 07. It comes after ``llm`` because
one scorer is a recorded LLM. Not held: post 07's tables and figures (``reports.post07``).
"""
