"""Judge reliability probes: inputs built from gold answers, verdict summary on hand fixtures."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from chunklab_core.llm.wiring import MeteredLLM
from chunklab_core.core.corpus import Corpus, Document, Question
from chunklab_core.answers.probes import (FILLER, alter_number, probe_inputs, probe_summary,
                                        run_probes)
from chunklab_core.llm.records import CallStore, RecordedLLM
from chunklab_core.llm.testing import ScriptedLLM


@pytest.mark.parametrize("text, expected", [("1995", "1998"), ("7 km", "0 km"),
                                            ("in 1066 and 1215", "in 1069 and 1215"),
                                            ("$2.5 million", "$5.5 million")])
def test_alter_number_changes_the_first_number_only(text, expected):
    assert alter_number(text) == expected


def test_alter_number_needs_a_digit():
    with pytest.raises(ValueError, match="no number"):
        alter_number("Paris")


def _corpus() -> Corpus:
    docs = [Document("d", "x")]
    questions = [Question(f"q{i}", f"When {i}?", "d", ((str(1900 + i),),), answers=(str(1900 + i),))
                 for i in range(5)]
    questions.append(Question("qa", "Who?", "d", (("Ann",),), answers=("Ann",)))
    return Corpus("c", docs, questions)


def test_probe_inputs_four_per_numeric_question_and_seeded():
    inputs = probe_inputs(_corpus(), 3, seed=2)
    assert [i.probe for i in inputs[:4]] == ["plain", "padded", "wrong_figure", "retest"]
    assert len(inputs) == 12 and "qa" not in {i.qid for i in inputs}
    plain, padded, wrong, retest = inputs[:4]
    assert padded.answer == plain.answer + FILLER and retest.answer == plain.answer
    assert wrong.answer != plain.answer and wrong.expected == "wrong"
    assert probe_inputs(_corpus(), 3, seed=2) == inputs
    with pytest.raises(ValueError, match=r"\[1, 5\]"):
        probe_inputs(_corpus(), 6, seed=2)


def test_retest_is_a_fresh_call_not_a_replay(tmp_path):
    backend = ScriptedLLM(lambda m, s, o: json.dumps({"verdict": "correct" if "YES" not in json.dumps(s) else "YES"}))
    models = {"answerer": None,
              "big": MeteredLLM(RecordedLLM(backend, CallStore.for_stage("judges_big", tmp_path)))}
    verdicts = run_probes(probe_inputs(_corpus(), 1, seed=0), models, ("big",), progress=False)
    assert len(backend.calls) == 8  # 4 probes x (three-way + yes/no), retest not served from records
    assert set(verdicts["judge"]) == {"big_3way", "big_yesno"}


def test_probe_summary_by_hand():
    rows = []
    labels = {  # judge j: q0 plain correct, padded wrong (flip), wrong figure correct (missed), retest same
        "q0": {"plain": "correct", "padded": "wrong", "wrong_figure": "correct", "retest": "correct"},
        "q1": {"plain": "correct", "padded": "correct", "wrong_figure": "wrong", "retest": "unparsed"},
    }
    for qid, by_probe in labels.items():
        for probe, label in by_probe.items():
            rows.append({"probe": probe, "qid": qid, "judge": "j_3way", "label": label,
                         "expected": "wrong" if probe == "wrong_figure" else "correct"})
    summary = probe_summary(pd.DataFrame(rows)).iloc[0]
    assert summary["n"] == 2 and summary["plain_pass"] == 1.0
    assert summary["padded_flip"] == 0.5 and summary["wrong_figure_caught"] == 0.5
    assert summary["retest_changed"] == 0.5 and summary["unparsed"] == 1
