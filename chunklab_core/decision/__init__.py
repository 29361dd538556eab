"""Stage 11, decision: the pool, budgets, equivalence and verdicts the posts and chunklab-own both decide with.

Modules: ``margin`` (the declared smallest worthwhile difference, delta, of every equivalence test).
"""
