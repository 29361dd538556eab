"""Agreement between raters (LLM judges, people) and judge-assisted estimates of a mean.

* Cohen's kappa (Cohen, "A coefficient of agreement for nominal scales", 1960):
  ``kappa = (p_o - p_e) / (1 - p_e)``, with p_o the observed share of agreeing items and
  ``p_e = sum_k (row_k / n) * (col_k / n)`` the agreement expected from the two raters'
  label frequencies alone. Written by hand (not a call to scikit-learn) so that the bootstrap
  can compute it for thousands of resampled confusion tables at once; tests check it equals
  ``sklearn.metrics.cohen_kappa_score``.
  Undefined case: when p_e = 1 (both raters gave every item the same single label) kappa is
  0/0; it is returned as NaN, as scikit-learn does by default. Bootstrap resamples where it is
  undefined are left out of the interval and their share is reported. When items come in
  groups that are not independent draws (the three strategies' answers to one question, the
  questions of one article), the interval resamples the groups instead of the items
  (``clusters=``; one-stage cluster bootstrap of :mod:`chunklab_core.stats.clustered`).
* Design-weighted Cohen's kappa (:func:`design_weighted_kappa`, ``kappa_ci(weights=...)``): when
  the items are a sample drawn with unequal inclusion probabilities ``pi_i`` (post 06's
  stratified audit: ``pi_h = n_h / N_h``), every cell proportion of the confusion table is
  replaced by its Hajek estimate ``p_jk = sum_i w_i [a_i = j][b_i = k] / sum_i w_i`` with the
  design weights ``w_i = 1 / pi_i``, and kappa is computed from those proportions. This is the
  plug-in (substitution) estimator of a smooth function of population totals (Sarndal,
  Swensson & Wretman, *Model Assisted Survey Sampling*, 1992, sec. 5.5 and 5.7) applied to
  Cohen's formula, so it estimates the kappa of the whole population, not of the sample; the
  unweighted kappa of an over-sampled stratum mix describes the sample only. It equals
  ``sklearn.metrics.cohen_kappa_score(a, b, sample_weight=w)``. Its interval resamples items
  (or ``clusters``) keeping each item's weight and recomputes the weighted table (the ratio
  bootstrap of :func:`chunklab_core.audit.paired.weighted_mean_ci`; Davison & Hinkley 1997,
  sec. 3.8).
* Prediction-powered inference for a mean (Angelopoulos, Bates, Fannjiang, Jordan & Zrnic,
  "Prediction-powered inference", Science 382, 2023, eq. for the mean estimand):
  ``theta = mean(judge on all items) + mean(human - judge on the graded sample)``,
  ``se^2 = var(judge_all) / N + var(human - judge) / n``, normal-approximation interval.
  The graded sample must be a uniform random sample of the items.

Not handled: Cohen's *weighted* kappa for ordered labels (partial credit between labels,
Cohen 1968; the design weights above weigh items, not disagreements), more than two raters
(Fleiss), missing labels (filter them; an
``unparsed`` verdict is a label like any other if you keep it), PPI++ power tuning.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import pandas as pd
from scipy.stats import norm

from chunklab_core.stats.bootstrap import Interval, percentile_interval, resampled_means
from chunklab_core.stats.clustered import clustered_resampled_means


def _encode(a, b, labels=None) -> tuple[np.ndarray, np.ndarray, list]:
    """Integer codes of the two raters' labels into ``labels`` (default: sorted union)."""
    a_values, b_values = np.asarray(a, dtype=object), np.asarray(b, dtype=object)
    if a_values.ndim != 1 or a_values.shape != b_values.shape:
        raise ValueError(f"a and b must be 1-D with one label per item each, got shapes "
                         f"{a_values.shape} and {b_values.shape}")
    if a_values.size == 0:
        raise ValueError("no items to compare")
    if labels is None:
        seen = pd.unique(np.concatenate([a_values, b_values]))
        try:
            labels = sorted(seen)
        except TypeError:  # labels of mixed types keep first-seen order
            labels = list(seen)
    index = pd.Index(list(labels))
    if not index.is_unique:
        raise ValueError(f"labels must be unique, got {list(labels)}")
    a_codes, b_codes = index.get_indexer(a_values), index.get_indexer(b_values)
    if (a_codes < 0).any() or (b_codes < 0).any():
        unknown = set(a_values[a_codes < 0]) | set(b_values[b_codes < 0])
        raise ValueError(f"labels {sorted(map(str, unknown))} are not in labels={list(labels)}; "
                         "items are never dropped silently")
    return a_codes, b_codes, list(labels)


def confusion_table(a, b, labels=None, names=("a", "b"), column_labels=None) -> pd.DataFrame:
    """Counts of items per (label of a, label of b): rows are a's labels, columns b's.

    ``labels`` orders both axes (default: the sorted union); ``column_labels``, when given, are
    the columns' own labels (b rates on another scale, e.g. a YES/NO judge against three-way
    grades), and then ``labels`` (default: a's sorted labels) are the rows'. Every label is
    shown, zeros kept; a label outside them raises ``ValueError``. The one confusion-table
    builder of the package (kappa, post 05's and post 06's tables).
    """
    if column_labels is None:
        a_codes, b_codes, labels = _encode(a, b, labels)
        column_labels = labels
    else:
        a_codes, _, labels = _encode(a, a, labels)
        b_codes, _, column_labels = _encode(b, b, column_labels)
        if len(a_codes) != len(b_codes):
            raise ValueError(f"a and b must have one label per item each, got {len(a_codes)} and {len(b_codes)}")
    counts = np.zeros((len(labels), len(column_labels)), dtype=int)
    np.add.at(counts, (a_codes, b_codes), 1)
    return pd.DataFrame(counts, index=pd.Index(labels, name=names[0]),
                        columns=pd.Index(column_labels, name=names[1]))


def percent_agreement(a, b) -> float:
    """Share of items on which both raters gave the same label (p_o)."""
    a_codes, b_codes, _ = _encode(a, b)
    return float(np.mean(a_codes == b_codes))


def kappa_from_proportions(table: np.ndarray) -> np.ndarray:
    """Cohen's kappa of confusion tables of proportions, shape (..., L, L); NaN where p_e = 1."""
    observed = np.trace(table, axis1=-2, axis2=-1)
    expected = np.sum(table.sum(axis=-1) * table.sum(axis=-2), axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(1.0 - expected > 1e-12, (observed - expected) / (1.0 - expected), np.nan)


def cohen_kappa(a, b, labels=None) -> float:
    """Cohen's kappa between two raters' labels; NaN when undefined (see the module docstring)."""
    table = confusion_table(a, b, labels).to_numpy(dtype=float)
    return float(kappa_from_proportions(table / table.sum()))


def _design_weights(weights, n_items: int) -> np.ndarray:
    """The items' design weights as a float vector: one per item, finite and positive."""
    w = np.asarray(weights, dtype=float)
    if w.shape != (n_items,):
        raise ValueError(f"weights must give one design weight per item: got shape {w.shape} for "
                         f"{n_items} items")
    if not np.all(np.isfinite(w)) or (w <= 0).any():
        raise ValueError("design weights must be finite and > 0 (an item of weight 0 was not sampled)")
    return w


def design_weighted_kappa(a, b, weights, labels=None) -> float:
    """Design-weighted Cohen's kappa: kappa of the Hajek-weighted confusion proportions.

    ``p_jk = sum_i w_i [a_i = j][b_i = k] / sum_i w_i``; ``p_o = sum_j p_jj``; ``p_e = sum_j
    p_j. p_.j``; ``kappa = (p_o - p_e) / (1 - p_e)`` (Cohen 1960, with the cell shares estimated
    for the population by the Hajek estimator, Sarndal, Swensson & Wretman 1992, sec. 5.7).
    ``weights``: each item's design weight ``1 / pi_i`` (post 06: ``N_h / n_h``). Equal weights
    give :func:`cohen_kappa`; NaN when ``p_e = 1``. Equals scikit-learn's
    ``cohen_kappa_score(a, b, sample_weight=weights)``.
    """
    a_codes, b_codes, labels = _encode(a, b, labels)
    w = _design_weights(weights, len(a_codes))
    table = np.zeros((len(labels), len(labels)))
    np.add.at(table, (a_codes, b_codes), w)
    return float(kappa_from_proportions(table / table.sum()))


class KappaInterval(NamedTuple):
    """Kappa on all items with a bootstrap percentile interval over items."""

    kappa: float
    low: float
    high: float
    undefined_share: float  # share of resamples where kappa was undefined (left out)


def kappa_ci(a, b, resamples: int = 10_000, seed=0, confidence: float = 0.95, labels=None,
             clusters=None, weights=None) -> KappaInterval:
    """Percentile bootstrap interval for Cohen's kappa, resampling items with replacement.

    Each resample's confusion table is the resampled mean of the items' one-hot (label of a,
    label of b) cells, so all resamples are computed at once (:mod:`chunklab_core.stats.bootstrap`,
    same seed -> same item resamples as every other interval over these items).
    ``clusters``: one group label per item (e.g. the article of the question); the resamples
    then draw whole groups (:func:`chunklab_core.stats.clustered.clustered_resampled_means`:
    a resample's table is the share of its kept items in each cell). With every item its own
    group this is exactly the item bootstrap.
    ``weights``: design weights (one per item); kappa is then :func:`design_weighted_kappa`
    and each resample's table is the weighted share of its kept items in each cell (the
    resampled mean of ``w * one_hot`` over the resampled mean of ``w``), drawn from the same
    resamples as without weights.
    """
    a_codes, b_codes, labels = _encode(a, b, labels)
    n_labels = len(labels)
    one_hot = np.zeros((len(a_codes), n_labels * n_labels))
    one_hot[np.arange(len(a_codes)), a_codes * n_labels + b_codes] = 1.0
    w = np.ones(len(a_codes)) if weights is None else _design_weights(weights, len(a_codes))
    matrix = np.column_stack([one_hot * w[:, None], w])
    if clusters is None:
        means = resampled_means(matrix, resamples, seed)
    else:
        means = clustered_resampled_means(matrix, clusters, resamples, seed)
    tables = (means[:, :-1] / means[:, -1:]).reshape(-1, n_labels, n_labels)
    kappas = kappa_from_proportions(tables)
    defined = kappas[~np.isnan(kappas)]
    low, high = percentile_interval(defined, confidence) if defined.size else (np.nan, np.nan)
    estimate = cohen_kappa(a, b, labels) if weights is None else design_weighted_kappa(a, b, w, labels)
    return KappaInterval(estimate, float(low), float(high), float(np.isnan(kappas).mean()))


@dataclass
class PPIResult:
    """Prediction-powered estimate of a mean next to the judge-only and human-only estimates."""

    ppi: Interval  # mean(judge_all) + mean(human - judge) on the graded sample
    naive: Interval  # judge only: mean(judge_all), ignores the judge's bias
    classical: Interval  # human only: mean(human_sample), ignores the judge
    n_all: int
    n_sample: int
    confidence: float


def _normal_interval(estimate: float, se: float, confidence: float) -> Interval:
    z = float(norm.ppf(0.5 + confidence / 2.0))
    return Interval(float(estimate), float(estimate - z * se), float(estimate + z * se))


def ppi_mean_ci(judge_all, judge_sample, human_sample, confidence: float = 0.95) -> PPIResult:
    """Prediction-powered inference for the mean human score (Angelopoulos et al., 2023).

    ``judge_all``: the judge's scores on all N items; ``judge_sample`` and ``human_sample``:
    judge and human scores on the n graded items (same order). Estimate
    ``mean(judge_all) + mean(human_sample - judge_sample)``; ``se^2 = var(judge_all)/N +
    var(human - judge)/n`` (sample variances, ddof=1); interval ``estimate -/+ z se``.
    The two means are treated as independent: exact when the graded items are not part of
    ``judge_all``, and a close approximation when they are and n << N.
    """
    judge_all = np.asarray(judge_all, dtype=float)
    judge_sample = np.asarray(judge_sample, dtype=float)
    human_sample = np.asarray(human_sample, dtype=float)
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must lie strictly between 0 and 1, got {confidence!r}")
    if judge_sample.shape != human_sample.shape or judge_sample.ndim != 1:
        raise ValueError(f"judge_sample and human_sample must be 1-D scores of the same graded items, "
                         f"got shapes {judge_sample.shape} and {human_sample.shape}")
    if judge_all.ndim != 1 or len(judge_all) < 2 or len(human_sample) < 2:
        raise ValueError("need at least 2 judged items and 2 graded items for variances")
    for name, values in (("judge_all", judge_all), ("judge_sample", judge_sample),
                         ("human_sample", human_sample)):
        if not np.all(np.isfinite(values)):
            raise ValueError(f"{name} contains NaN or infinite values")
    rectifier = human_sample - judge_sample
    n_all, n_sample = len(judge_all), len(human_sample)
    se_ppi = np.sqrt(judge_all.var(ddof=1) / n_all + rectifier.var(ddof=1) / n_sample)
    return PPIResult(
        ppi=_normal_interval(judge_all.mean() + rectifier.mean(), se_ppi, confidence),
        naive=_normal_interval(judge_all.mean(), judge_all.std(ddof=1) / np.sqrt(n_all), confidence),
        classical=_normal_interval(human_sample.mean(), human_sample.std(ddof=1) / np.sqrt(n_sample),
                                   confidence),
        n_all=n_all, n_sample=n_sample, confidence=confidence,
    )
