"""decision.compare: one comparison decided as the engine decides one budget (hand-made fixtures)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from chunklab_core.decision import engine
from chunklab_core.decision.compare import (DECIDED, EQUIVALENT, LEADER, RULED_OUT, UNDECIDED, compare,
                                            document_clusters)
from chunklab_core.decision.margin import questions_to_settle


def _wide(columns: dict[str, np.ndarray]) -> pd.DataFrame:
    n = len(next(iter(columns.values())))
    return pd.DataFrame(columns, index=[f"q{i:03d}" for i in range(n)])


def test_a_constant_small_gap_is_equivalent_and_the_simplest_is_picked():
    base = np.linspace(0.2, 0.8, 50)
    # leader − other = 0.01 on every question: every resample gives [0.010, 0.010], inside ±0.02
    wide = _wide({"complex": base + 0.01, "simple": base})
    found = compare(wide, 500, 0, margin=0.02, simple=lambda n: (n != "simple",))
    assert found.leader == "complex" and found.pick == "simple"
    assert found.words == {"complex": LEADER, "simple": EQUIVALENT} and found.verdict == DECIDED
    iv = found.intervals["simple"]
    assert (iv["low"], iv["high"], iv["diff"]) == pytest.approx((0.01, 0.01, 0.01))
    assert found.equivalents == ["complex"] and found.what_would_decide is None


def test_a_gap_above_the_margin_rules_out_and_a_wide_interval_is_undecided():
    rng = np.random.default_rng(4)
    base = rng.random(60)
    noise = rng.normal(0, 0.3, 60)
    wide = _wide({"a": base + 0.2, "b": base, "c": base + 0.2 + noise})
    found = compare(wide, 2_000, 1, margin=0.02)
    assert found.words["b"] == RULED_OUT  # a − b = 0.2 on every question
    leader = found.leader
    other = "c" if leader == "a" else "a"
    assert found.words[other] == UNDECIDED and found.verdict == UNDECIDED
    iv = found.intervals[other]
    assert found.what_would_decide == questions_to_settle(60, iv["diff"], iv["low"], iv["high"], 0.02)


def test_identical_columns_are_a_tie_at_any_margin_and_go_to_the_simplest():
    col = np.array([1.0, 0.0, 1.0, 1.0, 0.0, 1.0])
    found = compare(_wide({"later": col, "first": col.copy()}), 300, 0, margin=0.0,
                    simple=lambda n: (n != "first",))
    assert found.leader == "first" == found.pick and found.words["later"] == EQUIVALENT


def test_compare_matches_the_engine_at_one_budget():
    """One matrix, two paths: decision.compare and engine.setting_table at one budget agree."""
    rng = np.random.default_rng(7)
    n = 40
    base = (rng.random(n) < 0.6).astype(float)
    scores = {"fixed_500": base, "recursive_500": np.where(rng.random(n) < 0.1, 1 - base, base),
              "fixed_1000": (rng.random(n) < 0.4).astype(float)}
    documents = [f"d{i // 4}" for i in range(n)]
    rows = []
    for strategy, values in scores.items():
        for i, v in enumerate(values):
            rows.append({"corpus": "own", "retriever": "bm25", "model": "—", "strategy": strategy, "qid": f"q{i:03d}",
                         "doc_id": documents[i], "budget": 1024, "recall": v, "token_recall": v,
                         "tokens_used": 100.0, "contexts_read": 1, "depth_binds": 0.0})
    table = engine.setting_table(pd.DataFrame(rows), None, None, 5, 1_000, 3, measure="containment",
                                 strategies=list(scores), margin=0.02)
    wide = _wide(scores)
    from chunklab_core.decision.candidates import simplicity

    found = compare(wide, 1_000, 3, margin=0.02, clusters=np.array(documents, dtype=object),
                    simple=lambda s: simplicity(s, 100.0))
    column = engine.margin_column("decision", 0.02)
    words = dict(zip(table["strategy"], table[column]))
    assert words == found.words
    assert table.loc[table[engine.margin_column("pick", 0.02)], "strategy"].tolist() == [found.pick]
    assert found.design == table["design"].iloc[0] == "documents (10)"
    for _, row in table[table["strategy"] != found.leader].iterrows():
        iv = found.intervals[row["strategy"]]
        assert (iv["low"], iv["high"], iv["question low"], iv["question high"]) == pytest.approx(
            (row["low"], row["high"], row["question low"], row["question high"]))


def test_questions_without_a_document_are_their_own_cluster():
    clusters = document_clusters(["a.md", "", None, float("nan"), "a.md"], ["q1", "q2", "q3", "q4", "q5"])
    assert list(clusters) == ["a.md", "question:q2", "question:q3", "question:q4", "a.md"]


def test_compare_refuses_what_it_cannot_decide():
    with pytest.raises(ValueError, match="two candidates"):
        compare(_wide({"a": np.ones(3)}), 100, 0)
    with pytest.raises(ValueError, match="every question"):
        compare(_wide({"a": np.array([1.0, np.nan]), "b": np.ones(2)}), 100, 0)


def test_post02_two_model_section_decides_by_the_engine():
    """Post 02's two-model comparison at k: the engine's pick and words, not select_winner's winner."""
    from chunklab_core.reports.post02 import prose, tables
    from chunklab_core.stats.selection import select_winner

    n = 40
    simple = np.linspace(0.3, 0.7, n)
    rows = []
    for model in ("m1", "m2"):
        for strategy, values in (("semantic_embedding", simple + 0.01), ("fixed_500", simple)):
            rows += [{"corpus": "squad", "model": model, "strategy": strategy, "retriever": "dense", "qid": f"q{i:02d}",
                      "doc_id": f"d{i // 4}", "recall@5": v, "tokens@5": 500.0} for i, v in enumerate(values)]
    per_question = pd.DataFrame(rows)
    assert select_winner(np.column_stack([simple + 0.01, simple]), resamples=500, seed=1).winner is not None
    _, compared = tables.compare_models(per_question, 5, ["m1", "m2"], 500, 1)
    (item,) = compared
    for verdict in item["verdicts"].values():
        assert verdict.pick == "Fixed 500 chars" and verdict.words["Fixed 500 chars"] == EQUIVALENT
        assert verdict.design == "documents (10)"
    text = prose.models_text(compared, ["m1", "m2"], {"squad": "SQuAD sample"})
    assert "the dense pick at k chunks is **Fixed 500 chars**" in text and "Winner" not in text
    assert "Decided: use Fixed 500 chars (the leader is Semantic" in text
