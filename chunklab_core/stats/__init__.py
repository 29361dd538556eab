"""Stage 5, stats: how sure we can be.

Modules: ``bootstrap`` (percentile and paired bootstrap intervals), ``clustered`` (resampling
documents, design effects), ``claims`` (the one verdict rule every claim is worded by),
``selection`` and ``holdout`` (picking a winner, and checking the pick on held-out
questions), ``simulation`` (how often the leader is the best), ``rank_stability`` (Kendall
tau), ``trend`` (trend tests), ``agreement`` (kappa, confusion tables, PPI),
``stratified`` (estimates from a stratified graded sample).

Not held: any knowledge of retrieval or answers beyond arrays of per-item scores.
"""
