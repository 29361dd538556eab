"""A mean from a stratified graded sample (a person or a model grades it): judge only, grades only, and stratified PPI.

Setting: N items fall into strata h (post 06: the judges' verdict patterns, as drawn by
:func:`chunklab_core.audit.sample.draw_audit_sample`), ``N_h`` items in stratum h, share
``W_h = N_h / N``. A grader (a person or a model) graded ``n_h`` items of stratum h, drawn uniformly without
replacement within the stratum (stratified random sampling; Cochran, *Sampling Techniques*,
3rd ed. 1977, ch. 5). ``y`` is the grader's score of an item (1 = correct, 0 = not), ``f``
the judge's score (1 = the judge said correct). Three estimates of the mean of ``y``, each
with a normal-approximation interval ``estimate -/+ z se``:

* judge only (:func:`judge_only_mean_ci`): ``mean(f)`` over all N items, ``se^2 = var(f)/N``.
  It inherits every bias of the judge.
* grades only (:func:`stratified_mean_ci`): ``sum_h W_h ybar_h``. This is the Hajek
  (weighted) mean ``sum w_i y_i / sum w_i`` with the design weights ``w_i = N_h / n_h``
  (the stratified mean of Cochran ch. 5). ``se^2 = sum_h W_h^2 s_h^2 / n_h + sum_h W_h
  (ybar_h - ybar_st)^2 / N``: the first term is the variance of the stratified mean (Cochran
  ch. 5, without the finite population correction), the second the variance that comes from
  the stratum shares themselves, since the N items are a sample too (double sampling for
  stratification, Cochran section 12.2).
* stratified prediction-powered inference (:func:`stratified_ppi_mean_ci`; Angelopoulos,
  Bates, Fannjiang, Jordan & Zrnic, "Prediction-powered inference", Science 382, 2023, mean
  estimand, with the rectifier estimated by the stratified estimator of Cochran ch. 5):
  ``theta = mean_all(f) + sum_h W_h mean_{graded in h}(y - f)``,
  ``se^2 = var_all(f) / N + sum_h W_h^2 var_h(y - f) / n_h`` (sample variances, ddof = 1).
  As in :func:`chunklab_core.stats.agreement.ppi_mean_ci` the two terms are treated as independent
  and the shares ``W_h`` as fixed; both neglected parts are of order 1/N, small when
  ``n_h << N_h``.

The target is the mean score on items like these (the N items are themselves a sample),
which is also what the judge-only interval estimates; without the ``/N`` terms the intervals
would describe only the N items at hand.

When the strata are the judge's own verdict patterns, ``f`` is constant within every stratum
and the PPI point estimate equals the grades-only one exactly:
``mean_all(f) + sum_h W_h (ybar_h - f_h) = sum_h W_h ybar_h``. The judges then help through
the design (where to look), not through the correction.

Strata with one graded item (``n_h = 1``) have no sample variance. By default
(``singleton="pooled"``) they take the pooled within-stratum variance of the strata with
``n_h >= 2``, ``sum (n_h - 1) s_h^2 / sum (n_h - 1)`` (borrowing variance information
across strata, cf. Cochran ch. 5A on one unit per stratum); a number instead fixes their
variance (0.25 is the largest a 0/1 score can have, a conservative choice). Every result
says which strata were pooled. A stratum of the population without any graded item raises
``ValueError``: its mean cannot be estimated without assumptions, and leaving it out would
bias the estimate.

Not handled: clustered items (answers to the same question by several strategies are
correlated, so these intervals are somewhat too narrow; see
:mod:`chunklab_core.stats.clustered`), finite-population corrections, PPI++ power tuning.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import numpy as np
import pandas as pd
from scipy.stats import norm


@dataclass(frozen=True)
class StratifiedEstimate:
    """An estimate with its standard error, interval and the per-stratum pieces."""

    estimate: float
    low: float
    high: float
    se: float
    confidence: float
    per_stratum: pd.DataFrame  # stratum, population, graded, share, mean, variance, variance_from

    @property
    def pooled_strata(self) -> list:
        """Strata whose variance was not estimated from their own items (``n_h = 1``)."""
        table = self.per_stratum
        return list(table.loc[table["variance_from"] != "sample", "stratum"])


def _z(confidence: float) -> float:
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must lie strictly between 0 and 1, got {confidence!r}")
    return float(norm.ppf(0.5 + confidence / 2.0))


def _finite_vector(values, name: str) -> np.ndarray:
    array = np.asarray(values, dtype=float)
    if array.ndim != 1:
        raise ValueError(f"{name} must be 1-D (one score per item), got shape {array.shape}")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name} contains NaN or infinite values")
    return array


def judge_only_mean_ci(judge_all, confidence: float = 0.95) -> StratifiedEstimate:
    """Judge-only (naive) mean: ``mean(f)`` over all N items, ``se^2 = var(f) / N`` (ddof = 1)."""
    judge_all = _finite_vector(judge_all, "judge_all")
    if len(judge_all) < 2:
        raise ValueError("need at least 2 judged items for a variance")
    se = float(judge_all.std(ddof=1) / np.sqrt(len(judge_all)))
    estimate, z = float(judge_all.mean()), _z(confidence)
    per_stratum = pd.DataFrame({"stratum": ["all"], "population": [len(judge_all)],
                                "graded": [0], "share": [1.0], "mean": [estimate],
                                "variance": [float(judge_all.var(ddof=1))],
                                "variance_from": ["sample"]})
    return StratifiedEstimate(estimate, estimate - z * se, estimate + z * se, se, confidence,
                              per_stratum)


def _per_stratum(values: np.ndarray, strata, stratum_sizes: Mapping,
                 singleton: str | float) -> pd.DataFrame:
    """Per-stratum population size, graded count, share, mean and variance of ``values``.

    Strata are compared by their text (``str``), so ``1`` and ``"1"`` are the same stratum.
    """
    labels = [str(s) for s in np.asarray(strata, dtype=object)]
    if len(labels) != len(values):
        raise ValueError(f"one stratum per graded item: got {len(labels)} strata for "
                         f"{len(values)} scores")
    names = [str(s) for s in stratum_sizes]
    population = np.array([float(v) for v in stratum_sizes.values()])
    if not names or (population < 1).any():
        raise ValueError("every stratum needs a population size of at least 1")
    position = {name: k for k, name in enumerate(names)}
    unknown = sorted(set(labels) - set(position))
    if unknown:
        raise ValueError(f"graded items in strata {unknown} that the population does not have")
    codes = np.array([position[label] for label in labels], dtype=int)
    count = np.bincount(codes, minlength=len(names))
    empty = [name for name, c in zip(names, count) if c == 0]
    if empty:
        raise ValueError(f"{len(empty)} stratum/strata of the population have no graded item: "
                         f"{empty}; grade at least one item of each (an estimate that skips them "
                         "is biased)")
    if (count > population).any():
        raise ValueError("a stratum has more graded items than population items")
    mean = np.bincount(codes, weights=values, minlength=len(names)) / count
    squares = np.bincount(codes, weights=(values - mean[codes]) ** 2, minlength=len(names))
    with np.errstate(divide="ignore", invalid="ignore"):
        variance = np.where(count >= 2, squares / (count - 1), np.nan)
    source = np.where(count >= 2, "sample", "").astype(object)
    lonely = count == 1
    if lonely.any():
        if isinstance(singleton, str):
            if singleton != "pooled":
                raise ValueError(f"singleton must be 'pooled' or a variance, got {singleton!r}")
            dof = count[~lonely] - 1
            if dof.sum() == 0:
                raise ValueError("every stratum has a single graded item: no variance can be "
                                 "pooled; pass singleton=<variance> (0.25 bounds a 0/1 score)")
            fill, label = float(np.sum(dof * variance[~lonely]) / dof.sum()), "pooled"
        else:
            fill, label = float(singleton), "fixed"
            if not np.isfinite(fill) or fill < 0:
                raise ValueError(f"singleton variance must be finite and >= 0, got {singleton!r}")
        variance[lonely], source[lonely] = fill, label
    return pd.DataFrame({"stratum": names, "population": population.astype(int), "graded": count,
                         "share": population / population.sum(), "mean": mean,
                         "variance": variance, "variance_from": source})


def stratified_mean_ci(values, strata, stratum_sizes: Mapping, confidence: float = 0.95,
                       singleton: str | float = "pooled") -> StratifiedEstimate:
    """Grades only: ``sum_h W_h ybar_h`` with the double-sampling variance (module docstring).

    ``values``: the grader's scores of the graded items; ``strata``: their strata;
    ``stratum_sizes``: ``N_h`` for every stratum of the population (stratum -> size).
    """
    values = _finite_vector(values, "values")
    table = _per_stratum(values, strata, stratum_sizes, singleton)
    w, n_h = table["share"].to_numpy(), table["graded"].to_numpy()
    means, variances = table["mean"].to_numpy(), table["variance"].to_numpy()
    estimate = float(np.sum(w * means))
    n_all = int(table["population"].sum())
    se = float(np.sqrt(np.sum(w**2 * variances / n_h) + np.sum(w * (means - estimate) ** 2) / n_all))
    z = _z(confidence)
    return StratifiedEstimate(estimate, estimate - z * se, estimate + z * se, se, confidence, table)


def stratified_ppi_mean_ci(judge_all, strata_all, judge_graded, grades_graded, strata_graded,
                           confidence: float = 0.95,
                           singleton: str | float = "pooled") -> StratifiedEstimate:
    """Stratified prediction-powered mean (Angelopoulos et al. 2023; Cochran 1977 ch. 5).

    ``theta = mean_all(f) + sum_h (N_h/N) mean_{graded in h}(y - f)``,
    ``se^2 = var_all(f)/N + sum_h (N_h/N)^2 var_h(y - f)/n_h``. ``judge_all`` and
    ``strata_all``: the judge's score and stratum of all N items; ``judge_graded``,
    ``grades_graded``, ``strata_graded``: the same for the graded items (same order).
    ``per_stratum`` describes the rectifier ``y - f``.
    """
    judge_all = _finite_vector(judge_all, "judge_all")
    judge_graded = _finite_vector(judge_graded, "judge_graded")
    grades_graded = _finite_vector(grades_graded, "grades_graded")
    if judge_graded.shape != grades_graded.shape:
        raise ValueError(f"judge_graded and grades_graded must score the same graded items, got "
                         f"{len(judge_graded)} and {len(grades_graded)}")
    strata_all = np.asarray(strata_all, dtype=object)
    if strata_all.shape != judge_all.shape or len(judge_all) < 2:
        raise ValueError("need one stratum per judged item and at least 2 judged items")
    sizes = pd.Series([str(s) for s in strata_all]).value_counts(sort=False).to_dict()
    table = _per_stratum(grades_graded - judge_graded, strata_graded, sizes, singleton)
    w, n_h = table["share"].to_numpy(), table["graded"].to_numpy()
    estimate = float(judge_all.mean() + np.sum(w * table["mean"].to_numpy()))
    se = float(np.sqrt(judge_all.var(ddof=1) / len(judge_all)
                       + np.sum(w**2 * table["variance"].to_numpy() / n_h)))
    z = _z(confidence)
    return StratifiedEstimate(estimate, estimate - z * se, estimate + z * se, se, confidence, table)
