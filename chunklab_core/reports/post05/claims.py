"""Post 05's claims within their evidence: intervals for probes and generation metrics, robust cost, the closing prose.

Handles: Wilson intervals for the judge probes (k of n, ``scipy.stats.binomtest``), document-
clustered bootstrap intervals for the deterministic generation metrics (the same resampling
unit as the answer table, :func:`chunklab_core.reports.post05.tables.clusters`), cost per strategy as the
median seconds per item with the stalled calls named (a mean is dominated by one call that
waited for the machine), the runtime the calls were recorded on (read from the records, not
typed), and the post's closing reading worded by :mod:`chunklab_core.stats.claims`.

Not handled: the answer table and paired strategy differences themselves (:mod:`post05`),
judge agreement (:mod:`chunklab_core.reports.post05.judges`).
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from scipy.stats import binomtest

from chunklab_core.stats import claims
from chunklab_core.chunking import strategy_label
from chunklab_core.core import paths
from chunklab_core.answers.verdicts import REFERENCE_NAME, grader_name, sentence_start
from chunklab_core.reports.post05.tables import clusters, cost_columns, generation_metrics_row, per_strategy_cost
from chunklab_core.stats.clustered import clustered_bootstrap_ci
from chunklab_core.core import numbers
from chunklab_core.reports.samples import sample_label

PROBES = {"plain_pass": "passes a plain correct answer", "padded_flip": "changes its verdict when padded",
          "wrong_figure_caught": "catches a wrong figure", "retest_changed": "changes on a retest"}
GENERATION = ["exact_match", "f1", "rouge_l_f1", "grounding", "unsupported_number_rate", "abstained"]
MIN_DOCUMENTS = 10  # below this a cluster bootstrap is unreliable (stats.clustered warns)
STALL_FACTOR = 10.0  # a call slower than 10x its stage's median waited for the machine, not the model


def wilson_interval(k: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for k successes of n (Wilson 1927; ``scipy.stats.binomtest``)."""
    if n < 1 or not 0 <= k <= n:
        raise ValueError(f"need 0 <= k <= n and n >= 1, got k={k}, n={n}")
    ci = binomtest(int(k), int(n)).proportion_ci(confidence, "wilson")
    return float(ci.low), float(ci.high)


def probe_intervals(summary: pd.DataFrame) -> pd.DataFrame:
    """Long table: per judge and probe, k of n with the share and its 95% Wilson interval."""
    rows = []
    for row in summary.itertuples():
        for column, meaning in PROBES.items():
            n = int(row.n)
            k = int(round(getattr(row, column) * n))
            low, high = wilson_interval(k, n)
            rows.append({"judge": grader_name(row.judge), "probe": meaning, "k": k, "n": n,
                         "share": k / n, "low": low, "high": high})
    return pd.DataFrame(rows)


def generation_intervals(study, resamples: int = 10_000, seed: int = 0) -> pd.DataFrame:
    """Per corpus, strategy and metric: mean over the answers where it is measured, with a clustered interval."""
    table = study.table
    per_answer = pd.DataFrame([generation_metrics_row(a, g, c) for a, g, c in
                               zip(table["answer"], table["golds"], table["contexts"])])
    per_answer["corpus"], per_answer["strategy"] = table["corpus"].to_numpy(), table["strategy"].to_numpy()
    per_answer["unit"] = clusters(table)
    rows = []
    for (corpus, strategy), group in per_answer.groupby(["corpus", "strategy"], sort=False):
        for metric in GENERATION:
            measured = group.dropna(subset=[metric])
            row = {"corpus": corpus, "strategy": strategy_label(strategy), "metric": metric, "measured": len(measured),
                   "documents": measured["unit"].nunique(), "answers": len(group), "mean": np.nan, "low": np.nan,
                   "high": np.nan}
            if len(measured):
                with warnings.catch_warnings():  # few documents: flagged in the table instead (generation_wide)
                    warnings.simplefilter("ignore", UserWarning)
                    ci = clustered_bootstrap_ci(measured[metric].to_numpy(dtype=float), measured["unit"].to_numpy(),
                                                resamples, seed)
                row.update(mean=ci.mean, low=ci.low, high=ci.high)
            rows.append(row)
    return pd.DataFrame(rows)


def generation_wide(intervals: pd.DataFrame) -> pd.DataFrame:
    """``mean [low, high] (n)`` per metric, one row per corpus and strategy (for reading).

    A cell resting on fewer than ``MIN_DOCUMENTS`` documents is marked "few documents": a
    cluster bootstrap over so few clusters is unreliable.
    """
    cell = intervals.apply(lambda r: "not measured" if r["measured"] == 0 else
                           f"{numbers.estimate(r['mean'], r['low'], r['high'], 2)} (n={r['measured']}"
                           + (", few documents)" if r["documents"] < MIN_DOCUMENTS else ")"), axis=1)
    return intervals.assign(cell=cell).pivot(index=["corpus", "strategy"], columns="metric", values="cell")[GENERATION]


def recorded_runtime(records_dir: Path | None = None) -> str:
    """How the recorded calls ran, from the records themselves (backend, runtime version, threads);
    ``records_dir`` defaults to ``paths.RECORDS_DIR`` (``data/records``)."""
    folder = Path(records_dir if records_dir is not None else paths.RECORDS_DIR)
    if not folder.is_dir():
        raise FileNotFoundError(f"records folder {folder} does not exist (the recorded calls are in "
                                f"{paths.RECORDS_DIR})")
    seen = {}
    for path in sorted(folder.glob("*.jsonl")):
        with path.open(encoding="utf-8") as handle:
            for line in handle:
                record = json.loads(line)
                runtime = record.get("runtime") or {}
                key = (record.get("backend", "?"), *(f"{k} {v}" for k, v in sorted(runtime.items()) if k != "n_ctx"))
                seen[key] = seen.get(key, 0) + 1
    if not seen:
        return "runtime not recorded"
    return "; ".join(", ".join(k) for k in seen)


def cost_medians(study) -> pd.DataFrame:
    """Per corpus and strategy: median seconds and mean tokens per item and stage (items run alone)."""
    return per_strategy_cost(study, [(cost_columns(study, ["_seconds"]), "median"),
                                     (cost_columns(study, ["_tokens_in"]), "mean")])


def stalled_calls(study) -> pd.DataFrame:
    """Items whose call took more than ``STALL_FACTOR`` times its stage's median (waiting, not computing)."""
    table = study.table
    rows = []
    for column in cost_columns(study, ["_seconds"]):
        median = table[column].median()
        slow = table[table[column] > STALL_FACTOR * median]
        for _, item in slow.iterrows():
            rows.append({"stage": column.removeprefix("cost_").removesuffix("_seconds"), "corpus": item["corpus"],
                         "strategy": strategy_label(item["strategy"]), "seconds": item[column],
                         "stage median": median, "mean without it": table.loc[table["strategy"] == item["strategy"], column]
                         .drop(index=item.name).mean()})
    return pd.DataFrame(rows, columns=["stage", "corpus", "strategy", "seconds", "stage median", "mean without it"])


def cost_text(study, runtime: str) -> str:
    """Why a mean per strategy can mislead, from :func:`stalled_calls`."""
    stalled = stalled_calls(study)
    text = f"Calls were recorded with {runtime}. The figure shows **medians** per item."
    for row in stalled.itertuples():
        text += (f" One `{row.stage}` call for {row.strategy} on {row.corpus} took {row.seconds:,.0f} s against a "
                 f"stage median of {row[5]:.0f} s, for a prompt of ordinary length — time the recording process "
                 f"spent waiting rather than computing, most likely; it alone lifts that strategy's mean, which is "
                 f"{row[6]:.1f} s per item without it.")
    return text


def plot_cost(medians: pd.DataFrame, runtime: str):
    """Stacked median seconds per item by stage, one bar per corpus and strategy; legend beside the bars."""
    seconds = [c for c in medians.columns if c.endswith("_seconds")]
    labels = [f"{c}\n{s}" for c, s in zip(medians["corpus"], medians["strategy"])]
    fig, ax = plt.subplots(figsize=(1.6 * len(labels) + 3.5, 4.4))
    bottom = np.zeros(len(labels))
    for column in seconds:
        ax.bar(labels, medians[column], bottom=bottom, label=column.removesuffix("_seconds"))
        bottom += medians[column].to_numpy()
    ax.set_ylabel("median seconds per item")
    ax.set_title(f"recorded with {runtime}", fontsize=9)
    ax.tick_params(axis="x", labelsize=8)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    return fig


def _pct(x: float) -> str:
    return f"{100 * x:.0f}%"


def corpus_reading(corpus: str, answers: pd.DataFrame, differences: pd.DataFrame, measure: str) -> str:
    """One corpus's strategy comparison worded by the paired intervals (claims rule)."""
    part = answers[(answers["corpus"] == corpus) & (answers["measure"] == measure)]
    pairs = differences[differences["corpus"] == corpus]
    n = int(part["questions"].iloc[0])
    leader = part.loc[part["share"].idxmax()]
    words = [claims.pair_verdict(a, b, lo, hi) for a, b, lo, hi in
             zip(pairs["strategy A"], pairs["strategy B"], pairs["low"], pairs["high"])]
    text = (f"- **{sample_label(corpus, n, int(part['documents'].iloc[0]))}**: the {measure} passes "
            f"{_pct(leader['share'])} [{_pct(leader['low'])}, {_pct(leader['high'])}] of {leader['strategy']}'s answers. ")
    separated = [w for w in words if w != claims.NOT_TOLD_APART]
    if separated:
        text += "Separated pairs: " + "; ".join(separated) + "."
    else:
        text += f"No leader: every pair of strategies **{claims.NOT_TOLD_APART}** (each paired 95% interval contains 0)."
    degenerate = pairs[(pairs["low"] == pairs["high"])]
    if len(degenerate):
        text += (f" For {len(degenerate)} pair(s) the interval is a single point: on all {n} questions the two "
                 "strategies' answers passed or failed together, so resampling has no disagreement to work with "
                 "— that is a sample too small to say anything, not evidence that the strategies are equal.")
    open_pairs = pairs[~pairs["separated"] & (pairs["A - B"].abs() > 0) & pairs["questions needed"].notna()]
    if len(open_pairs):
        row = open_pairs.loc[open_pairs["A - B"].abs().idxmax()]
        text += (f" The largest gap, {row['strategy A']} − {row['strategy B']} = {100 * row['A - B']:+.0f} points, "
                 f"would need about {int(row['questions needed']):,} questions of this design to separate, if it held.")
    return text


def reading(coverage: pd.DataFrame, answers: pd.DataFrame, differences: pd.DataFrame, agreement: pd.DataFrame,
            probes: pd.DataFrame | None, measure: str = REFERENCE_NAME) -> str:
    """The post's closing Markdown: coverage, the per-corpus verdicts, judge agreement, probes with intervals."""
    lines = [f"- **{r.corpus}**: {r.questions_recorded} of {r.questions_planned} planned questions recorded "
             f"({r.items} answered items)." for r in coverage.itertuples()]
    lines += [corpus_reading(corpus, answers, differences, measure) for corpus in dict.fromkeys(answers["corpus"])]
    for row in agreement[(agreement["scale"] == "pass/fail") & (agreement["grader A"] == measure)].itertuples():
        lines.append(f"- {sentence_start(row[2])} against the {measure} (pass/fail, all corpora): {row.agree} of {row.items} items "
                     f"agree, κ = {numbers.estimate(row.kappa, row.low, row.high, 2)}.")
    if probes is not None and len(probes):
        for judge, part in probes.groupby("judge", sort=False):
            lines.append(f"- Probes, {judge} (n = {int(part['n'].iloc[0])} SQuAD questions each): " + "; ".join(
                f"{r['probe']} {r['k']} of {r['n']} [{_pct(r['low'])}, {_pct(r['high'])}]" for _, r in part.iterrows())
                + ".")
    return "\n".join(lines)
