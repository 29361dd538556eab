"""``chunklab-own answers`` and ``chunklab-own audit`` on ``examples/own_docs`` with the scripted test backend.

The backend is ``chunklab_core.llm.testing.ScriptedLLM`` (no model): the tests pin the logic --
the reference from every gold slot, records in the output folder, resuming, a replay that never
touches a model, the accuracy table against a hand count and ``scipy.stats.bootstrap``, and the
audit computed by the very functions post 06 calls, with the grader's identity and kind.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import bootstrap

from chunklab_core.answers.reference_grader import reference_grade
from chunklab_core.llm import wiring
from chunklab_core.llm.testing import ScriptedLLM
from chunklab_core.own import answers as own_answers
from chunklab_core.own import answers_report
from chunklab_core.own.cli import main

ROOT = Path(__file__).resolve().parents[1]
DOCS, QUESTIONS = ROOT / "examples" / "own_docs", ROOT / "examples" / "own_docs" / "questions.yaml"


def reply(messages, schema, options):
    """Answers quote the first context's first words; judges cycle through their labels by prompt length."""
    if schema is None:
        return messages[-1]["content"].split("[1]", 1)[-1].split()[0] if "[1]" in messages[-1]["content"] else "no"
    key = next(iter(schema["properties"]))
    labels = schema["properties"][key]["enum"]
    return json.dumps({key: labels[len(messages[-1]["content"]) % len(labels)]})


@pytest.fixture
def scripted(monkeypatch):
    made = []

    def make_backend(backend, model, *args, **kwargs):
        made.append(ScriptedLLM(reply, model=model))
        return made[-1]

    monkeypatch.setattr(wiring, "make_backend", make_backend)
    return made


def run_answers(out, *extra):
    return main(["answers", str(DOCS), str(QUESTIONS), "--cell", "fixed_500/bm25", "--cell", "recursive_500/bm25",
                 "--out", str(out), "--no-progress", "--resamples", "2000", *extra])


def test_reference_is_every_gold_slot():
    slots = (("every thirty seconds",), ("one blast of three seconds", "blast of three seconds"))
    text = own_answers.reference_text(slots)
    assert text == "every thirty seconds AND one blast of three seconds OR blast of three seconds"
    assert own_answers.reference_terms(text) == ["every thirty seconds", "one blast of three seconds",
                                                 "blast of three seconds"]
    assert own_answers.reference_text((("Adult | 8 euros",),)) == "Adult | 8 euros"  # a table row stays whole


def test_slots_grade_rule():
    slots = (("thirty seconds",), ("three seconds",))
    assert own_answers.slots_grade("every thirty seconds, for three seconds", slots)["label"] == "correct"
    assert own_answers.slots_grade("every thirty seconds", slots)["label"] == "partial"
    assert own_answers.slots_grade("at dawn", slots)["label"] == "wrong"
    one = (("Margaret Ellery",),)
    for answer in ("Margaret Ellery", "Ellery", "nobody"):  # one slot: the reference grader itself
        assert own_answers.slots_grade(answer, one)["label"] == reference_grade(answer, ["Margaret Ellery"])["label"]


def test_answers_end_to_end_records_resume_and_replay(tmp_path, scripted, capsys):
    out = tmp_path / "answers"
    assert run_answers(out, "--questions", "4") == 0
    first = json.loads((out / "answers.json").read_text())
    assert first["complete_questions"] == 4 and first["answers"] == 8
    assert sorted(p.name for p in (out / "records").iterdir()) == ["answers_qwen05.jsonl", "judges_qwen05.jsonl"]
    assert run_answers(out) == 0  # resumes: the first 4 questions come from the records
    full = json.loads((out / "answers.json").read_text())
    assert full["complete_questions"] == 9 and full["answers"] == 18
    assert full["new_calls"] < 18 * 3  # fewer than every call again
    table = pd.read_csv(out / "answers.csv", keep_default_na=False)
    fog = table[table["qid"] == "fog-horn"].iloc[0]
    assert fog["reference"] == "every thirty seconds AND one blast of three seconds OR blast of three seconds"
    before = (out / "accuracy.csv").read_text()

    scripted.clear()
    fail = lambda backend, model, *a, **k: ScriptedLLM(model=model, fail=True)  # noqa: E731
    wiring.make_backend = fail
    assert run_answers(out, "--replay") == 0  # the report from the records, no model asked
    assert (out / "accuracy.csv").read_text() == before
    assert json.loads((out / "answers.json").read_text())["new_calls"] == 0
    html = (out / "report.html").read_text()
    assert "<script" not in html and "Are the answers on your documents right?" in html


def test_replay_without_records_is_a_clear_error(tmp_path, scripted, capsys):
    assert run_answers(tmp_path / "empty", "--replay") == 1
    err = capsys.readouterr().err
    assert "no question is recorded" in err and "without --replay" in err and "Traceback" not in err


def test_tracked_output_folder_is_refused(scripted, capsys):
    assert run_answers(ROOT / "examples") == 1
    assert "tracked by git" in capsys.readouterr().err


def test_accuracy_table_by_hand_and_against_scipy():
    table = pd.DataFrame({"qid": [f"q{i}" for i in range(6)] * 2, "strategy": ["A"] * 6 + ["B"] * 6,
                          "judge_x_3way": ["correct", "wrong", "partial", "correct", "correct", "wrong",
                                           "wrong", "wrong", "correct", "correct", "partial", "wrong"],
                          "reference_grader": ["correct"] * 12, "passage_retrieved": [True, False] * 6})
    accuracy = answers_report.accuracy_table(table, ["judge_x_3way"], resamples=20_000, seed=2)
    judge = accuracy[accuracy["column"] == "judge_x_3way"].set_index("cell")
    assert judge.loc["A", "accuracy"] == pytest.approx(3 / 6) and judge.loc["B", "accuracy"] == pytest.approx(2 / 6)
    assert judge.loc["A", "lenient accuracy"] == pytest.approx(4 / 6)
    scores = np.array([1, 0, 0, 1, 1, 0], dtype=float)
    reference = bootstrap((scores,), np.mean, n_resamples=20_000, method="percentile",
                          random_state=np.random.default_rng(0)).confidence_interval
    assert judge.loc["A", "low"] == pytest.approx(reference.low, abs=0.05)
    assert judge.loc["A", "high"] == pytest.approx(reference.high, abs=0.05)
    ways = answers_report.part_ways(table, ["judge_x_3way"]).set_index(["cell", "grader"])
    row = ways.loc[("A", "0.5B three-way judge")] if ("A", "0.5B three-way judge") in ways.index else \
        ways.xs("A", level="cell").iloc[0]
    assert row["retrieved, correct"] == 2 and row["not retrieved, correct"] == 1  # q0, q4 / q3
    differences = answers_report.cell_differences(table, ["judge_x_3way"], resamples=2000)
    assert differences.iloc[0]["difference"] == pytest.approx(2 / 6 - 3 / 6)
    assert differences.iloc[0]["verdict"] == "cannot be told apart"


def test_audit_draw_grade_report_as_post06(tmp_path, scripted, capsys):
    from chunklab_core.audit.grade_batch import apply_grades
    from chunklab_core.audit.sheets import SHEET_COLUMNS, read_sheet
    from chunklab_core.own import audit as own_audit
    from chunklab_core.reports.post06 import tables as post06_tables

    out = tmp_path / "answers"
    assert run_answers(out) == 0
    assert main(["audit", "draw", "--answers", str(out), "--half-width", "0.2", "--min-n", "6"]) == 0
    printed = capsys.readouterr().out
    assert "planned 95% half-width" in printed
    paths = own_audit.audit_paths(out)
    fields, rows = read_sheet(paths["sheet"])
    assert tuple(fields) == SHEET_COLUMNS  # blind: no verdict column
    assert main(["audit", "report", "--answers", str(out)]) == 1  # nothing graded yet
    assert "graded" in capsys.readouterr().err
    grades = [{"item_id": r["item_id"], "grade": "cpw"[i % 3], "note": ""} for i, r in enumerate(rows)]
    apply_grades(paths["sheet"], grades, "tester-model", "model:scripted")
    assert main(["audit", "draw", "--answers", str(out)]) == 1  # a graded sheet is never overwritten
    assert "never overwritten" in capsys.readouterr().err
    assert main(["audit", "report", "--answers", str(out), "--resamples", "500"]) == 0
    report = paths["report"].read_text()
    assert "tester-model (model:scripted)" in report and "hand grades" not in report
    data = own_audit.load(out)
    ours = pd.read_csv(paths["folder"] / "agreement.csv")
    theirs = post06_tables.agreement_table(data, 500, 0)
    pd.testing.assert_frame_equal(ours, theirs.reset_index(drop=True), check_dtype=False)
    if (paths["folder"] / "accuracy.csv").stat().st_size > 1:
        accuracy = pd.read_csv(paths["folder"] / "accuracy.csv")
        pd.testing.assert_frame_equal(accuracy, post06_tables.corrected_accuracy(data), check_dtype=False)


def test_user_errors_are_one_message(tmp_path, monkeypatch, capsys):
    from chunklab_core.llm.base import BackendUnavailable

    assert main(["answers", str(DOCS), str(QUESTIONS), "--cell", "no_such/bm25", "--out", str(tmp_path / "a"),
                 "--no-progress"]) == 1
    assert "unknown strategy ['no_such']" in capsys.readouterr().err

    class Missing(ScriptedLLM):
        def _generate(self, messages, schema, options):
            raise BackendUnavailable("model file x.gguf is missing; assemble it with chunklab-models qwen-0.5b")

    monkeypatch.setattr(wiring, "make_backend", lambda backend, model, *a, **k: Missing(model=model))
    assert run_answers(tmp_path / "b") == 1
    err = capsys.readouterr().err
    assert "chunklab-models qwen-0.5b" in err and "to resume" in err and "Traceback" not in err
