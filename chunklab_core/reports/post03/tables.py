"""Post 03: how far N questions can be trusted, as one call per notebook section.

Handles: reading post 01's per-question results, the wide (questions x strategies) score
matrices, intervals and paired differences against the leader, interval width against the
number of questions, the close pairs and the questions that would settle them, the metrics
that mislead (precision's 1/k cap, recall's small-haystack reward, MRR against recall, nDCG
against recall under overlap), the balanced ranking against the large-chunk bias, and the
plain-versus-clustered and held-out analyses, and the calibration of "probability of being
best" over several simulated rate spreads. The statistics live in ``stats``,
``stats.clustered``, ``selection`` and ``stats.holdout``; this module only sequences
them and shapes tables.
"""

from __future__ import annotations

from itertools import combinations
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd
from scipy.stats import kendalltau

from chunklab_core.stats import bootstrap as stats
from chunklab_core.stats.claims import excludes_zero
from chunklab_core.chunking import strategy_label
from chunklab_core.core.csv_cells import read_frame
from chunklab_core.core.paths import DATA_DIR
from chunklab_core.evaluation.measures import column
from chunklab_core.stats.simulation import calibration_table, simulate_comparisons


def load_per_question(path: Path | None = None) -> pd.DataFrame:
    """Post 01's per-question table (``data/01_per_question.csv``), with a clear error if absent."""
    path = Path(path) if path is not None else DATA_DIR / "01_per_question.csv"
    if not path.is_file():
        raise FileNotFoundError(f"{path} not found: run notebook 01 first (make notebooks/01_chunking.ipynb)")
    return read_frame(path, dtype={"qid": str})


def score_matrix(per_question: pd.DataFrame, metric: str, strategies: Sequence[str] | None = None) -> pd.DataFrame:
    """Questions x strategies matrix of one metric, columns in ``strategies`` (or file) order."""
    if metric not in per_question.columns:
        raise ValueError(f"unknown metric {metric!r}; available: {[c for c in per_question.columns if '@' in c]}")
    order = list(strategies) if strategies is not None else list(dict.fromkeys(per_question["strategy"]))
    wide = per_question.pivot(index="qid", columns="strategy", values=metric)
    missing = [s for s in order if s not in wide.columns]
    if missing:
        raise ValueError(f"strategies {missing} are not in the per-question table")
    if wide[order].isna().any().any():
        raise ValueError(f"{metric}: some strategies did not score every question")
    return wide[order]


def intervals_table(per_question: pd.DataFrame, metrics: Sequence[str], resamples: int, seed: int) -> pd.DataFrame:
    """Every strategy x metric with its 95% percentile interval (the same resamples throughout)."""
    rows = []
    for metric in metrics:
        matrix = score_matrix(per_question, metric)
        interval = stats.bootstrap_ci(matrix.to_numpy(), resamples=resamples, seed=seed)
        for j, strategy in enumerate(matrix.columns):
            rows.append({"strategy": strategy_label(strategy), "metric": metric, "mean": interval.mean[j],
                         "low": interval.low[j], "high": interval.high[j], "width": interval.high[j] - interval.low[j]})
    return pd.DataFrame(rows)


def describe_needed(needed: int | None, separated: bool) -> str:
    """Questions needed as table text: 'already separated', a count, or why there is none."""
    if separated:
        return "already separated"
    if needed is None:
        return "no difference to separate, or > 100,000"
    return f"{needed:,}"


def paired_against_leader(matrix: pd.DataFrame, resamples: int, seed: int) -> pd.DataFrame:
    """Each strategy minus the leader (highest mean): paired interval and questions needed."""
    means = matrix.mean()
    leader = means.idxmax()
    n = len(matrix)
    rows = []
    for strategy in matrix.columns:
        if strategy == leader:
            continue
        d = stats.paired_difference_ci(matrix[strategy].to_numpy(), matrix[leader].to_numpy(), resamples, seed)
        separated = excludes_zero(d.low, d.high)
        rows.append({"strategy": strategy_label(strategy), "minus": strategy_label(leader), "difference": d.mean,
                     "low": d.low, "high": d.high, "excludes 0": separated,
                     "questions needed": describe_needed(stats.questions_needed(n, d.mean, (d.low, d.high)), separated)})
    return pd.DataFrame(rows).sort_values("difference", ascending=False, ignore_index=True)


def close_pairs(matrix: pd.DataFrame, resamples: int, seed: int, top: int = 6) -> pd.DataFrame:
    """The pairs with the smallest mean difference, their paired intervals and questions needed."""
    n = len(matrix)
    rows = []
    for a, b in combinations(matrix.columns, 2):
        d = stats.paired_difference_ci(matrix[a].to_numpy(), matrix[b].to_numpy(), resamples, seed)
        separated = excludes_zero(d.low, d.high)
        rows.append({"a": strategy_label(a), "b": strategy_label(b), "a − b": d.mean, "low": d.low, "high": d.high,
                     "questions needed": describe_needed(stats.questions_needed(n, d.mean, (d.low, d.high)), separated)})
    table = pd.DataFrame(rows)
    return table.reindex(table["a − b"].abs().sort_values().index).head(top).reset_index(drop=True)


def width_by_sample_size(matrix: pd.DataFrame, sizes: Sequence[int], resamples: int, seed: int,
                         repeats: int = 5) -> pd.DataFrame:
    """Mean 95% interval width of every strategy on seeded subsamples of ``n`` questions.

    Beside it, the square-root law's prediction from the full sample:
    width(n) ≈ width(N) · sqrt(N / n).
    """
    values = matrix.to_numpy()
    n_total = len(values)
    full = stats.bootstrap_ci(values, resamples=resamples, seed=seed)
    full_width = float(np.mean(full.high - full.low))
    rng = np.random.default_rng(seed)
    rows = []
    for n in sizes:
        if n > n_total:
            raise ValueError(f"subsample size {n} exceeds the {n_total} questions")
        widths = []
        for _ in range(repeats if n < n_total else 1):
            idx = rng.choice(n_total, size=n, replace=False)
            ci = stats.bootstrap_ci(values[idx], resamples=resamples, seed=seed)
            widths.append(np.mean(ci.high - ci.low))
        rows.append({"questions": n, "mean width": float(np.mean(widths)),
                     "square-root law": full_width * np.sqrt(n_total / n)})
    return pd.DataFrame(rows)


def precision_cap_table(per_question: pd.DataFrame, k: int = 10) -> pd.DataFrame:
    """Precision@k next to hit@k: how many relevant contexts a hit actually returns."""
    g = per_question.groupby("strategy", sort=False)
    hit, precision = column("hit", k), column("p", k)
    table = pd.DataFrame({
        hit: g[hit].mean(),
        "P@%d" % k: g[precision].mean(),
        "relevant returned per question": g[precision].mean() * k,
        "share with exactly one relevant context in the collection": g["n_relevant"].apply(lambda s: (s == 1).mean()),
        "median relevant contexts in the collection": g["n_relevant"].median(),
    })
    table.index = [strategy_label(s) for s in table.index]
    return table


def rank_disagreement(per_question: pd.DataFrame, metric_a: str, metric_b: str) -> tuple[pd.DataFrame, float]:
    """Strategy ranks by two metrics side by side, and Kendall's tau between the rankings."""
    means = per_question.groupby("strategy", sort=False)[[metric_a, metric_b]].mean()
    ranks = means.rank(ascending=False, method="min").astype(int)
    table = pd.concat([means, ranks.add_suffix(" rank")], axis=1)
    table.index = [strategy_label(s) for s in table.index]
    tau = kendalltau(means[metric_a], means[metric_b]).statistic
    return table, float(tau)


def mrr_separates(per_question: pd.DataFrame, resamples: int, seed: int, k: int = 10, top: int = 6) -> pd.DataFrame:
    """Pairs that hit@k calls equal (paired interval contains 0), largest MRR difference first.

    ``MRR separates`` flags the pairs whose paired MRR interval excludes 0.
    """
    hit = score_matrix(per_question, column("hit", k))
    rr = score_matrix(per_question, column("rr", k))
    rows = []
    for a, b in combinations(hit.columns, 2):
        dh = stats.paired_difference_ci(hit[a].to_numpy(), hit[b].to_numpy(), resamples, seed)
        dr = stats.paired_difference_ci(rr[a].to_numpy(), rr[b].to_numpy(), resamples, seed)
        rows.append({"a": strategy_label(a), "b": strategy_label(b), f"Δ hit@{k}": dh.mean,
                     f"Δ hit@{k} CI": f"[{dh.low:+.3f}, {dh.high:+.3f}]", f"Δ MRR@{k}": dr.mean,
                     f"Δ MRR@{k} CI": f"[{dr.low:+.3f}, {dr.high:+.3f}]",
                     "hit says equal": not excludes_zero(dh.low, dh.high), "MRR separates": excludes_zero(dr.low, dr.high)})
    table = pd.DataFrame(rows)
    table = table[table["hit says equal"]]
    order = table[f"Δ MRR@{k}"].abs().sort_values(ascending=False).index
    return table.loc[order].head(top).reset_index(drop=True)


def balanced_table(summary: pd.DataFrame, k: int = 10, lam: float = 0.05) -> pd.DataFrame:
    """balanced(s) = recall@k(s) − λ·(tokens@k(s)/T_min − 1) for every strategy in ``summary``.

    ``summary`` has one row per strategy with ``strategy``, ``hit@k`` and ``tokens@k``.
    """
    recall = summary[column("hit", k)].to_numpy()
    tokens = summary[column("tokens", k)].to_numpy()
    balanced = stats.balanced_score(recall, tokens, lam=lam)
    recall_label = f"recall@{k}"  # posts 01 and 03 call the hit rate recall@k (the label of the committed table)
    table = pd.DataFrame({
        "strategy": [strategy_label(s) for s in summary["strategy"]],
        recall_label: recall, column("tokens", k): tokens, "tokens / T_min": tokens / tokens.min(),
        "balanced": balanced,
    })
    table["recall rank"] = table[recall_label].rank(ascending=False, method="min").astype(int)
    table["balanced rank"] = table["balanced"].rank(ascending=False, method="min").astype(int)
    return table.sort_values("balanced", ascending=False, ignore_index=True)


def calibration_by_spread(spreads: Sequence[float], comparisons: int, seed: int) -> pd.DataFrame:
    """:func:`calibration_table` of ``comparisons`` simulated comparisons per rate spread, stacked."""
    tables = []
    for spread in spreads:
        table = calibration_table(simulate_comparisons(comparisons, rate_spread=spread, seed=seed))
        table.insert(0, "rate spread", spread)
        tables.append(table)
    return pd.concat(tables, ignore_index=True)
