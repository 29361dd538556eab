"""Reference grader: the rules of ``reference_grade`` on hand-made answers and golds."""

from __future__ import annotations

import math

import pytest

from chunklab_core.answers.reference_grader import reference_grade


@pytest.mark.parametrize(
    "answer, golds, label, reason_part",
    [
        ("the Denver Broncos", ["Denver Broncos"], "correct", "exact match"),
        ("The winner was the Denver Broncos.", ["Denver Broncos"], "correct", "contains gold"),
        ("Broncos won", ["Denver Broncos"], "partial", "token F1 0.50"),
        ("Carolina Panthers", ["Denver Broncos"], "wrong", "token F1 0.00"),
        ("About 1,500 people attended", ["1,200 people"], "wrong", "states 1,500"),
        ("Many people attended", ["1,200 people"], "wrong", "1,200 missing"),
        ("About 1,200 people attended", ["1,200 people"], "correct", "contains gold"),
        ("1200 people came", ["1,200 people"], "correct", "contains gold"),
        ("1,500 people", ["1,200 people"], "wrong", "states 1,500"),  # F1 0.5 alone: partial
        ("It cannot be determined from the context.", ["Denver"], "wrong", "abstained"),
        ("", ["Denver"], "wrong", "empty answer"),
        ("Carolina", ["Denver Broncos", "Carolina Panthers"], "partial", "token F1 0.67"),
    ],
)
def test_reference_grade(answer, golds, label, reason_part):
    verdict = reference_grade(answer, golds)
    assert verdict["label"] == label
    assert reason_part in verdict["reason"]


def test_number_check_precedes_exact_match():
    # SQuAD normalisation turns "12.00" into "1200": EM 1, yet the figure differs.
    verdict = reference_grade("1200", "12.00")
    assert verdict["exact_match"] == 1.0 and verdict["label"] == "wrong"


def test_reference_grade_picks_the_best_gold_and_reports_context_fields():
    context = "The Denver Broncos beat the Carolina Panthers 24-10 in 2016."
    verdict = reference_grade("Broncos, 24-10", ["Carolina", "Denver Broncos 24-10"], context)
    # "24-10" normalises to "2410": pred [broncos, 2410], gold [denver, broncos, 2410]
    # same 2, P 1, R 2/3, F1 0.8 -> partial against the second gold (first: F1 0, wrong)
    assert verdict["label"] == "partial" and verdict["gold"] == "Denver Broncos 24-10"
    assert verdict["f1"] == pytest.approx(0.8)
    assert verdict["grounding"] == 1.0 and verdict["unsupported_numbers"] == []
    assert "grounding" not in reference_grade("Broncos", "Broncos")
    abstained = reference_grade("I don't know.", "Broncos", context)
    assert abstained["grounding"] is None and abstained["label"] == "wrong"


def test_reference_grade_rejects_bad_input():
    with pytest.raises(ValueError, match="answer"):
        reference_grade(None, "x")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="golds"):
        reference_grade("x", [])


def test_labels_are_ordered_sensibly():
    # more of the gold never lowers the label
    ranks = {"wrong": 0, "partial": 1, "correct": 2}
    answers = ["Panthers", "Broncos", "Denver Broncos"]
    labels = [ranks[reference_grade(a, "Denver Broncos")["label"]] for a in answers]
    assert labels == sorted(labels) and not math.isclose(labels[0], labels[-1])


@pytest.mark.parametrize(
    "answer, gold, label",
    [("4", "four", "correct"), ("four", "4", "correct"), ("There were 4 of them", "four", "correct"),
     ("5", "four", "wrong"), ("twenty", "20", "correct")],
)
def test_reference_grader_reads_number_words(answer, gold, label):
    assert reference_grade(answer, [gold])["label"] == label
