"""Does a per-question covariate predict a per-question score? A slope with a clustered interval.

Handles: ``ols_slope`` (one formula), ``weighted_slopes`` (the same slope under many weight
vectors at once: a resample's counts are weights), and ``clustered_slope_ci``, a percentile
bootstrap that resamples *clusters* (here: passages, each holding a human and a generated
question) with replacement and keeps every question of a drawn cluster, so two questions about
one passage are never treated as independent evidence. Cluster draws come from
``stats.iter_resample_indices`` (same seed, same draws as every other interval of the series).

Not handled: intercepts, several covariates, standard errors from a model (only the bootstrap).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from chunklab_core.stats import bootstrap as stats


class SlopeInterval(NamedTuple):
    """The observed slope, its percentile interval, and how many resamples had no x-spread."""

    slope: float
    low: float
    high: float
    degenerate: int


def _xy(x, y) -> tuple[np.ndarray, np.ndarray]:
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    if x.ndim != 1 or x.shape != y.shape:
        raise ValueError(f"x and y must be 1-D of the same length, got shapes {x.shape} and {y.shape}")
    if len(x) < 2 or not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
        raise ValueError("x and y need at least two finite pairs (drop missing values first)")
    return x, y


def ols_slope(x, y) -> float:
    """Least-squares slope of y on x: ``b = Σ(x - x̄)(y - ȳ) / Σ(x - x̄)²``.

    The ordinary least-squares estimate of ``b`` in ``y = a + b·x + e`` (e.g. Wasserman,
    "All of Statistics", 2004, thm. 13.4); equals ``scipy.stats.linregress(x, y).slope``.
    Raises ``ValueError`` when x does not vary (the slope is undefined).
    """
    x, y = _xy(x, y)
    dx = x - x.mean()
    sxx = float(dx @ dx)
    if sxx <= 1e-12 * max(1.0, float(np.abs(x).max()) ** 2) * len(x):
        raise ValueError("x does not vary, so the slope is undefined")
    return float(dx @ (y - y.mean()) / sxx)


def weighted_slopes(x: np.ndarray, y: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """One weighted least-squares slope per row of ``weights`` (rows x questions).

    ``b_w = (Σw·xy/Σw - x̄_w·ȳ_w) / (Σw·x²/Σw - x̄_w²)`` with ``x̄_w = Σw·x/Σw``: the slope of
    the data set holding question i ``w_i`` times. NaN where the weighted x does not vary.
    """
    total = weights.sum(axis=1)
    mx, my = weights @ x / total, weights @ y / total
    sxy = weights @ (x * y) / total - mx * my
    sxx = weights @ (x * x) / total - mx * mx
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(sxx > 1e-12, sxy / sxx, np.nan)


def clustered_slope_ci(x, y, clusters, resamples: int = 10_000, seed=0,
                       confidence: float = 0.95) -> SlopeInterval:
    """Percentile interval on ``ols_slope(x, y)``, resampling clusters with replacement.

    ``clusters``: one label per question. A resample draws as many clusters as there are,
    uniformly with replacement; a question's weight is how often its cluster was drawn.
    Resamples whose x does not vary are left out of the quantiles and counted in
    ``degenerate``. With one question per cluster this is the ordinary pairs bootstrap.
    """
    x, y = _xy(x, y)
    labels, cluster_of = np.unique(np.asarray(clusters), return_inverse=True)
    if len(cluster_of) != len(x):
        raise ValueError(f"clusters must label every question: {len(cluster_of)} labels for {len(x)} questions")
    slope = ols_slope(x, y)
    draws = []
    for indices in stats.iter_resample_indices(len(labels), resamples, seed):
        counts = stats.counts_from_indices(indices, len(labels))
        draws.append(weighted_slopes(x, y, counts[:, cluster_of]))
    slopes = np.concatenate(draws)
    finite = slopes[np.isfinite(slopes)]
    if not len(finite):
        raise ValueError("every resample had a constant x; no interval can be formed")
    low, high = stats.percentile_interval(finite, confidence)
    return SlopeInterval(slope, float(low), float(high), int(len(slopes) - len(finite)))
