"""The scorecard: one table per stage, every mean with its 95% bootstrap interval, and A vs B.

Handles
-------
* :func:`stage_table`: one row per metric of a :class:`~chunklab_core.evaluators.common.StageResult`:
  ``kind`` (``mean`` over queries, ``percentile`` over queries, or ``corpus``: one value for the
  whole collection, no interval over queries), ``n`` (queries measured), ``value``, ``low``,
  ``high`` and ``status`` ("measured", "not measured: needs <input>", or "undefined for this
  input" when the input was given but the metric has nothing to measure, e.g. no table for
  ``tables_intact``). Not measured is ``None``: never 0, never in a mean.
* Intervals: the percentile bootstrap of ``stats.bootstrap`` over the measured queries
  (``bootstrap_ci``; metrics measured on the same queries share one call, so their resamples
  are the same), or the one-stage document-clustered bootstrap (``stats.clustered``) when each
  query's document is given and the measured queries span at least two documents; percentile
  metrics (latency) are re-computed on the same resampled query sets (``stats.bootstrap
  .iter_resample_indices``).
* :func:`compare`: A vs B on the same queries: per metric measured in both, the paired
  difference A - B over the queries measured in both (``stats.bootstrap.paired_difference_ci``,
  or clustered), worded by the series' one rule (``stats.claims.pair_verdict``: "A ahead",
  "B ahead", or "cannot be told apart").

Not handled: writing files (``evaluators.report_files``), reading records (``evaluators.records``).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
import pandas as pd

from chunklab_core.evaluators.common import StageResult, as_optional, percentile
from chunklab_core.stats.bootstrap import bootstrap_ci, iter_resample_indices, paired_difference_ci
from chunklab_core.stats.claims import pair_verdict
from chunklab_core.stats.clustered import clustered_bootstrap_ci

STAGE_ORDER = ("chunking", "embedding_index", "retrieval", "reranking", "augmentation", "generation", "end_to_end")
STAGE_TITLES = {"chunking": "Chunking", "embedding_index": "Embedding & index", "retrieval": "Retrieval",
                "reranking": "Reranking", "augmentation": "Augmentation (packed context)",
                "generation": "Generation", "end_to_end": "End to end"}
COLUMNS = ["stage", "metric", "kind", "n", "value", "low", "high", "status"]
MEASURED = "measured"
UNDEFINED = "undefined for this input"


@dataclass
class Options:
    resamples: int = 2_000
    seed: int = 0
    confidence: float = 0.95


def _interval(values: np.ndarray, docs: np.ndarray | None, options: Options) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(mean, low, high) per column of a finite (n, cells) matrix."""
    if docs is not None and len(np.unique(docs)) >= 2:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # few documents: reported in the status
            ci = clustered_bootstrap_ci(values, docs, options.resamples, options.seed, options.confidence)
    else:
        ci = bootstrap_ci(values, options.resamples, options.seed, options.confidence)
    return np.atleast_1d(ci.mean), np.atleast_1d(ci.low), np.atleast_1d(ci.high)


def _percentile_interval(values: np.ndarray, q: float, options: Options) -> tuple[float, float]:
    measured = values[~np.isnan(values)]
    draws = [np.percentile(measured[idx], q, axis=1) for idx in
             iter_resample_indices(len(measured), options.resamples, options.seed)]
    alpha = (1 - options.confidence) / 2
    low, high = np.quantile(np.concatenate(draws), [alpha, 1 - alpha])
    return float(low), float(high)


def stage_table(result: StageResult, docs: Sequence | None = None, options: Options | None = None) -> pd.DataFrame:
    """The stage's rows (columns ``COLUMNS``), metrics in the order the evaluator made them."""
    options = options or Options()
    docs_arr = None if docs is None else np.asarray(list(docs), dtype=object)
    rows: dict[str, dict] = {}
    by_mask: dict[bytes, list[str]] = {}
    for metric, values in result.values.items():
        mask = ~np.isnan(values)
        if not mask.any():
            rows[metric] = dict(kind="mean", n=0, value=None, low=None, high=None, status=UNDEFINED)
            continue
        by_mask.setdefault(mask.tobytes(), []).append(metric)
        rows[metric] = None
    for key, metrics in by_mask.items():
        mask = np.frombuffer(key, dtype=bool)
        matrix = np.column_stack([result.values[m][mask] for m in metrics])
        clusters = None if docs_arr is None else docs_arr[mask]
        if clusters is not None and any(c is None for c in clusters):
            clusters = None
        mean, low, high = _interval(matrix, clusters, options)
        clustered = clusters is not None and len(set(clusters)) >= 2
        for j, metric in enumerate(metrics):
            status = MEASURED + (f" (clustered by {len(set(clusters))} documents)" if clustered else "")
            rows[metric] = dict(kind="mean", n=int(mask.sum()), value=float(mean[j]), low=float(low[j]),
                                high=float(high[j]), status=status)
    for metric, (values, q) in result.percentiles.items():
        values = np.asarray(values, dtype=float)
        n = int((~np.isnan(values)).sum())
        if n == 0:
            rows[metric] = dict(kind="percentile", n=0, value=None, low=None, high=None, status=UNDEFINED)
            continue
        low, high = _percentile_interval(values, q, options)
        rows[metric] = dict(kind="percentile", n=n, value=percentile(values, q), low=low, high=high, status=MEASURED)
    for metric, value in result.corpus.items():
        value = as_optional(value)
        rows[metric] = dict(kind="corpus", n=None, value=value, low=None, high=None,
                            status=MEASURED if value is not None else UNDEFINED)
    for metric, needs in result.not_measured.items():
        rows[metric] = dict(kind="—", n=0, value=None, low=None, high=None, status=f"not measured: needs {needs}")
    frame = pd.DataFrame([{"stage": result.stage, "metric": m, **r} for m, r in rows.items()], columns=COLUMNS)
    return frame.astype(object).where(frame.notna(), None)


@dataclass
class Scorecard:
    """Every stage's table, plus what they were computed from (for pairing and the files)."""

    stages: dict[str, StageResult]
    tables: dict[str, pd.DataFrame]
    docs: list | None = None
    options: Options = field(default_factory=Options)
    source: str = ""

    def table(self) -> pd.DataFrame:
        """All stages' rows in stage order, one frame."""
        return pd.concat([self.tables[s] for s in STAGE_ORDER if s in self.tables], ignore_index=True)

    def value(self, stage: str, metric: str) -> float | None:
        row = self.tables[stage].set_index("metric").loc[metric]
        return row["value"]


def build_scorecard(stages: Sequence[StageResult], docs: Sequence | None = None, options: Options | None = None,
                    source: str = "", progress=None) -> Scorecard:
    """The scorecard of ``stages``; ``docs``: each query's document (clustered intervals), aligned
    with the stages' ``qids``; ``progress(stage)`` is called before each stage."""
    options = options or Options()
    by_name = {s.stage: s for s in stages}
    tables = {}
    for stage in STAGE_ORDER:
        if stage in by_name:
            if progress:
                progress(stage)
            result = by_name[stage]
            stage_docs = docs if docs is not None and result.qids and len(docs) == len(result.qids) else None
            tables[stage] = stage_table(result, stage_docs, options)
    return Scorecard(by_name, tables, None if docs is None else list(docs), options, source)


def compare(a: Scorecard, b: Scorecard, names: tuple[str, str] = ("A", "B")) -> pd.DataFrame:
    """Paired A - B per per-query metric measured in both, on the queries measured in both.

    Queries are matched by ``qid``; the two scorecards must score the same set of queries.
    Columns: stage, metric, n, mean_a, mean_b, difference, low, high, verdict.
    """
    rows = []
    for stage in STAGE_ORDER:
        if stage not in a.stages or stage not in b.stages:
            continue
        sa, sb = a.stages[stage], b.stages[stage]
        if not sa.qids and not sb.qids:
            continue
        if set(sa.qids) != set(sb.qids):  # name the files and the queries (issue 41)
            only_a, only_b = sorted(set(sa.qids) - set(sb.qids)), sorted(set(sb.qids) - set(sa.qids))
            def shown(ids):
                return ", ".join(map(repr, ids[:5])) + (f" and {len(ids) - 5} more" if len(ids) > 5 else "")
            raise ValueError(f"{a.source} and {b.source} score different queries ({stage} stage): "
                             + "; ".join(f"only in {src}: {shown(ids)}"
                                         for src, ids in ((a.source, only_a), (b.source, only_b)) if ids)
                             + ". A paired comparison needs the same queries: give both files the same qids")
        order = {q: i for i, q in enumerate(sb.qids)}
        align = np.array([order[q] for q in sa.qids])
        docs = None if a.docs is None or len(a.docs) != len(sa.qids) else np.asarray(a.docs, dtype=object)
        for metric in sa.values:
            if metric not in sb.values:
                continue
            va, vb = sa.values[metric], sb.values[metric][align]
            both = ~np.isnan(va) & ~np.isnan(vb)
            if not both.any():
                continue
            diff = va[both] - vb[both]
            clusters = None if docs is None else docs[both]
            if clusters is not None and len(set(clusters)) >= 2:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", UserWarning)
                    ci = clustered_bootstrap_ci(diff, clusters, a.options.resamples, a.options.seed, a.options.confidence)
            else:
                ci = paired_difference_ci(va[both], vb[both], a.options.resamples, a.options.seed, a.options.confidence)
            rows.append({"stage": stage, "metric": metric, "n": int(both.sum()), "mean_a": float(va[both].mean()),
                         "mean_b": float(vb[both].mean()), "difference": float(ci.mean), "low": float(ci.low),
                         "high": float(ci.high), "verdict": pair_verdict(names[0], names[1], ci.low, ci.high)})
    return pd.DataFrame(rows, columns=["stage", "metric", "n", "mean_a", "mean_b", "difference", "low", "high", "verdict"])


def scorecard_dict(card: Scorecard) -> dict:
    """The scorecard as JSON-ready data: stage -> rows, plus each stage's per-query values
    (``None`` where not measured) so two saved scorecards can be paired later."""
    out = {"source": card.source, "resamples": card.options.resamples, "seed": card.options.seed,
           "confidence": card.options.confidence, "stages": {}}
    for stage, table in card.tables.items():
        result = card.stages[stage]
        out["stages"][stage] = {
            "title": STAGE_TITLES[stage],
            "metrics": [{k: (v.item() if isinstance(v, np.generic) else v) for k, v in row.items()}
                        for row in table.to_dict(orient="records")],
            "per_query": {"qid": list(result.qids),
                          **{m: [as_optional(v) for v in vals] for m, vals in result.values.items()}},
        }
    return out

