"""Post 01's sentences: the values its paragraphs need, filled into the Markdown templates of ``prose.md``.

Handles: the sample by name (:func:`sample_text`), the recall@k leader and its paired verdicts
(:func:`results_reading`), recall against a target by its 95% interval, never by a point
estimate (:func:`threshold_reading`), an answer cut by a chunk boundary (:func:`cut_example_text`,
:func:`no_cut_text`) and what the larger sample adds (:func:`full_set_reading`). The sentences
live in ``prose.md`` (:mod:`chunklab_core.reports.templates`); this module computes the values
(estimates with intervals and counts by :mod:`chunklab_core.core.numbers`, verdict words from
:mod:`chunklab_core.stats.claims`) and picks the templates. Not handled: computing the tables
(``post01.tables``) or the verdicts (``post01.benchmark.recall_verdicts``, ``full_set_verdicts``).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from chunklab_core.core import numbers
from chunklab_core.evaluation.measures import column, interval_columns, largest_k
from chunklab_core.reports.templates import Templates
from chunklab_core.stats import claims

PROSE = Templates(__file__, "prose.md")


def sample_text(summary: dict, seed: int, label: str | None = None) -> str:
    """The sample by name (``label``: :func:`chunklab_core.reports.samples.corpus_sample_label`),
    its characters and seed; without a label, its articles and questions (``Corpus.summary()``)."""
    characters = f"{summary['characters']:,}"
    if label is not None:
        return PROSE.fill("sample.named", label=label, characters=characters, seed=seed)
    return PROSE.fill("sample.counts", documents=summary["documents"], characters=characters,
                      questions=summary["questions"], seed=seed)


def results_reading(results: pd.DataFrame, verdicts: pd.DataFrame, sample: str) -> str:
    """The recall@k leader and what its paired intervals say (:func:`chunklab_core.reports.verdict_tables.leader_verdicts`).

    ``verdicts`` is the leader-verdict table of recall@k per question (leader first); k is the
    table's largest k (the depth): 10 in the post (``measures.largest_k``). Nothing is read from
    overlapping intervals or from point estimates: the words are the series' one rule on the
    paired intervals leader - strategy.
    """
    k = largest_k(results.columns)
    hit, ndcg = column("hit", k), column("ndcg", k)
    low, high = interval_columns(hit)
    by_strategy = results.set_index("strategy")
    leader = by_strategy.loc[verdicts["strategy"].iloc[0]]
    others = verdicts.iloc[1:]
    open_ = others[others["verdict"] != claims.RULED_OUT]
    ruled = others[others["verdict"] == claims.RULED_OUT]

    def labels(rows):
        return ", ".join(by_strategy.loc[name, "label"] for name in rows["strategy"])

    status = PROSE.fill("results.winner" if verdicts["verdict"].iloc[0] == claims.WINNER else "results.not_winner")
    if open_.empty:
        rest = PROSE.fill("results.all_ruled_out")
    elif ruled.empty:
        rest = PROSE.fill("results.open", open=numbers.count(len(open_), "strategy", "strategies"),
                          open_labels=labels(open_))
    else:
        rest = PROSE.fill("results.open_and_ruled", open=numbers.count(len(open_), "strategy", "strategies"),
                          open_labels=labels(open_),
                          ruled=numbers.count(len(ruled), "strategy is", "strategies are"), ruled_labels=labels(ruled))
    best_ndcg = results.sort_values(ndcg, ascending=False).iloc[0]
    bounds = [best_ndcg.get(name, np.nan) for name in interval_columns(ndcg)]
    return PROSE.fill("results", sample=sample, leader=leader["label"], k=k,
                      recall=numbers.estimate(leader[hit], leader[low], leader[high]), status=status, others=rest,
                      ndcg_leader=best_ndcg["label"], ndcg=numbers.estimate(best_ndcg[ndcg], *bounds))


def threshold_reading(results: pd.DataFrame, ks: Sequence[int], target: float = 0.90) -> str:
    """Where recall@k stands against ``target``, by its 95% interval, never by its point estimate.

    Per strategy, the smallest k whose recall@k interval lies wholly above ``target``
    (:func:`chunklab_core.stats.claims.interval_side` on ``[low - target, high - target]``);
    strategies with none are split into those whose interval at the largest k lies wholly below
    ``target`` and those whose interval contains it (the sample cannot say on which side they
    are). Tokens are the mean returned tokens at that k, a descriptive figure. The table's
    ``context_cost_tokens`` column is read from point estimates and is described, not used, here.
    """
    above, unsure, below = [], [], []
    for _, row in results.iterrows():
        for k in ks:
            low, high = interval_columns(column("hit", k))
            if low in row and claims.interval_side(row[low] - target, row[high] - target) == 1:
                above.append((row[column("tokens", k)], row["label"], k))
                break
        else:
            last = column("hit", ks[-1])
            low, high = interval_columns(last)
            side = claims.interval_side(row[low] - target, row[high] - target)
            (below if side == -1 else unsure).append(PROSE.fill(
                "threshold.item", label=row["label"], recall=numbers.estimate(row[last], row[low], row[high])))
    threshold = numbers.number(target, 2)
    parts = []
    if above:
        listed = "; ".join(PROSE.fill("threshold.above.item", label=label, k=k, tokens=f"{tokens:.0f}")
                           for tokens, label, k in sorted(above))
        parts.append(PROSE.fill("threshold.above", threshold=threshold,
                                strategies=numbers.count(len(above), "strategy", "strategies"), listed=listed))
    else:
        parts.append(PROSE.fill("threshold.none_above", threshold=threshold, k=ks[-1]))
    if unsure:
        parts.append(PROSE.fill("threshold.unsure", k=ks[-1], threshold=threshold, listed="; ".join(unsure),
                                contain=numbers.count(len(unsure), "interval contains", "intervals contain")))
    if below:
        parts.append(PROSE.fill("threshold.below", threshold=threshold, k=ks[-1], listed="; ".join(below)))
    parts.append(PROSE.fill("threshold.tokens", threshold=threshold))
    return " ".join(parts)


def cheapest_above(results: pd.DataFrame, ks: Sequence[int], target: float = 0.90):
    """``(tokens, label, k)`` of the strategy and smallest k whose recall@k interval lies wholly above
    ``target`` with the fewest mean returned tokens (``None`` when none does): :func:`threshold_reading`'s rule."""
    above = []
    for _, row in results.iterrows():
        for k in ks:
            low, high = interval_columns(column("hit", k))
            if low in row and claims.interval_side(row[low] - target, row[high] - target) == 1:
                above.append((row[column("tokens", k)], row["label"], k))
                break
    return min(above) if above else None


def answer(results: pd.DataFrame, verdicts: pd.DataFrame, sample: str, ks: Sequence[int],
           target: float = 0.90) -> str:
    """The post's answer (under 150 words): the recall leader and its paired verdicts, then the
    cheapest strategy that reaches ``target`` by its whole interval, with its tokens."""
    k = largest_k(results.columns)
    hit = column("hit", k)
    low, high = interval_columns(hit)
    by_strategy = results.set_index("strategy")
    leader = by_strategy.loc[verdicts["strategy"].iloc[0]]
    others = verdicts.iloc[1:]
    ruled = int((others["verdict"] == claims.RULED_OUT).sum())
    threshold = numbers.number(target, 2)
    cheapest = cheapest_above(results, ks, target)
    cost = (PROSE.fill("answer.cost", threshold=threshold, label=cheapest[1], ck=cheapest[2],
                       tokens=f"{cheapest[0]:,.0f}", leader_tokens=f"{leader[column('tokens', k)]:,.0f}",
                       leader=leader["label"], k=k)
            if cheapest else PROSE.fill("answer.no_cost", threshold=threshold, k=ks[-1]))
    status = PROSE.fill("results.winner" if verdicts["verdict"].iloc[0] == claims.WINNER else "results.not_winner")
    return PROSE.fill("answer", k=k, sample=sample, leader=leader["label"],
                      recall=numbers.estimate(leader[hit], leader[low], leader[high]), status=status,
                      open=numbers.count(len(others) - ruled, "strategy", "strategies"),
                      ruled=numbers.count(ruled, "strategy is", "strategies are"), cost=cost)


def cut_example_text(row) -> str:
    """One answer cut by a chunk boundary: the question, the answer and the excerpt around the cut."""
    return PROSE.fill("cut.example", question=row["question"], answer=row["answer"], excerpt=row["excerpt"])


def no_cut_text() -> str:
    """The sentence shown when no miss had every answer span cut."""
    return PROSE.fill("cut.none")


def full_set_reading(table: pd.DataFrame, reference: pd.DataFrame) -> str:
    """What the larger sample adds to the reference-design reading: its leader, how many strategies it
    rules out, and whether the 800-question leader is among those that cannot be ruled out."""
    leader = table.iloc[0]
    ruled = table[table["verdict"] == claims.RULED_OUT]["strategy"].tolist()
    kept = table[(table["verdict"] != claims.RULED_OUT) & (table.index != leader.name)]["strategy"].tolist()
    small_leader = reference.sort_values(table["metric"].iloc[0], ascending=False)["label"].iloc[0]
    where = ("full.where.same" if small_leader == leader["strategy"] else
             "full.where.kept" if small_leader in kept else "full.where.ruled")
    return PROSE.fill(
        "full", sample=table["sample"].iloc[0], metric=table["metric"].iloc[0], leader=leader["strategy"],
        mean=numbers.number(leader["mean"]), verdict=leader["verdict"], ruled=len(ruled),
        others=numbers.count(len(table) - 1, "other strategy is", "other strategies are"),
        ruled_list=" " + PROSE.fill("full.ruled_list", names=", ".join(ruled)) if ruled else "",
        kept=PROSE.fill("full.kept", names=", ".join(kept)) if kept else "",
        small_leader=small_leader, where=PROSE.fill(where))
