"""Post 05's study runner with scripted models: rows, costs, replay with no model, partial runs."""

from __future__ import annotations

import pandas as pd
import pytest

from chunklab_core.answers.study import build_items, judge_columns, load_study, process_item
from tiny_study import STRATEGIES, scripted_models, tiny_corpus


def test_items_come_in_random_question_order_with_every_strategy_together():
    items = build_items(tiny_corpus(), STRATEGIES, 3, seed=1)
    qids = [item.qid for item in items]
    assert [item.strategy for item in items[:2]] == STRATEGIES
    assert qids[0] == qids[1] and qids[2] == qids[3]
    assert sorted(set(qids)) == ["q0", "q1", "q2"]
    assert build_items(tiny_corpus(), STRATEGIES, 3, seed=1) == items
    with pytest.raises(ValueError, match="n_questions"):
        build_items(tiny_corpus(), STRATEGIES, 4, seed=1)


def test_process_item_rows_and_costs(tmp_path):
    models = scripted_models(tmp_path)
    item = next(i for i in build_items(tiny_corpus(), STRATEGIES, 3, seed=1) if i.qid == "q0")
    row = process_item(item, models, yes_no_judges=("big",))
    assert row["answer"] == "Paris" and row["reference_grader"] == "correct"
    assert (row["judge_big_3way"], row["judge_big_yesno"], row["judge_small_3way"]) == ("correct", "YES", "correct")
    assert "judge_small_yesno" not in row
    assert row["cost_answers_big_calls"] == 1 and row["cost_judges_big_calls"] == 2
    assert row["cost_judges_small_calls"] == 1
    assert judge_columns(models, ("big",)) == ["judge_big_3way", "judge_big_yesno", "judge_small_3way"]


def test_replay_gives_identical_table_without_any_model(tmp_path):
    corpora = {"tiny": (tiny_corpus(), 3)}
    recorded = load_study(corpora, STRATEGIES, 7, scripted_models(tmp_path), yes_no_judges=("big",))
    replayed = load_study(corpora, STRATEGIES, 7, scripted_models(tmp_path, "replay", fail=True),
                          yes_no_judges=("big",))
    pd.testing.assert_frame_equal(recorded.table, replayed.table)
    assert replayed.coverage.to_dict("records") == [
        {"corpus": "tiny", "questions_planned": 3, "questions_recorded": 3, "items": 6}]
    # the abstention and the wrong answer stay in the table, graded wrong
    assert set(replayed.table["reference_grader"]) == {"correct", "wrong"}


def test_partial_run_keeps_only_complete_questions(tmp_path):
    corpora = {"tiny": (tiny_corpus(), 3)}
    items = build_items(tiny_corpus(), STRATEGIES, 3, seed=7)
    models = scripted_models(tmp_path)
    for item in items[:3]:  # the first question whole, the second one half done
        process_item(item, models, ("big",))
    replayed = load_study(corpora, STRATEGIES, 7, scripted_models(tmp_path, "replay", fail=True), ("big",))
    assert replayed.coverage["questions_recorded"].tolist() == [1]
    assert replayed.coverage["corpus"].tolist() == ["tiny"]  # not a model's name
    assert replayed.table["qid"].tolist() == [items[0].qid] * 2
    # the half-done question's calls are not counted in the cost
    assert (replayed.calls["stage"] == "answers_big").sum() == 2
