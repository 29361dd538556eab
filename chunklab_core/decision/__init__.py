"""Stage 11, decision: the pool, budgets, equivalence and verdicts the posts and chunklab-own both decide with.

Modules: ``margin`` (the declared smallest worthwhile difference δ and the equivalence arithmetic),
``candidates`` (the pool, its budgets and measures, the simplicity order), ``scores`` (per-question
scores at matched cost, window shares), ``verdicts`` (paired intervals under both resampling designs),
``engine`` (leader, equivalents, pick per budget, the budget rule, the setting's verdict at each
margin), ``compare`` (the engine's step of one budget on any questions x candidates matrix: chunklab-own's
and post 02's views at k chunks), ``guide`` (per-budget and per-setting views, robustness over margins).
"""
