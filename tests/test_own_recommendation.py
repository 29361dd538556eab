"""The recommendation's at-k view, decided by the decision engine, on hand-made scores; where the
rule it replaces (``select_winner``) says otherwise, the report follows the engine."""

from __future__ import annotations

import numpy as np
import pandas as pd

from chunklab_core.decision.compare import DECIDED, EQUIVALENT, LEADER, RULED_OUT, compare
from chunklab_core.own.recommendation import box, describe, health_warnings, recommend, recommendation_table
from chunklab_core.stats.selection import select_winner


def _per_question(scores: dict[tuple[str, str, str], list[float]]) -> pd.DataFrame:
    rows = []
    for (strategy, retriever, model), values in scores.items():
        rows += [{"corpus": "own", "model": model, "strategy": strategy, "retriever": retriever,
                  "qid": f"q{i:02d}", "recall@5": v} for i, v in enumerate(values)]
    return pd.DataFrame(rows)


def _disagreeing_scores(n: int = 40) -> tuple[np.ndarray, np.ndarray]:
    """semantic_embedding (chunks with a model) scores 0.01 above fixed_500 on every question: the old
    rule calls it the winner (its interval [0.010, 0.010] clears 0), the engine calls the two equivalent
    within ±0.02 and picks the simpler fixed_500 (no model)."""
    simple = np.linspace(0.3, 0.7, n)
    return simple + 0.01, simple


def test_where_select_winner_and_the_engine_disagree_the_report_follows_the_engine():
    modelled, simple = _disagreeing_scores()
    old = select_winner(np.column_stack([modelled, simple]), ["Semantic", "Fixed"], resamples=1_000, seed=5)
    assert old.winner == "Semantic"  # the rule the report no longer uses
    scores = {("semantic_embedding", "bm25", "—"): modelled, ("fixed_500", "bm25", "—"): simple}
    recs = recommend(_per_question(scores), {}, pd.DataFrame({"strategy": []}), 5, 0.8, 1_000, 5)
    (rec,) = recs
    v = rec.verdict
    assert v.leader.startswith("Semantic") and v.leader != v.pick
    assert v.pick == "Fixed 500 chars" and v.words["Fixed 500 chars"] == EQUIVALENT and v.verdict == DECIDED
    lines = dict(box(recs, 5, 0.8))  # no runs given: no matched-cost decision, the at-k lines lead
    assert lines["use"].startswith("Fixed 500 chars (decided at recall@5")
    assert lines["verdict"].startswith("decided: use Fixed 500 chars (the leader is Semantic")
    assert "equivalent within ±0.02" in lines["verdict"] and "winner" not in " ".join(lines.values())
    row = recommendation_table(recs, 0.8).loc["bm25"]
    assert row["pick"] == "Fixed 500 chars" and row["verdict"] == DECIDED and row["ruled out"] == "none"
    record = rec.to_record(0.8)
    assert record["use"] == {"strategy": "fixed_500", "retriever": "bm25", "model": "—", "basis": "at k chunks",
                             "tokens": None}
    assert [c["status"] for c in record["candidates"]] == [LEADER, EQUIVALENT]
    assert describe(recs, 5, 0.8).startswith("**bm25** (recall@5): decided: use Fixed 500 chars")


def test_the_html_scope_table_shows_the_engine_words():
    from chunklab_core.own.html_report import scope_table

    modelled, simple = _disagreeing_scores()
    scores = {("semantic_embedding", "bm25", "—"): modelled, ("fixed_500", "bm25", "—"): simple}
    (rec,) = recommend(_per_question(scores), {}, pd.DataFrame({"strategy": []}), 5, 0.8, 1_000, 5)
    table = scope_table(rec, 5).set_index("candidate")
    assert table.loc["Fixed 500 chars", "decision"] == "equivalent (pick)"
    assert table.loc["Fixed 500 chars", "leader − candidate [95% CI]"] == "+0.010 [+0.010, +0.010]"
    assert "P(best)" not in table


def test_recommend_on_hand_made_scores_is_the_engine_per_scope():
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
    names = ["Fixed 500 chars", "Recursive 500 chars", "Fixed 1000 chars"]
    wide = pd.DataFrame(np.column_stack([strong, weak, middle]), columns=names)
    from chunklab_core.decision.candidates import simplicity

    cells = dict(zip(names, ["fixed_500", "recursive_500", "fixed_1000"]))
    expected = compare(wide, 2000, 11, simple=lambda n: simplicity(cells[n], float("nan")))
    bm25 = recs[0].verdict
    assert (bm25.leader, bm25.pick, bm25.words, bm25.verdict) == (expected.leader, expected.pick, expected.words,
                                                                  expected.verdict)
    assert bm25.words["Recursive 500 chars"] == RULED_OUT  # 0.95 against 0.40 on 40 questions
    dense = recs[1].verdict  # fixed_500 and recursive_500 equal on every question: a tie, the simpler picked
    assert dense.words["Recursive 500 chars"] in (LEADER, EQUIVALENT) and dense.words["Fixed 500 chars"] in (LEADER, EQUIVALENT)
    assert dense.pick == "Recursive 500 chars"  # one declared parameter to fixed_500's two
    overall = recs[-1]
    assert overall.verdict.leader == "Fixed 500 chars / bm25" and len(overall.verdict.names) == 6
    table = recommendation_table(recs, 0.8)
    assert list(table.index) == ["bm25", "dense", "overall"]
    assert np.isnan(table.loc["bm25", "pick's tokens at recall 0.80"])  # no runs given


def test_health_warnings_flag_fragments_and_truncation_only_above_thresholds():
    health = pd.DataFrame({"strategy": ["a", "b", "c"], "pct_fragments": [10.0, 10.5, None],
                           "share truncated": [0.0, None, 0.125]})
    assert health_warnings(health, ["a", "b", "c"]) == {
        "b": ["10% of chunks are fragments (under 200 characters)"],
        "c": ["12% of chunks are cut by the embedding model's length limit"],
    }


def test_answers_and_check_read_the_cell_the_record_says_to_use():
    from pathlib import Path

    from chunklab_core.own.answers import cells_from_recommendation
    from chunklab_core.own.check import leader_cell

    candidates = [{"candidate": "A / bm25", "strategy": "a", "retriever": "bm25", "model": "—", "status": "leader"},
                  {"candidate": "B / dense", "strategy": "b", "retriever": "dense", "model": "m", "status": "equivalent"},
                  {"candidate": "C / bm25", "strategy": "c", "retriever": "bm25", "model": "—", "status": "ruled out"}]
    record = {"recommendations": [{"scope": "overall", "leader": "A / bm25", "candidates": candidates,
                                   "use": {"strategy": "b", "retriever": "dense", "model": "m"}}]}
    assert cells_from_recommendation(record) == [("b", "dense", "m")]  # the engine's pick, not the at-k leader
    assert cells_from_recommendation(record, candidates=True) == [("b", "dense", "m"), ("a", "bm25", "—")]
    assert leader_cell(record, Path("r.json")) == ("b", "dense", "m")
    before = {"recommendations": [{"scope": "overall", "leader": "A / bm25", "candidates": candidates}]}
    assert cells_from_recommendation(before) == [("a", "bm25", "—")]  # a record written before "use"
    assert leader_cell(before, Path("r.json")) == ("a", "bm25", "—")
