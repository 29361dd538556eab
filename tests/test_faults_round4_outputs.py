"""Faults, round four, class 1: every command that writes a folder goes through the guard (issue 49).

``make site SITE_DIR=<folder>`` replaced whatever folder it was given (a user's notes,
``figures/``, ``data/audit/``) and exited 0. Every command that takes an output folder now asks
``core.output_dirs`` first: this file walks each one (:data:`COMMANDS`), points it at a folder
holding a user's file, at a tracked folder and at an irreplaceable one, and checks the
project's message, a non-zero exit and that not one byte changed. A second test checks that
each command's own earlier output is still replaced (the guard refuses only what is not its own).
"""

from __future__ import annotations

import hashlib
import importlib.util
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_markdown_cell, new_notebook

from chunklab_core.audit import synthetic
from chunklab_core.core import paths
from chunklab_core.evaluation import trec_export
from chunklab_core.evaluators import cli as evaluate_cli
from chunklab_core.own import cli as own_cli
from chunklab_core.reports import notebook_run, website

ROOT = paths.PROJ_ROOT
RECORDS = '{"qid": "a", "gold_ids": ["c0"], "retrieved_ids": ["c0", "c2"]}\n'


def _check_site():
    spec = importlib.util.spec_from_file_location("check_site", ROOT / "scripts" / "check_site.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _example():
    spec = importlib.util.spec_from_file_location("chroma_example", ROOT / "examples" / "evaluate"
                                                  / "langchain_chroma_pipeline.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _inputs(tmp: Path) -> dict:
    docs = tmp / "in" / "docs"
    docs.mkdir(parents=True, exist_ok=True)
    (docs / "a.md").write_text("# Hours\n\nThe tower opens at nine every day.\n", encoding="utf-8")
    questions = tmp / "in" / "questions.yaml"
    questions.write_text("- id: q1\n  query: When does the tower open?\n  gold_snippets: opens at nine\n",
                         encoding="utf-8")
    records = tmp / "in" / "records.jsonl"
    records.write_text(RECORDS, encoding="utf-8")
    post = tmp / "in" / "01_first.ipynb"
    nbformat.write(new_notebook(cells=[new_markdown_cell("# 01 · First\n\n*Does it work?*\n")]), post)
    return {"docs": docs, "questions": questions, "records": records, "post": post}


# every command that takes an output folder: name -> argv builder (out, inputs) and the main it runs
COMMANDS = {
    "make site (reports.website)": (website.main, lambda out, i: ["--out", str(out), "--no-lab", str(i["post"])]),
    "chunklab-evaluate": (evaluate_cli.main, lambda out, i: [str(i["records"]), "--out", str(out), "--resamples", "20"]),
    "chunklab-trec": (trec_export.main, lambda out, i: ["--out", str(out), "--corpus", "own", "--docs", str(i["docs"]),
                                                       "--questions", str(i["questions"]), "--retrievers", "bm25"]),
    "chunklab-synthetic-audit": (synthetic.main, lambda out, i: [str(out), "--items", "200", "--sample", "60"]),
    "chunklab-own run": (own_cli.main, lambda out, i: ["run", str(i["docs"]), str(i["questions"]), "--out", str(out),
                                                       "--no-progress"]),
    "chunklab-own answers": (own_cli.main, lambda out, i: ["answers", str(i["docs"]), str(i["questions"]), "--out",
                                                           str(out), "--no-progress", "--cell", "fixed_500/bm25"]),
    "check_site --screenshots": (lambda argv: _check_site().main(argv),
                                 lambda out, i: [str(i["post"].parent), "--screenshots", str(out)]),
    "examples/evaluate/langchain_chroma_pipeline.py": (lambda argv: _example().main(argv),
                                                       lambda out, i: ["--out", str(out)]),
}


def _snapshot(folder: Path) -> dict:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def _run(name, out, inputs, capsys) -> tuple[int, str]:
    main, argv = COMMANDS[name]
    message = ""
    try:
        status = main(argv(out, inputs))
    except SystemExit as exc:  # argparse's error and the commands that exit with a message (Python prints it)
        status = exc.code if isinstance(exc.code, int) else 1
        message = exc.code if isinstance(exc.code, str) else ""
    captured = capsys.readouterr()
    return status, captured.out + captured.err + message


def _tracked() -> list[Path]:
    return [ROOT / "figures", paths.AUDIT_DIR]


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_a_folder_of_yours_is_never_written(name, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    inputs = _inputs(tmp_path)
    mine = tmp_path / "my_project"
    mine.mkdir()
    (mine / "notes.md").write_text("my notes", encoding="utf-8")
    before = _snapshot(mine)
    status, said = _run(name, mine, inputs, capsys)
    assert status not in (0, None), said
    assert str(mine) in said or "my_project" in said, said
    assert "Traceback" not in said and ("choose another" in said.lower() or "move them out" in said.lower()), said
    assert _snapshot(mine) == before and sorted(p.name for p in mine.iterdir()) == ["notes.md"]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".my_project")]  # no temporary left


@pytest.mark.parametrize("name", sorted(COMMANDS))
@pytest.mark.parametrize("folder", _tracked(), ids=lambda p: p.name)
def test_a_tracked_or_irreplaceable_folder_is_never_written(name, folder, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    inputs = _inputs(tmp_path)
    before = _snapshot(folder)
    status, said = _run(name, folder, inputs, capsys)
    assert status not in (0, None), said
    assert "tracked by git" in said or "irreplaceable" in said, said
    assert "Traceback" not in said
    assert _snapshot(folder) == before
    assert not [p for p in folder.parent.iterdir() if p.name.startswith(f".{folder.name}.")]


def test_every_folder_writing_command_is_walked():
    """The list above holds every command with an output-folder option (argparse's ``--out``, the
    synthetic audit's FOLDER, the screenshots): a new one added without a guard fails here."""
    found = subprocess.run(["git", "grep", "-l", "-E", r'add_argument\("(--out|--screenshots|folder)"'],
                           cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    walked = {"chunklab_core/reports/website.py", "chunklab_core/evaluators/cli.py",
              "chunklab_core/evaluation/trec_export.py", "chunklab_core/audit/synthetic.py",
              "chunklab_core/own/cli.py", "chunklab_core/own/commands.py", "scripts/check_site.py",
              "examples/evaluate/langchain_chroma_pipeline.py",
              # files, not folders, or folders with their own rule (tested below)
              "chunklab_core/audit/draw.py", "chunklab_core/reports/posts.py", "scripts/notebook_deps.py",
              "chunklab_core/own/generate.py"}  # a questions file: refused when tracked or not its own (tests/test_own_questions.py)
    assert set(found) <= walked, set(found) - walked


@pytest.mark.parametrize("name", ["make site (reports.website)", "chunklab-synthetic-audit", "chunklab-trec"])
def test_an_earlier_output_of_the_same_command_is_replaced(name, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    inputs = _inputs(tmp_path)
    out = tmp_path / "out"
    first, said = _run(name, out, inputs, capsys)
    assert first == 0, said
    again, said = _run(name, out, inputs, capsys)
    assert again == 0, said
    (out / "mine.txt").write_text("added by hand", encoding="utf-8")
    status, said = _run(name, out, inputs, capsys)
    assert status == 2 and "mine.txt" in said and (out / "mine.txt").read_text(encoding="utf-8") == "added by hand"


def test_the_audit_draw_never_writes_a_tracked_folder_or_another_draws_files(tmp_path):
    from chunklab_core.audit.draw import draw_output_problem

    assert "tracked by git" in draw_output_problem(ROOT / "figures", "post05_audit", False)
    assert draw_output_problem(paths.AUDIT_DIR, "a_new_name", False) is None  # the audit's own folder
    (tmp_path / "x_key.csv").write_text("mine", encoding="utf-8")
    assert "another draw's files" in draw_output_problem(tmp_path, "x", False)
    assert draw_output_problem(tmp_path, "x", True) is None  # an ungraded sheet with --force: the draw's own
    (tmp_path / "file").write_text("", encoding="utf-8")
    assert "not a folder" in draw_output_problem(tmp_path / "file", "x", False)


def test_a_kept_failed_notebook_never_replaces_a_file(tmp_path, capsys):
    mine = tmp_path / "mine.ipynb"
    mine.write_text("my notebook", encoding="utf-8")
    with pytest.raises(SystemExit) as exc:
        notebook_run.main([str(tmp_path / "src.ipynb"), str(tmp_path / "out.ipynb"), "--keep-failed", str(mine)])
    assert exc.value.code == 2 and "already exists" in capsys.readouterr().err
    assert mine.read_text(encoding="utf-8") == "my notebook"
