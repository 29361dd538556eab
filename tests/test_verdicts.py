"""The one verdict vocabulary (chunklab_core.answers.verdicts), on hand-made labels."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import confusion_matrix

from chunklab_core.answers import verdicts as v
from chunklab_core.llm.judges import THREE_WAY_LABELS, UNPARSED, YES_NO_LABELS
from chunklab_core.stats.agreement import confusion_table

# label -> (passes, passes leniently, pass_fail, binary label, lenient binary label, pass_or_fail)
EVERY_LABEL = {
    "correct": (True, True, "pass", "correct", "correct", "pass"),
    "partial": (False, True, "fail", "not correct", "correct", "fail"),
    "wrong": (False, False, "fail", "not correct", "not correct", "fail"),
    "YES": (True, True, "pass", "correct", "correct", "pass"),
    "NO": (False, False, "fail", "not correct", "not correct", "fail"),
    "unparsed": (False, False, "unparsed", "unparsed", "unparsed", "fail"),
}


def test_the_scales_are_built_on_the_judges_parse_labels():
    assert v.THREE_WAY == ("correct", "partial", "wrong", "unparsed") == (*THREE_WAY_LABELS, UNPARSED)
    assert v.YES_NO == ("YES", "NO", "unparsed") == (*YES_NO_LABELS, UNPARSED)
    assert v.GRADE_LABELS == ("correct", "partial", "wrong")
    assert v.BINARY == ("correct", "not correct", "unparsed") and v.BINARY_GRADES == v.BINARY[:2]
    assert set(EVERY_LABEL) == set(v.THREE_WAY) | set(v.YES_NO)  # the fixture covers every label


@pytest.mark.parametrize("label", list(EVERY_LABEL))
def test_pass_and_fail_of_every_label(label):
    passes, lenient, pass_fail, binary, lenient_binary, pass_or_fail = EVERY_LABEL[label]
    assert v.passes(label) is passes
    assert v.passes(label, lenient=True) is lenient
    assert v.pass_fail(label) == pass_fail
    assert list(v.binary_labels([label])) == [binary]
    assert list(v.binary_labels([label], lenient=True)) == [lenient_binary]
    assert list(v.binary_scores([label])) == [float(binary == "correct")]
    assert list(v.passed([label])) == [float(passes)]
    assert list(v.pass_or_fail([label])) == [pass_or_fail]


def test_mappings_of_a_column_keep_order_and_length():
    labels = ["correct", "partial", "wrong", "unparsed", "YES", "NO"]
    assert list(v.binary_labels(labels)) == ["correct", "not correct", "not correct", "unparsed",
                                             "correct", "not correct"]
    assert list(v.binary_scores(labels, lenient=True)) == [1, 1, 0, 0, 1, 0]
    assert v.passed(pd.Series(labels)).tolist() == [1, 0, 0, 0, 1, 0]
    assert v.pass_or_fail(np.array(labels, dtype=object)).tolist() == ["pass", "fail", "fail", "fail",
                                                                      "pass", "fail"]


def test_labels_outside_the_vocabulary():
    with pytest.raises(ValueError, match="unknown verdict"):
        v.binary_labels(["correct", "maybe"])
    assert v.pass_fail("missing") == "missing"  # a stratum keeps it as a pattern of its own
    assert v.passed(["maybe", None, np.nan]).tolist() == [0, 0, 0]  # never a pass


def test_scale_of_a_column():
    assert v.scale_of("judge_qwen15_yesno") is v.YES_NO and v.scale_of("judge_qwen15_3way") is v.THREE_WAY
    assert v.scale_of("reference_grader") is v.THREE_WAY
    assert v.scale_of("judge_x_3way", yesno_columns=("judge_x_3way",)) is v.YES_NO  # named explicitly
    assert v.scale_of("judge_qwen15_yesno", yesno_columns=()) is v.THREE_WAY


def test_display_names():
    assert v.grader_name("reference_grader") == "rule-based reference grader" == v.REFERENCE_NAME
    assert v.grader_name("judge_qwen15_3way") == "1.5B three-way judge"
    assert v.grader_name("judge_qwen15_yesno") == "1.5B YES/NO judge"
    assert v.grader_name("judge_qwen05_3way") == "0.5B three-way judge"
    assert v.grader_name("judge_gpt_oss_3way") == "gpt_oss three-way judge"  # an Ollama judge
    assert v.grader_name("judge_gptoss_attempts") == "judge_gptoss_attempts"
    for key in ("answers_qwen15", "qwen15", "strategy"):  # not a grader's key: unchanged
        assert v.grader_name(key) == key


def test_probe_keys_get_the_same_names_as_verdict_columns():
    """data/05_probes.csv keys its judges ``qwen15_3way``; they read as the verdict columns do."""
    for key in ("qwen15_3way", "qwen15_yesno", "qwen05_3way"):
        assert v.grader_name(key) == v.grader_name("judge_" + key)
    assert v.grader_name("qwen05_3way") == "0.5B three-way judge"


def test_no_display_name_holds_a_comma_or_a_parenthesis():
    """A name sits in comma-separated lists and before a parenthesis in the prose."""
    names = [v.grader_name(c) for c in ("reference_grader", "judge_qwen15_3way", "judge_qwen15_yesno",
                                        "judge_qwen05_3way", "qwen15_3way", "judge_gptoss_yesno")]
    assert len(set(names)) == 5
    for name in names:
        assert not set(name) & set(",()"), name


def test_sentence_start_capitalises_only_the_first_character():
    assert v.sentence_start(v.REFERENCE_NAME + " alone says") == "Rule-based reference grader alone says"
    assert v.sentence_start("the 1.5B YES/NO judge") == "The 1.5B YES/NO judge"
    assert v.sentence_start("1.5B three-way judge") == "1.5B three-way judge"
    assert v.sentence_start("") == ""


JUDGE = ["correct", "partial", "wrong", "unparsed", "correct", "correct", "wrong", "partial", "wrong"]
GRADE = ["correct", "wrong", "wrong", "correct", "partial", "correct", "wrong", "partial", "correct"]


def test_square_confusion_table_matches_sklearn():
    table = v.verdict_confusion(JUDGE, GRADE, v.THREE_WAY, v.THREE_WAY, ("judge", "grade"))
    # sklearn's rows are its first argument (y_true), as ours are a's
    np.testing.assert_array_equal(table.to_numpy(), confusion_matrix(JUDGE, GRADE, labels=list(v.THREE_WAY)))
    assert list(table.index) == list(v.THREE_WAY) and list(table.columns) == list(v.THREE_WAY)
    assert (table.index.name, table.columns.name) == ("judge", "grade")
    # by hand: judge correct / grade correct twice (items 0 and 5), judge wrong / grade correct once
    assert table.loc["correct", "correct"] == 2 and table.loc["wrong", "correct"] == 1
    assert table.loc["unparsed"].sum() == 1 and table.to_numpy().sum() == len(JUDGE)


def test_rectangular_confusion_table_matches_sklearn():
    judge = ["YES", "NO", "YES", "unparsed", "NO", "YES"]
    grade = ["correct", "wrong", "partial", "correct", "correct", "correct"]
    table = v.verdict_confusion(judge, grade, v.YES_NO, v.GRADE_LABELS)
    union = [*v.YES_NO, *v.GRADE_LABELS]
    full = confusion_matrix(judge, grade, labels=union)
    np.testing.assert_array_equal(table.to_numpy(), full[:len(v.YES_NO), len(v.YES_NO):])
    assert table.shape == (3, 3) and table.loc["NO", "partial"] == 0  # zeros kept
    assert table.loc["YES", "correct"] == 2


def test_confusion_table_never_drops_a_label():
    with pytest.raises(ValueError, match="not in labels"):
        v.verdict_confusion(["YES", "correct"], ["correct", "wrong"], v.YES_NO, v.GRADE_LABELS)
    with pytest.raises(ValueError, match="one label per item"):
        confusion_table(["YES"], ["correct", "wrong"], list(v.YES_NO), column_labels=list(v.GRADE_LABELS))
