"""How many items to grade: sample sizes from a stated precision target, and what more grades buy.

Handles:

* :func:`planned_half_width`: the half-width of the interval of the stratified (graded)
  accuracy that a sample of ``n`` items drawn by
  :func:`chunklab_core.audit.sample.allocate_sample` would give, under stated planning
  variances: ``z * sqrt(sum_h W_h^2 S_h^2 / n_h)`` (Cochran, *Sampling Techniques*, 3rd ed.
  1977, eq. 5.6 without the finite population correction, as
  :func:`chunklab_core.stats.stratified.stratified_mean_ci` computes it; the small
  between-strata term of order 1/N is left out of the plan).
* :func:`sample_size_for_precision`: the smallest ``n >= min_n`` whose planned half-width
  is at most the target (the allocation is recomputed for every ``n``, so oversampled
  disagreement strata are accounted for).
* :func:`planning_variances`: planning variances ``S_h^2`` from a pilot sample, one for the
  strata where the judges agree and one where they disagree, each from an upper confidence
  bound on the pilot's share of grades that depart from their stratum's majority.
* :func:`items_to_halve_interval`: how many graded items halve an interval whose width
  shrinks as ``1/sqrt(n)``: ``4 n`` in total, ``3 n`` more (any root-n-consistent
  estimator, e.g. a kappa or a mean; the clustering of items into questions is assumed to
  stay the same).

Not handled: drawing (:mod:`chunklab_core.audit.sample`), the estimates themselves
(:mod:`chunklab_core.stats.stratified`), cluster design effects (answers to one
question are correlated; the plan treats items as independent, so it is optimistic).
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np
from scipy.stats import norm

from chunklab_core.audit.sample import allocate_sample

WORST_CASE_VARIANCE = 0.25  # the largest variance a 0/1 score can have


def planned_half_width(sizes: Sequence[int], variances: Sequence[float], counts: Sequence[int],
                       confidence: float = 0.95) -> float:
    """``z * sqrt(sum_h W_h^2 S_h^2 / n_h)`` with ``W_h = N_h / N`` (module docstring)."""
    sizes, variances, counts = (np.asarray(x, dtype=float) for x in (sizes, variances, counts))
    if not (sizes.shape == variances.shape == counts.shape) or sizes.ndim != 1:
        raise ValueError("sizes, variances and counts need one value per stratum each")
    if (counts < 1).any():
        raise ValueError("every stratum needs at least one sampled item")
    if (variances < 0).any():
        raise ValueError("variances must be >= 0")
    shares = sizes / sizes.sum()
    z = float(norm.ppf(0.5 + confidence / 2.0))
    return float(z * math.sqrt(np.sum(shares**2 * variances / counts)))


def sample_size_for_precision(sizes: Sequence[int], disagreement: Sequence[bool],
                              variances: Sequence[float], half_width: float, min_n: int = 120,
                              min_per_stratum: int = 2, disagreement_factor: float = 3.0,
                              confidence: float = 0.95) -> tuple[int, float]:
    """``(n, planned half-width)``: the smallest ``n >= min_n`` meeting ``half_width``.

    Every stratum is sampled by :func:`allocate_sample` with the same arguments as the draw.
    When even the whole population misses the target, returns the whole population and its
    half-width (0 by this formula, which ignores the finite population correction only when
    ``n_h < N_h``). ``min_n`` larger than the population raises ``ValueError``.
    """
    if half_width <= 0:
        raise ValueError(f"half_width must be > 0, got {half_width!r}")
    total = int(sum(sizes))
    if min_n > total:
        raise ValueError(f"min_n={min_n} exceeds the {total} items of the population")
    floor_n = max(min_n, sum(min(s, min_per_stratum) for s in sizes))
    for n in range(floor_n, total + 1):
        counts = allocate_sample(sizes, disagreement, n, min_per_stratum, disagreement_factor)
        # a stratum taken whole has no sampling error (finite population correction = 0)
        effective = [0.0 if c == s else v for c, s, v in zip(counts, sizes, variances)]
        width = planned_half_width(sizes, effective, counts, confidence)
        if width <= half_width:
            return n, width
    return total, 0.0


def planning_variances(pilot_grades: Sequence[float], pilot_strata: Sequence[str],
                       pilot_disagreement: Sequence[bool], confidence: float = 0.95) -> dict[bool, float]:
    """Planning variance of 0/1 grades for agreement (False) and disagreement (True) strata.

    A small pilot often shows no variation at all in a stratum, and planning with variance 0
    would promise an interval of width 0. So each group is planned with an upper bound: ``x``
    pilot items of the group depart from their stratum's majority grade, out of ``m``; the
    one-sided Clopper-Pearson upper bound ``p_up = Beta^-1(confidence; x + 1, m - x)``
    (Clopper & Pearson, Biometrika 1934) bounds the minority share, and the planning
    variance is ``p_up (1 - p_up)``, at most :data:`WORST_CASE_VARIANCE` (``p_up >= 0.5``
    gives the worst case). A group without pilot items gets the worst case.
    """
    from scipy.stats import beta

    grades = np.asarray(pilot_grades, dtype=float)
    strata = np.asarray(pilot_strata, dtype=object)
    flags = np.asarray(pilot_disagreement, dtype=bool)
    if not (grades.shape == strata.shape == flags.shape):
        raise ValueError("one stratum and one disagreement flag per pilot grade")
    result = {}
    for flag in (False, True):
        minority, items = 0, 0
        for stratum in sorted(set(strata[flags == flag])):
            values = grades[(strata == stratum) & (flags == flag)]
            ones = int(values.sum())
            minority += min(ones, len(values) - ones)
            items += len(values)
        if items == 0 or minority >= items:
            result[flag] = WORST_CASE_VARIANCE
            continue
        upper = float(beta.ppf(confidence, minority + 1, items - minority))
        result[flag] = WORST_CASE_VARIANCE if upper >= 0.5 else upper * (1.0 - upper)
    return result


def items_to_halve_interval(n_items: int) -> tuple[int, int]:
    """``(total, more)``: an interval of width ``c / sqrt(n)`` halves at ``4 n`` items, ``3 n`` more."""
    if n_items < 1:
        raise ValueError("n_items must be >= 1")
    return 4 * n_items, 3 * n_items
