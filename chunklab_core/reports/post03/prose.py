"""Post 03's sentences, built from its tables: interval widths, MRR against recall, the balanced
ranking, the clustered design effect and the held-out selection.

Handles: the paragraphs the notebook shows under its tables, each from the table it reads (no
number typed by hand). Not handled: computing the intervals and differences (``post03.tables``, ``stats``), the verdicts (the
``stats.claims`` rule, worded in ``post03.claims`` and ``reports.verdict_tables``).
"""

from __future__ import annotations

import pandas as pd

from chunklab_core.chunking import strategy_label
from chunklab_core.core import numbers
from chunklab_core.reports import reference_results
from chunklab_core.stats import claims


def intervals_text(intervals: pd.DataFrame, n_strategies: int, n_questions: int, metric: str,
                   sample: str | None = None) -> str:
    """How many strategies and questions (or the sample by name: :mod:`chunklab_core.reports.samples`),
    and the mean 95% interval width of ``metric``."""
    head = (f"{n_strategies} strategies on {sample}; every table and finding below is on it"
            if sample else f"{n_strategies} strategies, {n_questions} questions")
    return (f"{head}. Mean 95% interval width for {metric}: "
            f"{intervals.loc[intervals.metric == metric, 'width'].mean():.3f}.")


def width_text(widths: pd.DataFrame, matrix: pd.DataFrame) -> str:
    """The interval width at the smallest sample size, against the spread of the strategies' means."""
    first = widths.iloc[0]
    spread = matrix.mean().max() - matrix.mean().min()
    return (f"At {int(first['questions'])} questions an interval is {first['mean width']:.2f} wide "
            f"(± {first['mean width']/2:.2f}): {'wider' if first['mean width'] > spread else 'narrower'} than "
            f"the whole spread of the {matrix.shape[1]} strategies' means ({spread:.3f}).")


def extremes_width_table(matrix: pd.DataFrame, metric: str, n_questions: int) -> pd.DataFrame:
    """:func:`reference_results.width_table` at ``n_questions`` for the lowest and highest rate, and one half."""
    rates = matrix.mean()
    return reference_results.width_table({f"{strategy_label(rates.idxmin())} ({metric})": rates.min(),
                                           f"{strategy_label(rates.idxmax())} ({metric})": rates.max(),
                                           "a rate of one half": 0.5}, n_questions)


def mrr_separates_text(separated: pd.DataFrame, k: int, n_questions: int) -> str:
    """The largest MRR gap among pairs recall calls equal, and how many such pairs MRR separates."""
    n_sep = int(separated["MRR separates"].sum())
    top = separated.iloc[0]
    return (f"Among the pairs that recall@{k} calls equal, the largest MRR@{k} gap is {top['a']} against {top['b']}: "
            f"Δ hit@{k} = {top[f'Δ hit@{k}']:+.3f}, Δ MRR@{k} = {top[f'Δ MRR@{k}']:+.3f} {top[f'Δ MRR@{k} CI']}. "
            f"On these {n_questions} questions {n_sep} such pair(s) have an MRR interval that excludes 0"
            + (": the rank of the first hit carries information that recall throws away." if n_sep else
               ": here the MRR gap is also within noise, so on this sample MRR adds a reading, not a verdict."))


def balanced_text(balanced: pd.DataFrame, k: int) -> str:
    """Where the whole-document strategy ranks by recall and by the balanced score, and the balanced leader."""
    whole = balanced[balanced.strategy == strategy_label("whole_document")].iloc[0]
    return (f"The whole-document strategy is ranked **{int(whole['recall rank'])}** by recall@{k} "
            f"({whole[f'recall@{k}']:.3f}) and **{int(whole['balanced rank'])}** of {len(balanced)} by the balanced "
            f"score ({whole['balanced']:.2f}), because it returns {whole['tokens / T_min']:.0f}× the cheapest "
            f"strategy's tokens. The balanced leader is **{balanced.iloc[0]['strategy']}**; with paired intervals on "
            "the per-question balanced score (the whole-document strategy left out):")


def design_text(design: pd.DataFrame, n_questions: int) -> str:
    """How much wider the clustered intervals are, and the effective number of independent questions."""
    return (f"Clustered intervals are on average {design['width_ratio'].mean():.2f}× as wide as the plain ones; "
            f"the {n_questions} questions are worth about {design['effective_questions'].mean():.0f} independent ones.")


def held_out_text(summary, n_splits: int, gap=None) -> str:
    """The winner's-curse gap of held-out selection over ``n_splits`` random halves, with its
    question-bootstrap interval (``gap``: :func:`chunklab_core.stats.holdout.held_out_gap_ci`)."""
    if gap is None:
        worded = f"{summary['mean_gap']:+.4f} (no interval computed)"
    else:
        side = {1: "above 0: the curse is measurable on these questions",
                -1: "below 0", 0: "containing 0: these questions cannot show a curse"}[
            claims.interval_side(gap.low, gap.high)]
        worded = (f"{numbers.estimate(gap.gap, gap.low, gap.high, digits=4, signed=True)} (95% interval from "
                  f"{gap.resamples:,} resamples of the questions, each split {n_splits} times; {side})")
    return (f"Over {n_splits} splits the pick scored {summary['mean_selection_score']:.3f} on its selection half and "
            f"{summary['mean_held_out_score']:.3f} on the untouched half: a winner's-curse gap of "
            f"{worded}. The most frequent pick was {summary['most_frequent_winner']} "
            f"({summary['most_frequent_winner_share']:.0%} of splits).")
