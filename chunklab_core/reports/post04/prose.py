"""Post 04's sentences: the values its paragraphs need, filled into the Markdown templates of ``prose.md``.

Handles: every paragraph the notebook shows between its tables (the generation counts and call
options, the per-corpus overlap verdicts, the retrieval comparison per corpus, the overlap →
BM25-advantage trend, the counts of validity checks, and the takeaways). The sentences live
in ``prose.md`` (:mod:`chunklab_core.reports.templates`); this module computes the values
(estimates with intervals by :mod:`chunklab_core.core.numbers`) and picks the words. A paired
interval is worded by :func:`interval_direction`, which asks
:func:`chunklab_core.stats.claims.interval_side` (the series' one test of "the interval
excludes 0") on which side of 0 it lies, if any. Corpora are named by the labels the notebook
passes (:func:`chunklab_core.reports.post04.tables.sample_labels`: data set, n and documents).
Not handled: computing the tables (``post04.tables``, ``questions.retrieval_comparison``) or the
claims about correlated cells and flagged questions (``post04.claims``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from chunklab_core.core import numbers
from chunklab_core.reports.markdown import share
from chunklab_core.reports.templates import Templates
from chunklab_core.stats import claims

PROSE = Templates(__file__, "prose.md")


def _signed(value: float, low: float, high: float) -> str:
    return numbers.estimate(value, low, high, digits=2, signed=True)


def interval_direction(low: float, high: float, above: str, below: str, neither: str) -> str:
    """``above`` when the interval [low, high] lies above 0, ``below`` when below, else ``neither``."""
    return {1: above, -1: below, 0: neither}[claims.interval_side(low, high)]


def separated_cells(group: pd.DataFrame) -> tuple[int, int]:
    """How many rows' paired intervals (``low``, ``high``) lie above 0 and how many below 0."""
    sides = [interval_direction(low, high, "above", "below", "") for low, high in zip(group["low"], group["high"])]
    return sides.count("above"), sides.count("below")


def generation_text(generations: pd.DataFrame, every_nq: bool) -> str:
    """Paragraphs per corpus, and the share of replies still unparsed after the retry."""
    counts = generations.groupby("corpus")["passage_id"].size()
    unparsed = int((generations["status"] != "ok").sum())
    return PROSE.fill("generation", squad=counts.get("squad", 0), nq=counts.get("nq", 0),
                      every_nq=(" " + PROSE.fill("generation.every_nq")) if every_nq else "",
                      unparsed=share(unparsed, len(generations)))


def options_text(options: Mapping, system_prompt: str) -> str:
    """The options every generation call ran with, and the system prompt, quoted."""
    return PROSE.fill("options", temperature=options["temperature"], seed=options["seed"],
                      max_tokens=options["max_tokens"], prompt=system_prompt)


def overlap_text(overlap_summary: pd.DataFrame, overlap_paired: pd.DataFrame, corpus_labels: Mapping,
                 human_labels: Mapping) -> str:
    """One bullet per corpus: human and generated overlap with intervals, and the paired difference's verdict."""
    lines = []
    by_set = overlap_summary.set_index(["corpus", "set"])
    for row in overlap_paired.to_dict("records"):
        human, gen = by_set.loc[(row["corpus"], "human")], by_set.loc[(row["corpus"], "generated")]
        verdict = interval_direction(row["low"], row["high"], "generated questions copy more",
                                     "generated questions copy less",
                                     "not separable from the human questions' overlap")
        lines.append(PROSE.fill(
            "overlap.corpus", corpus=corpus_labels[row["corpus"]], human_set=human_labels[row["corpus"]],
            human=numbers.estimate(human["mean overlap"], human["low"], human["high"], 2),
            generated=numbers.estimate(gen["mean overlap"], gen["low"], gen["high"], 2),
            passages=row["passages"], difference=_signed(row["generated − human"], row["low"], row["high"]),
            verdict=verdict))
    return "\n".join(lines)


def retrieval_text(comparison: pd.DataFrame, questions: pd.DataFrame, corpora: Mapping, retrievers: Sequence[str],
                   dense_model: str, answer_share: float, metric: str, corpus_labels: Mapping) -> str:
    """The retrieval set-up, then one bullet per corpus: the range of generated − human and the separated cells."""
    generated = questions[questions["set"] == "generated"]
    fallback = int((generated["relevance"] == "passage overlap").sum())
    lines = [PROSE.fill("retrieval", retrievers=", ".join(retrievers), dense_model=dense_model,
                        haystacks=", ".join(f"{len(c.documents)} {name} documents" for name, c in corpora.items()),
                        answer_share=f"{answer_share:.0%}", fallback=share(fallback, len(generated)))]
    for corpus, group in comparison.groupby("corpus", sort=False):
        up, down = separated_cells(group)
        low, high = group["generated − human"].min(), group["generated − human"].max()
        spread = (f"is {numbers.number(low, 2, True)} in {numbers.count(len(group), 'cell')}"
                  if numbers.number(low, 2, True) == numbers.number(high, 2, True) else
                  f"ranges from {numbers.number(low, 2, True)} to {numbers.number(high, 2, True)} over "
                  f"{numbers.count(len(group), 'cell')}")
        lines.append(PROSE.fill("retrieval.corpus", corpus=corpus_labels[corpus], metric=metric,
                                spread=spread, up=up, down=down))
    return "\n".join(lines)


def trend_text(trend: pd.DataFrame, corpus_labels: Mapping) -> str:
    """One bullet per corpus (and pooled): the slope of BM25's advantage on overlap, with its verdict."""
    return "\n".join(PROSE.fill(
        "trend.corpus", corpus=corpus_labels.get(r.corpus, "Both corpora pooled"), questions=r.questions,
        passages=r.passages, slope=_signed(r.slope, r.low, r.high),
        verdict=interval_direction(r.low, r.high, "overlap predicts BM25's advantage.",
                                   "overlap predicts a *dense* advantage.",
                                   "no trend that this sample can separate from zero."))
        for r in trend.itertuples())


def flagged_generated(checks: pd.DataFrame, names: Sequence[str]) -> tuple[int, int]:
    """Generated questions on which at least one of the checks ``names`` fires, and all generated questions."""
    generated = checks[checks["set"] == "generated"]
    return int(generated[list(names)].any(axis=1).sum()), len(generated)


def check_count_text(checks: pd.DataFrame, name: str, has_examples: bool) -> str:
    """How many generated questions one check flags, leading into its examples when there are some."""
    generated = checks[checks["set"] == "generated"]
    return PROSE.fill("check_count", check=name, flagged=share(int(generated[name].sum()), len(generated)),
                      lead_in=", for example:" if has_examples else ".")


def takeaways(overlap_paired: pd.DataFrame, comparison: pd.DataFrame, trend: pd.DataFrame | None, clean_text: str,
              flagged: tuple[int, int], metric: str, corpus_labels: Mapping, human_labels: Mapping) -> str:
    """The post's takeaways as bullets, each computed from a table above (``trend`` None: no BM25/dense trend)."""
    points = []
    for row in overlap_paired.to_dict("records"):
        points.append(PROSE.fill(
            "takeaway.overlap", corpus=corpus_labels[row["corpus"]], human_set=human_labels[row["corpus"]],
            difference=_signed(row["generated − human"], row["low"], row["high"]),
            verdict=interval_direction(row["low"], row["high"], "a real gap.", "the generator copies less.",
                                       "no gap this sample can show.")))
    for corpus, group in comparison.groupby("corpus", sort=False):
        up, down = separated_cells(group)
        points.append(PROSE.fill(
            "takeaway.retrieval", corpus=corpus_labels[corpus], up=up, down=down,
            cells=numbers.count(len(group), "strategy × retriever cell"),
            mean=numbers.number(group["generated − human"].mean(), 2, True), metric=metric))
    if trend is not None:
        pooled = trend[trend["corpus"] == "both"].iloc[0]
        points.append(PROSE.fill(
            "takeaway.trend", slope=_signed(pooled["slope"], pooled["low"], pooled["high"]),
            verdict=interval_direction(pooled["low"], pooled["high"], "BM25 gains where words are copied",
                                       "dense gains where words are copied", "not separable from zero")))
    points.append(PROSE.fill("takeaway.clean", clean=clean_text))
    points.append(PROSE.fill("takeaway.checks", flagged=share(*flagged)))
    return PROSE.fill("takeaways", points="\n".join(PROSE.fill("takeaway.point", point=p) for p in points))


def answer(overlap_paired: pd.DataFrame, comparison: pd.DataFrame, flagged: tuple[int, int], metric: str,
           corpus_labels: Mapping, human_labels: Mapping) -> str:
    """The post's answer (under 150 words): per corpus the overlap gap and the retrieval cells that
    separate, then how many generated questions a check flags."""
    points = []
    for row in overlap_paired.to_dict("records"):
        group = comparison[comparison["corpus"] == row["corpus"]]
        up, down = separated_cells(group)
        points.append(PROSE.fill(
            "answer.corpus", corpus=corpus_labels[row["corpus"]], human_set=human_labels[row["corpus"]],
            difference=_signed(row["generated − human"], row["low"], row["high"]),
            verdict=interval_direction(row["low"], row["high"], "a real gap", "the generator copies less",
                                       "no gap this sample can show"),
            up=up, down=down, cells=numbers.count(len(group), "strategy × retriever cell"),
            mean=numbers.number(group["generated − human"].mean(), 2, True), metric=metric))
    return PROSE.fill("answer", points=" ".join(points), flagged=share(*flagged), metric=metric)


def no_trend_text() -> str:
    """The sentence shown when BM25 and dense retrieval were not both run (no advantage to relate)."""
    return PROSE.fill("trend.none")


def flagged_text(flagged: tuple[int, int]) -> str:
    """How many generated questions at least one check flags (:func:`flagged_generated`), leading into the counts."""
    return PROSE.fill("checks.flagged", flagged=share(*flagged))
