"""Selection verdicts, held-out selection and the calibration simulation."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from chunklab_core.stats.selection import minimal_confidence_set, select_winner
from chunklab_core.stats.holdout import held_out_selection
from chunklab_core.stats.simulation import (
    calibration_table,
    correlated_outcomes,
    leader_probability_curve,
    simulate_comparisons,
)
from chunklab_core.stats.bootstrap import probability_best


def bernoulli(rates, n, seed):
    return (np.random.default_rng(seed).random((n, len(rates))) < np.asarray(rates)).astype(float)


# ---------------------------------------------------------------- minimal confidence set


@pytest.mark.parametrize(
    ("probs", "expected"),
    [
        ([0.5, 0.45, 0.04, 0.01], [0, 1]),
        ([0.25] * 4, [0, 1, 2, 3]),
        ([0.97, 0.02, 0.01], [0]),
        ([0.01, 0.04, 0.45, 0.5], [3, 2]),  # by probability, not by position
        ([0.48, 0.04, 0.48], [0, 2]),  # a tie: the lower index comes first
        ([1.0], [0]),
    ],
)
def test_minimal_confidence_set(probs, expected):
    assert minimal_confidence_set(probs, 0.95) == expected


def test_minimal_confidence_set_rejects_non_probabilities():
    with pytest.raises(ValueError, match="sum to 1"):
        minimal_confidence_set([0.5, 0.2])


# ---------------------------------------------------------------- select_winner


def test_verdict_names_a_clear_winner():
    scores = bernoulli([0.65, 0.35, 0.40], 600, seed=0)
    verdict = select_winner(scores, ["dense", "bm25", "hybrid"], resamples=5_000, seed=1)
    assert verdict.winner == verdict.leader == "dense"
    assert verdict.probabilities[0] > 0.99
    assert set(verdict.ruled_out) == {"bm25", "hybrid"}
    assert verdict.candidates == ["dense"]
    assert verdict.top_two == ("dense", "hybrid") and verdict.top_two_difference.low > 0.15
    assert verdict.warnings == []
    assert str(verdict).startswith("Winner: dense") and "already separated" in str(verdict)


def test_verdict_without_a_winner_reports_candidates_and_questions_needed():
    scores = bernoulli([0.60, 0.57, 0.20], 40, seed=3)
    verdict = select_winner(scores, ["a", "b", "c"], resamples=5_000, seed=0)
    assert verdict.winner is None
    assert set(verdict.candidates) == {"a", "b"} and verdict.ruled_out == ["c"]
    first, second = verdict.top_two
    diff = verdict.top_two_difference
    assert diff.low < 0 < diff.high
    assert verdict.questions_needed > 40
    text = verdict.headline()
    assert text.startswith("No winner") and f"{verdict.questions_needed:,} questions" in text
    markdown = verdict.to_markdown()
    assert "| candidate |" in markdown and markdown.count("\n| ") == 4  # header + 3 candidates
    assert verdict._repr_markdown_() == markdown
    frame = verdict.to_frame()
    assert frame.index.tolist()[-1] == "c" and frame.loc["c", "status"] == "ruled out"


def test_verdict_probabilities_equal_probability_best_with_the_same_seed():
    scores = bernoulli([0.5, 0.55, 0.45, 0.5], 50, seed=4)
    verdict = select_winner(scores, resamples=3_000, seed=7)
    np.testing.assert_allclose(verdict.probabilities, probability_best(scores, 3_000, seed=7), atol=1e-12)


@pytest.mark.parametrize(("flipped", "ruled_out"), [(3, False), (5, True)])
def test_ruling_out_needs_the_tail_test_too(flipped, ruled_out):
    """T equals the leader except on ``flipped`` questions it misses: it ties the leader only in
    resamples avoiding them, about exp(-flipped) of them (5% for 3, 0.7% for 5). Either way
    T lies outside the 95% set (L and its copy S take ~98%)."""
    lead = bernoulli([0.6], 100, seed=0)[:, 0]
    trailing = lead.copy()
    trailing[np.flatnonzero(lead)[:flipped]] = 0.0
    verdict = select_winner(np.column_stack([lead, lead, trailing]), ["L", "S", "T"], resamples=20_000, seed=0)
    assert verdict.confidence_set == ["L", "S"] and verdict.leader == "L"
    assert (verdict.share_at_least_leader[2] < 0.025) == ruled_out
    assert ("T" in verdict.ruled_out) == ruled_out


def test_identical_top_two_need_infinitely_many_questions():
    col = bernoulli([0.5], 30, seed=5)[:, 0]
    verdict = select_winner(np.column_stack([col, col]), resamples=2_000, seed=0)
    assert verdict.winner is None and verdict.questions_needed is None
    assert verdict.probabilities.tolist() == [0.5, 0.5]
    assert "no number of questions" in verdict.headline()


def test_few_questions_warn():
    scores = bernoulli([0.9, 0.1], 12, seed=1)
    with pytest.warns(UserWarning, match="only 12 questions"):
        verdict = select_winner(scores, ["x", "y"], resamples=2_000, seed=0)
    assert len(verdict.warnings) == 1 and "warning: only 12 questions" in str(verdict)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        select_winner(bernoulli([0.9, 0.1], 15, seed=1), resamples=500)


def test_select_winner_bad_inputs():
    with pytest.raises(ValueError, match="at least two candidates"):
        select_winner(np.ones((20, 1)))
    with pytest.raises(ValueError, match="2 names for 3"):
        select_winner(np.ones((20, 3)), ["a", "b"])
    with pytest.raises(ValueError, match="unique"):
        select_winner(np.ones((20, 2)), ["a", "a"])


# ---------------------------------------------------------------- held-out selection


def test_winners_curse_when_candidates_are_equal():
    scores = bernoulli([0.5] * 5, 120, seed=2)
    result = held_out_selection(scores, list("abcde"), seed=0, n_splits=100)
    assert result.summary["mean_gap"] > 0.03  # the max of 5 equal noisy means is biased up
    assert (result.splits["gap"] == result.splits["selection_score"] - result.splits["held_out_score"]).all()
    again = held_out_selection(scores, list("abcde"), seed=0, n_splits=100)
    assert result.splits.equals(again.splits)


def test_held_out_selection_with_a_dominant_candidate():
    result = held_out_selection(bernoulli([0.8, 0.4, 0.4], 100, seed=1), ["good", "x", "y"], seed=3)
    assert result.summary["share_agrees"] == 1.0 and result.summary["most_frequent_winner"] == "good"
    assert abs(result.summary["mean_gap"]) < 0.05
    assert result.summary["selection_questions"] == 50 and len(result.splits) == 50


def test_held_out_selection_bad_inputs():
    with pytest.raises(ValueError, match="empty"):
        held_out_selection(np.ones((1, 2)))
    with pytest.raises(ValueError, match="at least two candidates"):
        held_out_selection(np.ones((10, 1)))


# ---------------------------------------------------------------- simulation


def test_correlated_outcomes_marginals_and_correlation():
    rng = np.random.default_rng(0)
    outcomes = correlated_outcomes([0.3, 0.7], 20_000, question_effect=0.6, rng=rng)
    np.testing.assert_allclose(outcomes.mean(axis=0), [0.3, 0.7], atol=0.015)
    assert np.corrcoef(outcomes.T)[0, 1] > 0.2
    independent = correlated_outcomes([0.3, 0.7], 20_000, question_effect=0.0, rng=rng)
    assert abs(np.corrcoef(independent.T)[0, 1]) < 0.03


def test_simulation_is_deterministic_and_tabulates():
    sim = simulate_comparisons(n_comparisons=40, seed=5)
    assert sim.equals(simulate_comparisons(n_comparisons=40, seed=5))
    assert not sim.equals(simulate_comparisons(n_comparisons=40, seed=6))
    assert set(sim["n_candidates"]) <= {3, 4, 5} and set(sim["n_questions"]) <= {18, 30, 60, 129}
    assert (sim["correct"] == (sim["pick"] == sim["truly_best"])).all()
    table = calibration_table(sim)
    assert table["comparisons"].sum() == 40
    assert table["band"].tolist()[-1] == "0.9-1.0"


def test_calibration_table_bands_by_hand():
    sim = pd.DataFrame({"pick_probability": [0.95, 1.0, 0.85, 0.55, 0.3],
                        "correct": [True, True, False, True, False]})
    table = calibration_table(sim).set_index("band")
    assert table.loc["0.9-1.0", "comparisons"] == 2 and table.loc["0.9-1.0", "share_correct"] == 1.0
    assert table.loc["0.8-0.9", "share_correct"] == 0.0 and table.loc["0.0-0.5", "comparisons"] == 1
    assert table.loc["0.6-0.7", "comparisons"] == 0 and np.isnan(table.loc["0.6-0.7", "share_correct"])


def test_leader_probability_grows_with_questions():
    curve = leader_probability_curve(ns=(20, 1600), repetitions=40, resamples=1_000, seed=0)
    low, high = curve["mean_probability_best"]
    assert 0.5 < low < 0.8 and high > 0.95


def test_held_out_gap_interval_against_scipy_bootstrap():
    """The gap's interval resamples questions: the same percentile bootstrap as scipy's, whose own
    resamples give an interval within Monte Carlo noise of ours; equal candidates give a gap whose
    interval lies above 0 (the curse is real), a dominant one a gap whose interval holds 0."""
    from scipy.stats import bootstrap

    from chunklab_core.stats.holdout import held_out_gap_ci

    rng = np.random.default_rng(11)
    equal = (rng.random((200, 5)) < 0.6).astype(float)
    mine = held_out_gap_ci(equal, seed=3, n_splits=20, resamples=400)
    assert mine.gap == pytest.approx(held_out_selection(equal, seed=3, n_splits=20).summary["mean_gap"])
    assert mine.low < mine.gap < mine.high and mine.low > 0
    reference = bootstrap((np.arange(200),), lambda rows: held_out_selection(
        equal[rows.astype(int)], seed=3, n_splits=20).summary["mean_gap"], n_resamples=400,
        method="percentile", vectorized=False, random_state=5).confidence_interval
    assert mine.low == pytest.approx(reference.low, abs=0.01)
    assert mine.high == pytest.approx(reference.high, abs=0.01)
    assert held_out_gap_ci(equal, seed=3, n_splits=20, resamples=400) == mine  # seeded
    dominant = equal.copy()
    dominant[:, 0] = (rng.random(200) < 0.95).astype(float)
    clear = held_out_gap_ci(dominant, seed=3, n_splits=20, resamples=400)
    assert clear.low <= 0 <= clear.high


def test_headline_does_not_call_a_bound_shown_as_zero_a_separation():
    import dataclasses

    from chunklab_core.stats.bootstrap import Interval

    scores = bernoulli([0.65, 0.35, 0.40], 600, seed=0)
    verdict = select_winner(scores, ["dense", "bm25", "hybrid"], resamples=2_000, seed=1)
    hair = dataclasses.replace(verdict, top_two_difference=Interval(0.017, 0.0003, 0.034))
    assert "by a hair, not at the precision shown" in hair.headline() and "already separated" not in hair.headline()
    below = dataclasses.replace(verdict, top_two_difference=Interval(-0.017, -0.034, -0.0004))
    assert "by a hair" in below.headline()
    assert "already separated" in verdict.headline()
