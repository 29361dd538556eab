"""Held-out selection: how much of a winner's score is the winner's curse?

Picking the best of several candidates on the same questions used to report its score
inflates that score: the maximum of noisy means is biased upwards even when every candidate
is equally good (the "winner's curse"; Thaler 1988; in model selection, Cawley & Talbot,
JMLR 2010, "On over-fitting in model selection"). This module measures the inflation on the
data at hand: split the questions at random into a selection half and a held-out half, pick
the candidate with the highest mean on the selection half, and score that pick on both halves.
The gap ``selection score - held-out score`` is the optimism of reporting the selection
score; averaged over many seeded splits it estimates the curse for this question count (at
half the questions, so it overstates the curse of selecting on all of them). Within one data
set the two halves of a split are tied by the full-sample mean, so single splits vary a lot;
the held-out score is unbiased for the pick's true score only on average over data sets.

The mean gap is a statistic of the data set, and its 95% interval (:func:`held_out_gap_ci`)
comes from resampling the *questions*: a percentile bootstrap (Efron & Tibshirani 1993,
eq. 13.5) that repeats the whole held-out procedure, with the same splits' seed, on each
resample of the questions and keeps the middle 95% of the resampled mean gaps. The spread of
the gap over the splits of one data set is not that interval: the splits share the questions,
so it measures only the Monte Carlo noise of the splitting.

Ties on the selection half are broken at random (seeded), not by column order. Not handled:
stratified or document-grouped splits (split by document yourself and pass the matrix of
document means if questions cluster), nested selection over hyper-parameters.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from chunklab_core.stats.bootstrap import TIE_TOLERANCE, as_score_matrix


@dataclass
class HeldOutResult:
    """Per-split rows (``splits``) and their averages (``summary``)."""

    splits: pd.DataFrame
    summary: pd.Series

    def __str__(self) -> str:
        return self.summary.to_string() + "\n\n" + self.splits.head(10).to_string()


def held_out_selection(matrix, names=None, seed=0, n_splits: int = 50,
                       selection_share: float = 0.5) -> HeldOutResult:
    """Select on a random share of the questions, score the pick on the rest; repeat per split.

    ``splits`` columns: split, winner, selection_score, held_out_score, gap (selection minus
    held-out), held_out_winner (best on the held-out half) and agrees (the pick is among the
    held-out best). ``summary``: means of the scores and gap, the share of splits where the
    gap is positive, the share that agree, the most frequent pick and how often it was picked.
    """
    scores = as_score_matrix(matrix, "matrix")
    n_questions, n_candidates = scores.shape
    names = [str(i) for i in range(n_candidates)] if names is None else [str(n) for n in names]
    if len(names) != n_candidates:
        raise ValueError(f"got {len(names)} names for {n_candidates} candidates (columns)")
    if n_candidates < 2:
        raise ValueError("held-out selection needs at least two candidates (columns)")
    if n_splits < 1:
        raise ValueError(f"n_splits must be >= 1, got {n_splits!r}")
    n_selection = int(round(selection_share * n_questions))
    if not 1 <= n_selection <= n_questions - 1:
        raise ValueError(f"selection_share={selection_share} of {n_questions} questions leaves an empty "
                         "half; use at least 2 questions and a share strictly between 0 and 1")

    rng = np.random.default_rng(seed)
    order = rng.permuted(np.tile(np.arange(n_questions), (n_splits, 1)), axis=1)
    in_selection = np.zeros((n_splits, n_questions), dtype=bool)
    np.put_along_axis(in_selection, order[:, :n_selection], True, axis=1)
    selection_means = in_selection @ scores / n_selection
    held_out_means = ~in_selection @ scores / (n_questions - n_selection)

    tolerance = TIE_TOLERANCE * max(1.0, float(np.max(np.abs(scores))))
    tied = selection_means >= selection_means.max(axis=1, keepdims=True) - tolerance
    winner = np.argmax(np.where(tied, rng.random(tied.shape), -1.0), axis=1)
    held_best = held_out_means >= held_out_means.max(axis=1, keepdims=True) - tolerance
    rows = np.arange(n_splits)
    splits = pd.DataFrame({
        "split": rows,
        "winner": [names[j] for j in winner],
        "selection_score": selection_means[rows, winner],
        "held_out_score": held_out_means[rows, winner],
        "held_out_winner": [names[j] for j in np.argmax(held_out_means, axis=1)],
        "agrees": held_best[rows, winner],
    })
    splits.insert(4, "gap", splits["selection_score"] - splits["held_out_score"])
    picks = splits["winner"].value_counts()
    summary = pd.Series({
        "n_questions": n_questions,
        "selection_questions": n_selection,
        "n_splits": n_splits,
        "mean_selection_score": splits["selection_score"].mean(),
        "mean_held_out_score": splits["held_out_score"].mean(),
        "mean_gap": splits["gap"].mean(),
        "share_gap_positive": (splits["gap"] > 0).mean(),
        "share_agrees": splits["agrees"].mean(),
        "most_frequent_winner": picks.index[0],
        "most_frequent_winner_share": picks.iloc[0] / n_splits,
    }, dtype=object)
    return HeldOutResult(splits, summary)


@dataclass(frozen=True)
class GapInterval:
    """The mean winner's-curse gap on the data with its question-bootstrap percentile interval."""

    gap: float
    low: float
    high: float
    resamples: int
    confidence: float


def held_out_gap_ci(matrix, seed=0, n_splits: int = 50, resamples: int = 1_000,
                    confidence: float = 0.95, selection_share: float = 0.5) -> GapInterval:
    """Percentile interval of the mean gap ``selection score - held-out score`` (module docstring).

    ``gap`` is :func:`held_out_selection`'s ``mean_gap`` on ``matrix``; each of ``resamples``
    bootstrap resamples of the questions (:func:`chunklab_core.stats.bootstrap.iter_resample_indices`,
    seeded by ``seed``) is put through :func:`held_out_selection` with the same ``seed`` and
    ``n_splits``, and the interval is the (1 - c)/2 and (1 + c)/2 quantiles of their mean gaps.
    Cost: ``resamples * n_splits`` selections (a second or so for 1,000 x 50 on 800 x 8).
    """
    from chunklab_core.stats.bootstrap import iter_resample_indices, percentile_interval

    scores = as_score_matrix(matrix, "matrix")
    observed = float(held_out_selection(scores, seed=seed, n_splits=n_splits,
                                        selection_share=selection_share).summary["mean_gap"])
    gaps = []
    for block in iter_resample_indices(scores.shape[0], resamples, seed):
        for rows in block:
            result = held_out_selection(scores[rows], seed=seed, n_splits=n_splits,
                                        selection_share=selection_share)
            gaps.append(float(result.summary["mean_gap"]))
    low, high = percentile_interval(np.asarray(gaps), confidence)
    return GapInterval(observed, float(low), float(high), int(resamples), confidence)
