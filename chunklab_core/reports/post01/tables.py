"""Post 01's tables: the strategies, chunk statistics, the results with intervals, and cut misses.

Handles: the strategy table (name, label, registered parameters), chunk statistics, the
results per strategy with 95% percentile-bootstrap intervals (questions resampled, the same
resamples for every strategy and metric), the post's display table (estimates with their
intervals as text; P@k, tokens and the context cost descriptive), the count of misses whose
every answer is cut by a chunk boundary. Not handled: running the benchmark
(``post01.benchmark``), the two-sample comparison with the quoted reference run
(``reports.reference_results.two_sample_reference``).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from chunklab_core.chunking import STRATEGIES, strategy_label
from chunklab_core.core import numbers
from chunklab_core.evaluation.measures import KS, column, columns, depth_columns, interval_columns, largest_k
from chunklab_core.evaluation.scoring import summarize
from chunklab_core.reports.post01.benchmark import BenchmarkResult, check_strategies, count_cut_misses
from chunklab_core.stats import bootstrap as stats


def strategy_table(strategies: Sequence[str]) -> pd.DataFrame:
    """Name, label and parameters of each strategy, as registered."""
    check_strategies(strategies)
    rows = []
    for name in strategies:
        spec = STRATEGIES[name]
        params = ", ".join(f"{k}={v}" for k, v in spec.params.items() if not callable(v))
        rows.append({"strategy": name, "label": strategy_label(name), "parameters": params})
    return pd.DataFrame(rows)


def chunk_statistics(result: BenchmarkResult) -> pd.DataFrame:
    """Per strategy: chunks, indexed-span tokens and returned-context tokens."""
    rows = []
    for name, run in result.runs.items():
        rows.append({
            "strategy": name,
            "label": strategy_label(name),
            "chunks": len(run.chunks),
            "contexts": len(run.contexts),
            "median chunk tokens": float(np.median(run.chunk_tokens)),
            "mean chunk tokens": float(np.mean(run.chunk_tokens)),
            "mean context tokens": float(np.mean(run.context_tokens)),
        })
    return pd.DataFrame(rows)


INTERVAL_METRICS = (*columns("hit", KS), *depth_columns(max(KS)))  # hit@1 .. hit@10, rr@10, ndcg@10


def results_with_intervals(result: BenchmarkResult, resamples: int, seed: int,
                           metrics: Sequence[str] = INTERVAL_METRICS) -> pd.DataFrame:
    """Summary per strategy plus ``<metric>_low``/``_high`` 95% percentile-bootstrap bounds.

    The same question resamples serve every strategy and metric (paired by construction).
    """
    summary = summarize(result.per_question, result.ks)
    summary.insert(1, "label", [strategy_label(s) for s in summary["strategy"]])
    order = list(summary["strategy"])
    for metric in metrics:
        wide = result.per_question.pivot(index="qid", columns="strategy", values=metric)[order]
        interval = stats.bootstrap_ci(wide.to_numpy(), resamples=resamples, seed=seed)
        low, high = interval_columns(metric)
        summary[low] = interval.low
        summary[high] = interval.high
    return summary


def display_table(summary: pd.DataFrame, ks: Sequence[int]) -> pd.DataFrame:
    """The post's main table: point estimates with their 95% intervals as text.

    MRR and nDCG are shown at the summary's depth (its largest k, where ``scoring`` reports them).
    """
    def fmt(row, metric):
        low, high = interval_columns(metric)
        return numbers.estimate(row[metric], row[low], row[high])

    depth = largest_k(summary.columns)
    rr, ndcg = column("rr", depth), column("ndcg", depth)
    rows = []
    for _, row in summary.iterrows():
        out = {"strategy": row["label"]}
        for k in ks:
            hit = column("hit", k)
            out[f"R@{k}"] = fmt(row, hit) if interval_columns(hit)[0] in row else f"{row[hit]:.3f}"
        out[f"MRR@{depth}"] = fmt(row, rr)
        out[f"nDCG@{depth}"] = fmt(row, ndcg)
        out["P@1"] = f"{row[column('p', 1)]:.3f}"
        out[f"P@{ks[-1]}"] = f"{row[column('p', ks[-1])]:.3f}"
        out[f"tokens@{ks[-1]}"] = f"{row[column('tokens', ks[-1])]:.0f}"
        cost = row["context_cost_tokens"]
        out["context cost (point estimate)"] = "n/a" if pd.isna(cost) else f"{cost:.0f} (k={int(row['cost_k'])})"
        rows.append(out)
    return pd.DataFrame(rows)


def answer_table(summary: pd.DataFrame, verdicts: pd.DataFrame) -> pd.DataFrame:
    """The answer's table: per strategy (leader first, the verdicts' order) recall at the depth
    with its 95% interval, its paired verdict against the leader, and the mean tokens it returns."""
    depth = largest_k(summary.columns)
    hit = column("hit", depth)
    low, high = interval_columns(hit)
    by_strategy = summary.set_index("strategy")
    rows = []
    for name, verdict in zip(verdicts["strategy"], verdicts["verdict"]):
        row = by_strategy.loc[name]
        rows.append({"strategy": row["label"], f"recall@{depth} [95% CI]": numbers.estimate(row[hit], row[low], row[high]),
                     "verdict (paired, against the leader)": verdict,
                     f"tokens returned at k = {depth}": f"{row[column('tokens', depth)]:,.0f}"})
    return pd.DataFrame(rows)


def cut_miss_table(result: BenchmarkResult, k: int = 10) -> pd.DataFrame:
    """Per strategy: misses at k, and how many of them have every answer cut (``benchmark.count_cut_misses``)."""
    return pd.DataFrame([count_cut_misses(run, k) for run in result.runs.values()])
