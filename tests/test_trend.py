"""Slope of a score on a covariate: hand fixtures, scipy cross-checks, the clustered bootstrap."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats

from chunklab_core.stats.trend import clustered_slope_ci, ols_slope, weighted_slopes


def test_ols_slope_hand_fixtures():
    assert ols_slope([0, 1, 2], [1, 3, 5]) == pytest.approx(2.0)
    # x̄ = 1, ȳ = 1, dx = (-1, 0, 1), dy = (-1, 2, -1): Σdx·dy = 1 + 0 - 1 = 0
    assert ols_slope([0, 1, 2], [0, 3, 0]) == pytest.approx(0.0)
    # x̄ = .5, ȳ = .75, dx = (-.5, -.5, .5, .5), dy = (-.75, .25, .25, .25): Σdx·dy = .5, Σdx² = 1
    assert ols_slope([0, 0, 1, 1], [0, 1, 1, 1]) == pytest.approx(0.5)


def test_ols_slope_matches_scipy():
    rng = np.random.default_rng(3)
    x = rng.uniform(0, 1, 50)
    y = 0.7 * x + rng.normal(0, 0.3, 50)
    assert ols_slope(x, y) == pytest.approx(scipy.stats.linregress(x, y).slope)


@pytest.mark.parametrize("x, y, match", [
    ([1, 1, 1], [0, 1, 2], "does not vary"),
    ([1], [2], "at least two"),
    ([0, 1, np.nan], [0, 1, 2], "finite"),
    ([0, 1, 2], [0, 1], "same length"),
])
def test_ols_slope_bad_input(x, y, match):
    with pytest.raises(ValueError, match=match):
        ols_slope(x, y)


def test_weighted_slopes_equal_slopes_of_repeated_data():
    x = np.array([0.0, 0.5, 1.0, 1.0])
    y = np.array([0.0, 1.0, 0.0, 1.0])
    weights = np.array([[1, 1, 1, 1], [2, 0, 1, 1], [0, 0, 1, 1]], dtype=float)
    expected = [ols_slope(x, y), ols_slope(np.repeat(x, [2, 0, 1, 1]), np.repeat(y, [2, 0, 1, 1])), np.nan]
    np.testing.assert_allclose(weighted_slopes(x, y, weights), expected)


def test_one_question_per_cluster_is_the_pairs_bootstrap():
    rng = np.random.default_rng(11)
    x = rng.uniform(0, 1, 80)
    y = 0.5 * x + rng.normal(0, 0.25, 80)
    ours = clustered_slope_ci(x, y, np.arange(80), resamples=10_000, seed=0)
    def slope(a, b, axis=-1):  # vectorised OLS slope along ``axis``, as scipy's bootstrap wants it
        da = a - a.mean(axis=axis, keepdims=True)
        return (da * (b - b.mean(axis=axis, keepdims=True))).sum(axis=axis) / (da * da).sum(axis=axis)

    theirs = scipy.stats.bootstrap((x, y), slope, paired=True, vectorized=True, n_resamples=10_000,
                                   method="percentile", rng=np.random.default_rng(5)).confidence_interval
    assert ours.slope == pytest.approx(scipy.stats.linregress(x, y).slope)
    assert ours.low == pytest.approx(theirs.low, abs=0.03)
    assert ours.high == pytest.approx(theirs.high, abs=0.03)
    assert ours.low < ours.slope < ours.high and ours.degenerate == 0


def test_identical_copies_in_a_cluster_change_nothing():
    rng = np.random.default_rng(2)
    x = rng.uniform(0, 1, 30)
    y = x + rng.normal(0, 0.5, 30)
    single = clustered_slope_ci(x, y, np.arange(30), resamples=2_000, seed=7)
    doubled = clustered_slope_ci(np.repeat(x, 2), np.repeat(y, 2), np.repeat(np.arange(30), 2), resamples=2_000, seed=7)
    assert doubled == pytest.approx(single)


def test_clusters_widen_the_interval_when_questions_share_a_passage():
    rng = np.random.default_rng(4)
    passage_effect = rng.normal(0, 1, 40)
    x = np.repeat(rng.uniform(0, 1, 40), 2) + rng.normal(0, 0.05, 80)
    y = np.repeat(passage_effect, 2) + 0.3 * x
    naive = clustered_slope_ci(x, y, np.arange(80), resamples=4_000, seed=1)
    clustered = clustered_slope_ci(x, y, np.repeat(np.arange(40), 2), resamples=4_000, seed=1)
    assert clustered.high - clustered.low > 1.2 * (naive.high - naive.low)


def test_clustered_slope_checks_labels():
    with pytest.raises(ValueError, match="label every question"):
        clustered_slope_ci([0, 1, 2], [0, 1, 2], [0, 1], resamples=10, seed=0)
