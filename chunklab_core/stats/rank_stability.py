"""Does the ranking of chunking strategies survive a change of setting? (post 02)

Handles: Kendall's tau-b between the strategy rankings by mean score under two settings
(bm25 vs dense, MiniLM vs mpnet, k=5 vs k=10, one corpus vs another), with a percentile
bootstrap interval, and a table over every pair of settings.

tau-b (Kendall 1945, "The treatment of ties in ranking problems"; ``scipy.stats.kendalltau``
with ``variant="b"``) over the m strategies' mean scores a and b:

    tau_b = (C - D) / sqrt((P - T_a) (P - T_b)),  P = m (m - 1) / 2 pairs,

C / D the concordant / discordant pairs and T_a / T_b the pairs tied in a / in b. It is
undefined (NaN) when every strategy ties in one setting.

Interval: B resamples of the questions (``stats.resampled_means``), the strategy means
recomputed, tau-b per resample, percentile interval over the resamples where tau-b is defined
(the count of undefined ones is reported). When both settings score the *same questions*
(bm25 vs dense on one corpus) the same resampled questions are used in both settings, so the
interval reflects question sampling once (paired). When they score different questions
(different corpora) each setting is resampled independently, with seeds spawned from ``seed``
by ``np.random.SeedSequence``. Partly overlapping question sets are refused: subset them to the
shared questions (paired) or relabel them (independent) first.

Ties: means within 1e-12 (relative to the largest absolute score) are snapped to one value
before ranking, so that float rounding in resampled means cannot split a true tie. The point
estimate is scipy's tau-b on the snapped observed means; per resample the same formula is
evaluated vectorised over all resamples (checked against scipy in the tests), as 10,000 scipy
calls would dominate the run time.

Not handled: missing scores (drop those questions first; :func:`strategy_scores` can), other
rank correlations, clustered questions.
"""

from __future__ import annotations

from itertools import combinations
from typing import NamedTuple

import numpy as np
import pandas as pd
from scipy import stats as scipy_stats

from chunklab_core.stats.bootstrap import as_score_matrix, percentile_interval, resampled_means

TIE_TOLERANCE = 1e-12


class KendallInterval(NamedTuple):
    """tau-b of the observed means with its bootstrap interval."""

    tau: float
    low: float
    high: float
    paired: bool
    strategies: int
    undefined_resamples: int


def snap_ties(values: np.ndarray, tolerance: float) -> np.ndarray:
    """Per row, values within ``tolerance`` of their sorted neighbour (chained) take one value."""
    values = np.atleast_2d(np.asarray(values, dtype=float))
    order = np.argsort(values, axis=1, kind="stable")
    ordered = np.take_along_axis(values, order, axis=1)
    starts = np.concatenate([np.ones((len(values), 1), bool), np.diff(ordered, axis=1) > tolerance], axis=1)
    group_start = np.maximum.accumulate(np.where(starts, np.arange(values.shape[1]), 0), axis=1)
    snapped = np.empty_like(values)
    np.put_along_axis(snapped, order, np.take_along_axis(ordered, group_start, axis=1), axis=1)
    return snapped


def kendall_tau_b_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """tau-b between row i of ``a`` and row i of ``b`` (both (rows, m)), NaN where undefined."""
    a, b = np.atleast_2d(a), np.atleast_2d(b)
    i, j = np.triu_indices(a.shape[1], k=1)
    sign_a, sign_b = np.sign(a[:, i] - a[:, j]), np.sign(b[:, i] - b[:, j])
    pairs = len(i)
    untied_a = pairs - (sign_a == 0).sum(axis=1)
    untied_b = pairs - (sign_b == 0).sum(axis=1)
    denominator = np.sqrt(untied_a.astype(float) * untied_b)
    numerator = (sign_a * sign_b).sum(axis=1)
    return np.divide(numerator, denominator, out=np.full(len(a), np.nan), where=denominator > 0)


def _align(scores_a: pd.DataFrame, scores_b: pd.DataFrame, paired: bool | None):
    for name, frame in (("scores_a", scores_a), ("scores_b", scores_b)):
        if not isinstance(frame, pd.DataFrame):
            raise ValueError(f"{name} must be a DataFrame (questions x strategies), got {type(frame).__name__}")
        if frame.index.has_duplicates or frame.columns.has_duplicates:
            raise ValueError(f"{name} has duplicate question or strategy labels")
    if set(scores_a.columns) != set(scores_b.columns):
        raise ValueError("the two settings rank different strategies: only in a "
                         f"{sorted(set(scores_a.columns) - set(scores_b.columns))}, only in b "
                         f"{sorted(set(scores_b.columns) - set(scores_a.columns))}")
    if scores_a.shape[1] < 2:
        raise ValueError(f"need at least 2 strategies to rank, got {scores_a.shape[1]}")
    scores_b = scores_b[scores_a.columns]
    same = set(scores_a.index) == set(scores_b.index)
    shared = set(scores_a.index) & set(scores_b.index)
    if paired is None:
        if shared and not same:
            raise ValueError(f"the settings share {len(shared)} questions but not all; subset both to the "
                             "shared questions (paired) or pass paired=False (independent resamples)")
        paired = same
    if paired and not same:
        raise ValueError("paired=True needs the same questions in both settings")
    if paired:
        scores_b = scores_b.loc[scores_a.index]
    return as_score_matrix(scores_a, "scores_a"), as_score_matrix(scores_b, "scores_b"), paired


def kendall_tau_ci(scores_a: pd.DataFrame, scores_b: pd.DataFrame, resamples: int = 2000, seed=0,
                   confidence: float = 0.95, paired: bool | None = None) -> KendallInterval:
    """Kendall tau-b between the strategy rankings of two settings, with a bootstrap interval.

    ``scores_a``/``scores_b``: per-question scores, index = questions, columns = strategies
    (the same strategies; columns are matched by name). ``paired=None`` pairs the resamples
    when both hold the same questions and resamples independently when they share none.
    """
    a, b, paired = _align(scores_a, scores_b, paired)
    tolerance = TIE_TOLERANCE * max(1.0, float(np.abs(a).max()), float(np.abs(b).max()))
    mean_a, mean_b = snap_ties(a.mean(axis=0), tolerance)[0], snap_ties(b.mean(axis=0), tolerance)[0]
    tau = float(scipy_stats.kendalltau(mean_a, mean_b, variant="b").statistic)
    if paired:
        seed_a = seed_b = seed
    else:
        seed_a, seed_b = np.random.SeedSequence(seed).spawn(2)
    taus = kendall_tau_b_rows(snap_ties(resampled_means(a, resamples, seed_a), tolerance),
                              snap_ties(resampled_means(b, resamples, seed_b), tolerance))
    defined = taus[~np.isnan(taus)]
    low, high = percentile_interval(defined, confidence) if len(defined) else (np.nan, np.nan)
    return KendallInterval(tau, float(low), float(high), paired, a.shape[1], int(len(taus) - len(defined)))


def strategy_scores(per_question: pd.DataFrame, metric: str, index=("corpus", "qid"),
                    columns: str = "strategy", dropna: bool = True) -> pd.DataFrame:
    """Wide questions x strategies frame of ``metric`` from a tidy per-question table.

    With ``dropna`` questions missing a score under some strategy (e.g. no gold) are dropped.
    """
    missing = {metric, columns, *index} - set(per_question.columns)
    if missing:
        raise ValueError(f"per_question lacks columns {sorted(missing)}")
    if per_question.duplicated([*index, columns]).any():
        raise ValueError(f"several rows per ({', '.join(index)}, {columns}); filter to one retriever/setting first")
    wide = per_question.pivot(index=list(index), columns=columns, values=metric)
    return wide.dropna() if dropna else wide


def stability_table(settings: dict[str, pd.DataFrame], resamples: int = 2000, seed=0,
                    confidence: float = 0.95) -> pd.DataFrame:
    """``kendall_tau_ci`` for every pair of settings (in the dict's order), one row per pair."""
    if len(settings) < 2:
        raise ValueError(f"need at least 2 settings to compare, got {len(settings)}")
    rows = []
    for name_a, name_b in combinations(settings, 2):
        result = kendall_tau_ci(settings[name_a], settings[name_b], resamples, seed, confidence)
        rows.append({"setting_a": name_a, "setting_b": name_b, **result._asdict(),
                     "questions_a": len(settings[name_a]), "questions_b": len(settings[name_b])})
    return pd.DataFrame(rows)
