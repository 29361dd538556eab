"""Post 04's claims within their evidence: correlated cells, and retrieval without the flagged questions.

Handles: the sentence that says how many strategy × retriever cells separate and why they are
not independent tests (every cell scores the same passages and questions), and the generated −
human comparison recomputed on the passages whose generated question trips no validity check
(a generated question that contains its own answer, or is no question, makes retrieval look
easier for reasons other than copied words). Not handled: the checks (:mod:`chunklab_core.questions.checks`),
the comparison itself (:func:`chunklab_core.questions.retrieval_comparison.set_comparison`).
The sentences live in ``claims.md`` beside this module (:mod:`chunklab_core.reports.templates`).
"""

from __future__ import annotations

import pandas as pd

from chunklab_core.core import numbers
from chunklab_core.questions.checks import CHECK_NAMES
from chunklab_core.questions.retrieval_comparison import set_comparison
from chunklab_core.reports.templates import Templates
from chunklab_core.stats import claims

PROSE = Templates(__file__, "claims.md")


def correlated_cells_text(comparison: pd.DataFrame, corpus_labels: dict) -> str:
    """Per corpus: separated cells, worded as one correlated family, not as independent confirmations."""
    parts = []
    for corpus, group in comparison.groupby("corpus", sort=False):
        sides = [claims.interval_side(low, high) for low, high in zip(group["low"], group["high"])]
        up, down = sides.count(1), sides.count(-1)
        parts.append(PROSE.fill("correlated", corpus=corpus_labels.get(corpus, corpus), separated=up + down,
                                cells=len(group), up=up, down=down, passages=int(group["passages"].iloc[0])))
    return " ".join(parts)


def flagged_passages(checks: pd.DataFrame) -> set:
    """Passages whose generated question trips at least one validity check."""
    generated = checks[checks["set"] == "generated"]
    return set(generated.loc[generated[list(CHECK_NAMES)].any(axis=1), "passage_id"])


def clean_comparison(scores: pd.DataFrame, checks: pd.DataFrame, metric: str, resamples: int, seed: int) -> pd.DataFrame:
    """:func:`set_comparison` on the passages whose generated question no check flags."""
    flagged = flagged_passages(checks)
    return set_comparison(scores[~scores["passage_id"].isin(flagged)], metric, resamples, seed)


def clean_text(full: pd.DataFrame, clean: pd.DataFrame, corpus_labels: dict, metric: str) -> str:
    """How the generated − human difference changes without the flagged passages, per corpus."""
    parts = []
    for corpus, group in full.groupby("corpus", sort=False):
        kept = clean[clean["corpus"] == corpus]
        if kept.empty:
            parts.append(PROSE.fill("clean.none", corpus=corpus_labels.get(corpus, corpus)))
            continue
        words = [claims.pair_verdict("generated", "human", lo, hi) for lo, hi in zip(kept["low"], kept["high"])]
        parts.append(PROSE.fill(
            "clean.corpus", corpus=corpus_labels.get(corpus, corpus), metric=metric,
            full=numbers.number(group["generated − human"].mean(), 2, signed=True),
            passages=int(group["passages"].iloc[0]),
            clean=numbers.number(kept["generated − human"].mean(), 2, signed=True),
            kept=int(kept["passages"].iloc[0]), ahead=words.count("generated ahead"), cells=len(words),
            not_told_apart=claims.NOT_TOLD_APART, tied=words.count(claims.NOT_TOLD_APART)))
    return " ".join(parts)
