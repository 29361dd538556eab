"""Bootstrap statistics: known answers, the resampling scheme pinned, scipy cross-checks."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
import scipy.stats

from chunklab_core.stats import bootstrap as stats
from chunklab_core.stats.bootstrap import (
    balanced_score,
    bootstrap_ci,
    paired_difference_ci,
    probability_best,
    questions_needed,
    resample_indices,
    resampled_means,
)


def bernoulli(rates, n, seed):
    return (np.random.default_rng(seed).random((n, len(rates))) < np.asarray(rates)).astype(float)


# ---------------------------------------------------------------- questions_needed


@pytest.mark.parametrize(
    ("n", "diff", "ci", "expected"),
    [
        (20, 0.02, (-0.08, 0.12), 500),
        (70, 0.034, (-0.048, 0.121), 433),
        (889, 1.76e-5, (-0.022, 0.023), None),  # would need ~5.8 million questions
        (50, 0.0, (-0.1, 0.1), None),
        (50, 5e-10, (-0.1, 0.1), None),
        (100, 0.2, (0.1, 0.3), 101),  # already separated: at least one more question
        (20, -0.02, (-0.12, 0.08), 500),  # sign of the difference does not matter
    ],
)
def test_questions_needed_known_values(n, diff, ci, expected):
    assert questions_needed(n, diff, ci) == expected


def test_questions_needed_rejects_reversed_interval():
    with pytest.raises(ValueError, match="low <= high"):
        questions_needed(20, 0.1, (0.2, 0.1))


# ---------------------------------------------------------------- the resampling scheme


def test_resample_indices_deterministic_and_seed_dependent():
    first = resample_indices(50, 200, seed=7)
    assert first.shape == (200, 50) and first.min() >= 0 and first.max() < 50
    np.testing.assert_array_equal(first, resample_indices(50, 200, seed=7))
    assert not np.array_equal(first, resample_indices(50, 200, seed=8))


def test_resample_indices_do_not_depend_on_block_size_or_total(monkeypatch):
    reference = resample_indices(37, 300, seed=3)
    np.testing.assert_array_equal(resample_indices(37, 120, seed=3), reference[:120])
    monkeypatch.setattr(stats, "BLOCK_ELEMENTS", 37 * 7)  # blocks of 7 rows
    blocks = list(stats.iter_resample_indices(37, 300, seed=3))
    assert len(blocks) == 43
    np.testing.assert_array_equal(np.concatenate(blocks), reference)


@pytest.mark.parametrize("cells", [1, 2, 5])  # one/two cells take the gather path, more the product
def test_resampled_means_are_means_over_resample_indices(cells):
    scores = np.random.default_rng(0).random((23, cells))
    indices = resample_indices(23, 500, seed=11)
    expected = scores[indices].mean(axis=1)
    np.testing.assert_allclose(resampled_means(scores, 500, seed=11), expected, rtol=0, atol=1e-12)


def test_matrix_columns_reuse_the_same_resamples():
    scores = np.random.default_rng(1).random((40, 4))
    whole = bootstrap_ci(scores, 2_000, seed=5)
    for j in range(4):
        one = bootstrap_ci(scores[:, j], 2_000, seed=5)
        assert isinstance(one.low, float)
        np.testing.assert_allclose([one.mean, one.low, one.high],
                                   [whole.mean[j], whole.low[j], whole.high[j]], atol=1e-12)


def test_bootstrap_ci_determinism():
    scores = np.random.default_rng(2).random(80)
    assert bootstrap_ci(scores, 1_000, seed=1) == bootstrap_ci(scores, 1_000, seed=1)
    assert bootstrap_ci(scores, 1_000, seed=1) != bootstrap_ci(scores, 1_000, seed=2)
    assert probability_best(np.c_[scores, scores[::-1]], 1_000, seed=1).tolist() == \
        probability_best(np.c_[scores, scores[::-1]], 1_000, seed=1).tolist()


def test_percentile_interval_matches_scipy():
    sample = bernoulli([0.6], 200, seed=42)[:, 0]
    ours = bootstrap_ci(sample, 10_000, seed=0)
    theirs = scipy.stats.bootstrap((sample,), np.mean, n_resamples=10_000, method="percentile",
                                   confidence_level=0.95, rng=np.random.default_rng(123))
    assert ours.mean == pytest.approx(sample.mean())
    assert ours.low == pytest.approx(theirs.confidence_interval.low, abs=0.01)
    assert ours.high == pytest.approx(theirs.confidence_interval.high, abs=0.01)
    # and the interval is not degenerate: about +-1.96 * sqrt(p(1-p)/n) = +-0.068
    assert 0.11 < ours.high - ours.low < 0.16


def test_patterns_sampler_has_the_same_distribution():
    scores = bernoulli([0.55, 0.5, 0.7], 150, seed=9)
    by_index = bootstrap_ci(scores, 20_000, seed=0)
    by_pattern = bootstrap_ci(scores, 20_000, seed=0, sampler="patterns")
    np.testing.assert_allclose(by_pattern.low, by_index.low, atol=0.01)
    np.testing.assert_allclose(by_pattern.high, by_index.high, atol=0.01)
    np.testing.assert_allclose(probability_best(scores, 20_000, 0, sampler="patterns"),
                               probability_best(scores, 20_000, 0), atol=0.015)


def test_bad_inputs_raise_clear_errors():
    with pytest.raises(ValueError, match="NaN"):
        bootstrap_ci([0.1, np.nan, 0.3])
    with pytest.raises(ValueError, match="no questions"):
        bootstrap_ci([])
    with pytest.raises(ValueError, match="confidence"):
        bootstrap_ci([0.1, 0.2], confidence=95)
    with pytest.raises(ValueError, match="resamples"):
        bootstrap_ci([0.1, 0.2], resamples=0)
    with pytest.raises(ValueError, match="sampler"):
        bootstrap_ci([0.1, 0.2], sampler="bca")


# ---------------------------------------------------------------- paired differences


def test_identical_lists_give_a_zero_interval():
    scores = np.random.default_rng(3).random(30)
    assert paired_difference_ci(scores, scores.copy(), 2_000, seed=0) == (0.0, 0.0, 0.0)


def test_all_ones_against_all_zeros():
    ones, zeros = [1.0] * 30, [0.0] * 30
    diff = paired_difference_ci(ones, zeros, 2_000, seed=0)
    assert diff.low > 0.5 and diff.mean == 1.0
    assert probability_best(np.column_stack([ones, zeros]), 2_000, seed=0)[0] > 0.99


def test_paired_difference_is_the_difference_of_paired_resampled_means():
    scores = np.random.default_rng(4).random((60, 2))
    low, high = np.quantile(np.diff(resampled_means(scores, 3_000, seed=2)[:, ::-1], axis=1), [0.025, 0.975])
    diff = paired_difference_ci(scores[:, 0], scores[:, 1], 3_000, seed=2)
    assert (diff.low, diff.high) == pytest.approx((low, high), abs=1e-12)


def test_paired_difference_requires_equal_lengths():
    with pytest.raises(ValueError, match="same questions"):
        paired_difference_ci([1, 0, 1], [1, 0])


# ---------------------------------------------------------------- probability of being best


def test_probability_best_edge_cases():
    scores = np.random.default_rng(5).random((25, 1))
    assert probability_best(scores, 500).tolist() == [1.0]
    assert probability_best(scores[:, 0], 500).tolist() == [1.0]
    assert probability_best(np.zeros((25, 0)), 500).tolist() == []
    same = np.repeat(scores, 3, axis=1)
    shares = probability_best(same, 500)
    assert shares[0] == shares[1] == shares[2] == pytest.approx(1 / 3)


def test_ties_are_split_and_shares_sum_to_one():
    good = np.random.default_rng(6).random(40)
    probs = probability_best(np.column_stack([good, good, good - 0.5]), 1_000, seed=1)
    assert probs.tolist() == [0.5, 0.5, 0.0]
    probs = probability_best(bernoulli([0.5, 0.52, 0.48, 0.5], 30, seed=1), 3_000, seed=2)
    assert probs.sum() == pytest.approx(1.0)


def test_probability_best_matches_exact_enumeration():
    """Three questions: all 27 equally likely resamples enumerated by hand, ties split."""
    scores = np.array([[1.0, 0.0, 0.5], [0.5, 1.0, 0.5], [0.0, 0.5, 0.5]])
    exact = np.zeros(3)
    for rows in itertools.product(range(3), repeat=3):
        means = scores[list(rows)].mean(axis=0)
        best = np.isclose(means, means.max())
        exact += best / best.sum() / 27
    np.testing.assert_allclose(probability_best(scores, 100_000, seed=0), exact, atol=0.01)


def test_clearly_better_candidate_leads():
    scores = bernoulli([0.65, 0.35], 600, seed=0)
    assert probability_best(scores, 5_000, seed=0)[0] > 0.90


# ---------------------------------------------------------------- balanced score


def test_balanced_score_known_values():
    np.testing.assert_allclose(balanced_score([0.80, 0.90], [1000, 3000]), [0.80, 0.80])
    np.testing.assert_allclose(balanced_score([0.80, 0.90], [1000, 3000], lam=0.0), [0.80, 0.90])
    np.testing.assert_allclose(balanced_score([0.9], [3000], lam=0.05, t_min=1000), [0.8])


def test_balanced_score_per_question_and_pandas():
    recall = np.array([[1.0, 1.0], [0.5, 1.0], [1.0, 0.5]])
    tokens = np.array([[900, 2000], [1100, 3000], [1000, 4000]])
    per_question = balanced_score(recall, tokens)  # T_min = 1000, the first column's mean
    np.testing.assert_allclose(per_question.mean(axis=0), balanced_score(recall.mean(0), tokens.mean(0)))
    series = balanced_score(pd.Series([0.8, 0.9], index=["a", "b"]), pd.Series([1000, 3000], index=["a", "b"]))
    assert series.index.tolist() == ["a", "b"] and series["b"] == pytest.approx(0.8)
    with pytest.raises(ValueError, match="labelled differently"):
        balanced_score(pd.Series([0.8, 0.9], index=["a", "b"]), pd.Series([1000, 3000], index=["b", "a"]))
    with pytest.raises(ValueError, match="positive"):
        balanced_score([0.8], [0])
