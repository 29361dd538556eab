"""Post 05's claims within their evidence: intervals for probes and generation metrics, robust cost, the closing prose.

Handles: Wilson intervals for the judge probes (k of n, ``scipy.stats.binomtest``), document-
clustered bootstrap intervals for the deterministic generation metrics (the same resampling
unit as the answer table, :func:`chunklab_core.reports.post05.tables.clusters`), cost per strategy as the
median seconds per item with the stalled calls named (a mean is dominated by one call that
waited for the machine), the runtime the calls were recorded on (read from the records, not
typed), and the post's closing reading worded by :mod:`chunklab_core.stats.claims`. The
sentences live in ``claims.md`` beside this module (:mod:`chunklab_core.reports.templates`);
this module computes the values (numbers by :mod:`chunklab_core.core.numbers`) and picks the templates.

Not handled: the answer table and paired strategy differences themselves (``post05.tables``),
judge agreement (:mod:`chunklab_core.reports.post05.judges`), the figures (``post05.figures``).
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

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
from chunklab_core.reports.samples import DATASETS, sample_label
from chunklab_core.reports.templates import Templates

PROBES = {"plain_pass": "passes a plain correct answer", "padded_flip": "changes its verdict when padded",
          "wrong_figure_caught": "catches a wrong figure", "retest_changed": "changes on a retest"}
GENERATION = ["exact_match", "f1", "rouge_l_f1", "grounding", "unsupported_number_rate", "abstained"]
MIN_DOCUMENTS = 10  # below this a cluster bootstrap is unreliable (stats.clustered warns)
PROSE = Templates(__file__, "claims.md")
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
    stalled = "".join(" " + PROSE.fill(
        "cost.stalled", stage=row.stage, strategy=row.strategy, corpus=DATASETS.get(row.corpus, row.corpus),
        seconds=f"{row.seconds:,.0f}", median=f"{row[5]:.0f}", without=f"{row[6]:.1f}")
        for row in stalled_calls(study).itertuples())
    return PROSE.fill("cost", runtime=runtime, stalled=stalled)


def _pct(x: float) -> str:
    return numbers.number(x, 0, scale="percent")


def corpus_reading(corpus: str, answers: pd.DataFrame, differences: pd.DataFrame, measure: str) -> str:
    """One corpus's strategy comparison worded by the paired intervals (claims rule)."""
    part = answers[(answers["corpus"] == corpus) & (answers["measure"] == measure)]
    pairs = differences[differences["corpus"] == corpus]
    n = int(part["questions"].iloc[0])
    leader = part.loc[part["share"].idxmax()]
    words = [claims.pair_verdict(a, b, lo, hi) for a, b, lo, hi in
             zip(pairs["strategy A"], pairs["strategy B"], pairs["low"], pairs["high"])]
    separated = [w for w in words if w != claims.NOT_TOLD_APART]
    verdict = (PROSE.fill("reading.separated", pairs="; ".join(separated)) if separated else
               PROSE.fill("reading.no_leader", not_told_apart=claims.NOT_TOLD_APART))
    degenerate = pairs[(pairs["low"] == pairs["high"])]
    point = (" " + PROSE.fill("reading.degenerate", pairs=numbers.count(len(degenerate), "pair"), questions=n)
             if len(degenerate) else "")
    open_pairs = pairs[~pairs["separated"] & (pairs["A - B"].abs() > 0) & pairs["questions needed"].notna()]
    needed = ""
    if len(open_pairs):
        row = open_pairs.loc[open_pairs["A - B"].abs().idxmax()]
        needed = " " + PROSE.fill("reading.needed", a=row["strategy A"], b=row["strategy B"],
                                  gap=numbers.number(row["A - B"], 0, signed=True, scale="points") + " points",
                                  needed=f"{int(row['questions needed']):,}")
    return PROSE.fill("reading.corpus", sample=sample_label(corpus, n, int(part["documents"].iloc[0])), measure=measure,
                      share=numbers.estimate(leader["share"], leader["low"], leader["high"], 0, scale="percent"),
                      leader=leader["strategy"], pairs=verdict, degenerate=point, needed=needed)


def reading(coverage: pd.DataFrame, answers: pd.DataFrame, differences: pd.DataFrame, agreement: pd.DataFrame,
            probes: pd.DataFrame | None, measure: str = REFERENCE_NAME) -> str:
    """The post's closing Markdown: coverage, the per-corpus verdicts, judge agreement, probes with intervals."""
    lines = [PROSE.fill("reading.coverage", corpus=DATASETS.get(r.corpus, r.corpus), recorded=r.questions_recorded,
                        planned=r.questions_planned, items=r.items) for r in coverage.itertuples()]
    lines += [corpus_reading(corpus, answers, differences, measure) for corpus in dict.fromkeys(answers["corpus"])]
    for row in agreement[(agreement["scale"] == "pass/fail") & (agreement["grader A"] == measure)].itertuples():
        lines.append(PROSE.fill("reading.agreement", judge=sentence_start(row[2]), measure=measure, agree=row.agree,
                                items=row.items, kappa=numbers.estimate(row.kappa, row.low, row.high, 2)))
    if probes is not None and len(probes):
        for judge, part in probes.groupby("judge", sort=False):
            listed = "; ".join(PROSE.fill("reading.probe", probe=r["probe"], k=r["k"], n=r["n"],
                                          interval=numbers.interval(r["low"], r["high"], 0, scale="percent"))
                               for _, r in part.iterrows())
            lines.append(PROSE.fill("reading.probes", judge=judge, n=int(part["n"].iloc[0]), probes=listed))
    return "\n".join(lines)


def answer(answers: pd.DataFrame, differences: pd.DataFrame, agreement: pd.DataFrame,
           measure: str = REFERENCE_NAME) -> str:
    """The post's answer (under 150 words): per corpus the leading share and the paired verdict
    between strategies, then each judge's κ against ``measure`` on the pass/fail scale."""
    corpora = []
    for corpus in dict.fromkeys(answers["corpus"]):
        part = answers[(answers["corpus"] == corpus) & (answers["measure"] == measure)]
        pairs = differences[differences["corpus"] == corpus]
        leader = part.loc[part["share"].idxmax()]
        words = [claims.pair_verdict(a, b, lo, hi) for a, b, lo, hi in
                 zip(pairs["strategy A"], pairs["strategy B"], pairs["low"], pairs["high"])]
        separated = [w for w in words if w != claims.NOT_TOLD_APART]
        verdict = (PROSE.fill("answer.separated", pairs="; ".join(separated)) if separated else
                   PROSE.fill("answer.no_leader", not_told_apart=claims.NOT_TOLD_APART))
        corpora.append(PROSE.fill(
            "answer.corpus", sample=sample_label(corpus, int(part["questions"].iloc[0]), int(part["documents"].iloc[0])),
            measure=measure, share=numbers.estimate(leader["share"], leader["low"], leader["high"], 0, scale="percent"),
            leader=leader["strategy"], pairs=verdict))
    rows = answer_agreement(agreement, measure)
    kappas = "; ".join(PROSE.fill("answer.kappa", kappa=r["κ [95% CI]"], judge=r["judge"]) for _, r in rows.iterrows())
    items = int(rows["items"].max()) if len(rows) else 0
    return PROSE.fill("answer", corpora=" ".join(corpora), measure=measure, items=items, kappas=kappas)


def answer_agreement(agreement: pd.DataFrame, measure: str = REFERENCE_NAME) -> pd.DataFrame:
    """The answer's table: each judge against ``measure`` on the pass/fail scale (items, agreeing, κ with its interval)."""
    chosen = agreement[(agreement["scale"] == "pass/fail") & (agreement["grader A"] == measure)]
    return pd.DataFrame({"judge": chosen["grader B"].to_numpy(), "items": chosen["items"].to_numpy(),
                         "agree": chosen["agree"].to_numpy(),
                         "κ [95% CI]": [numbers.estimate(k, lo, hi, 2) for k, lo, hi in
                                        zip(chosen["kappa"], chosen["low"], chosen["high"])]})
