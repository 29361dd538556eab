"""Post 05: the notebook's sections over a recorded answer study (``answers.study.StudyTable``).

Handles: the verdict columns of the study, the answer table per corpus and
strategy with article-clustered bootstrap intervals (reference grader and each LLM judge) and
how much the clustering widens them, paired strategy differences, the deterministic
generation metrics, and the cost per stage and per strategy. Every sentence of prose these
functions return is filled from the numbers they compute into the templates of ``tables.md``. The graders' display names and the
pass/fail rule are the verdict vocabulary's (:mod:`chunklab_core.answers.verdicts`).
Not handled: agreement between judges and the probes (``reports.post05.judges``), where retrieval and
answer part ways (``reports.post05.drift``), the figures (``reports.post05.figures``), running models (``answers.study``), the formulas
(``answers.metrics``, ``stats``, ``stats.clustered``).
"""

from __future__ import annotations

from itertools import combinations
from typing import Sequence

import numpy as np
import pandas as pd

from chunklab_core.stats import bootstrap as stats
from chunklab_core.stats import claims
from chunklab_core.answers.metrics import (context_grounding, exact_match, is_abstention, mean_ignoring_none, rouge_l_f1, token_prf, unsupported_number_rate)
from chunklab_core.answers.verdicts import REFERENCE_COLUMN, grader_name, passed
from chunklab_core.chunking import strategy_label
from chunklab_core.stats.clustered import clustered_bootstrap_ci, design_effect
from chunklab_core.reports.samples import sample_label
from chunklab_core.reports.templates import Templates

PROSE = Templates(__file__, "tables.md")

def grader_columns(table: pd.DataFrame) -> list[str]:
    """The verdict columns present, reference grader first."""
    judges = [c for c in table.columns if c.startswith("judge_") and not c.endswith("_attempts")]
    return [REFERENCE_COLUMN, *judges]


def clusters(table: pd.DataFrame) -> np.ndarray:
    """The bootstrap's resampling unit per row: the question's source document within its corpus.

    Questions written about one SQuAD article share its difficulty, and the strategies'
    answers to one question share the question's; neither is an independent draw, so the
    intervals of this post resample documents (one-stage cluster bootstrap,
    :mod:`chunklab_core.stats.clustered`, as in post 03). A table without ``doc_id`` falls
    back to the question.
    """
    unit = table["doc_id"] if "doc_id" in table.columns else table["qid"]
    return (table["corpus"].astype(str) + "|" + unit.astype(str)).to_numpy()


def _per_question(group: pd.DataFrame, column: str) -> tuple[pd.DataFrame, np.ndarray]:
    """One corpus's pass/fail scores as questions x strategies, and each question's cluster."""
    wide = group.assign(score=passed(group[column])).pivot(index="qid", columns="strategy", values="score")
    units = pd.Series(clusters(group), index=group["qid"].to_numpy()).groupby(level=0).first()
    return wide, units.loc[wide.index].to_numpy()


def answer_table(study, resamples: int = 10_000, seed: int = 0) -> pd.DataFrame:
    """Per corpus, strategy and grader: share of answers passed, with a bootstrap interval.

    Also the share of questions whose passage was retrieved (some top-5 context holds a gold
    answer). Intervals resample the questions' documents (percentile interval of the one-stage
    cluster bootstrap, :func:`clusters`); ``documents`` is their number.
    """
    table = study.table
    rows = []
    for (corpus, strategy), group in table.groupby(["corpus", "strategy"], sort=False):
        scores = {"passage retrieved": group["passage_retrieved"].to_numpy(dtype=float)}
        for column in grader_columns(table):
            scores[grader_name(column)] = passed(group[column])
        units = clusters(group)
        for measure, values in scores.items():
            ci = clustered_bootstrap_ci(values, units, resamples, seed)
            rows.append({"corpus": corpus, "strategy": strategy_label(strategy), "measure": measure,
                         "questions": len(values), "documents": len(set(units)),
                         "share": ci.mean, "low": ci.low, "high": ci.high})
    return pd.DataFrame(rows)


def clustering_effect(study, column: str = REFERENCE_COLUMN, resamples: int = 10_000,
                      seed: int = 0) -> pd.DataFrame:
    """How much resampling documents instead of questions widens the answer table's intervals.

    Per corpus and strategy, the share ``column`` passes with the plain (question) and the
    document-clustered interval, their width ratio, Kish's design effect (the ratio squared)
    and the number of independent questions the sample is worth
    (``stats.clustered.design_effect``, same seed for both intervals).
    """
    frames = []
    for corpus, group in study.table.groupby("corpus", sort=False):
        wide, units = _per_question(group, column)
        strategies = list(dict.fromkeys(group["strategy"]))
        effect = design_effect(wide[strategies].to_numpy(), units, resamples, seed,
                               names=[strategy_label(s) for s in strategies])
        frames.append(effect.rename(columns={"cell": "strategy", "mean": "share"}).assign(corpus=corpus))
    table = pd.concat(frames, ignore_index=True)
    return table[["corpus", "strategy", "n_questions", "n_documents", "share", "plain_low", "plain_high",
                  "clustered_low", "clustered_high", "width_ratio", "design_effect", "effective_questions"]]


def _range(values: pd.Series, form: str) -> str:
    low, high = form.format(values.min()), form.format(values.max())
    return low if low == high else f"{low}–{high}"


def clustering_text(effect: pd.DataFrame) -> str:
    """One Markdown sentence per corpus on the width ratios of :func:`clustering_effect`."""
    lines = []
    for corpus, part in effect.groupby("corpus", sort=False):
        ratio = part["width_ratio"].dropna()
        useful = part["effective_questions"].replace(np.inf, np.nan).dropna()
        span = _range(ratio, "{:.2f}") if len(ratio) else "n/a"
        worth = PROSE.fill("clustering.worth", questions=_range(useful, "{:.0f}")) if len(useful) else ""
        noise = " " + PROSE.fill("clustering.noise") if len(ratio) and ratio.min() < 1 else ""
        sample = sample_label(corpus, int(part["n_questions"].iloc[0]), int(part["n_documents"].iloc[0]))
        lines.append(PROSE.fill("clustering.corpus", sample=sample, span=span, worth=worth, noise=noise))
    return "\n".join(lines)


def strategy_differences(study, column: str = REFERENCE_COLUMN, resamples: int = 10_000,
                         seed: int = 0) -> pd.DataFrame:
    """Paired differences in share passed between every two strategies of a corpus.

    The per-question differences are resampled by document (:func:`clusters`), so the pairing
    by question and the clustering by document are both kept. ``questions needed``: for a pair
    the interval does not separate, how many questions (same design) would shrink the interval
    to the observed difference (``stats.questions_needed``; None when the observed difference
    is 0 or the pair is already separated).
    """
    rows = []
    for corpus, group in study.table.groupby("corpus", sort=False):
        wide, units = _per_question(group, column)
        for a, b in combinations(list(dict.fromkeys(group["strategy"])), 2):
            ci = clustered_bootstrap_ci((wide[a] - wide[b]).to_numpy(), units, resamples, seed)
            separated = claims.excludes_zero(ci.low, ci.high)
            rows.append({"corpus": corpus, "strategy A": strategy_label(a), "strategy B": strategy_label(b),
                         "questions": len(wide), "A - B": ci.mean, "low": ci.low, "high": ci.high,
                         "separated": separated,
                         "questions needed": None if separated else
                         stats.questions_needed(len(wide), ci.mean, (ci.low, ci.high))})
    return pd.DataFrame(rows)


def generation_metrics_row(answer: str, golds: Sequence[str], contexts: Sequence[str]) -> dict:
    """The deterministic generation metrics of one answer; ``None`` where not measured.

    Exact match, token precision/recall/F1 and ROUGE-L F1 are not measured on an abstention
    (it is counted by ``abstained`` instead); grounding and the unsupported-number rate are
    ``None`` when the answer has no content word / no number (``answers.metrics``).
    """
    context = "\n\n".join(contexts)
    abstained = is_abstention(answer)
    prf = None if abstained else token_prf(answer, list(golds))
    return {
        "exact_match": None if abstained else exact_match(answer, list(golds)),
        "precision": None if prf is None else prf.precision,
        "recall": None if prf is None else prf.recall,
        "f1": None if prf is None else prf.f1,
        "rouge_l_f1": None if abstained else rouge_l_f1(answer, list(golds)),
        "grounding": context_grounding(answer, context),
        "unsupported_number_rate": unsupported_number_rate(answer, context),
        "abstained": float(abstained),
    }


def generation_metrics(study) -> pd.DataFrame:
    """Per corpus and strategy: each metric's mean over the answers where it was measured,
    with the number measured in parentheses-style ``n_<metric>`` columns."""
    per_answer = pd.DataFrame([generation_metrics_row(a, g, c) for a, g, c in
                               zip(study.table["answer"], study.table["golds"], study.table["contexts"])])
    per_answer[["corpus", "strategy"]] = study.table[["corpus", "strategy"]].to_numpy()
    rows = []
    for (corpus, strategy), group in per_answer.groupby(["corpus", "strategy"], sort=False):
        row = {"corpus": corpus, "strategy": strategy_label(strategy), "answers": len(group)}
        for metric in ["exact_match", "precision", "recall", "f1", "rouge_l_f1", "grounding",
                       "unsupported_number_rate", "abstained"]:
            values = [None if pd.isna(v) else v for v in group[metric]]
            row[metric] = mean_ignoring_none(values)
            row[f"n_{metric}"] = sum(v is not None for v in values)
        rows.append(row)
    table = pd.DataFrame(rows)
    return table.astype(object).where(table.notna(), None)  # "not measured" stays None, never NaN


def cost_per_stage(study) -> pd.DataFrame:
    """Per stage, over distinct calls (a repeated request is served from the records once):
    calls, mean tokens in and out, mean and total seconds, as measured when recorded."""
    calls = study.calls
    out = calls.groupby("stage", sort=False).agg(
        calls=("seconds", "size"), tokens_in=("tokens_in", "mean"), tokens_out=("tokens_out", "mean"),
        seconds_per_call=("seconds", "mean"), seconds_total=("seconds", "sum"))
    return out.reset_index()


def cost_columns(study, suffixes: Sequence[str] | None = None) -> list[str]:
    """The study's per-item cost columns (``cost_<stage>_<quantity>``, the call counts left out),
    only those ending in one of ``suffixes`` when given."""
    return [c for c in study.table.columns if c.startswith("cost_") and not c.endswith("_calls")
            and (suffixes is None or c.endswith(tuple(suffixes)))]


def per_strategy_cost(study, parts: Sequence[tuple[Sequence[str], str]]) -> pd.DataFrame:
    """One row per corpus and strategy (display label), for each ``(columns, statistic)`` of
    ``parts`` the columns' per-item ``statistic`` ("mean", "median"), side by side; column
    names without their ``cost_`` prefix. The one shape of post 05's cost tables."""
    grouped = study.table.groupby(["corpus", "strategy"], sort=False)
    out = pd.concat([getattr(grouped[list(columns)], statistic)() for columns, statistic in parts],
                    axis=1).reset_index()
    out["strategy"] = out["strategy"].map(strategy_label)
    out.columns = [c.removeprefix("cost_") for c in out.columns]
    return out


def cost_per_strategy(study) -> pd.DataFrame:
    """Per corpus and strategy, mean per item as if the item ran alone: tokens and seconds by stage."""
    return per_strategy_cost(study, [(cost_columns(study), "mean")])
