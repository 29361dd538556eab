"""Post 07's sentences: the values its paragraphs need, filled into the Markdown templates of ``prose.md``.

Handles: the sweep's set-up line (:func:`setup_text`), the line said when no cross-encoder is
set (:func:`no_cross_encoder_text`), how much of the LLM slice is recorded and what recording
it cost (:func:`coverage_text`), and the claims the run supports (:func:`reading`: per sample
and first stage the ΔnDCG verdicts, the ceiling, chunks rescued and pushed out; depth against
depth; scorer against scorer; each re-scorer of the slice against the first stage). The
sentences live in ``prose.md`` (:mod:`chunklab_core.reports.templates`); this module computes
the values (numbers and intervals by :mod:`chunklab_core.core.numbers`, counts in agreement
with their nouns) and takes the verdict words from the tables, where
:func:`chunklab_core.reports.post07.tables.verdict` worded them by the series' rule. Samples
are named by :func:`chunklab_core.reports.post07.tables.sample_labels` (data set, questions,
documents), strategies by :func:`chunklab_core.chunking.strategy_label`.

Not handled: computing the tables (``post07.tables``, ``post07.cost``), the figures.
"""

from __future__ import annotations

from typing import Sequence

import pandas as pd

from chunklab_core.chunking import strategy_label
from chunklab_core.core import numbers
from chunklab_core.reports import samples
from chunklab_core.reports.post07.tables import sample_labels
from chunklab_core.reports.templates import Templates

PROSE = Templates(__file__, "prose.md")


def _signed(mean: float, low: float, high: float) -> str:
    return numbers.estimate(mean, low, high, signed=True)


def setup_text(scorer: str, k: int, depths: Sequence[int]) -> str:
    """The re-scorer, k and the depths of the sweep."""
    return PROSE.fill("setup", scorer=scorer, k=k, depths=list(depths))


def no_cross_encoder_text() -> str:
    """Said when ``CROSS_ENCODER`` names no local model."""
    return PROSE.fill("no_cross_encoder")


def coverage_text(coverage: pd.DataFrame, calls: pd.DataFrame, per_question: pd.DataFrame) -> str:
    """How much of the planned LLM subset is recorded (``per_question``: the LLM's rows, which
    name its sample), and what recording it cost."""
    if coverage.empty:
        return PROSE.fill("coverage.none")
    row = coverage.iloc[0]
    sample = (next(iter(sample_labels(per_question).values())) if len(per_question)
              else samples.sample_label(row["corpus"], 0, 0))
    spent = ""
    if len(calls):
        spent = " " + PROSE.fill(
            "coverage.calls", calls=numbers.count(len(calls), "call"),
            minutes=numbers.number(calls["seconds"].sum() / 60, 1), median=numbers.number(calls["seconds"].median(), 1),
            p_yes=numbers.count(int((calls["score_kind"] == "p_yes").sum()), "call"),
            unparsed=int((calls["label"] == "unparsed").sum()))
    return PROSE.fill("coverage", recorded=int(row["questions_recorded"]), planned=int(row["questions_planned"]),
                      sample=sample, strategies=", ".join(strategy_label(s) for s in coverage["strategy"]),
                      first_stage=row["first_stage"], calls=spent)


def verdict_counts(verdicts: pd.Series) -> str:
    """``*first stage ahead* in 8, *cannot be told apart* in 4``: each verdict word and how often, most frequent first."""
    return ", ".join(PROSE.fill("verdict_count", verdict=word, n=n) for word, n in verdicts.value_counts().items())


def ceiling_counts(stage: pd.DataFrame, k: int) -> dict:
    """What the ceiling says about a set of stage cells. hit@k after reranking can never exceed the
    first stage's hit@N (a reranker re-orders the top N only): that holds by construction, so it is
    checked here (a cell above its ceiling is an error in the computation), never counted as a finding.
    Counted instead, over the cells with N > k (at N = k reranking cannot change hit@k): ``deeper``
    (how many), ``reached`` (hit@k after equals the ceiling), ``raised`` / ``lowered`` (hit@k after
    above / below the first stage's hit@k) and ``recovered`` (the mean share of the room between the
    first stage's hit@k and the ceiling that reranking filled, with its lowest and highest cell)."""
    above = stage[stage["hit_after"] > stage["ceiling"] + 1e-12]
    if len(above):
        raise ValueError(f"{len(above)} stage cell(s) have hit@{k} after reranking above the first stage's hit@N: "
                         "a reranker only re-orders the top N, so the stage table is wrong; recompute post 07")
    deeper = stage[stage["depth"] > k]
    room = (deeper["ceiling"] - deeper["hit_before"]).to_numpy(dtype=float)
    moved = (deeper["hit_after"] - deeper["hit_before"]).to_numpy(dtype=float)
    shares = [m / r for m, r in zip(moved, room) if r > 1e-12]
    return {"deeper": len(deeper), "reached": int((deeper["hit_after"] >= deeper["ceiling"] - 1e-12).sum()),
            "raised": int((moved > 1e-12).sum()), "lowered": int((moved < -1e-12).sum()),
            "recovered": (sum(shares) / len(shares), min(shares), max(shares)) if shares else None}


def ceiling_text(stage: pd.DataFrame, k: int) -> str:
    """:func:`ceiling_counts` in words (template ``ceiling``, or ``ceiling.none`` without a cell N > k)."""
    found = ceiling_counts(stage, k)
    if not found["deeper"]:
        return PROSE.fill("ceiling.none", k=k)
    mean, low, high = found["recovered"] or (float("nan"),) * 3
    return PROSE.fill("ceiling", k=k, deeper=numbers.count(found["deeper"], "cell"), reached=found["reached"],
                      recovered=numbers.number(mean, 0, scale="percent"),
                      span=numbers.span(low, high, 0, signed=True, scale="percent"))


def reading(stage: pd.DataFrame, depths: pd.DataFrame, llm_stage: pd.DataFrame,
            scorer_vs: pd.DataFrame, k: int, labels: dict, slice_labels: dict) -> str:
    """The claims this run supports, each worded by the paired-interval rule.

    ``stage``: the sweep's stage rows; ``llm_stage``: the slice's stage rows (any scorer);
    ``scorer_vs``: ``tables.scorer_comparison`` rows; ``labels`` and ``slice_labels``:
    ``(corpus, scorer) -> sample label`` of the sweep and of the slice (``tables.sample_labels``;
    a comparison is on the questions its scorer a scored)."""
    lines = []
    for (corpus, stage_name), group in stage.groupby(["corpus", "first_stage"], sort=False):
        scorer = group["scorer"].iloc[0]
        lines.append(PROSE.fill(
            "reading.stage", sample=labels[(corpus, scorer)], first_stage=stage_name, scorer=scorer,
            cells=numbers.count(len(group), "(strategy, N) cell"), k=k, verdicts=verdict_counts(group["verdict"]),
            ceiling=ceiling_text(group, k), rescued=int(group["rescued"].sum()),
            pushed_out=int(group["pushed_out"].sum())))
    if len(depths):
        lines.append(PROSE.fill("reading.depth", k=k, verdicts=verdict_counts(depths["verdict"]),
                                cells=numbers.count(len(depths), "cell")))
    for _, r in scorer_vs.iterrows():
        lines.append(PROSE.fill(
            "reading.pair", a=r["a"], b=r["b"], sample=slice_labels[(r["corpus"], r["a"])],
            strategy=strategy_label(r["strategy"]), depth=r["depth"], k=k, ndcg_a=numbers.number(r["ndcg_a"]),
            ndcg_b=numbers.number(r["ndcg_b"]), difference=_signed(r["difference"], r["low"], r["high"]),
            verdict=r["verdict"]))
    for _, r in llm_stage.iterrows():
        lines.append(PROSE.fill(
            "reading.first_stage", scorer=r["scorer"], sample=slice_labels[(r["corpus"], r["scorer"])],
            strategy=strategy_label(r["strategy"]), depth=r["depth"], k=k,
            difference=_signed(r["d_ndcg"], r["d_ndcg_low"], r["d_ndcg_high"]), verdict=r["verdict"]))
    return "\n".join(lines)


def answer(stage: pd.DataFrame, depths: pd.DataFrame, k: int, labels: dict) -> str:
    """The post's answer in a paragraph (under 150 words): each sample's ΔnDCG verdicts, the ceiling, depth."""
    parts = []
    for (corpus, first_stage), group in stage.groupby(["corpus", "first_stage"], sort=False):
        scorer = group["scorer"].iloc[0]
        parts.append(PROSE.fill("answer.stage", sample=labels[(corpus, scorer)], scorer=scorer,
                                first_stage=first_stage, k=k, verdicts=verdict_counts(group["verdict"]),
                                cells=numbers.count(len(group), "(strategy, N) cell")))
    deep, shallow = int(stage["depth"].max()), int(stage["depth"].min())
    return PROSE.fill("answer", stage_lines=" ".join(parts), k=k, ceiling=ceiling_text(stage, k),
                      deep=deep, shallow=shallow,
                      depth_verdicts=verdict_counts(depths["verdict"]) if len(depths) else "not measured",
                      depth_cells=numbers.count(len(depths), "cell"))
