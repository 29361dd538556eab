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
* Units (:func:`unit_of`): every row says what its number is -- ``count`` (whole numbers),
  ``tokens``, ``ms``, ``cosine``, ``ratio``, ``ranks``, ``cost`` or ``fraction`` (0 to 1); one
  unit for shares across the page: chunk health's percentages (``pct_*``) become fractions
  named ``share_*``. ``definition`` says which inputs a metric that has several was measured
  from (ids, or containment of snippets).
* :func:`funnel_table`: the answer funnel (``evaluators.funnel``) over the queries measured at
  every measured step: per step the share of queries that reached it (passed it and every
  step before) and the share lost there, each with its interval (the same bootstrap, one call
  for all steps); :func:`biggest_loss` is the step that loses the most (the headline that names
  it only when the rule allows is ``evaluators.funnel_headline``); :func:`correct_without_gold`
  flags the queries that contradict the funnel (a correct answer whose context holds no gold).
* :func:`compare`: A vs B on the same queries: per metric measured in both, the paired
  difference A - B over the queries measured in both (``stats.bootstrap.paired_difference_ci``,
  or clustered), worded by the series' one rule (``stats.claims.pair_verdict``: "A ahead",
  "B ahead", or "cannot be told apart"; a token, cost or latency row says which side "returns
  more tokens", "costs more" or "takes longer", never "ahead": :func:`compare_verdict`), with the words each
  side returned on the same queries beside every retrieval and context row (``tokens_a``, ``tokens_b``: ``returned_tokens@k`` and
  ``context_text_tokens``).

Why not the decision engine (``chunklab_core.decision``): nothing here chooses. The engine picks one
chunking among candidates on one recall measure with a declared margin δ (0.02 of recall) and a
simplicity order; :func:`compare` reports, metric by metric, whether two pipelines *you* built differ,
in units from tokens to milliseconds to cost, where a recall margin means nothing and there is no
simpler side to prefer. It words differences by the series' interval rule and leaves the choice to you.

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
from chunklab_core.stats.claims import NOT_TOLD_APART, interval_side, pair_verdict
from chunklab_core.stats.clustered import clustered_bootstrap_ci

STAGE_ORDER = ("chunking", "embedding_index", "retrieval", "reranking", "augmentation", "generation", "end_to_end")
STAGE_TITLES = {"chunking": "Chunking", "embedding_index": "Embedding & index", "retrieval": "Retrieval",
                "reranking": "Reranking", "augmentation": "Augmentation (packed context)",
                "generation": "Generation", "end_to_end": "End to end"}
COLUMNS = ["stage", "metric", "kind", "unit", "n", "value", "low", "high", "status", "definition"]
FUNNEL_COLUMNS = ["step", "title", "definition", "n", "reached", "reached_low", "reached_high", "lost", "lost_low",
                  "lost_high"]
COSINE = ("similarity", "margin", "clarity", "stickiness", "cohesion")
MEASURED = "measured"
UNDEFINED = "undefined for this input"


@dataclass
class Options:
    resamples: int = 2_000
    seed: int = 0
    confidence: float = 0.95


def unit_of(metric: str) -> str:
    """The unit of a metric's value, from its name (after ``pct_`` -> ``share_``)."""
    if metric.startswith("n_"):
        return "count"
    if "tokens" in metric:
        return "tokens"
    if metric.endswith("_ms"):
        return "ms"
    if metric == "cost":
        return "cost"
    if metric in ("size_cv", "redundancy"):
        return "ratio"
    if metric == "first_relevant_rank_change":
        return "ranks"
    if any(word in metric for word in COSINE):
        return "cosine"
    return "fraction"


def as_share(metric: str, value):
    """``(name, value)`` with a percentage (``pct_x``, 0-100) turned into a fraction ``share_x``."""
    if metric.startswith("pct_"):
        return "share_" + metric[4:], None if value is None else value / 100.0
    return metric, value


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
        metric, value = as_share(metric, as_optional(value))
        rows[metric] = dict(kind="corpus", n=None, value=value, low=None, high=None,
                            status=MEASURED if value is not None else UNDEFINED)
    for metric, needs in result.not_measured.items():
        metric = as_share(metric, None)[0]
        rows[metric] = dict(kind="—", n=0, value=None, low=None, high=None, status=f"not measured: needs {needs}")
    for metric, row in rows.items():  # a count is a whole number in every file, not 307.0
        if unit_of(metric) == "count" and row["value"] is not None and float(row["value"]).is_integer():
            row["value"] = int(row["value"])
    frame = pd.DataFrame([{"stage": result.stage, "metric": m, "unit": unit_of(m), **r,
                           "definition": result.definitions.get(m)} for m, r in rows.items()], columns=COLUMNS,
                         dtype=object)
    return frame.where(frame.notna(), None)


def funnel_matrices(result: StageResult):
    """``(steps, keep, reached, lost)``: the measured steps in order, the queries measured at
    every one of them (mask over ``result.qids``), and per kept query and step the 0/1
    ``reached`` and ``lost`` (``funnel_table``'s definitions); ``([], ...)`` when nothing is measured."""
    from chunklab_core.evaluators.funnel import STEPS

    steps = [s for s in STEPS if s in result.values and (~np.isnan(result.values[s])).any()]
    if not steps:
        return [], np.zeros(len(result.qids), dtype=bool), np.zeros((0, 0)), np.zeros((0, 0))
    passed = np.column_stack([result.values[s] for s in steps])
    keep = ~np.isnan(passed).any(axis=1)
    if not keep.any():
        return [], keep, np.zeros((0, 0)), np.zeros((0, 0))
    reached = np.cumprod(passed[keep] > 0, axis=1).astype(float)
    lost = np.column_stack([np.ones(len(reached)), reached[:, :-1]]) - reached
    return steps, keep, reached, lost


def funnel_table(result: StageResult, docs: Sequence | None = None, options: Options | None = None) -> pd.DataFrame:
    """The funnel's rows (``FUNNEL_COLUMNS``), one per measured step in order.

    On the queries measured at every measured step: ``reached_s`` = 1[steps 1..s all passed],
    ``lost_s`` = ``reached_{s-1}`` - ``reached_s`` (``reached_0`` = 1), their means with
    intervals (clustered by document as every other row). No measured step: no rows.
    """
    from chunklab_core.evaluators.funnel import STEP_TITLES

    options = options or Options()
    steps, keep, reached, lost = funnel_matrices(result)
    if not steps:
        return pd.DataFrame(columns=FUNNEL_COLUMNS)
    clusters = None
    if docs is not None and len(docs) == len(result.qids):
        clusters = np.asarray(list(docs), dtype=object)[keep]
        clusters = None if any(c is None for c in clusters) else clusters
    mean, low, high = _interval(np.column_stack([reached, lost]), clusters, options)
    m = len(steps)
    rows = [{"step": s, "title": STEP_TITLES[s], "definition": result.definitions.get(s), "n": int(keep.sum()),
             "reached": float(mean[j]), "reached_low": float(low[j]), "reached_high": float(high[j]),
             "lost": float(mean[m + j]), "lost_low": float(low[m + j]), "lost_high": float(high[m + j])}
            for j, s in enumerate(steps)]
    return pd.DataFrame(rows, columns=FUNNEL_COLUMNS)


def biggest_loss(table: pd.DataFrame) -> dict | None:
    """The funnel row that loses the most queries (the first of equal ones); ``None`` when the
    funnel is empty or no step loses a query."""
    if table is None or table.empty or not (table["lost"] > 0).any():
        return None
    return table.loc[table["lost"].idxmax()].to_dict()


def correct_without_gold(result: StageResult | None) -> dict | None:
    """The answer funnel's contradiction flag: queries whose answer is correct (``answer_correct``
    1) while the packed context holds no gold (``in_context`` 0, e.g. ``context_texts: []``). The
    answer then did not come from what was retrieved (the model knew it, or the records disagree
    with themselves), and the funnel's "lost at the context" does not describe those queries.
    ``{"n", "of", "qids"}`` (``of``: correct answers whose context was measured; ``qids``: the
    first 20), or None when no such query or a step is not measured."""
    if result is None or "answer_correct" not in result.values or "in_context" not in result.values:
        return None
    correct, context = result.values["answer_correct"], result.values["in_context"]
    measured = ~np.isnan(correct) & ~np.isnan(context) & (correct > 0)
    flagged = measured & (context == 0)
    if not flagged.any():
        return None
    qids = [q for q, f in zip(result.qids, flagged) if f]
    return {"n": int(flagged.sum()), "of": int(measured.sum()), "qids": qids[:20]}


@dataclass
class Scorecard:
    """Every stage's table, plus what they were computed from (for pairing and the files)."""

    stages: dict[str, StageResult]
    tables: dict[str, pd.DataFrame]
    docs: list | None = None
    options: Options = field(default_factory=Options)
    source: str = ""
    funnel: pd.DataFrame | None = None

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
    funnel = None
    if "funnel" in by_name:
        if progress:
            progress("funnel")
        funnel = funnel_table(by_name["funnel"], docs, options)
    return Scorecard(by_name, tables, None if docs is None else list(docs), options, source, funnel)


def compare(a: Scorecard, b: Scorecard, names: tuple[str, str] = ("A", "B")) -> pd.DataFrame:
    """Paired A - B per per-query metric measured in both, on the queries measured in both.

    Queries are matched by ``qid``; the two scorecards must score the same set of queries.
    Columns: stage, metric, n, mean_a, mean_b, difference, low, high, verdict, tokens_a, tokens_b
    (the mean words each side returned on those queries: ``returned_tokens@k`` at the row's k,
    the largest k for a row without one, ``context_text_tokens`` for the context; ``None`` for
    other stages or where the texts were not given).
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
            tokens = _tokens_metric(stage, metric, sa)
            ta = sa.values.get(tokens) if tokens else None
            tb = sb.values[tokens][align] if tokens and tokens in sb.values else None
            rows.append({"stage": stage, "metric": metric, "n": int(both.sum()), "mean_a": float(va[both].mean()),
                         "mean_b": float(vb[both].mean()), "difference": float(ci.mean), "low": float(ci.low),
                         "high": float(ci.high), "verdict": compare_verdict(metric, names, ci.low, ci.high),
                         "tokens_a": _mean_on(ta, both), "tokens_b": _mean_on(tb, both)})
    frame = pd.DataFrame(rows, columns=COMPARE_COLUMNS)
    frame.attrs["names"] = tuple(names)
    return frame


#: What a larger value of a cost row is, in a comparison's words (never "ahead": more is a cost).
COST_WORDS = {"tokens": "returns more tokens", "cost": "costs more", "ms": "takes longer"}


def compare_verdict(metric: str, names: Sequence[str], low: float, high: float) -> str:
    """The series' rule on the paired interval of A − B: "A ahead" / "B ahead" / "cannot be told
    apart" for a quality metric; for a token, cost or latency row (``unit_of``) the side whose
    interval lies higher "returns more tokens" / "costs more" / "takes longer" instead."""
    words = COST_WORDS.get(unit_of(metric))
    if words is None:
        return pair_verdict(names[0], names[1], low, high)
    side = interval_side(low, high)
    return NOT_TOLD_APART if side == 0 else f"{names[0] if side > 0 else names[1]} {words}"


COMPARE_COLUMNS = ["stage", "metric", "n", "mean_a", "mean_b", "difference", "low", "high", "verdict", "tokens_a",
                   "tokens_b"]


def _mean_on(values: np.ndarray | None, rows: np.ndarray) -> float | None:
    """Mean of the measured ``values[rows]``; ``None`` when none is measured."""
    if values is None:
        return None
    picked = values[rows]
    picked = picked[~np.isnan(picked)]
    return float(picked.mean()) if picked.size else None


def _tokens_metric(stage: str, metric: str, result: StageResult) -> str | None:
    """The per-query words returned that belong beside ``metric`` of ``stage`` in a comparison."""
    if stage == "augmentation":
        return "context_text_tokens"
    if stage != "retrieval":
        return None
    if "@" in metric:
        return f"returned_tokens@{metric.rsplit('@', 1)[1]}"
    ks = [int(m.rsplit("@", 1)[1]) for m in result.values if m.startswith("returned_tokens@")]
    return f"returned_tokens@{max(ks)}" if ks else None


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
    if card.funnel is not None:
        result = card.stages["funnel"]
        out["funnel"] = {"steps": [{k: (v.item() if isinstance(v, np.generic) else v) for k, v in row.items()}
                                   for row in card.funnel.to_dict(orient="records")],
                         "not_measured": dict(result.not_measured),
                         "correct_without_gold_in_context": correct_without_gold(result),
                         "per_query": {"qid": list(result.qids),
                                       **{m: [as_optional(v) for v in vals] for m, vals in result.values.items()}}}
    return out

