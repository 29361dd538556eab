"""Kendall tau-b between strategy rankings, against scipy, with paired and independent resamples."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats as scipy_stats

from chunklab_core.stats.rank_stability import (
    kendall_tau_b_rows,
    kendall_tau_ci,
    snap_ties,
    stability_table,
    strategy_scores,
)

STRATEGIES = ["fixed_200", "fixed_500", "sentences", "semantic", "parent"]


def frame(n=60, seed=0, shift=(0.1, 0.3, 0.5, 0.7, 0.9), prefix="q") -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    scores = (rng.random((n, len(shift))) < np.array(shift)).astype(float)
    return pd.DataFrame(scores, index=[f"{prefix}{i}" for i in range(n)], columns=STRATEGIES)


def test_identical_rankings_give_one_with_interval_at_one():
    a = frame()
    result = kendall_tau_ci(a, a.copy(), resamples=300, seed=1)
    assert result.tau == pytest.approx(1.0) and result.low == 1.0 and result.high == 1.0 and result.paired


def test_reversed_rankings_give_minus_one():
    a = frame()
    result = kendall_tau_ci(a, 1.0 - a, resamples=300, seed=1)
    assert result.tau == pytest.approx(-1.0) and result.low == -1.0 and result.high == -1.0


def test_seeded_and_deterministic():
    a, b = frame(seed=1), frame(seed=2, shift=(0.4, 0.45, 0.5, 0.55, 0.6))
    first = kendall_tau_ci(a, b, resamples=400, seed=5)
    assert kendall_tau_ci(a, b, resamples=400, seed=5) == first
    assert kendall_tau_ci(a, b, resamples=400, seed=6) != first
    assert -1.0 <= first.low <= first.high <= 1.0 and first.strategies == 5


def test_paired_resamples_share_questions():
    # close strategies: resampling reorders them, but b = 2a reorders identically when paired
    a = frame(n=80, seed=7, shift=(0.46, 0.48, 0.5, 0.52, 0.54))
    paired = kendall_tau_ci(a, 2.0 * a, resamples=500, seed=2)
    assert paired.paired and paired.low == 1.0
    independent = kendall_tau_ci(a, 2.0 * a, resamples=500, seed=2, paired=False)
    assert not independent.paired and independent.low < 0.5


def test_point_estimate_equals_scipy():
    rng = np.random.default_rng(4)
    for trial in range(20):
        a = pd.DataFrame(rng.random((30, 5)), columns=STRATEGIES)
        b = pd.DataFrame(rng.random((30, 5)), columns=STRATEGIES)
        expected = scipy_stats.kendalltau(a.mean(), b.mean(), variant="b").statistic
        assert kendall_tau_ci(a, b, resamples=50, seed=trial).tau == pytest.approx(expected)


def test_vectorised_tau_b_equals_scipy_with_ties():
    rng = np.random.default_rng(9)
    a = rng.integers(0, 4, size=(200, 6)).astype(float)  # many ties
    b = rng.integers(0, 4, size=(200, 6)).astype(float)
    ours = kendall_tau_b_rows(a, b)
    theirs = np.array([scipy_stats.kendalltau(x, y, variant="b").statistic for x, y in zip(a, b)])
    np.testing.assert_allclose(ours, theirs, equal_nan=True)


def test_snap_ties():
    values = np.array([[0.3, 0.1 + 0.2, 0.5, 0.5 + 1e-9]])
    assert 0.3 != 0.1 + 0.2
    snapped = snap_ties(values, 1e-12)
    assert snapped[0, 0] == snapped[0, 1] and snapped[0, 2] != snapped[0, 3]


def test_all_strategies_tied_is_undefined():
    a = frame()
    tied = pd.DataFrame(np.ones(a.shape), index=a.index, columns=a.columns)
    result = kendall_tau_ci(a, tied, resamples=100, seed=0)
    assert np.isnan(result.tau) and result.undefined_resamples == 100 and np.isnan(result.low)


def test_different_questions_resample_independently():
    a, b = frame(seed=1), frame(n=40, seed=2, prefix="other")
    result = kendall_tau_ci(a, b, resamples=200, seed=0)
    assert not result.paired
    # paired resampling of the same questions gives 1 exactly; independent does not have to
    with pytest.raises(ValueError, match="paired=True"):
        kendall_tau_ci(a, b, paired=True)
    partial = frame(seed=3).iloc[:30]
    with pytest.raises(ValueError, match="share 30 questions"):
        kendall_tau_ci(a, partial)
    assert not kendall_tau_ci(a, partial, resamples=50, paired=False).paired


def test_rows_are_aligned_by_question_and_columns_by_name():
    a, b = frame(seed=1), frame(seed=2)
    shuffled = b.sample(frac=1.0, random_state=0)[STRATEGIES[::-1]]
    assert kendall_tau_ci(a, shuffled, resamples=200, seed=3) == kendall_tau_ci(a, b, resamples=200, seed=3)
    with pytest.raises(ValueError, match="different strategies"):
        kendall_tau_ci(a, b.drop(columns=["parent"]))


def test_stability_table_and_strategy_scores():
    tidy = pd.concat([
        pd.DataFrame({"corpus": "c", "qid": frame(seed=s).index, "retriever": name, "strategy": strategy,
                      "recall@5": frame(seed=s)[strategy].to_numpy()})
        for s, name in enumerate(["bm25", "dense", "hybrid"]) for strategy in STRATEGIES
    ])
    settings = {name: strategy_scores(tidy[tidy["retriever"] == name], "recall@5") for name in ("bm25", "dense", "hybrid")}
    assert settings["bm25"].shape == (60, 5)
    table = stability_table(settings, resamples=100, seed=0)
    assert list(zip(table["setting_a"], table["setting_b"])) == [("bm25", "dense"), ("bm25", "hybrid"), ("dense", "hybrid")]
    assert table["paired"].all() and (table["questions_a"] == 60).all()
    direct = kendall_tau_ci(settings["bm25"], settings["dense"], resamples=100, seed=0)
    assert table.loc[0, "tau"] == direct.tau and table.loc[0, "low"] == direct.low
    with pytest.raises(ValueError, match="several rows"):
        strategy_scores(tidy, "recall@5")
