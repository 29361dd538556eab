"""The one verdict-wording rule (chunklab_core.stats.claims), on hand-made intervals."""

import numpy as np
import pandas as pd
import pytest

from chunklab_core.stats import claims
from chunklab_core.stats.selection import select_winner


def test_leader_is_winner_only_when_every_interval_lies_above_zero():
    words = claims.candidate_verdicts("A", {"B": (0.01, 0.05), "C": (0.002, 0.09)})
    assert words == {"A": "winner", "B": "ruled out", "C": "ruled out"}


def test_one_interval_containing_zero_denies_the_winner():
    # Post 02's case: Recursive 500 - Fixed 1000 = +0.030 (95% CI -0.005 to +0.065)
    words = claims.candidate_verdicts("Recursive 500", {"Fixed 1000": (-0.005, 0.065),
                                                        "Fixed 500": (0.02, 0.11)})
    assert words == {"Recursive 500": "cannot be ruled out", "Fixed 1000": "cannot be ruled out",
                     "Fixed 500": "ruled out"}


def test_touching_zero_does_not_exclude_it():
    assert claims.candidate_verdicts("A", {"B": (0.0, 0.1)}) == {"A": "cannot be ruled out",
                                                                 "B": "cannot be ruled out"}
    assert not claims.excludes_zero(0.0, 0.1) and claims.excludes_zero(-0.2, -0.001)


def test_a_candidate_ahead_of_the_named_leader_is_an_error():
    with pytest.raises(ValueError, match="ahead of the named leader"):
        claims.candidate_verdicts("A", {"B": (-0.08, -0.01)})
    with pytest.raises(ValueError, match="with itself"):
        claims.candidate_verdicts("A", {"A": (0.1, 0.2)})
    with pytest.raises(ValueError, match="low <= high"):
        claims.excludes_zero(0.2, 0.1)


@pytest.mark.parametrize(("low", "high", "side"), [
    (0.01, 0.02, 1), (-0.3, -0.1, -1), (-0.01, 0.02, 0), (0.0, 0.1, 0), (-0.1, 0.0, 0), (0.0, 0.0, 0),
    (1e-12, 1e-12, 1)])
def test_interval_side_is_the_one_excludes_zero_test(low, high, side):
    assert claims.interval_side(low, high) == side
    assert claims.excludes_zero(low, high) == (side != 0)


@pytest.mark.parametrize(("low", "high"), [(np.nan, 0.1), (-np.inf, 0.1), (0.2, 0.1)])
def test_interval_side_rejects_a_non_interval(low, high):
    with pytest.raises(ValueError, match="finite with low <= high"):
        claims.interval_side(low, high)


@pytest.mark.parametrize(("low", "high", "expected"), [
    (-0.01, 0.02, "cannot be told apart"), (0.01, 0.02, "a ahead"), (-0.3, -0.1, "b ahead")])
def test_pair_verdict(low, high, expected):
    assert claims.pair_verdict("a", "b", low, high) == expected


def test_verdict_table_reads_both_orientations():
    frame = pd.DataFrame({"strategy": ["x", "y"], "difference": [-0.03, -0.002],
                          "low": [-0.05, -0.017], "high": [-0.01, 0.013]})
    table = claims.verdict_table(frame, "L", row_minus_leader=True)
    assert table["verdict"].tolist() == ["ruled out", "cannot be ruled out"]
    flipped = frame.assign(low=-frame["high"], high=-frame["low"])
    assert claims.verdict_table(flipped, "L")["verdict"].tolist() == table["verdict"].tolist()


def test_summary_sentence_words_follow_the_verdicts():
    words = claims.candidate_verdicts("A", {"B": (-0.01, 0.04), "C": (0.02, 0.05)})
    text = claims.summary_sentence("A", words, "recall@10, 800 SQuAD questions")
    assert text.startswith("No winner (recall@10, 800 SQuAD questions)") and "ruled out: C" in text
    assert "winner" not in text.replace("No winner", "")
    won = claims.summary_sentence("A", claims.candidate_verdicts("A", {"B": (0.01, 0.04)}))
    assert won.startswith("**A** is the winner")


def test_probability_best_is_worded_with_its_calibration():
    calibration = pd.DataFrame({"band": ["0.8-0.9", "0.9-1.0", "0.8-0.9", "0.9-1.0"],
                                "share_correct": [0.55, 0.71, 0.80, 0.93]})
    assert claims.calibration_range(calibration, 0.917) == (0.71, 0.93)
    assert claims.calibration_range(calibration, 1.0) == (0.71, 0.93)
    assert claims.calibration_range(calibration, 0.85) == (0.55, 0.80)
    assert claims.calibration_range(calibration, 0.3) is None
    text = claims.probability_best_text(0.917, calibration)
    assert "91.7%" in text and "71–93%" in text and "overconfident" in text
    assert "not a calibrated probability" in claims.probability_best_text(0.6)


def test_multiplicity_expected_false_separations():
    assert claims.expected_false_separations(88) == pytest.approx(4.4)
    assert "about 4.4 would still exclude 0" in claims.multiplicity_text(88, 31)
    with pytest.raises(ValueError):
        claims.expected_false_separations(3, level=1.5)


def test_select_winner_uses_the_rule_on_its_own_intervals():
    rng = np.random.default_rng(3)
    scores = (rng.random((300, 3)) < [0.9, 0.87, 0.6]).astype(float)
    verdict = select_winner(scores, ["a", "b", "c"], resamples=4_000, seed=2)
    expected = claims.candidate_verdicts(verdict.leader, {n: (g.low, g.high)
                                                          for n, g in verdict.against_leader.items()})
    assert verdict.verdicts == expected
    assert (verdict.winner is None) == (expected[verdict.leader] != "winner")
    assert set(verdict.ruled_out) == {n for n, w in expected.items() if w == "ruled out"}
    frame = verdict.to_frame()
    assert frame.loc[verdict.leader, "status"] == expected[verdict.leader]


def test_questions_needed_ignores_float_noise_in_a_difference_of_means():
    from chunklab_core.stats.bootstrap import questions_needed

    # post 03: 0.945 - 0.9425 is stored as 0.0024999999999999467; the interval is +-0.015 around it
    assert questions_needed(800, 0.945 - 0.9425, (-0.012500000000000067, 0.01750000000000007)) == 28_800
