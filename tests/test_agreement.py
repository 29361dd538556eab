"""Rater agreement (kappa against scikit-learn) and prediction-powered inference."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from chunklab_core.stats.agreement import (
    cohen_kappa,
    design_weighted_kappa,
    confusion_table,
    kappa_ci,
    percent_agreement,
    ppi_mean_ci,
)

FIXTURES = {
    "binary": (list("yynnyyny"), list("ynnnyyyy")),
    "three labels": (["ok", "bad", "partial", "ok", "ok", "bad", "partial", "ok", "bad"],
                     ["ok", "bad", "ok", "ok", "partial", "bad", "partial", "bad", "bad"]),
    "perfect": ([0, 1, 2, 1, 0], [0, 1, 2, 1, 0]),
    "one rater constant": ([1, 1, 1, 1, 1, 1], [1, 0, 1, 1, 0, 1]),
    "worse than chance": ([1, 0, 1, 0, 1, 0], [0, 1, 0, 1, 0, 0]),
    "booleans": ([True, False, True, True], [True, False, False, True]),
    "both constant, undefined": (["yes"] * 5, ["yes"] * 5),
}


@pytest.mark.parametrize("name", FIXTURES)
def test_kappa_equals_scikit_learn(name):
    a, b = FIXTURES[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scikit-learn warns on the undefined case
        expected = cohen_kappa_score(a, b)
    assert cohen_kappa(a, b) == pytest.approx(expected, abs=1e-12, nan_ok=True)


def test_kappa_by_hand_and_with_unused_labels():
    # p_o = 3/4; a says yes half the time, b a quarter: p_e = .5*.25 + .5*.75 = .5; kappa = .5
    a, b = ["y", "y", "n", "n"], ["y", "n", "n", "n"]
    assert cohen_kappa(a, b) == pytest.approx(0.5)
    assert cohen_kappa(a, b, labels=["y", "n", "unparsed"]) == pytest.approx(
        cohen_kappa_score(a, b, labels=["y", "n", "unparsed"]))
    assert np.isnan(cohen_kappa(["yes"] * 3, ["yes"] * 3))
    with pytest.raises(ValueError, match="not in labels"):
        cohen_kappa(a, ["y", "n", "maybe", "n"], labels=["y", "n"])
    with pytest.raises(ValueError, match="one label per item"):
        cohen_kappa(a, b[:3])


def test_percent_agreement_and_confusion_table():
    a, b = FIXTURES["binary"]
    assert percent_agreement(a, b) == 0.75
    table = confusion_table(a, b, labels=["y", "n"], names=("judge", "human"))
    assert table.to_numpy().tolist() == [[4, 1], [1, 2]]
    assert table.index.name == "judge" and table.columns.tolist() == ["y", "n"]


def test_kappa_ci():
    rng = np.random.default_rng(0)
    truth = rng.random(300) < 0.5
    judge = np.where(rng.random(300) < 0.8, truth, ~truth)  # agrees on ~80%: kappa ~ 0.6
    result = kappa_ci(truth, judge, resamples=4_000, seed=1)
    assert result.kappa == pytest.approx(cohen_kappa_score(truth, judge))
    assert result.low < result.kappa < result.high and result.high - result.low < 0.25
    assert result.undefined_share == 0.0
    assert kappa_ci(truth, judge, resamples=4_000, seed=1) == result
    # perfect agreement on two labels: every defined resample has kappa 1; constant resamples are undefined
    perfect = kappa_ci([0, 1, 1], [0, 1, 1], resamples=2_000, seed=0)
    assert (perfect.kappa, perfect.low, perfect.high) == (1.0, 1.0, 1.0)
    assert perfect.undefined_share == pytest.approx((1 / 27 + 8 / 27), abs=0.03)


def test_kappa_ci_clustered_by_hand():
    rng = np.random.default_rng(3)
    truth = rng.random(120) < 0.5
    judge = np.where(rng.random(120) < 0.8, truth, ~truth)
    plain = kappa_ci(truth, judge, resamples=3_000, seed=2)
    # every item its own group: the cluster bootstrap is the item bootstrap
    singletons = kappa_ci(truth, judge, resamples=3_000, seed=2, clusters=np.arange(120))
    assert singletons.low == pytest.approx(plain.low) and singletons.high == pytest.approx(plain.high)
    # every item copied three times inside its own group (three strategies giving the same
    # verdicts on one question): resampling groups gives the interval of the 120 distinct items,
    # while treating the 360 copies as independent items pretends to a narrower one
    tripled_truth, tripled_judge = np.repeat(truth, 3), np.repeat(judge, 3)
    groups = np.repeat(np.arange(120), 3)
    clustered = kappa_ci(tripled_truth, tripled_judge, resamples=3_000, seed=2, clusters=groups)
    assert clustered.kappa == pytest.approx(plain.kappa)
    assert clustered.low == pytest.approx(plain.low) and clustered.high == pytest.approx(plain.high)
    naive = kappa_ci(tripled_truth, tripled_judge, resamples=3_000, seed=2)
    assert naive.high - naive.low < 0.7 * (clustered.high - clustered.low)
    with pytest.raises(ValueError, match="one document label per question"):
        kappa_ci(truth, judge, resamples=100, clusters=np.arange(5))


def test_ppi_by_hand():
    result = ppi_mean_ci([1, 0, 1, 1], [1, 0], [1, 1], confidence=0.95)
    # 0.75 + mean([0, 1]); se^2 = var([1,0,1,1])/4 + var([0,1])/2 = 0.25/4 + 0.5/2
    assert result.ppi.mean == pytest.approx(1.25)
    half = 1.959963984540054 * np.sqrt(0.3125)
    assert (result.ppi.low, result.ppi.high) == pytest.approx((1.25 - half, 1.25 + half))
    assert result.naive.mean == 0.75 and result.classical.mean == 1.0
    with pytest.raises(ValueError, match="same graded items"):
        ppi_mean_ci([1, 0, 1], [1, 0], [1])


def test_ppi_covers_the_truth_and_removes_the_judge_bias():
    """A lenient judge (says yes to 30% of true no's): naive estimate biased by +0.06."""
    true_rate, n_all, n_sample = 0.6, 2_000, 200
    rng = np.random.default_rng(2023)
    ppi, naive, covered, naive_covered = [], [], 0, 0
    for _ in range(300):
        human = (rng.random(n_all) < true_rate).astype(float)
        judge = np.where(human == 1, rng.random(n_all) < 0.9, rng.random(n_all) < 0.3).astype(float)
        graded = rng.choice(n_all, n_sample, replace=False)
        result = ppi_mean_ci(judge, judge[graded], human[graded])
        ppi.append(result.ppi.mean)
        naive.append(result.naive.mean)
        covered += result.ppi.low <= true_rate <= result.ppi.high
        naive_covered += result.naive.low <= true_rate <= result.naive.high
    assert covered / 300 >= 0.9
    assert abs(np.mean(ppi) - true_rate) < 0.01
    assert np.mean(naive) - true_rate > 0.05 and naive_covered / 300 < 0.1


def test_design_weighted_kappa_by_hand():
    # Items a/b: (y,y) w=1, (y,n) w=3, (n,n) w=2, (n,n) w=2. Weighted shares (total 8):
    # p_yy = 1/8, p_yn = 3/8, p_nn = 4/8; p_o = 5/8; a: y 4/8, n 4/8; b: y 1/8, n 7/8;
    # p_e = 4/8 * 1/8 + 4/8 * 7/8 = 1/2; kappa = (5/8 - 1/2) / (1/2) = 1/4.
    # Unweighted: p_o = 3/4, p_e = 1/2 * 1/4 + 1/2 * 3/4 = 1/2, kappa = 1/2.
    a, b, w = ["y", "y", "n", "n"], ["y", "n", "n", "n"], [1, 3, 2, 2]
    assert design_weighted_kappa(a, b, w) == pytest.approx(0.25, abs=1e-12)
    assert cohen_kappa(a, b) == pytest.approx(0.5)
    assert design_weighted_kappa(a, b, [5, 5, 5, 5]) == pytest.approx(cohen_kappa(a, b))
    with pytest.raises(ValueError, match="one design weight per item"):
        design_weighted_kappa(a, b, [1, 2, 3])
    with pytest.raises(ValueError, match="finite and > 0"):
        design_weighted_kappa(a, b, [1, 0, 2, 2])


@pytest.mark.parametrize("name", [n for n in FIXTURES if n != "both constant, undefined"])
def test_design_weighted_kappa_equals_scikit_learn(name):
    a, b = FIXTURES[name]
    weights = np.random.default_rng(len(name)).uniform(0.5, 9.0, len(a))
    expected = cohen_kappa_score(a, b, sample_weight=weights)
    assert design_weighted_kappa(a, b, weights) == pytest.approx(expected, abs=1e-12)


def test_weighted_kappa_ci_keeps_weights_in_every_resample():
    rng = np.random.default_rng(5)
    truth = rng.random(200) < 0.5
    judge = np.where(rng.random(200) < 0.8, truth, ~truth)
    groups = np.repeat(np.arange(100), 2)
    # equal weights: the same interval as without weights (same resamples, same tables)
    plain = kappa_ci(truth, judge, resamples=2_000, seed=4, clusters=groups)
    equal = kappa_ci(truth, judge, resamples=2_000, seed=4, clusters=groups, weights=np.full(200, 3.0))
    assert equal.kappa == pytest.approx(plain.kappa)
    assert (equal.low, equal.high) == pytest.approx((plain.low, plain.high))
    # items where the raters disagree weigh 4 times more: a lower kappa, equal to scikit-learn's
    weights = np.where(truth != judge, 4.0, 1.0)
    weighted = kappa_ci(truth, judge, resamples=2_000, seed=4, clusters=groups, weights=weights)
    assert weighted.kappa == pytest.approx(cohen_kappa_score(truth, judge, sample_weight=weights))
    assert weighted.kappa < plain.kappa and weighted.low < weighted.kappa < weighted.high
    # the resampled tables are weighted too: the interval lies wholly below the unweighted one
    assert weighted.high < plain.low
