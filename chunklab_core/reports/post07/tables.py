"""Post 07's tables: the reranking stage per cell, depth against depth, scorer against scorer.

Handles: the corpora table; the per-cell stage table (nDCG@k and MRR@k before and after,
ΔnDCG, ΔMRR and ΔP@k with paired percentile-bootstrap intervals from ``stats``, the same-set
share, the ceiling first-stage hit@N beside hit@k after reranking, chunks rescued and pushed
out) and its display; depth-against-depth and scorer-against-scorer paired comparisons; the
slice of the sweep; and the label of each sample (:func:`sample_labels`: data set, questions
and documents, by :mod:`chunklab_core.reports.samples`). Where questions share documents the
intervals resample documents (``verdict_tables.paired_interval``, column ``design``), with the
question-level verdict beside it. Every verdict is worded from a paired interval by
:func:`verdict`, the series' rule (an interval that excludes 0 separates; otherwise the two
cannot be told apart), :func:`chunklab_core.stats.claims.pair_verdict`.

Not handled: running the stage (``rerank.study``), the formulas (``rerank``,
``evaluation.ranking_metrics``, ``footprint``), the bootstrap (``stats``), the cost table
(``post07.cost``), the figures (``post07.figures``), the sentences (``post07.prose``).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from chunklab_core.chunking import strategy_label
from chunklab_core.core import numbers
from chunklab_core.reports import samples
from chunklab_core.reports.verdict_tables import design_of, paired_interval
from chunklab_core.stats import bootstrap as stats
from chunklab_core.stats.claims import pair_verdict

CELL = ["corpus", "strategy", "first_stage", "scorer", "depth"]
SLICE_POOL = "slice pool"


def sample_labels(per_question: pd.DataFrame, by: Sequence[str] = ("corpus", "scorer")) -> dict:
    """``(corpus, scorer) -> label`` of the questions each re-scorer scored: "SQuAD v1.1, 20
    questions from 12 articles" (distinct ``qid`` and ``doc_id`` of its rows)."""
    by = list(by)
    labels = {}
    for keys, group in per_question.groupby(by, sort=False):
        keys = keys if isinstance(keys, tuple) else (keys,)
        labels[keys] = samples.sample_label(keys[0], group["qid"].nunique(), group["doc_id"].nunique())
    return labels


def verdict(a: str, b: str, low: float, high: float) -> str:
    """The series' wording of a paired interval of ``a - b``."""
    return pair_verdict(a, b, low, high)


def corpus_table(corpora: dict) -> pd.DataFrame:
    """Documents, characters and questions of each corpus, named by its sample label; a key other
    than the corpus's name (``squad (slice pool)``) adds its role in brackets."""
    def label(key, corpus):
        named = samples.corpus_sample_label(corpus.name, corpus)
        return named if key == corpus.name else f"{named} ({SLICE_POOL})"

    return pd.DataFrame([{"corpus": label(name, c), "documents": len(c.documents),
                          "characters": c.n_chars, "questions": len(c.questions)} for name, c in corpora.items()])


def select_runs(runs: dict, corpus: str, strategies: Sequence[str], first_stage: str) -> dict:
    """The runs ``(corpus, strategy, first_stage)`` of the slice, in ``strategies`` order."""
    missing = [s for s in strategies if (corpus, s, first_stage) not in runs]
    if missing:
        raise ValueError(f"the slice needs runs of {corpus}/{first_stage} for {missing}; add them to the sweep")
    return {(corpus, s, first_stage): runs[(corpus, s, first_stage)] for s in strategies}


def _paired(after: np.ndarray, before: np.ndarray, resamples: int, seed: int, documents=None) -> stats.Interval:
    """The paired interval of after − before: documents resampled when the questions share them
    (``verdict_tables.paired_interval``), questions otherwise."""
    return paired_interval(np.asarray(after), np.asarray(before), resamples, seed, documents)


def _documents(group: pd.DataFrame):
    return group["doc_id"].to_numpy() if "doc_id" in group else None


def stage_table(per_question: pd.DataFrame, resamples: int, seed: int) -> pd.DataFrame:
    """One row per cell (corpus, strategy, first stage, scorer, depth); see the module docstring."""
    rows = []
    for keys, group in per_question.groupby(CELL, sort=False):
        docs = _documents(group)
        d_ndcg = _paired(group["ndcg_after"].to_numpy(), group["ndcg_before"].to_numpy(), resamples, seed, docs)
        d_rr = _paired(group["rr_after"].to_numpy(), group["rr_before"].to_numpy(), resamples, seed, docs)
        d_p = _paired(group["p_after"].to_numpy(), group["p_before"].to_numpy(), resamples, seed, docs)
        rows.append({
            **dict(zip(CELL, keys)), "k": int(group["k"].iloc[0]), "questions": len(group),
            "design": design_of(docs),
            "ndcg_before": group["ndcg_before"].mean(), "ndcg_after": group["ndcg_after"].mean(),
            "d_ndcg": d_ndcg.mean, "d_ndcg_low": d_ndcg.low, "d_ndcg_high": d_ndcg.high,
            "mrr_before": group["rr_before"].mean(), "mrr_after": group["rr_after"].mean(),
            "d_mrr": d_rr.mean, "d_mrr_low": d_rr.low, "d_mrr_high": d_rr.high,
            "d_p": d_p.mean, "d_p_low": d_p.low, "d_p_high": d_p.high,
            "same_set": group["same_set"].mean(), "ceiling": group["ceiling"].mean(),
            "hit_before": group["hit_before"].mean(), "hit_after": group["hit_after"].mean(),
            "rescued": int(group["rescued"].sum()), "pushed_out": int(group["pushed_out"].sum()),
            "tokens_read": group["tokens_read"].mean(),
            "verdict": verdict("reranked", "first stage", d_ndcg.low, d_ndcg.high),
            "question verdict": verdict("reranked", "first stage",
                                        *stats.paired_difference_ci(group["ndcg_after"].to_numpy(),
                                                                    group["ndcg_before"].to_numpy(),
                                                                    resamples, seed)[1:]),
        })
    return pd.DataFrame(rows)


def _interval(mean: float, low: float, high: float) -> str:
    return numbers.estimate(mean, low, high, signed=True)


def display_stage_table(table: pd.DataFrame, labels: dict | None = None) -> pd.DataFrame:
    """The stage table formatted for reading (intervals in brackets); ``labels`` (from
    :func:`sample_labels`) name each row's sample in the ``sample`` column."""
    k = int(table["k"].iloc[0]) if len(table) else 0
    named = [labels.get((c, s), c) for c, s in zip(table["corpus"], table["scorer"])] if labels else table["corpus"]
    return pd.DataFrame({
        "sample": named, "strategy": table["strategy"], "first stage": table["first_stage"],
        "re-scorer": table["scorer"], "N": table["depth"], "n": table["questions"],
        f"nDCG@{k} before": table["ndcg_before"].round(3), f"after": table["ndcg_after"].round(3),
        "ΔnDCG [95% CI]": [_interval(*r) for r in table[["d_ndcg", "d_ndcg_low", "d_ndcg_high"]].to_numpy()],
        f"MRR@{k} before": table["mrr_before"].round(3), "MRR after": table["mrr_after"].round(3),
        "ΔMRR [95% CI]": [_interval(*r) for r in table[["d_mrr", "d_mrr_low", "d_mrr_high"]].to_numpy()],
        f"ΔP@{k} [95% CI]": [_interval(*r) for r in table[["d_p", "d_p_low", "d_p_high"]].to_numpy()],
        "same set": table["same_set"].round(3),
        "ceiling hit@N": table["ceiling"].round(3), f"hit@{k} after": table["hit_after"].round(3),
        "rescued": table["rescued"], "pushed out": table["pushed_out"], "verdict (ΔnDCG)": table["verdict"],
        "resampled": table["design"] if "design" in table else "questions",
        "verdict, questions resampled": table["question verdict"] if "question verdict" in table else table["verdict"],
    })


STAGE_KEY = ["sample", "strategy", "re-scorer", "N"]


def stage_views(k: int) -> dict[str, list[str]]:
    """The stage table's views (caption -> columns), each narrow enough for the page's text column."""
    return {
        f"Does reranking help? nDCG@{k} before and after, the paired difference and its verdict:":
            ["n", f"nDCG@{k} before", "after", "ΔnDCG [95% CI]", "verdict (ΔnDCG)"],
        "The same verdict with questions resampled instead of documents, and the change in precision:":
            ["first stage", "resampled", "verdict, questions resampled", f"ΔP@{k} [95% CI]"],
        f"MRR@{k} before and after:": [f"MRR@{k} before", "MRR after", "ΔMRR [95% CI]"],
        "What reranking can reach (the ceiling) and what it moved:":
            ["ceiling hit@N", f"hit@{k} after", "same set", "rescued", "pushed out"],
    }


def show_stage_tables(table: pd.DataFrame, labels: dict | None = None, csv: str | None = None) -> None:
    """Display the stage table (:func:`display_stage_table`) as the narrow views of :func:`stage_views`,
    then link the whole table ``data/<csv>.csv``."""
    from chunklab_core.reports.table_views import show_views

    k = int(table["k"].iloc[0]) if len(table) else 0
    show_views(display_stage_table(table, labels), STAGE_KEY, stage_views(k), csv)


def answer_table(table: pd.DataFrame, labels: dict | None = None) -> pd.DataFrame:
    """The answer's table: at the deepest N, per sample and strategy, nDCG@k before and after,
    ΔnDCG with its paired interval and its verdict (the key columns of :func:`display_stage_table`)."""
    deepest = table[table["depth"] == table["depth"].max()]
    shown = display_stage_table(deepest, labels).assign(strategy=[strategy_label(s) for s in deepest["strategy"]])
    k = int(table["k"].iloc[0]) if len(table) else 0
    return shown.reset_index(drop=True)[["sample", "strategy", "n", f"nDCG@{k} before", "after", "ΔnDCG [95% CI]", "verdict (ΔnDCG)"]]


def depth_comparison(per_question: pd.DataFrame, deep: int, shallow: int, resamples: int, seed: int) -> pd.DataFrame:
    """nDCG@k after reranking at depth ``deep`` minus at ``shallow``, paired by question, per cell."""
    rows = []
    keys = ["corpus", "strategy", "first_stage", "scorer"]
    for cell, group in per_question.groupby(keys, sort=False):
        a = group[group["depth"] == deep].set_index("qid")["ndcg_after"]
        b = group[group["depth"] == shallow].set_index("qid")["ndcg_after"]
        if a.empty or b.empty:
            continue
        docs = group[group["depth"] == deep].set_index("qid")["doc_id"].to_numpy() if "doc_id" in group else None
        diff = _paired(a.to_numpy(), b.loc[a.index].to_numpy(), resamples, seed, docs)
        rows.append({**dict(zip(keys, cell)), "questions": len(a), "design": design_of(docs),
                     "difference": diff.mean, "low": diff.low,
                     "high": diff.high, "verdict": verdict(f"N={deep}", f"N={shallow}", diff.low, diff.high)})
    return pd.DataFrame(rows)


def scorer_comparison(a_rows: pd.DataFrame, b_rows: pd.DataFrame, resamples: int, seed: int) -> pd.DataFrame:
    """nDCG@k after scorer a minus after scorer b, on the questions a scored, per cell (paired by question)."""
    rows = []
    keys = ["corpus", "strategy", "first_stage", "depth"]
    other = b_rows.set_index(keys + ["qid"])
    for cell, group in a_rows.groupby(keys, sort=False):
        wanted = [(*cell, q) for q in group["qid"]]
        if not all(w in other.index for w in wanted):
            continue
        b = other.loc[wanted]
        a_name, b_name = group["scorer"].iloc[0], b["scorer"].iloc[0]
        docs = _documents(group)
        diff = _paired(group["ndcg_after"].to_numpy(), b["ndcg_after"].to_numpy(), resamples, seed, docs)
        rows.append({**dict(zip(keys, cell)), "a": a_name, "b": b_name, "questions": len(group),
                     "design": design_of(docs),
                     "ndcg_a": group["ndcg_after"].mean(), "ndcg_b": b["ndcg_after"].mean(),
                     "difference": diff.mean, "low": diff.low, "high": diff.high,
                     "verdict": verdict(a_name, b_name, diff.low, diff.high)})
    return pd.DataFrame(rows)


def slice_of(per_question: pd.DataFrame, corpus, strategies: Sequence[str], depth: int,
             n_questions: int) -> pd.DataFrame:
    """The sweep's rows for the slice: one corpus (a ``Corpus``), some strategies, one depth, its first
    ``n_questions`` questions (the seeded order)."""
    qids = [q.qid for q in corpus.questions[:n_questions]]
    keep = ((per_question["corpus"] == corpus.name) & per_question["strategy"].isin(list(strategies))
            & (per_question["depth"] == depth) & per_question["qid"].isin(qids))
    return per_question[keep]


def slice_comparisons(slice_rows: pd.DataFrame, resamples: int, seed: int) -> pd.DataFrame:
    """Every pair of scorers on the slice (in the order they appear, the later one as b), paired by question,
    on the questions the first of the two scored."""
    scorers = list(dict.fromkeys(slice_rows["scorer"]))
    frames = [scorer_comparison(slice_rows[slice_rows["scorer"] == a], slice_rows[slice_rows["scorer"] == b],
                                resamples, seed)
              for i, a in enumerate(scorers) for b in scorers[i + 1:]]
    frames = [f for f in frames if len(f)]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


