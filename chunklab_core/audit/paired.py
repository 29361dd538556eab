"""Paired statistics of the audit: a judge against the grader on the same graded items.

Handles:

* :func:`weighted_mean_ci`: the design-weighted (Hajek) mean ``sum_i w_i x_i / sum_i w_i``
  of a per-item quantity over the graded items, with a percentile interval from the one-stage
  cluster bootstrap that resamples *questions* (:mod:`chunklab_core.stats.clustered`; the
  strategies' answers to one question are not independent). Each resample keeps the design
  weights ``w_i = N_h / n_h`` of its items and recomputes the ratio, so the interval carries
  both the sampling of questions and the unequal weights (Davison & Hinkley 1997, sec. 3.8;
  the ratio estimator is the Hajek estimator, Sarndal, Swensson & Wretman 1992, sec. 5.7).
* :func:`paired_differences`: per judge and variant (strict, lenient), the paired difference
  ``judge-only accuracy - accuracy by the grades`` estimated as the weighted mean of
  ``d_i = f_i - y_i`` on the same graded items (``f``: the judge passes the answer, ``y``: the
  grader does). Because the population mean of ``f`` minus that of ``y`` is the population
  mean of ``d``, this is the paired estimate of the judge's bias; its interval is the one
  above, not two separate intervals laid side by side. With strict scoring the judge is
  constant within each stratum, so the point estimate equals the judge-only figure minus the
  stratified grader figure exactly.
* :func:`direction_rates`: per judge, the weighted share of lenient calls (the judge passes,
  the grader does not), strict calls (the reverse) and their difference, each with an interval.
* :func:`judge_contrasts`: every pair of judges, the difference of their paired differences
  (again a per-item quantity, ``d_a - d_b``), so judges are compared on the same items.
* :func:`reading_of`: one wording rule for an interval around a difference: ``higher`` /
  ``lower`` when it excludes 0, ``cannot be told apart`` when it contains 0.

Not handled: reading the files (:mod:`chunklab_core.audit.loading`), agreement (kappa) tables
(:mod:`chunklab_core.reports.post06.tables`).
"""

from __future__ import annotations

from itertools import combinations
from typing import NamedTuple, Sequence

import numpy as np
import pandas as pd

from chunklab_core.answers.verdicts import CORRECT, NOT_CORRECT, UNPARSED, binary_labels, binary_scores, grader_name
from chunklab_core.audit.loading import AuditData
from chunklab_core.stats.claims import interval_side
from chunklab_core.stats.bootstrap import percentile_interval
from chunklab_core.stats.clustered import clustered_resampled_means


class WeightedMean(NamedTuple):
    estimate: float
    low: float
    high: float
    n: int
    clusters: int


def weighted_mean_ci(values, weights, clusters, resamples: int = 10_000, seed: int = 0,
                     confidence: float = 0.95) -> WeightedMean:
    """Hajek mean ``sum w x / sum w`` with a question-resampling percentile interval (module docstring)."""
    values = np.asarray(values, dtype=float)
    weights = np.asarray(weights, dtype=float)
    labels = np.asarray(clusters, dtype=object).astype(str)
    if not (values.shape == weights.shape == labels.shape) or values.ndim != 1:
        raise ValueError("values, weights and clusters need one entry per item each")
    if len(values) < 2 or not np.all(np.isfinite(values)) or not np.all(weights > 0):
        raise ValueError("need at least 2 items, finite values and positive weights")
    estimate = float(np.sum(weights * values) / np.sum(weights))
    matrix = np.column_stack([weights * values, weights])
    means = clustered_resampled_means(matrix, labels, resamples, seed)
    ratios = means[:, 0] / means[:, 1]
    low, high = percentile_interval(ratios, confidence)
    return WeightedMean(estimate, float(low), float(high), len(values), len(set(labels)))


def reading_of(low: float, high: float, higher: str = "higher", lower: str = "lower",
               same: str = "cannot be told apart") -> str:
    """``higher`` when the interval lies above 0, ``lower`` below 0, else ``same``
    (:func:`chunklab_core.stats.claims.interval_side`)."""
    return {1: higher, -1: lower, 0: same}[interval_side(low, high)]


def _units(graded: pd.DataFrame) -> np.ndarray:
    if "qid" in graded.columns:
        return graded["qid"].astype(str).to_numpy()
    return graded["item_id"].astype(str).to_numpy()


def _per_item_difference(data: AuditData, column: str, lenient: bool) -> np.ndarray:
    return (binary_scores(data.graded[column], lenient)
            - binary_scores(data.graded["grade"], lenient))


def paired_differences(data: AuditData, resamples: int = 10_000, seed: int = 0,
                       confidence: float = 0.95,
                       variants: Sequence[str] = ("strict", "lenient")) -> pd.DataFrame:
    """Per judge and variant: judge-only minus the accuracy by the grades, paired (module docstring)."""
    weights = data.graded["graded_weight"].to_numpy(dtype=float)
    units = _units(data.graded)
    rows = []
    for variant in variants:
        if variant not in ("strict", "lenient"):
            raise ValueError(f"variant must be 'strict' or 'lenient', got {variant!r}")
        for column in data.judge_columns:
            d = _per_item_difference(data, column, variant == "lenient")
            result = weighted_mean_ci(d, weights, units, resamples, seed, confidence)
            rows.append({"judge": grader_name(column), "variant": variant,
                         "difference": result.estimate, "low": result.low, "high": result.high,
                         "graded": result.n, "questions": result.clusters,
                         "reading": reading_of(result.low, result.high,
                                               "judge-only too high", "judge-only too low")})
    return pd.DataFrame(rows)


def direction_rates(data: AuditData, resamples: int = 10_000, seed: int = 0,
                    confidence: float = 0.95) -> pd.DataFrame:
    """Per judge (binary scale): weighted lenient share, strict share and lenient - strict, with intervals."""
    weights = data.graded["graded_weight"].to_numpy(dtype=float)
    units = _units(data.graded)
    grader = binary_labels(data.graded["grade"])
    rows = []
    for column in data.judge_columns:
        judge = binary_labels(data.graded[column])
        lenient = ((judge == CORRECT) & (grader == NOT_CORRECT)).astype(float)
        strict = ((judge == NOT_CORRECT) & (grader == CORRECT)).astype(float)
        row = {"judge": grader_name(column), "graded": len(judge),
               "lenient items": int(lenient.sum()), "strict items": int(strict.sum()),
               "unparsed items": int((judge == UNPARSED).sum())}
        for name, values in (("lenient", lenient), ("strict", strict),
                             ("lenient - strict", lenient - strict)):
            result = weighted_mean_ci(values, weights, units, resamples, seed, confidence)
            row.update({f"{name} share": result.estimate, f"{name} low": result.low,
                        f"{name} high": result.high})
        row["reading"] = reading_of(row["lenient - strict low"], row["lenient - strict high"],
                                    "more lenient than strict", "more strict than lenient",
                                    "direction cannot be told")
        rows.append(row)
    return pd.DataFrame(rows)


def judge_contrasts(data: AuditData, variant: str = "strict", resamples: int = 10_000,
                    seed: int = 0, confidence: float = 0.95) -> pd.DataFrame:
    """Every pair of judges: difference of their paired differences (judge a's bias - judge b's)."""
    weights = data.graded["graded_weight"].to_numpy(dtype=float)
    units = _units(data.graded)
    lenient = variant == "lenient"
    rows = []
    for a, b in combinations(data.judge_columns, 2):
        values = _per_item_difference(data, a, lenient) - _per_item_difference(data, b, lenient)
        result = weighted_mean_ci(values, weights, units, resamples, seed, confidence)
        rows.append({"judge a": grader_name(a), "judge b": grader_name(b), "variant": variant,
                     "bias a - bias b": result.estimate, "low": result.low, "high": result.high,
                     "reading": reading_of(result.low, result.high, "a passes more",
                                           "b passes more")})
    return pd.DataFrame(rows)


def lenient_contrast(data: AuditData, column_a: str, column_b: str, resamples: int = 10_000,
                     seed: int = 0, confidence: float = 0.95) -> dict:
    """Weighted lenient share of judge a minus judge b on the same items (the self-preference check)."""
    weights = data.graded["graded_weight"].to_numpy(dtype=float)
    units = _units(data.graded)
    grader = binary_labels(data.graded["grade"])

    def lenient(column):
        return ((binary_labels(data.graded[column]) == CORRECT)
                & (grader == NOT_CORRECT)).astype(float)

    result = weighted_mean_ci(lenient(column_a) - lenient(column_b), weights, units, resamples,
                              seed, confidence)
    return {"judge a": grader_name(column_a), "judge b": grader_name(column_b),
            "lenient a - lenient b": result.estimate, "low": result.low, "high": result.high,
            "reading": reading_of(result.low, result.high, "a more lenient", "b more lenient")}


def agreement_contrasts(data: AuditData, resamples: int = 10_000, seed: int = 0,
                        confidence: float = 0.95) -> pd.DataFrame:
    """Every pair of judges (binary scale): weighted agreement with the grader of a minus b, same items."""
    weights = data.graded["graded_weight"].to_numpy(dtype=float)
    units = _units(data.graded)
    grader = binary_labels(data.graded["grade"])
    agree = {c: (binary_labels(data.graded[c]) == grader).astype(float) for c in data.judge_columns}
    rows = []
    for a, b in combinations(data.judge_columns, 2):
        result = weighted_mean_ci(agree[a] - agree[b], weights, units, resamples, seed, confidence)
        rows.append({"judge a": grader_name(a), "judge b": grader_name(b),
                     "agreement a - agreement b": result.estimate, "low": result.low,
                     "high": result.high,
                     "reading": reading_of(result.low, result.high, "a agrees more",
                                           "b agrees more")})
    return pd.DataFrame(rows)
