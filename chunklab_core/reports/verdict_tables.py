"""Verdict tables of the posts: the balanced score's verdicts over several prices per token, and a
verdict's sentence; the verdict computation itself lives in ``decision.verdicts`` (re-exported here).

Handles: :func:`balanced_per_question` (the balanced score of
:func:`chunklab_core.stats.bootstrap.balanced_score` per question, so it can be bootstrapped),
:func:`balanced_verdicts` over several values of λ (how much the balanced leader depends on the
price put on tokens), :func:`verdict_summary`.

Not handled: T_min's own sampling noise (it is the cheapest column's mean, treated as fixed).
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from chunklab_core.decision.verdicts import (DIGITS, clears_zero, design_of, identical_columns,  # noqa: F401  (re-exported)
                                             leader_verdicts, paired_interval, question_documents,
                                             robust_verdicts, weaker_verdicts)
from chunklab_core.stats import claims
from chunklab_core.stats.bootstrap import balanced_score

def balanced_per_question(recall: pd.DataFrame, tokens: pd.DataFrame, lam: float) -> pd.DataFrame:
    """Per-question balanced score ``recall − λ·(tokens/T_min − 1)``, T_min the cheapest column mean."""
    recall, tokens = recall.align(tokens, join="inner")
    return balanced_score(recall, tokens, lam=lam)


def balanced_verdicts(recall: pd.DataFrame, tokens: pd.DataFrame, lams: Sequence[float], resamples: int,
                      seed: int, clusters=None) -> pd.DataFrame:
    """:func:`leader_verdicts` of the balanced score at each λ in ``lams`` (column ``lambda``)."""
    parts = [leader_verdicts(balanced_per_question(recall, tokens, lam), "balanced", resamples, seed,
                             clusters).assign(**{"lambda": lam})
             for lam in lams]
    return pd.concat(parts, ignore_index=True)


def verdict_summary(table: pd.DataFrame, what: str = "") -> str:
    """One sentence from a :func:`leader_verdicts` table (the leader is its first row)."""
    words = dict(zip(table["strategy"], table["verdict"]))
    return claims.summary_sentence(table["strategy"].iloc[0], words, what)
