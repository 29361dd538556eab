"""Post 03's sentences, built from its tables and filled into the Markdown templates of ``prose.md``.

Handles: the paragraphs the notebook shows under its tables: interval widths, MRR against
recall, the rank disagreement of recall and nDCG, the balanced ranking, the clustered design
effect and the held-out selection, each from the table it reads (no number typed by hand).
The sentences live in ``prose.md`` (:mod:`chunklab_core.reports.templates`); this module
computes the values (numbers by :mod:`chunklab_core.core.numbers`) and picks the templates.
Not handled: computing the intervals and differences (``post03.tables``, ``stats``), the
verdicts (the ``stats.claims`` rule, worded in ``post03.claims`` and ``reports.verdict_tables``).
"""

from __future__ import annotations

import pandas as pd

from chunklab_core.chunking import strategy_label
from chunklab_core.core import numbers
from chunklab_core.reports import reference_results
from chunklab_core.reports.templates import Templates
from chunklab_core.stats import claims

PROSE = Templates(__file__, "prose.md")


def intervals_text(intervals: pd.DataFrame, n_strategies: int, n_questions: int, metric: str,
                   sample: str | None = None) -> str:
    """How many strategies and questions (or the sample by name: :mod:`chunklab_core.reports.samples`),
    and the mean 95% interval width of ``metric``."""
    width = f"{intervals.loc[intervals.metric == metric, 'width'].mean():.3f}"
    if sample:
        return PROSE.fill("intervals.named", strategies=n_strategies, sample=sample, metric=metric, width=width)
    return PROSE.fill("intervals.counts", strategies=n_strategies, questions=n_questions, metric=metric, width=width)


def width_text(widths: pd.DataFrame, matrix: pd.DataFrame) -> str:
    """The interval width at the smallest sample size, against the spread of the strategies' means."""
    first = widths.iloc[0]
    spread = matrix.mean().max() - matrix.mean().min()
    return PROSE.fill("width", questions=int(first["questions"]), width=f"{first['mean width']:.2f}",
                      half=f"{first['mean width'] / 2:.2f}",
                      compared="wider" if first["mean width"] > spread else "narrower",
                      strategies=matrix.shape[1], spread=f"{spread:.3f}")


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
    return PROSE.fill("mrr_separates", k=k, a=top["a"], b=top["b"], hit_difference=f"{top[f'Δ hit@{k}']:+.3f}",
                      mrr_difference=f"{top[f'Δ MRR@{k}']:+.3f}", mrr_interval=top[f"Δ MRR@{k} CI"],
                      questions=n_questions, pairs=numbers.count(n_sep, "such pair has", "such pairs have"),
                      reading=PROSE.fill("mrr_separates.some" if n_sep else "mrr_separates.none"))


def rank_disagreement_text(tau: float, k: int) -> str:
    """Kendall's τ between the recall@k and the nDCG@k rankings of the strategies."""
    return PROSE.fill("rank_disagreement", k=k, tau=numbers.number(tau, 2))


def balanced_text(balanced: pd.DataFrame, k: int) -> str:
    """Where the whole-document strategy ranks by recall and by the balanced score, and the balanced leader."""
    whole = balanced[balanced.strategy == strategy_label("whole_document")].iloc[0]
    return PROSE.fill("balanced", recall_rank=int(whole["recall rank"]), k=k, recall=f"{whole[f'recall@{k}']:.3f}",
                      balanced_rank=int(whole["balanced rank"]), strategies=len(balanced),
                      balanced=f"{whole['balanced']:.2f}", ratio=f"{whole['tokens / T_min']:.0f}",
                      leader=balanced.iloc[0]["strategy"])


def balanced_what(lam: float, sample: str) -> str:
    """What the balanced verdict is about: the score at λ, on the sample named with its n and documents."""
    return PROSE.fill("balanced.what", lam=lam, sample=sample)


def design_text(design: pd.DataFrame, n_questions: int) -> str:
    """How much wider the clustered intervals are, and the effective number of independent questions."""
    return PROSE.fill("design", ratio=f"{design['width_ratio'].mean():.2f}", questions=n_questions,
                      effective=f"{design['effective_questions'].mean():.0f}")


def held_out_text(summary, n_splits: int, gap=None) -> str:
    """The winner's-curse gap of held-out selection over ``n_splits`` random halves, with its
    question-bootstrap interval (``gap``: :func:`chunklab_core.stats.holdout.held_out_gap_ci`)."""
    if gap is None:
        worded = PROSE.fill("held_out.no_interval", gap=f"{summary['mean_gap']:+.4f}")
    else:
        side = {1: "held_out.above", -1: "held_out.below", 0: "held_out.neither"}[claims.interval_side(gap.low, gap.high)]
        worded = PROSE.fill("held_out.interval", gap=numbers.estimate(gap.gap, gap.low, gap.high, digits=4, signed=True),
                            resamples=f"{gap.resamples:,}", splits=n_splits, side=PROSE.fill(side))
    return PROSE.fill("held_out", splits=n_splits, selection=f"{summary['mean_selection_score']:.3f}",
                      held_out=f"{summary['mean_held_out_score']:.3f}", gap=worded,
                      winner=summary["most_frequent_winner"], share=f"{summary['most_frequent_winner_share']:.0%}")


def answer(widths: pd.DataFrame, matrix: pd.DataFrame, paired: pd.DataFrame, metric: str, sample: str) -> str:
    """The post's answer (under 150 words): the interval width at the full and the smallest sample
    against the spread of the means, and the leader's paired verdict with the questions needed to
    separate its closest follower (``paired``: ``tables.paired_against_leader``, closest first)."""
    full, small = widths.iloc[-1], widths.iloc[0]
    spread = matrix.mean().max() - matrix.mean().min()
    ruled = paired[paired["excludes 0"] & (paired["difference"] < 0)]
    open_ = paired.drop(ruled.index)
    closest = paired.iloc[0]
    needed = closest["questions needed"]
    return PROSE.fill(
        "answer", sample=sample, metric=metric, width_n=f"{full['mean width']:.3f}", n=int(full["questions"]),
        width_small=f"{small['mean width']:.2f}", small=int(small["questions"]),
        compared_n="wider" if full["mean width"] > spread else "narrower",
        compared="wider" if small["mean width"] > spread else "narrower", strategies=matrix.shape[1],
        spread=f"{spread:.3f}", leader=closest["minus"],
        status="the winner" if open_.empty else "not the winner",
        open=numbers.count(len(open_), "strategy", "strategies"),
        settle=PROSE.fill("answer.settle" if needed[0].isdigit() else "answer.settled", closest=closest["strategy"],
                          difference=numbers.estimate(-closest["difference"], -closest["high"], -closest["low"], signed=True),
                          needed=f"about {needed}"),
        ruled=numbers.count(len(ruled), "strategy is", "strategies are"))
