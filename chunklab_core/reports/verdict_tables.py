"""Verdict tables: a leader's paired intervals against every other candidate, worded by one rule.

Handles: :func:`leader_verdicts` on any questions x candidates score matrix (recall, a 0/1
verdict, a per-question balanced score), :func:`balanced_per_question` (the balanced score of
:func:`chunklab_core.stats.bootstrap.balanced_score` per question, so it can be bootstrapped), and
:func:`balanced_verdicts` over several values of λ (how much the balanced leader depends on
the price put on tokens). Intervals are paired percentile bootstraps over questions
(:func:`chunklab_core.stats.bootstrap.paired_difference_ci`, one seed for every pair); verdict words come
from :func:`chunklab_core.stats.claims.candidate_verdicts`.

Not handled: clustered resampling (see :mod:`chunklab_core.stats.clustered`), T_min's own
sampling noise (it is the cheapest column's mean, treated as fixed).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from chunklab_core.stats import claims
from chunklab_core.stats.bootstrap import balanced_score, paired_difference_ci


def leader_verdicts(scores: pd.DataFrame, metric: str, resamples: int, seed: int) -> pd.DataFrame:
    """Paired intervals of the leader (highest mean) against every other column, with verdict words.

    ``scores`` is a questions x candidates frame of ``metric``. Rows, leader first: strategy,
    mean, ``leader − strategy`` with its 95% interval (NaN for the leader), verdict, metric, questions.
    """
    if scores.shape[1] < 2 or len(scores) == 0:
        raise ValueError(f"need at least two candidates and one question, got shape {scores.shape}")
    means = scores.mean()
    leader = means.idxmax()
    rows, intervals = [], {}
    for name in scores.columns:
        if name == leader:
            continue
        diff, low, high = paired_difference_ci(scores[leader].to_numpy(), scores[name].to_numpy(), resamples, seed)
        intervals[name] = (float(low), float(high))
        rows.append({"strategy": name, "mean": means[name], "leader − strategy": float(diff),
                     "low": float(low), "high": float(high)})
    words = claims.candidate_verdicts(leader, intervals)
    rows.sort(key=lambda r: r["leader − strategy"])
    table = pd.DataFrame([{"strategy": leader, "mean": means[leader], "leader − strategy": 0.0,
                           "low": np.nan, "high": np.nan}, *rows])
    return table.assign(verdict=table["strategy"].map(words), metric=metric, questions=len(scores))


def balanced_per_question(recall: pd.DataFrame, tokens: pd.DataFrame, lam: float) -> pd.DataFrame:
    """Per-question balanced score ``recall − λ·(tokens/T_min − 1)``, T_min the cheapest column mean."""
    recall, tokens = recall.align(tokens, join="inner")
    return balanced_score(recall, tokens, lam=lam)


def balanced_verdicts(recall: pd.DataFrame, tokens: pd.DataFrame, lams: Sequence[float], resamples: int,
                      seed: int) -> pd.DataFrame:
    """:func:`leader_verdicts` of the balanced score at each λ in ``lams`` (column ``lambda``)."""
    parts = [leader_verdicts(balanced_per_question(recall, tokens, lam), "balanced", resamples, seed).assign(**{"lambda": lam})
             for lam in lams]
    return pd.concat(parts, ignore_index=True)


def verdict_summary(table: pd.DataFrame, what: str = "") -> str:
    """One sentence from a :func:`leader_verdicts` table (the leader is its first row)."""
    words = dict(zip(table["strategy"], table["verdict"]))
    return claims.summary_sentence(table["strategy"].iloc[0], words, what)
