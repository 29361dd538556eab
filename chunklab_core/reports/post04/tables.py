"""Post 04: where test questions come from, as one call per notebook section.

Handles: the generation summary (``unparsed`` counted, never dropped), word overlap per
question (``questions.checks.word_overlap``) with bootstrap intervals per set and paired
generated − human differences per corpus, the overlap-versus-BM25-advantage trend
(``trend.clustered_slope_ci``, resampling passages), the validity checks on every question of
both sets with counts, real examples and a seeded sample to read, and the tables the post shows (its figures: ``post04.figures``).
Retrieval itself lives in ``questions.retrieval_comparison``, generation in ``questions.generation``.

Not handled: deciding whether a flagged question is really bad (the evidence column and the
read sample are for a person to judge).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from chunklab_core.stats import bootstrap as stats
from chunklab_core.stats.claims import excludes_zero
from chunklab_core.questions.checks import CHECK_NAMES, bigram_overlap, check_all, word_overlap
from chunklab_core.questions.passages import Passage
from chunklab_core.questions.retrieval_comparison import SETS, question_sets
from chunklab_core.stats.trend import clustered_slope_ci

CORPUS_LABELS = {"squad": "SQuAD paragraphs", "nq": "Natural Questions pages"}
HUMAN_LABELS = {"squad": "crowd-written questions", "nq": "real search queries"}


def sample_labels(passages: Sequence[Passage]) -> dict[str, str]:
    """Per corpus: the sample by what it is, ``SQuAD v1.1, 60 questions from 27 articles``
    (one human question per passage; documents: the distinct documents of the passages;
    :func:`chunklab_core.reports.samples.sample_label`)."""
    from chunklab_core.reports.samples import sample_label

    corpora = list(dict.fromkeys(p.corpus for p in passages))
    return {corpus: sample_label(corpus, sum(p.corpus == corpus for p in passages),
                                 len({p.doc_id for p in passages if p.corpus == corpus}))
            for corpus in corpora}


def generation_summary(generations: pd.DataFrame) -> pd.DataFrame:
    """Per corpus: passages, parsed at the first attempt, after the retry, and unparsed."""
    table = generations.assign(
        first=(generations["status"] == "ok") & (generations["attempts"] == 1),
        retry=(generations["status"] == "ok") & (generations["attempts"] == 2),
        unparsed=generations["status"] != "ok")
    out = table.groupby("corpus", sort=False).agg(
        passages=("passage_id", "size"), **{"parsed at once": ("first", "sum"), "parsed after the retry":
                                            ("retry", "sum"), "unparsed": ("unparsed", "sum")})
    out.index = [CORPUS_LABELS.get(c, c) for c in out.index]
    return out


def overlap_table(passages: Sequence[Passage], generations: pd.DataFrame) -> pd.DataFrame:
    """One row per question of both sets with its word overlap against its own passage."""
    questions = question_sets(passages, generations)
    text_of = {p.passage_id: p.text for p in passages}
    questions["overlap"] = [word_overlap(q, text_of[pid]) for q, pid in zip(questions["question"],
                                                                            questions["passage_id"])]
    return questions[["qid", "passage_id", "corpus", "set", "question", "overlap"]]


def overlap_summary(overlaps: pd.DataFrame, resamples: int, seed: int) -> pd.DataFrame:
    """Per corpus x set: questions, mean overlap with its 95% interval, median, share at 1."""
    rows = []
    for (corpus, set_name), group in overlaps.groupby(["corpus", "set"], sort=False):
        values = group["overlap"].dropna().to_numpy(dtype=float)
        ci = stats.bootstrap_ci(values, resamples, seed)
        rows.append({"corpus": corpus, "set": set_name,
                     "source": "generated (Qwen2.5-Coder-1.5B)" if set_name == "generated" else HUMAN_LABELS[corpus],
                     "questions": len(values), "mean overlap": ci.mean, "low": ci.low, "high": ci.high,
                     "median": float(np.median(values)), "share of words all copied": float(np.mean(values == 1.0))})
    return pd.DataFrame(rows)


def overlap_measures(passages: Sequence[Passage], generations: pd.DataFrame, resamples: int,
                     seed: int) -> pd.DataFrame:
    """Per corpus x set: mean content-word overlap and mean bigram overlap, each with a 95% interval.

    The two measures of :mod:`chunklab_core.questions.checks` side by side (``word_overlap``: distinct content
    words; ``bigram_overlap``: distinct word pairs, function words kept), so a reference result
    measured another way can be set beside the one closer to its definition.
    """
    questions = question_sets(passages, generations)
    text_of = {p.passage_id: p.text for p in passages}
    rows = []
    for (corpus, set_name), group in questions.groupby(["corpus", "set"], sort=False):
        row = {"corpus": corpus, "set": set_name}
        for name, measure in (("content words", word_overlap), ("bigrams", bigram_overlap)):
            values = np.array([v for v in (measure(q, text_of[pid]) for q, pid in
                                           zip(group["question"], group["passage_id"])) if v is not None])
            ci = stats.bootstrap_ci(values, resamples, seed)
            row.update({f"{name}": ci.mean, f"{name} low": ci.low, f"{name} high": ci.high})
        row["questions"] = len(group)
        rows.append(row)
    return pd.DataFrame(rows)


def overlap_paired(overlaps: pd.DataFrame, resamples: int, seed: int) -> pd.DataFrame:
    """Per corpus: mean overlap difference generated − human over passages with both questions."""
    rows = []
    for corpus, group in overlaps.groupby("corpus", sort=False):
        wide = group.pivot(index="passage_id", columns="set", values="overlap").reindex(columns=list(SETS)).dropna()
        d = stats.paired_difference_ci(wide["generated"].to_numpy(), wide["human"].to_numpy(), resamples, seed)
        rows.append({"corpus": corpus, "passages": len(wide), "generated − human": d.mean, "low": d.low,
                     "high": d.high, "generated higher on": int((wide["generated"] > wide["human"]).sum()),
                     "human higher on": int((wide["generated"] < wide["human"]).sum())})
    return pd.DataFrame(rows)


def advantage_trend(advantage: pd.DataFrame, overlaps: pd.DataFrame, resamples: int, seed: int) -> pd.DataFrame:
    """Slope of BM25's advantage (``questions.retrieval_comparison.bm25_advantage``) on word overlap, per
    corpus and pooled, with a passage-clustered 95% interval."""
    data = advantage.merge(overlaps[["qid", "overlap"]], on="qid").dropna(subset=["overlap"])
    groups = [(c, data[data["corpus"] == c]) for c in dict.fromkeys(data["corpus"])] + [("both", data)]
    rows = []
    for corpus, group in groups:
        slope = clustered_slope_ci(group["overlap"], group["bm25 − dense"], group["passage_id"], resamples, seed)
        rows.append({"corpus": corpus, "questions": len(group), "passages": group["passage_id"].nunique(),
                     "slope": slope.slope, "low": slope.low, "high": slope.high,
                     "excludes 0": excludes_zero(slope.low, slope.high),
                     "resamples without spread": slope.degenerate})
    return pd.DataFrame(rows)


def check_table(passages: Sequence[Passage], generations: pd.DataFrame, restatement_threshold: float = 0.8,
                duplicate_threshold: float = 90.0) -> pd.DataFrame:
    """Every check on every question of both sets (duplicates looked for within each set).

    Columns: qid, passage_id, corpus, set, question, answer, then per check a boolean column
    and ``<check>: evidence``.
    """
    text_of = {p.passage_id: p.text for p in passages}
    human_answer = {p.passage_id: p.human_answers[0] if p.human_answers else "" for p in passages}
    by_passage = generations.set_index("passage_id")
    questions = question_sets(passages, generations)
    questions["answer"] = [human_answer[pid] if s == "human" else by_passage.at[pid, "generated_answer"]
                           for pid, s in zip(questions["passage_id"], questions["set"])]
    frames = []
    for _, group in questions.groupby("set", sort=False):
        checks = check_all(list(group["question"]), list(group["answer"]),
                           [text_of[pid] for pid in group["passage_id"]], restatement_threshold, duplicate_threshold)
        flags = pd.DataFrame({name: [c[name].flag for c in checks] for name in CHECK_NAMES}, index=group.index)
        evidence = pd.DataFrame({f"{name}: evidence": [c[name].evidence for c in checks] for name in CHECK_NAMES},
                                index=group.index)
        frames.append(pd.concat([group[["qid", "passage_id", "corpus", "set", "question", "answer"]], flags,
                                 evidence], axis=1))
    return pd.concat(frames).sort_index()


def check_summary(checks: pd.DataFrame) -> pd.DataFrame:
    """Flag counts per check, for each corpus x set, as 'count of n'."""
    columns = {}
    for (corpus, set_name), group in checks.groupby(["corpus", "set"], sort=False):
        label = f"{corpus} · {set_name if set_name == 'generated' else HUMAN_LABELS[corpus]}"
        columns[label] = {name: f"{int(group[name].sum())} of {len(group)}" for name in CHECK_NAMES}
    return pd.DataFrame(columns).rename_axis("check")


def check_examples(checks: pd.DataFrame, check: str, n: int, seed: int, set_name: str = "generated") -> pd.DataFrame:
    """Up to ``n`` flagged questions of one check and set (seeded draw), with their evidence."""
    if check not in CHECK_NAMES:
        raise ValueError(f"unknown check {check!r}; known: {CHECK_NAMES}")
    flagged = checks[(checks["set"] == set_name) & checks[check]]
    picked = flagged.sample(n=min(n, len(flagged)), random_state=np.random.default_rng(seed))
    return picked[["passage_id", "question", "answer", f"{check}: evidence"]].reset_index(drop=True)


def read_sample(passages: Sequence[Passage], checks: pd.DataFrame, n: int, seed: int,
                excerpt: int = 400) -> pd.DataFrame:
    """A seeded sample of ``n`` generated questions to read: passage excerpt, question, answer,
    the human question on the same passage, and which checks fired."""
    text_of = {p.passage_id: p.text for p in passages}
    human_of = {p.passage_id: p.human_question for p in passages}
    generated = checks[checks["set"] == "generated"]
    picked = generated.sample(n=min(n, len(generated)), random_state=np.random.default_rng(seed))
    return pd.DataFrame({
        "passage (start)": [text_of[pid][:excerpt] + ("…" if len(text_of[pid]) > excerpt else "")
                            for pid in picked["passage_id"]],
        "generated question": picked["question"].to_numpy(), "generated answer": picked["answer"].to_numpy(),
        "human question": [human_of[pid] for pid in picked["passage_id"]],
        "checks fired": [", ".join(name for name in CHECK_NAMES if row[name]) or "none"
                         for _, row in picked.iterrows()],
    })


def answer_table(overlap_paired: pd.DataFrame, comparison: pd.DataFrame, metric: str, corpus_labels) -> pd.DataFrame:
    """The answer's table, one row per corpus: generated − human word overlap with its paired
    interval, and how many strategy × retriever cells of ``metric`` separate each way."""
    from chunklab_core.core import numbers
    from chunklab_core.reports.post04.prose import separated_cells

    rows = []
    for row in overlap_paired.to_dict("records"):
        group = comparison[comparison["corpus"] == row["corpus"]]
        up, down = separated_cells(group)
        rows.append({"sample": corpus_labels[row["corpus"]],
                     "overlap, generated − human [95% CI]": numbers.estimate(row["generated − human"], row["low"],
                                                                              row["high"], 2, signed=True),
                     f"{metric}: generated higher": up, "generated lower": down, "cells": len(group),
                     f"mean {metric} difference": numbers.number(group["generated − human"].mean(), 2, True)})
    return pd.DataFrame(rows)
