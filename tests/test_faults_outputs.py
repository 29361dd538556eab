"""Faults, round three, class 1: every output folder guarded alike (issue 41).

``chunklab-evaluate --out`` replaced any existing folder whole: a project folder with the
user's notes and the records it had just scored, the current folder, the committed LLM records.
One guard (``core.output_dirs``, the own-documents marker rule) now refuses them all, for
every command that writes a folder; an earlier run's own folder is still replaced.
"""

from __future__ import annotations

import os

import pytest

from chunklab_core.core import output_dirs, paths
from chunklab_core.evaluators import cli as evaluate_cli
from chunklab_core.own import cli as own_cli

RECORDS = '{"qid": "a", "gold_ids": ["c0"], "retrieved_ids": ["c0", "c2"]}\n' \
          '{"qid": "b", "gold_ids": ["c1"], "retrieved_ids": ["c2", "c1"]}\n'


def evaluate(records, out, capsys):
    status = evaluate_cli.main([str(records), "--out", str(out), "--resamples", "20"])
    return status, capsys.readouterr().err


def test_evaluate_refuses_a_project_folder_and_keeps_the_notes_and_records(tmp_path, capsys):
    project = tmp_path / "project"
    project.mkdir()
    (project / "notes.md").write_text("my notes", encoding="utf-8")
    records = project / "records.jsonl"
    records.write_text(RECORDS, encoding="utf-8")
    status, err = evaluate(records, project, capsys)
    assert status == 2 and "holds the input" in err and "Traceback" not in err
    assert (project / "notes.md").read_text(encoding="utf-8") == "my notes" and records.read_text() == RECORDS
    (tmp_path / "elsewhere.jsonl").write_text(RECORDS, encoding="utf-8")
    status, err = evaluate(tmp_path / "elsewhere.jsonl", project, capsys)  # notes, no marker
    assert status == 2 and "not the output of an earlier run" in err
    assert (project / "notes.md").is_file()


@pytest.mark.parametrize("out", [".", "CWD", "PARENT"])
def test_evaluate_refuses_the_current_folder_and_its_parents(tmp_path, capsys, monkeypatch, out):
    here = tmp_path / "work" / "here"
    here.mkdir(parents=True)
    records = tmp_path / "r.jsonl"
    records.write_text(RECORDS, encoding="utf-8")
    (here / "keep.txt").write_text("x", encoding="utf-8")
    monkeypatch.chdir(here)
    target = {".": ".", "CWD": str(here), "PARENT": str(here.parent)}[out]
    status, err = evaluate(records, target, capsys)
    assert status == 2 and "current folder" in err and "Traceback" not in err
    assert (here / "keep.txt").is_file()


def test_every_irreplaceable_folder_is_refused(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    records = tmp_path / "r.jsonl"
    records.write_text(RECORDS, encoding="utf-8")
    for folder in paths.IRREPLACEABLE_DIRS:
        before = sorted(os.listdir(folder)) if folder.exists() else None
        status, err = evaluate(records, folder, capsys)
        assert status == 2 and "irreplaceable" in err, err
        assert (sorted(os.listdir(folder)) if folder.exists() else None) == before
        assert "irreplaceable" in output_dirs.output_folder_problem(folder / "sub", ".m")
        assert "irreplaceable" in own_cli.check_output_folder(folder)  # chunklab-own's guard is the same


def test_an_output_that_is_a_file_or_an_input_is_refused(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    records = tmp_path / "r.jsonl"
    records.write_text(RECORDS, encoding="utf-8")
    status, err = evaluate(records, records, capsys)
    assert status == 2 and "not a folder" in err and records.read_text() == RECORDS


def test_an_earlier_scorecard_is_replaced_and_a_file_added_to_it_is_not(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    records = tmp_path / "r.jsonl"
    records.write_text(RECORDS, encoding="utf-8")
    out = tmp_path / "card"
    assert evaluate(records, out, capsys)[0] == 0
    assert evaluate(records, out, capsys)[0] == 0  # its own earlier output: replaced
    (out / "mine.txt").write_text("mine", encoding="utf-8")
    status, err = evaluate(records, out, capsys)
    assert status == 2 and "mine.txt" in err and (out / "mine.txt").is_file()


def test_own_answers_refuses_the_current_folder_and_irreplaceable_ones(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    problem = own_cli.check_output_folder(tmp_path, marker=".chunklab-own-answers", append_only=True)
    assert "current folder" in problem
    answers = tmp_path / "answers"
    answers.mkdir()
    (answers / ".chunklab-own-answers").write_text("output of chunklab-own answers\n", encoding="utf-8")
    (answers / "records").mkdir()
    (answers / "records" / "x.jsonl").write_text("{}\n", encoding="utf-8")
    assert own_cli.check_output_folder(answers, marker=".chunklab-own-answers", append_only=True) is None


def test_own_run_refuses_an_output_that_holds_the_documents_or_questions(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    project = tmp_path / "project"
    (project / "docs").mkdir(parents=True)
    (project / "questions.yaml").write_text("[]\n", encoding="utf-8")
    assert "holds the input" in own_cli.check_output_folder(project, project / "docs")
    assert "holds the input" in own_cli.check_output_folder(tmp_path / "project", tmp_path / "elsewhere",
                                                            inputs=[project / "questions.yaml"])
