"""Post 07: the reranking stage's tables, figures and wording, one call per notebook section.

Handles: the corpora table; the per-cell stage table (nDCG@k and MRR@k before and after,
ΔnDCG, ΔMRR and ΔP@k with paired percentile-bootstrap intervals from ``stats``, the same-set
share, the ceiling first-stage hit@N beside hit@k after reranking, chunks rescued and pushed
out); the depth figure; depth-against-depth and LLM-against-embedding paired comparisons; the
cost table (tokens read, latency per query, hit@k gained per second); the footprint figure;
and the verdict words. Where questions share documents the intervals resample documents
(``verdict_tables.paired_interval``, column ``design``), with the question-level verdict beside
it. Every verdict is worded from a paired interval by :func:`verdict`,
the series' rule (an interval that excludes 0 separates; otherwise the two cannot be told
apart), :func:`chunklab_core.stats.claims.pair_verdict`.

Not handled: running the stage (``rerank.study``), the formulas (``rerank``, ``evaluation.ranking_metrics``,
``footprint``), the bootstrap (``stats``).
"""

from __future__ import annotations

import time
from typing import Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from chunklab_core.stats import bootstrap as stats

from chunklab_core.stats.claims import pair_verdict
from chunklab_core.chunking import strategy_label
from chunklab_core.core import numbers
from chunklab_core.reports.verdict_tables import design_of, paired_interval

CELL = ["corpus", "strategy", "first_stage", "scorer", "depth"]
CORPUS_LABELS = {"squad": "SQuAD v1.1 (every dev article, a seeded question sample)", "nq": "Natural Questions pages"}


def verdict(a: str, b: str, low: float, high: float) -> str:
    """The series' wording of a paired interval of ``a - b``."""
    return pair_verdict(a, b, low, high)


def corpus_table(corpora: dict) -> pd.DataFrame:
    """Documents, characters and questions of each corpus."""
    return pd.DataFrame([{"corpus": CORPUS_LABELS.get(name, name), "documents": len(c.documents),
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


def display_stage_table(table: pd.DataFrame) -> pd.DataFrame:
    """The stage table formatted for reading (intervals in brackets)."""
    k = int(table["k"].iloc[0]) if len(table) else 0
    return pd.DataFrame({
        "corpus": table["corpus"], "strategy": table["strategy"], "first stage": table["first_stage"],
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


def plot_depth(table: pd.DataFrame):
    """Per corpus and first stage: the ceiling (first-stage hit@N) and hit@k after reranking, by N."""
    panels = list(table.groupby(["corpus", "first_stage"], sort=False))
    fig, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels), 3.4), squeeze=False)
    colors = dict(zip(table["strategy"].unique(), plt.rcParams["axes.prop_cycle"].by_key()["color"]))
    k = int(table["k"].iloc[0])
    for ax, ((corpus, stage), group) in zip(axes[0], panels):
        for strategy, rows in group.groupby("strategy", sort=False):
            rows = rows.sort_values("depth")
            ax.plot(rows["depth"], rows["ceiling"], "--", color=colors[strategy], alpha=0.7)
            ax.plot(rows["depth"], rows["hit_after"], "o-", color=colors[strategy], label=strategy)
            ax.axhline(rows["hit_before"].iloc[0], color=colors[strategy], lw=0.8, alpha=0.4)
        ax.set_xscale("log")
        ax.minorticks_off()
        ax.set_xticks(sorted(group["depth"].unique()), [str(d) for d in sorted(group["depth"].unique())])
        ax.set_title(f"{CORPUS_LABELS.get(corpus, corpus)}\nfirst stage: {stage}", fontsize=9)
        ax.set_xlabel("reranking depth N")
        ax.set_ylim(0, 1.02)
    axes[0][0].set_ylabel(f"hit@{k} after reranking (solid)\nceiling: first-stage hit@N (dashed)")
    axes[0][-1].legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    return fig


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


def time_embedding_scorer(run, scorer_factory, depths: Sequence[int], n_queries: int, model: str = "") -> pd.DataFrame:
    """Wall seconds to re-score N candidates of each of the first ``n_queries`` questions, by N.

    Measured with a fresh in-memory cache per query and depth (nothing served from disk),
    after one untimed call that loads the model. The measurement is a recorded input like the
    rankings (``retrieval.recorded_runs``, kind ``timings``: measured once by ``make runs`` on the
    machine its record names, replayed by ``make all``), keyed by ``model``, the depths and the
    candidates; live (``CHUNKLAB_RUNS=live``) it is measured in this execution.
    """
    from chunklab_core.rerank.study import candidate_texts
    from chunklab_core.retrieval.recorded_runs import default_store, texts_sha256

    rows_timed = list(range(min(n_queries, run.ranked.shape[0])))
    texts_of = {(d, r): candidate_texts(run, d, [r])[0] for d in depths for r in rows_timed}

    def measure():
        seconds, shown = [], []
        if rows_timed:  # an untimed call loads the model (and warms torch) first
            scorer_factory().score(run.corpus.questions[0].text, candidate_texts(run, 1, [0])[0])
        for depth in depths:
            for row in rows_timed:
                scorer = scorer_factory()
                start = time.perf_counter()
                scorer.score(run.corpus.questions[row].text, texts_of[(depth, row)])
                seconds.append(time.perf_counter() - start)
                shown.append(depth)
        return {"depth": np.asarray(shown, dtype=np.int64), "seconds": np.asarray(seconds, dtype=np.float64)}

    key = {"measure": "embedding re-scorer seconds", "model": model or getattr(scorer_factory, "args", [""])[0],
           "depths": [int(d) for d in depths], "queries": texts_sha256([run.corpus.questions[r].text for r in rows_timed]),
           "candidates": texts_sha256([t for d in depths for r in rows_timed for t in texts_of[(d, r)]])}
    arrays = default_store().keyed("timings", key, measure, f"timing {key['model']} at depths {key['depths']}")
    qids = [run.corpus.questions[r].qid for _ in depths for r in rows_timed]
    return pd.DataFrame({"depth": arrays["depth"], "qid": qids[:len(arrays["depth"])], "seconds": arrays["seconds"]},
                        columns=["depth", "qid", "seconds"])


def timing_source() -> str:
    """Where the re-scorer's seconds come from: measured now (live) or replayed from ``make runs``."""
    from chunklab_core.retrieval.recorded_runs import current_mode

    return "measured in this execution" if current_mode() == "live" else "measured by make runs (recorded)"


def embedding_cost(stage: pd.DataFrame, seconds: pd.DataFrame) -> pd.DataFrame:
    """Per depth for one embedding re-scorer: tokens read, seconds per query (measured), gains per second."""
    rows = []
    per_depth = seconds.groupby("depth")["seconds"].mean()
    for depth, group in stage.groupby("depth"):
        if depth not in per_depth.index:
            continue
        per_query = float(per_depth[depth])
        gain = float((group["hit_after"] - group["hit_before"]).mean())
        rows.append({"scorer": group["scorer"].iloc[0], "depth": depth, "cells": len(group),
                     "tokens_read_per_query": group["tokens_read"].mean(), "tokens_unit": "cl100k_base",
                     "seconds_per_query": per_query, "seconds_source": timing_source(),
                     "hit_gain": gain, "hit_gain_per_second": gain / per_query,
                     "ndcg_gain_per_second": float(group["d_ndcg"].mean()) / per_query})
    return pd.DataFrame(rows)


def llm_cost(llm_stage: pd.DataFrame, calls: pd.DataFrame, depth: int) -> pd.DataFrame:
    """The LLM re-scorer's cost per question from its recorded calls (seconds, prompt tokens)."""
    if llm_stage.empty or calls.empty:
        return pd.DataFrame()
    seconds = float(calls.groupby("question")["seconds"].sum().mean())
    gain = float((llm_stage["hit_after"] - llm_stage["hit_before"]).mean())
    return pd.DataFrame([{
        "scorer": llm_stage["scorer"].iloc[0], "depth": depth, "cells": len(llm_stage),
        "tokens_read_per_query": float(calls.groupby("question")["prompt_tokens"].sum().mean()),
        "tokens_unit": "Qwen prompt tokens", "seconds_per_query": seconds,
        "seconds_source": "recorded with the calls", "hit_gain": gain, "hit_gain_per_second": gain / seconds,
        "ndcg_gain_per_second": float(llm_stage["d_ndcg"].mean()) / seconds}])


def plot_footprint(table: pd.DataFrame):
    """Chunks, indexed tokens, duplication and index sizes per strategy, one row of panels per corpus.

    Strategies are named (:func:`chunklab_core.chunking.strategy_label`), not by id, on every
    panel's axis in a legible size; the x tick labels are compact (``1.2k``, ``3M``) so they
    never overlap.
    """
    from matplotlib.ticker import EngFormatter, MaxNLocator

    corpora = list(table["corpus"].unique())
    columns = [("chunks", "chunks"), ("indexed_tokens", "indexed tokens (cl100k)"), ("duplication", "duplication"),
               ("bm25_MB", "BM25 postings, MB"), ("vectors_MB_all-mpnet-base-v2", "mpnet vectors, MB")]
    strategies = max(table.groupby("corpus").size().max(), 1)
    fig, axes = plt.subplots(len(corpora), len(columns),
                             figsize=(2.9 * len(columns) + 1.6, (0.32 * strategies + 1.1) * len(corpora)),
                             squeeze=False)
    for r, corpus in enumerate(corpora):
        rows = table[table["corpus"] == corpus]
        names = [strategy_label(s) for s in rows["strategy"]]
        for c, (column, title) in enumerate(columns):
            ax = axes[r][c]
            ax.barh(names, rows[column], color="#4c72b0")
            ax.invert_yaxis()
            ax.set_title(f"{title}\n{CORPUS_LABELS.get(corpus, corpus)}", fontsize=9)
            if c:
                ax.set_yticklabels([])
            ax.xaxis.set_major_locator(MaxNLocator(nbins=3, min_n_ticks=2))
            ax.xaxis.set_major_formatter(EngFormatter(sep=""))
            ax.tick_params(axis="y", labelsize=9)
            ax.tick_params(axis="x", labelsize=8)
    fig.tight_layout()
    return fig


def coverage_text(coverage: pd.DataFrame, calls: pd.DataFrame) -> str:
    """How much of the planned LLM subset is recorded, and what it cost to record."""
    if coverage.empty:
        return "No LLM reranking run was planned."
    row = coverage.iloc[0]
    text = (f"The LLM reranker covers **{int(row['questions_recorded'])} of {int(row['questions_planned'])}** "
            f"planned questions ({row['corpus']}, {', '.join(coverage['strategy'])}, first stage "
            f"{row['first_stage']}).")
    if len(calls):
        text += (f" Recording its {len(calls)} calls took {calls['seconds'].sum() / 60:.1f} minutes of model time "
                 f"({calls['seconds'].median():.1f} s per call, median; "
                 f"{int((calls['score_kind'] == 'p_yes').sum())} calls scored by p(YES), "
                 f"{int((calls['label'] == 'unparsed').sum())} unparsed).")
    return text


def reading(stage: pd.DataFrame, depths: pd.DataFrame, llm_stage: pd.DataFrame,
            scorer_vs: pd.DataFrame, k: int) -> str:
    """The claims this run supports, each worded by the paired-interval rule.

    ``llm_stage``: the slice's stage rows (any scorer); ``scorer_vs``: ``scorer_comparison`` rows."""
    lines = []
    for (corpus, stage_name), group in stage.groupby(["corpus", "first_stage"], sort=False):
        words = group["verdict"].value_counts()
        lines.append(f"* **{CORPUS_LABELS.get(corpus, corpus)}, {stage_name} candidates, re-scored by "
                     f"{group['scorer'].iloc[0]}**: over {len(group)} (strategy, N) cells, ΔnDCG@{k} is "
                     + ", ".join(f"*{w}* in {n}" for w, n in words.items()) + ". "
                     f"hit@{k} after reranking stays at or below the ceiling (first-stage hit@N) in "
                     f"{int((group['hit_after'] <= group['ceiling'] + 1e-12).sum())} of {len(group)} cells; "
                     f"{int(group['rescued'].sum())} relevant contexts were rescued into the top {k} and "
                     f"{int(group['pushed_out'].sum())} pushed out, summed over cells.")
    if len(depths):
        words = depths["verdict"].value_counts()
        lines.append(f"* **Depth**: nDCG@{k} after reranking at the deepest N against the shallowest: "
                     + ", ".join(f"*{w}* in {n}" for w, n in words.items()) + f" of {len(depths)} cells.")
    for _, r in scorer_vs.iterrows():
        lines.append(f"* **{r['a']} against {r['b']}** ({r['corpus']}, {r['strategy']}, N = {r['depth']}, "
                     f"{r['questions']} questions): nDCG@{k} {r['ndcg_a']:.3f} against {r['ndcg_b']:.3f}, "
                     f"difference {_interval(r['difference'], r['low'], r['high'])}: *{r['verdict']}*.")
    if len(llm_stage):
        for _, r in llm_stage.iterrows():
            lines.append(f"* **{r['scorer']} against the first stage** ({r['corpus']}, {r['strategy']}, N = {r['depth']}, "
                         f"{r['questions']} questions): ΔnDCG@{k} {_interval(r['d_ndcg'], r['d_ndcg_low'], r['d_ndcg_high'])}: "
                         f"*{r['verdict']}*.")
    return "\n".join(lines)
