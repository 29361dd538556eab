"""The kept bootstrap draws (stats.bootstrap.iter_resample_indices): a second call with the same
(n, resamples, seed) reads the kept rows, which are exactly what a fresh generator draws, so
every interval is unchanged; a generator seed or an interrupted iteration keeps nothing."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as scipy_stats

from chunklab_core.stats import bootstrap


@pytest.fixture(autouse=True)
def nothing_kept():
    bootstrap._DRAWN.clear()
    yield
    bootstrap._DRAWN.clear()


def test_kept_rows_equal_a_fresh_generator_and_are_read_back(monkeypatch):
    monkeypatch.setattr(bootstrap, "BLOCK_ELEMENTS", 50)  # several blocks
    expected = np.random.default_rng(11).integers(0, 7, size=(30, 7))
    first = np.concatenate(list(bootstrap.iter_resample_indices(7, 30, 11)))
    assert len(bootstrap._DRAWN) == 1
    monkeypatch.setattr(np.random, "default_rng", lambda seed: pytest.fail("drawn again"))
    second = np.concatenate(list(bootstrap.iter_resample_indices(7, 30, 11)))
    np.testing.assert_array_equal(first, expected)
    np.testing.assert_array_equal(second, expected)
    with pytest.raises(ValueError):
        next(bootstrap.iter_resample_indices(7, 30, 11))[0, 0] = 1  # kept rows are read-only


def test_intervals_are_unchanged_when_the_draws_are_read_back():
    scores = np.random.default_rng(2).random((40, 3))
    drawn = bootstrap.bootstrap_ci(scores, 500, 5)
    read = bootstrap.bootstrap_ci(scores, 500, 5)
    for a, b in zip(drawn, read):
        np.testing.assert_array_equal(a, b)
    # the percentile rule is scipy's (cross-check on the same resampled means)
    means = bootstrap.resampled_means(scores[:, 0], 500, 5)[:, 0]
    low, high = scipy_stats.mstats.mquantiles(means, [0.025, 0.975], alphap=1, betap=1)
    assert (drawn.low[0], drawn.high[0]) == pytest.approx((low, high))


def test_generator_seeds_and_interrupted_iterations_keep_nothing():
    list(bootstrap.iter_resample_indices(5, 10, np.random.default_rng(1)))
    iterator = bootstrap.iter_resample_indices(5, 10, 3)
    next(iterator)
    iterator.close()
    assert len(bootstrap._DRAWN) == 0
