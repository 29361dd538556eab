"""Faults, round three: wrong, damaged or foreign inputs, warnings, small samples (issue 41).

- class 5: ``answers --replay`` with one recorded call deleted rewrote ``answers.csv`` smaller
  and exited 0; a TREC run score of ``nan`` ranked first. Both are refused, the file named.
- class 6: a records line that is not UTF-8 ("codec can't decode byte 0xe9", no file or line);
  ``--against`` naming neither the qid nor the file; an empty or Latin-1 baseline and a
  hand-edited ``recommendation.json`` for ``check`` (AttributeError, exit 1 = "worse").
- class 7: the notes of a ``chunklab-own run`` (a shard warning) reached only the report.
- class 8: ``audit report`` crashed when a second grader graded a single item.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from chunklab_core.evaluators import cli as evaluate_cli
from chunklab_core.own import check
from chunklab_core.own.cli import console_notes, main

from test_own_answers import run_answers, scripted  # noqa: F401  (the scripted-backend fixture)

RECORD = {"qid": "a", "gold_ids": ["c0"], "retrieved_ids": ["c0", "c2"]}


def evaluate(args, capsys):
    status = evaluate_cli.main([*map(str, args), "--resamples", "20"])
    return status, capsys.readouterr().err


# ---- class 5 -------------------------------------------------------------------------------
def test_replay_with_a_missing_call_is_an_error_and_rewrites_nothing(tmp_path, scripted, capsys):  # noqa: F811
    out = tmp_path / "answers"
    assert run_answers(out, "--questions", "3") == 0
    before = (out / "answers.csv").read_bytes()
    records = out / "records" / "judges_qwen05.jsonl"
    lines = records.read_text(encoding="utf-8").splitlines(keepends=True)
    records.write_text("".join(lines[:3] + lines[4:]), encoding="utf-8")  # one recorded call deleted
    capsys.readouterr()
    assert run_answers(out, "--questions", "3", "--replay") == 1
    err = capsys.readouterr().err
    assert "a recorded call is missing" in err and str(out / "records") in err and "Traceback" not in err
    assert (out / "answers.csv").read_bytes() == before


def test_a_non_finite_trec_score_is_refused(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    run, qrels = tmp_path / "run.txt", tmp_path / "qrels.txt"
    run.write_text("q1 Q0 d1 1 nan t\nq1 Q0 d2 2 0.5 t\n", encoding="utf-8")
    qrels.write_text("q1 0 d2 1\n", encoding="utf-8")
    status, err = evaluate(["--trec-run", run, "--qrels", qrels, "--out", "o"], capsys)
    assert status == 2 and f"{run}, line 1" in err and "not a finite number" in err
    assert not (tmp_path / "o").exists()


# ---- class 6 -------------------------------------------------------------------------------
def test_a_records_line_that_is_not_utf8_is_named(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    records = tmp_path / "r.jsonl"
    records.write_bytes((json.dumps(RECORD) + "\n").encode() + b'{"qid": "caf\xe9", "gold_ids": []}\n')
    status, err = evaluate([records, "--out", "o"], capsys)
    assert status == 2 and f"{records}, line 2: not UTF-8" in err and "save the file as UTF-8" in err


@pytest.mark.parametrize("make", ["folder", "unreadable"])
def test_a_records_path_that_is_a_folder_or_unreadable_is_named(tmp_path, capsys, monkeypatch, make):
    monkeypatch.chdir(tmp_path)
    records = tmp_path / "r.jsonl"
    if make == "folder":
        records.mkdir()
    else:
        records.write_text(json.dumps(RECORD) + "\n", encoding="utf-8")
        monkeypatch.setattr(Path, "open", lambda *a, **k: (_ for _ in ()).throw(PermissionError(13, "Permission denied")))
    status, err = evaluate([records, "--out", "o"], capsys)
    assert status == 2 and str(records) in err and "cannot be read" in err


def test_against_names_both_files_and_the_query_only_one_has(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    a.write_text(json.dumps(RECORD) + "\n" + json.dumps({**RECORD, "qid": "only-a"}) + "\n", encoding="utf-8")
    b.write_text(json.dumps(RECORD) + "\n" + json.dumps({**RECORD, "qid": "zz"}) + "\n", encoding="utf-8")
    status, err = evaluate([a, "--against", b, "--out", "o"], capsys)
    assert status == 2 and str(a) in err and str(b) in err and "'only-a'" in err and "'zz'" in err


def baseline_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "base"
    folder.mkdir()
    rows = [{"strategy": "s", "retriever": "bm25", "model": "", "qid": f"q{i}", "recall@5": i % 2} for i in range(6)]
    pd.DataFrame(rows).to_csv(folder / "per_question.csv", index=False)
    (folder / "recommendation.json").write_text(json.dumps({"recommendations": [
        {"scope": "overall", "leader": "s / bm25", "candidates": [
            {"candidate": "s / bm25", "strategy": "s", "retriever": "bm25", "model": None}]}]}), encoding="utf-8")
    return folder


@pytest.mark.parametrize("damage", ["empty", "latin-1", "hand-edited", "not-json", "list"])
def test_check_refuses_damaged_baselines_with_status_2_naming_the_file(tmp_path, capsys, damage):
    base = baseline_folder(tmp_path)
    run = tmp_path / "run"
    run.mkdir()
    (run / "per_question.csv").write_bytes((base / "per_question.csv").read_bytes())
    assert main(["check", str(run), "--baseline", str(base / "recommendation.json"), "--resamples", "200"]) == 0
    capsys.readouterr()
    target = base / ("recommendation.json" if damage in ("hand-edited", "not-json", "list") else "per_question.csv")
    if damage == "empty":
        target.write_bytes(b"")
    elif damage == "latin-1":
        target.write_bytes(target.read_bytes().replace(b"bm25", "bm25é".encode("latin-1")))
    elif damage == "hand-edited":
        target.write_text(json.dumps({"recommendations": [{"scope": "overall", "leader": "s / bm25",
                                                           "candidates": ["s / bm25"]}]}), encoding="utf-8")
    elif damage == "not-json":
        target.write_bytes(b"{\xe9")
    else:
        target.write_text("[1, 2]", encoding="utf-8")
    status = main(["check", str(run), "--baseline", str(base / "recommendation.json"), "--resamples", "200"])
    err = capsys.readouterr().err
    assert status == 2 and str(target) in err and "Traceback" not in err, err


# ---- class 7 -------------------------------------------------------------------------------
def test_the_runs_notes_are_printed_on_the_terminal_too():
    record = {"notes": ["UserWarning: the shard of fixed_500 holds 3 documents only"]}
    text = console_notes(record)
    assert "NOTES" in text and "the shard of fixed_500 holds 3 documents only" in text
    assert console_notes({"notes": []}) == ""


# ---- class 8 -------------------------------------------------------------------------------
def test_audit_report_with_a_second_grader_of_a_single_item(tmp_path, scripted, capsys):  # noqa: F811
    from chunklab_core.audit.grade_batch import apply_grades
    from chunklab_core.audit.sheets import read_sheet
    from chunklab_core.own import audit as own_audit

    out = tmp_path / "answers"
    assert run_answers(out) == 0
    assert main(["audit", "draw", "--answers", str(out), "--n", "8"]) == 0
    paths = own_audit.audit_paths(out)
    _, rows = read_sheet(paths["sheet"])
    apply_grades(paths["sheet"], [{"item_id": r["item_id"], "grade": "cpw"[i % 3]} for i, r in enumerate(rows[:-1])],
                 "ana", "model:scripted")
    apply_grades(paths["sheet"], [{"item_id": rows[-1]["item_id"], "grade": "c"}], "bo", "model:scripted")
    capsys.readouterr()
    assert main(["audit", "report", "--answers", str(out), "--resamples", "300"]) == 0
    printed = capsys.readouterr()
    assert "Traceback" not in printed.err
    assert "resample items, not questions" in printed.out  # said on the terminal and in the report
    assert "resample items, not questions" in paths["report"].read_text()


def test_records_of_another_model_and_an_unusable_cache_are_one_message(tmp_path, scripted, capsys, monkeypatch):  # noqa: F811
    from chunklab_core.own import answers as own_answers
    from chunklab_core.retrieval.embedding_cache import CacheUnusable

    out = tmp_path / "answers"
    assert run_answers(out, "--questions", "2") == 0
    capsys.readouterr()
    assert run_answers(out, "--questions", "2", "--replay", "--answerer", "qwen05", "another-model") == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err and str(out / "records") in err, err

    def unusable(*args, **kwargs):
        raise CacheUnusable(f"the embedding cache {tmp_path / 'cache'} cannot be used (NotADirectoryError)")

    monkeypatch.setattr(own_answers, "build_items", unusable)
    assert run_answers(out, "--questions", "2") == 1
    assert "the embedding cache" in capsys.readouterr().err
