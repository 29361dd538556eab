"""The recommendation's wording against hand-made verdicts and intervals, and on hand-made scores."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from chunklab_core.own.recommendation import (Recommendation, describe, health_warnings, recommend,
                                              recommendation_table)
from chunklab_core.stats.selection import SelectionVerdict, select_winner
from chunklab_core.stats.bootstrap import Interval


def _verdict(names, probabilities, winner, candidates, ruled_out, diff: Interval, needed, n=40):
    probabilities = np.asarray(probabilities, dtype=float)
    return SelectionVerdict(
        names=list(names), means=np.linspace(0.9, 0.5, len(names)), probabilities=probabilities,
        share_at_least_leader=np.ones(len(names)), leader=names[0], winner=winner, candidates=list(candidates),
        ruled_out=list(ruled_out), confidence_set=list(candidates), top_two=(names[0], names[1]),
        top_two_difference=diff, questions_needed=needed, n_questions=n, resamples=1000, seed=7)


def _rec(verdict, tokens=150.0, k=2.0, warnings=()):
    cells = {name: (f"s{i}", "bm25", "—") for i, name in enumerate(verdict.names)}
    return Recommendation("bm25", verdict, cells, {verdict.leader: tokens}, {verdict.leader: k}, list(warnings))


def test_a_winner_whose_interval_excludes_zero_is_separated_already():
    verdict = _verdict(["A", "B", "C"], [0.95, 0.04, 0.01], "A", ["A", "B"], ["C"],
                       Interval(0.10, 0.04, 0.16), needed=41)
    row = _rec(verdict).row(0.8)
    assert row["leader"] == "A" and row["verdict"] == "winner" and row["P(best)"] == 0.95
    assert row["cannot be ruled out"] == "A, B" and row["ruled out"] == "C"
    assert row["questions to separate top two"] == "separated already"
    assert row["top two"] == "A − B: +0.100 [+0.040, +0.160]"
    assert row["leader's tokens at recall 0.80"] == 150.0 and row["warnings"] == "—"


def test_no_winner_with_an_interval_across_zero_gives_the_questions_needed():
    verdict = _verdict(["A", "B", "C", "D"], [0.5, 0.3, 0.15, 0.05], None, ["A", "B", "C", "D"], [],
                       Interval(0.02, -0.03, 0.07), needed=250)
    row = _rec(verdict, warnings=["A: 30% of chunks are fragments (under 200 characters)"]).row(0.9)
    assert row["verdict"] == "no winner" and row["cannot be ruled out"] == "all 4" and row["ruled out"] == "none"
    assert row["questions to separate top two"] == "about 250"
    assert row["warnings"] == "A: 30% of chunks are fragments (under 200 characters)"


@pytest.mark.parametrize("diff, needed, words", [
    (Interval(0.0, -0.05, 0.05), None, "none would (equal means)"),
    (Interval(0.001, -0.2, 0.2), None, "more than 100,000"),
])
def test_ties_and_hopeless_differences_are_worded(diff, needed, words):
    verdict = _verdict(["A", "B"], [0.5, 0.5], None, ["A", "B"], [], diff, needed)
    assert _rec(verdict).row(0.8)["questions to separate top two"] == words


def test_describe_uses_the_selection_headline_and_states_the_token_cost():
    verdict = _verdict(["A", "B", "C"], [0.95, 0.04, 0.01], "A", ["A", "B"], ["C"],
                       Interval(0.10, 0.04, 0.16), needed=41)
    text = describe([_rec(verdict, tokens=1234.4, k=3.0, warnings=["A: 12% of chunks are cut"])], 5, 0.8)
    assert text.startswith(f"**bm25** (recall@5): {verdict.headline()}")
    assert "the leader returns about 1,234 tokens per question (k = 3)" in text
    assert text.endswith("Chunk health: A: 12% of chunks are cut.")
    unreached = describe([_rec(verdict, tokens=np.nan)], 5, 0.8)
    assert "does not reach recall 0.80 within the top 10" in unreached


def _per_question(scores: dict[tuple[str, str, str], list[float]]) -> pd.DataFrame:
    rows = []
    for (strategy, retriever, model), values in scores.items():
        rows += [{"corpus": "own", "model": model, "strategy": strategy, "retriever": retriever,
                  "qid": f"q{i:02d}", "recall@5": v} for i, v in enumerate(values)]
    return pd.DataFrame(rows)


def test_recommend_on_hand_made_scores_matches_select_winner():
    rng = np.random.default_rng(3)
    strong = (rng.random(40) < 0.95).astype(float)
    weak = (rng.random(40) < 0.40).astype(float)
    middle = (rng.random(40) < 0.70).astype(float)
    scores = {("fixed_500", "bm25", "—"): strong, ("recursive_500", "bm25", "—"): weak,
              ("fixed_1000", "bm25", "—"): middle, ("fixed_500", "dense", "m"): middle,
              ("recursive_500", "dense", "m"): middle, ("fixed_1000", "dense", "m"): weak}
    health = pd.DataFrame({"strategy": ["fixed_500", "recursive_500", "fixed_1000"],
                           "pct_fragments": [2.0, 35.0, 0.0], "share truncated": [0.0, 0.0, 0.25]})
    recs = recommend(_per_question(scores), {}, health, 5, 0.8, 2000, 11)
    assert [r.scope for r in recs] == ["bm25", "dense", "overall"]
    expected = select_winner(np.column_stack([strong, weak, middle]), ["Fixed 500 chars", "Recursive 500 chars", "Fixed 1000 chars"],
                             resamples=2000, seed=11)
    bm25 = recs[0].verdict
    assert bm25.leader == expected.leader == "Fixed 500 chars"
    np.testing.assert_array_equal(bm25.probabilities, expected.probabilities)
    assert bm25.ruled_out == expected.ruled_out and bm25.candidates == expected.candidates
    overall = recs[-1]
    assert overall.verdict.leader == "Fixed 500 chars / bm25" and len(overall.verdict.names) == 6
    table = recommendation_table(recs, 0.8)
    assert list(table.index) == ["bm25", "dense", "overall"]
    assert np.isnan(table.loc["bm25", "leader's tokens at recall 0.80"])  # no runs given


def test_health_warnings_flag_fragments_and_truncation_only_above_thresholds():
    health = pd.DataFrame({"strategy": ["a", "b", "c"], "pct_fragments": [10.0, 10.5, None],
                           "share truncated": [0.0, None, 0.125]})
    assert health_warnings(health, ["a", "b", "c"]) == {
        "b": ["10% of chunks are fragments (under 200 characters)"],
        "c": ["12% of chunks are cut by the embedding model's length limit"],
    }
