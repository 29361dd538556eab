"""``chunklab-own`` end to end on examples/own_docs: validation, outputs, no tracked file, no partial output.

The run uses BM25 only and few resamples so it stays in the fast tier (no embedding model);
the notebook, the HTML export and the console table are the real ones.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook
from papermill.exceptions import PapermillExecutionError

from chunklab_core.own import cli as own
from chunklab_core.own import html_report
from chunklab_core.core.paths import PROJ_ROOT

EXAMPLE = PROJ_ROOT / "examples" / "own_docs"
FAST_CONFIG = "strategies: [fixed_500, recursive_500, {kind: fixed, size: 64, unit: tokens}]\n" \
              "retrievers: [bm25]\nresamples: 200\nk: 3\nbudgets: [100, 400]\n"


def _cli(*args, cwd=PROJ_ROOT):
    env = {**os.environ, "PYTHONPATH": str(PROJ_ROOT), "CI": "1"}
    return subprocess.run([sys.executable, "-m", "chunklab_core.own.cli", *map(str, args)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600)


def _git_status() -> str:
    return subprocess.run(["git", "-C", str(PROJ_ROOT), "status", "--porcelain", "--untracked-files=all"],
                          capture_output=True, text=True, check=True).stdout


def test_validate_accepts_the_example():
    result = _cli("validate", EXAMPLE, EXAMPLE / "questions.yaml")
    assert result.returncode == 0, result.stderr
    assert "OK: documents, questions and config are valid." in result.stdout


def test_validate_lists_every_problem_of_a_broken_copy_at_once(tmp_path):
    broken = tmp_path / "docs"
    shutil.copytree(EXAMPLE, broken)
    questions = (broken / "questions.yaml").read_text(encoding="utf-8")
    questions = questions.replace("gold_snippets: 38 metres above mean sea level",
                                  "gold_snippets: 36 metres above mean sea level")
    questions = questions.replace("id: engineer", "id: lantern-height")  # a duplicate id
    (broken / "questions.yaml").write_text(questions, encoding="utf-8")
    (broken / "empty.md").write_text("", encoding="utf-8")
    config = tmp_path / "config.yaml"
    config.write_text("k: 0\nretrievers: [splade]\n", encoding="utf-8")
    result = _cli("validate", broken, broken / "questions.yaml", "--config", config)
    assert result.returncode == 1
    lines = [line.strip() for line in result.stderr.splitlines()]
    assert lines[0] == "5 problem(s); fix them all and run again:"
    assert any(line.startswith("config.yaml: retrievers must be") for line in lines)
    assert any(line.startswith("config.yaml: k must be an integer from 1 to 10,000") for line in lines)
    assert any(line.startswith("empty.md:") for line in lines)
    assert any(line.startswith("questions.yaml: id lantern-height: duplicate id") for line in lines)
    assert ('questions.yaml: id lantern-height: gold snippet "36 metres above mean sea level" does not occur in '
            'handbook.md; closest passage (score 0.97, in handbook.md; its numbers differ): '
            '"38 metres above mean sea level"') in lines


@pytest.mark.heavy
def test_run_writes_every_output_and_no_tracked_file(tmp_path):
    config = tmp_path / "fast.yaml"
    config.write_text(FAST_CONFIG, encoding="utf-8")
    before = _git_status()
    result = _cli("run", EXAMPLE, EXAMPLE / "questions.yaml", "--config", config, "--notebook", cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "Warning" not in result.stderr and "Warning" not in result.stdout  # no warning on the console
    out = tmp_path / own.DEFAULT_OUT  # the default output folder, in the current folder
    names = {p.name for p in out.iterdir()}
    assert {"report.ipynb", "report.html", "recommendation.json", "recommendation.csv", "per_question.csv",
            "matrix.csv", "chunk_health.csv", "tokens_at_target.csv", "budget.csv", "recall_intervals.png",
            "recall_vs_tokens.png", own.MARKER} <= names
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temporary folder left
    record = json.loads((out / "recommendation.json").read_text(encoding="utf-8"))
    assert record["corpus"]["questions"] == 9 and record["config"]["k"] == 3
    scopes = [r["scope"] for r in record["recommendations"]]
    assert scopes == ["bm25"]  # one retriever: its verdict is the overall one
    rec = record["recommendations"][0]
    assert {c["strategy"] for c in rec["candidates"]} == {"fixed_500", "recursive_500", "fixed_tokens_64"}
    assert "[bm25]" in result.stdout and f"pick at k                {rec['pick']}  ({rec['verdict']}" in result.stdout
    # the console opens with the box, line for line as recommendation.json holds it
    lines = result.stdout.splitlines()
    start = lines.index("RECOMMENDATION")
    for i, item in enumerate(record["box"]):
        assert lines[start + 1 + i].strip().startswith(item["label"]) and lines[start + 1 + i].endswith(item["text"])
    labels = [item["label"] for item in record["box"]]  # "use" is the matched-cost pick; the at-k pick follows
    assert labels[0] == "use" and " tokens (" in record["box"][0]["text"]
    assert record["box"][labels.index("at k chunks")]["text"].startswith(f"{rec['pick']} ({rec['verdict']} at recall@3")
    assert rec["use"]["basis"] == "matched cost" and rec["use"]["strategy"] == rec["matched_cost"]["strategy"]
    html = (out / "report.html").read_text(encoding="utf-8")
    assert "own_recommendation.recommend" not in html and "<script" not in html  # no code in the report
    assert html.index('class="box"') < html.index("Each retriever") < html.index("Settings and versions")
    for item in record["box"]:  # the page's box says what the console and the JSON say
        assert html_report.esc(item["text"]) in html
    assert "…" not in html
    notebook = nbformat.read(out / "report.ipynb", as_version=4)
    assert not [o for c in notebook.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert _git_status() == before
    # a second run replaces the output of the first
    again = _cli("run", EXAMPLE, EXAMPLE / "questions.yaml", "--config", config, cwd=tmp_path)
    assert again.returncode == 0 and (out / "report.html").is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fast.yaml", own.DEFAULT_OUT]


@pytest.mark.heavy
def test_a_failed_run_leaves_no_partial_output(tmp_path, monkeypatch):
    failing = tmp_path / "failing.ipynb"
    nb = new_notebook(cells=[new_code_cell('DOCS = ""', metadata={"tags": ["parameters"]}),
                             new_code_cell("from pathlib import Path\nPath('half.csv').write_text('x')\n"
                                           "raise RuntimeError('boom')")],
                      metadata={"kernelspec": {"name": "chunklab", "display_name": "chunklab", "language": "python"}})
    nbformat.write(nb, failing)
    monkeypatch.setattr(own, "REPORT_SOURCE", failing)
    out = tmp_path / "results"
    config = tmp_path / "fast.yaml"
    config.write_text(FAST_CONFIG, encoding="utf-8")
    with pytest.raises(PapermillExecutionError):
        own.run(EXAMPLE, EXAMPLE / "questions.yaml", config, out=out, progress=False, notebook=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["failing.ipynb", "fast.yaml"]


def test_run_refuses_a_foreign_folder_and_a_tracked_one(tmp_path, capsys):
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "thesis.tex").write_text("keep me", encoding="utf-8")
    with pytest.raises(SystemExit):
        own.run(EXAMPLE, EXAMPLE / "questions.yaml", out=foreign, progress=False)
    assert "not the output of an earlier run" in capsys.readouterr().err
    assert (foreign / "thesis.tex").read_text(encoding="utf-8") == "keep me"
    assert "tracked by git" in own.check_output_folder(PROJ_ROOT / "examples")


def test_strategies_lists_the_registry():
    result = _cli("strategies")
    assert result.returncode == 0 and "fixed_tokens_512" in result.stdout


def test_a_hostile_file_name_heading_and_question_yield_no_live_markup(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    hostile = "<img src=x onerror=alert(1)>"
    (docs / f"{hostile}.md").write_text(
        f"# <script>alert('h')</script> Opening hours\n\nThe tower opens at nine <b>sharp</b> every day.\n\n"
        "# Tickets\n\nAn adult ticket costs eight euros at the gate.\n", encoding="utf-8")
    (docs / "questions.yaml").write_text(
        "- id: q1\n  query: \"When does the <iframe> tower open?\"\n  gold_snippets: \"opens at nine <b>sharp</b>\"\n"
        "- id: q2\n  query: What does a ticket cost?\n  gold_snippets: eight euros\n", encoding="utf-8")
    config = tmp_path / "fast.yaml"
    config.write_text("strategies: [fixed_500, structure_sections]\nretrievers: [bm25]\nresamples: 200\nk: 1\n",
                      encoding="utf-8")
    out = tmp_path / "out"
    own.run(docs, docs / "questions.yaml", config, out=out, progress=False)
    html = (out / "report.html").read_text(encoding="utf-8")
    assert "&lt;img src=x onerror=alert(1)&gt;.md" in html  # the file name, shown as text
    for live in ("<img src=x", "<script>alert", "<iframe>", "<b>sharp</b>"):
        assert live not in html
    assert "<script" not in html.lower()
