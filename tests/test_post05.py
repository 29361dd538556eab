"""Post 05's section functions on a hand-built study table."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score

from chunklab_core.reports.post05 import tables as post05, drift as post05_drift, judges as post05_judges
from chunklab_core.answers.study import StudyTable
from chunklab_core.answers.verdicts import pass_or_fail, passed
from chunklab_core.audit.draw import _paragraph_around


def _study() -> StudyTable:
    rows = []
    # 4 questions x 2 strategies; reference grader and two judges
    spec = {  # (qid, strategy): (retrieved, reference, 3way, yesno, answer, contexts)
        ("q0", "fixed_500"): (True, "correct", "correct", "YES", "Paris", ["Paris is the capital."]),
        ("q0", "fixed_1000"): (True, "correct", "correct", "YES", "Paris", ["Paris is the capital."]),
        ("q1", "fixed_500"): (True, "wrong", "wrong", "NO", "Lyon", ["Paris is the capital."]),
        ("q1", "fixed_1000"): (False, "correct", "partial", "YES", "Everest", ["the Ever", "est massif"]),
        ("q2", "fixed_500"): (False, "wrong", "unparsed", "NO", "not in the context", ["nothing"]),
        ("q2", "fixed_1000"): (True, "partial", "correct", "YES", "in 1998 the", ["in 1999 the"]),
        ("q3", "fixed_500"): (False, "correct", "correct", "YES", "Ann", ["Bob met someone."]),
        ("q3", "fixed_1000"): (True, "correct", "wrong", "NO", "Ann", ["Ann met Bob."]),
    }
    golds = {"q0": ["Paris"], "q1": ["Everest"], "q2": ["in 1999"], "q3": ["Ann"]}
    for (qid, strategy), (retrieved, ref, three, yesno, answer, contexts) in spec.items():
        rows.append({"item_id": f"{qid}|{strategy}", "corpus": "c", "qid": qid, "strategy": strategy,
                     "question": f"question {qid}", "reference": golds[qid][0], "answer": answer,
                     "passage_retrieved": retrieved, "reference_grader": ref,
                     "judge_qwen15_3way": three, "judge_qwen15_yesno": yesno,
                     "reference_reason": "r", "golds": golds[qid], "contexts": contexts,
                     "cost_answers_x_seconds": 2.0, "cost_answers_x_tokens_in": 10,
                     "cost_answers_x_calls": 1})
    calls = pd.DataFrame({"stage": ["answers_x", "answers_x", "judges_x"], "tokens_in": [10, 20, 5],
                          "tokens_out": [1, 3, 1], "seconds": [2.0, 4.0, 1.0]})
    return StudyTable(pd.DataFrame(rows), pd.DataFrame(), calls)


def test_passed_counts_unparsed_and_partial_as_not_passed():
    table = _study().table
    assert passed(table["judge_qwen15_3way"]).tolist() == [1, 1, 0, 0, 0, 1, 1, 0]
    assert passed(table["judge_qwen15_yesno"]).sum() == 5


def test_answer_table_shares():
    answers = post05.answer_table(_study(), resamples=200, seed=0).set_index(["strategy", "measure"])
    assert answers.loc[("Fixed 500 chars", "rule-based reference grader"), "share"] == 0.5
    assert answers.loc[("Fixed 1000 chars", "passage retrieved"), "share"] == 0.75
    assert (answers["low"] <= answers["share"]).all() and (answers["share"] <= answers["high"]).all()


def test_intervals_resample_documents():
    study = _study()
    study.table["doc_id"] = study.table["qid"].map({"q0": "a", "q1": "a", "q2": "b", "q3": "b"})
    assert post05.clusters(study.table).tolist()[:3] == ["c|a", "c|a", "c|a"]
    with pytest.warns(UserWarning, match="only 2 documents"):
        answers = post05.answer_table(study, resamples=300, seed=0).set_index(["strategy", "measure"])
    # Fixed 500, reference grader: article a = (q0 correct, q1 wrong), article b = (q2 wrong,
    # q3 correct); every resample of whole articles passes half its answers
    row = answers.loc[("Fixed 500 chars", "rule-based reference grader")]
    assert (row["share"], row["low"], row["high"], row["documents"]) == (0.5, 0.5, 0.5, 2)
    # resampling the four questions instead would give a wide interval
    assert post05.answer_table(_study(), resamples=300, seed=0).set_index(
        ["strategy", "measure"]).loc[("Fixed 500 chars", "rule-based reference grader"), "low"] < 0.25


def test_clustering_effect_compares_question_and_document_resampling():
    study = _study()
    effect = post05.clustering_effect(study, resamples=300, seed=0)
    # without doc_id every question is its own cluster: both intervals are the same
    assert (effect["width_ratio"].round(12) == 1.0).all() and (effect["n_documents"] == 4).all()
    study.table["doc_id"] = study.table["qid"].map({"q0": "a", "q1": "a", "q2": "b", "q3": "b"})
    with pytest.warns(UserWarning):
        effect = post05.clustering_effect(study, resamples=300, seed=0).set_index("strategy")
    row = effect.loc["Fixed 500 chars"]  # articles pass 1/2 and 1/2: the clustered interval collapses
    assert (row["clustered_low"], row["clustered_high"], row["n_documents"]) == (0.5, 0.5, 2)
    assert row["plain_low"] < 0.5 < row["plain_high"] and row["width_ratio"] == 0.0
    text = post05.clustering_text(effect.reset_index())
    assert "4 questions from 2 documents" in text and "times as wide" in text
    assert "noise" in text  # a ratio of 0 (collapsed interval) is flagged as noise, not as a gain


def test_strategy_differences_are_paired():
    diff = post05.strategy_differences(_study(), resamples=500, seed=0).iloc[0]
    assert diff["questions"] == 4 and diff["A - B"] == pytest.approx(0.5 - 0.75)
    assert not diff["separated"]
    # an interval of half-width h at n questions shrinks to |diff| at n * (h / |diff|)**2
    half = (diff["high"] - diff["low"]) / 2
    assert diff["questions needed"] == max(5, int(np.ceil(round(4 * (half / 0.25) ** 2, 9))))


def test_generation_metrics_leave_unmeasured_out():
    row = post05.generation_metrics_row("not in the context", ["x"], ["ctx"])
    assert row["f1"] is None and row["exact_match"] is None and row["grounding"] is None
    assert row["abstained"] == 1.0
    row = post05.generation_metrics_row("in 1998 the", ["in 1999"], ["in 1999 the"])
    assert row["unsupported_number_rate"] == 1.0 and row["exact_match"] == 0.0
    table = post05.generation_metrics(_study()).set_index("strategy")
    assert table.loc["Fixed 500 chars", "n_f1"] == 3 and table.loc["Fixed 500 chars", "abstained"] == 0.25
    assert table.loc["Fixed 500 chars", "n_unsupported_number_rate"] == 0
    assert table.loc["Fixed 500 chars", "unsupported_number_rate"] is None


def test_split_answers_and_drift_counts():
    assert post05_drift.gold_split_across_contexts(["Everest"], ["the Ever", "est massif"]) is False  # no space join
    assert post05_drift.gold_split_across_contexts(["Mount Everest"], ["at Mount", "Everest stands"])
    assert not post05_drift.gold_split_across_contexts(["Everest"], ["Everest", "x"])
    assert post05_drift.gold_words_present(["in 1999"], ["1999 and in"]) == 1.0
    drift = post05_drift.drift(_study()).set_index("strategy")
    assert drift.loc["Fixed 500 chars", "retrieved_wrong"] == 1  # q1
    assert drift.loc["Fixed 500 chars", "right_without_passage"] == 1  # q3
    assert drift.loc["Fixed 500 chars", "not_in_contexts"] == 1
    assert drift.loc["Fixed 1000 chars", "retrieved_wrong"] == 1  # q2 partial counts as not passed
    examples = post05_drift.drift_examples(_study(), "retrieved_wrong", n=5)
    assert len(examples) == 2 and set(examples["question"]) == {"question q1", "question q2"}
    assert list(examples.columns[-2:]) == ["1.5B three-way judge", "1.5B YES/NO judge"]  # display names
    assert examples["1.5B three-way judge"].tolist() == ["wrong", "correct"]


def test_probe_failures_and_reading_name_the_judges():
    from chunklab_core.reports.post05.claims import probe_intervals, reading

    verdicts = pd.DataFrame({"judge": ["qwen15_3way", "qwen05_3way"], "probe": "wrong_figure",
                             "question": "q", "reference": "1999", "answer": "1998",
                             "label": ["correct", "wrong"], "expected": "wrong"})
    failures = post05_judges.probe_failures(verdicts)
    assert failures["judge"].tolist() == ["1.5B three-way judge"]  # the key qwen15_3way, displayed
    assert verdicts["judge"].tolist() == ["qwen15_3way", "qwen05_3way"]  # the keys themselves unchanged
    summary = pd.DataFrame([{"judge": "qwen05_3way", "n": 24, "plain_pass": 1.0, "padded_flip": 0.0,
                             "wrong_figure_caught": 0.625, "retest_changed": 0.0, "unparsed": 0}])
    coverage = pd.DataFrame({"corpus": ["nq"], "questions_recorded": [12], "questions_planned": [12],
                             "items": [36]})
    agreement = pd.DataFrame({"grader A": "rule-based reference grader", "grader B": "1.5B YES/NO judge",
                              "scale": "pass/fail", "items": [36], "agree": [30], "percent agreement": [0.83],
                              "kappa": [0.6], "low": [0.4], "high": [0.8]})
    text = reading(coverage, pd.DataFrame({"corpus": []}), pd.DataFrame(), agreement, probe_intervals(summary))
    assert "- 1.5B YES/NO judge against the rule-based reference grader (pass/fail, all corpora): 30 of 36" in text
    assert "- Probes, 0.5B three-way judge (n = 24 SQuAD questions each)" in text


def test_agreement_table_matches_sklearn():
    table = _study().table
    agreement = post05_judges.agreement_table(table, resamples=200, seed=0)
    row = agreement[(agreement["grader B"] == "1.5B three-way judge") & (agreement["scale"] == "three-way")].iloc[0]
    assert row["kappa"] == pytest.approx(cohen_kappa_score(table["reference_grader"], table["judge_qwen15_3way"]))
    assert row["agree"] == 4 and row["items"] == 8
    binary = agreement[(agreement["grader B"] == "1.5B YES/NO judge")].iloc[0]
    assert binary["scale"] == "pass/fail"
    expected = cohen_kappa_score(pass_or_fail(table["reference_grader"]),
                                 pass_or_fail(table["judge_qwen15_yesno"]))
    assert binary["kappa"] == pytest.approx(expected)


def test_cost_per_stage_over_distinct_calls():
    cost = post05.cost_per_stage(_study()).set_index("stage")
    assert cost.loc["answers_x", "calls"] == 2 and cost.loc["answers_x", "seconds_per_call"] == 3.0
    assert cost.loc["judges_x", "seconds_total"] == 1.0


def test_paragraph_around_stays_inside_the_paragraph():
    text = "first para.\n\nThe answer is here.\nnext line"
    start = text.index("answer")
    assert _paragraph_around(text, start, start + 6) == "The answer is here."


def test_judge_pair_confusions_cover_every_pair_of_llm_judges():
    tables = post05_judges.judge_pair_confusions(_study().table)
    assert len(tables) == 1  # two LLM judges -> one pair
    table = tables[0]
    assert table.to_numpy().sum() == 8
    assert table.loc["correct", "YES"] == 4 and table.loc["partial", "YES"] == 1


# ---------------------------------------------------------------- post05_claims (issue 14)
def test_wilson_interval_matches_a_hand_computation():
    from chunklab_core.reports.post05.claims import wilson_interval

    # Wilson (1927): 24 of 24 at 95%: low = n / (n + z^2) with z = 1.959964 -> 24 / 27.8415 = 0.8620
    low, high = wilson_interval(24, 24)
    assert low == pytest.approx(24 / (24 + 1.959964**2), abs=1e-4) and high == pytest.approx(1.0)
    with pytest.raises(ValueError):
        wilson_interval(5, 3)


def test_probe_intervals_are_k_of_n():
    from chunklab_core.reports.post05.claims import probe_intervals

    summary = pd.DataFrame([{"judge": "qwen05_3way", "n": 24, "plain_pass": 1.0, "padded_flip": 0.0,
                             "wrong_figure_caught": 0.625, "retest_changed": 0.0, "unparsed": 0}])
    table = probe_intervals(summary)
    caught = table[table["probe"] == "catches a wrong figure"].iloc[0]
    assert (caught["k"], caught["n"]) == (15, 24) and caught["low"] < 0.625 < caught["high"]


def test_reading_words_follow_the_paired_intervals():
    from chunklab_core.reports.post05.claims import corpus_reading

    answers = pd.DataFrame({"corpus": "nq", "strategy": ["A", "B"], "measure": "rule-based reference grader",
                            "questions": 12, "documents": 11, "share": [0.33, 0.25], "low": [0.08, 0.0],
                            "high": [0.64, 0.5]})
    tied = pd.DataFrame({"corpus": ["nq"], "strategy A": ["A"], "strategy B": ["B"], "questions": [12],
                         "A - B": [0.0], "low": [0.0], "high": [0.0], "separated": [False],
                         "questions needed": [None]})
    text = corpus_reading("nq", answers, tied, "rule-based reference grader")
    assert "cannot be told apart" in text and "too small to say anything" in text and "most" not in text
    assert text.startswith("- **Natural Questions, 12 questions from 11 pages**: the rule-based reference grader passes")
    apart = tied.assign(**{"A - B": [0.08], "low": [0.02], "high": [0.15], "separated": [True]})
    assert "A ahead" in corpus_reading("nq", answers, apart, "rule-based reference grader")
