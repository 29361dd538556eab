"""Fault injection, your own documents (issue 30): a re-run never deletes a file of yours, OUT
inside DOCS, SIGTERM to ``chunklab-own run``, documents that are control bytes, a folder that is
not a model, and hostile configs and questions files (a key twice, alias bombs, deep nesting,
merge keys, a PNG)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest
import yaml
from nbformat.v4 import new_code_cell, new_notebook

from chunklab_core.core.paths import PROJ_ROOT
from chunklab_core.data.loaders import ValidationError, load_user_corpus
from chunklab_core.data.question_file import parse_yaml
from chunklab_core.own import cli as own
from chunklab_core.own.config import load_config

ENV = {**os.environ, "PYTHONPATH": str(PROJ_ROOT), "CI": "1", "PYTHONUNBUFFERED": "1"}
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89"
BOMB = "".join(f"{a}: &{a} [{', '.join([f'*{p}'] * 9) if p else ', '.join(['lol'] * 9)}]\n"
               for p, a in zip([None, *"abcdefgh"], "abcdefghi"))


def tiny_docs(folder: Path) -> tuple[Path, Path]:
    docs = folder / "docs"
    docs.mkdir(parents=True)
    (docs / "a.md").write_text("# Returns\n\nItems can be returned within 30 days of purchase.\n", encoding="utf-8")
    (docs / "b.md").write_text("# Refunds\n\nThe store manager signs off on every refund.\n", encoding="utf-8")
    questions = folder / "questions.yaml"
    questions.write_text("- id: q1\n  query: How long is the return window?\n  gold_snippets: within 30 days\n"
                         "- id: q2\n  query: Who signs off on refunds?\n  gold_snippets: the store manager\n",
                         encoding="utf-8")
    return docs, questions


def problems_of(docs, questions, config=None):
    return own.validate(docs, questions, config)[0]


# ---- the output folder ---------------------------------------------------------------------
def test_a_rerun_never_deletes_a_file_the_user_added_to_the_output(tmp_path):
    out = tmp_path / "results"
    (out / "figures").mkdir(parents=True)
    (out / "report.html").write_text("earlier run", encoding="utf-8")
    (out / "figures" / "f.png").write_bytes(PNG)
    own.write_marker(out)
    assert own.check_output_folder(out) is None  # nothing but an earlier run's outputs: replaceable
    (out / "notes.md").write_text("my notes", encoding="utf-8")
    problem = own.check_output_folder(out)
    assert "notes.md" in problem and "no earlier run wrote" in problem
    docs, questions = tiny_docs(tmp_path)
    with pytest.raises(SystemExit):
        own.run(docs, questions, out=out, progress=False)
    assert (out / "notes.md").read_text(encoding="utf-8") == "my notes"


def test_a_marker_without_a_file_list_protects_everything(tmp_path):
    out = tmp_path / "results"
    out.mkdir()
    (out / own.MARKER).write_text("output of chunklab-own run; safe to replace\n", encoding="utf-8")
    (out / "report.html").write_text("x", encoding="utf-8")
    assert "report.html" in own.check_output_folder(out)


def test_an_output_folder_inside_the_documents_is_refused(tmp_path, capsys):
    docs, questions = tiny_docs(tmp_path)
    for out in (docs / "results", docs):
        with pytest.raises(SystemExit):
            own.run(docs, questions, out=out, progress=False)
        assert "inside the documents folder" in capsys.readouterr().err
    assert sorted(p.name for p in docs.iterdir()) == ["a.md", "b.md"]


@pytest.mark.heavy  # a notebook kernel started and stopped: 7-14 s
def test_sigterm_stops_chunklab_own_run_like_ctrl_c(tmp_path):
    docs, questions = tiny_docs(tmp_path)
    report = tmp_path / "slow_report.ipynb"
    nbformat.write(new_notebook(cells=[
        new_code_cell('DOCS = QUESTIONS = CONFIG = OUTPUT_DIR = ""\nRESAMPLES = 0\nPROGRESS = False',
                      metadata={"tags": ["parameters"]}),
        new_code_cell(f"import os, time, pathlib\npathlib.Path({str(tmp_path / 'kernel.pid')!r}).write_text(str(os.getpid()))\n"
                      "pathlib.Path(OUTPUT_DIR, 'half.csv').write_text('x')\ntime.sleep(30)")],
        metadata={"kernelspec": {"name": "chunklab", "display_name": "chunklab", "language": "python"}}), report)
    out = tmp_path / "results"
    script = (f"import sys\nfrom chunklab_core.own import cli\ncli.REPORT_SOURCE = {str(report)!r}\n"
              f"sys.exit(cli.main(['run', {str(docs)!r}, {str(questions)!r}, '--out', {str(out)!r}, '--no-progress', '--notebook']))")
    process = subprocess.Popen([sys.executable, "-c", script], env=ENV, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 180
        while not (tmp_path / "kernel.pid").exists():
            assert process.poll() is None, process.communicate()[0]
            assert time.monotonic() < deadline
            time.sleep(0.1)
        time.sleep(0.3)
        kernel = int((tmp_path / "kernel.pid").read_text())
        process.send_signal(signal.SIGTERM)
        printed, _ = process.communicate(timeout=90)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 128 + signal.SIGTERM, printed
    assert "interrupted (stopped by SIGTERM)" in printed
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            os.kill(kernel, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        raise AssertionError(f"kernel {kernel} still runs")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["docs", "kernel.pid", "questions.yaml", "slow_report.ipynb"]


# ---- documents that are not documents, models that are not models --------------------------
def test_nul_bytes_and_control_bytes_are_not_documents(tmp_path):
    docs, questions = tiny_docs(tmp_path)
    (docs / "zeros.md").write_bytes(b"\x00" * 65536)
    (docs / "noise.txt").write_bytes(bytes(range(1, 32)) * 200)
    (docs / "fine.txt").write_text("A page\fwith a form feed\tand a tab.\n", encoding="utf-8")
    problems = problems_of(docs, questions)
    assert any(p.startswith("zeros.md: 100% of its characters are control characters") for p in problems)
    assert any(p.startswith("noise.txt: ") and "not a text document" in p for p in problems)
    assert not any(p.startswith("fine.txt") for p in problems)


def test_a_folder_that_is_not_a_model_is_refused_by_validate(tmp_path):
    docs, questions = tiny_docs(tmp_path)
    fake = tmp_path / "not-a-model"
    fake.mkdir()
    (fake / "config.json").write_text('{"model_type": "nothing"}', encoding="utf-8")
    config = tmp_path / "config.yaml"
    config.write_text(f"retrievers: [dense]\nmodels: [{fake}]\n", encoding="utf-8")
    [problem] = problems_of(docs, questions, config)
    assert "model_type 'nothing'" in problem and "not a model" in problem


# ---- hostile configs and questions files ---------------------------------------------------
def test_a_config_key_given_twice_is_an_error_naming_both_lines(tmp_path):
    config = tmp_path / "config.yaml"
    config.write_text("k: 10\nretrievers: [bm25]\nk: 1\n", encoding="utf-8")
    with pytest.raises(ValidationError) as err:
        load_config(config)
    assert err.value.problems == ["config.yaml: line 3: key 'k' given twice in one entry (first on line 1); "
                                  "YAML would keep only the last value"]


def test_a_png_given_as_the_config_is_named_as_not_text(tmp_path):
    config = tmp_path / "config.yaml"
    config.write_bytes(PNG)
    with pytest.raises(ValidationError, match="not a text file"):
        load_config(config)


def test_merge_keys_are_accepted_in_config_and_questions(tmp_path):
    config = tmp_path / "config.yaml"
    config.write_text("base: &base {k: 3, retrievers: [bm25]}\n", encoding="utf-8")
    data, duplicates = parse_yaml("defaults: &d {k: 3, seed: 1}\nrun:\n  <<: *d\n  k: 5\n")
    assert data["run"] == {"k": 5, "seed": 1} and duplicates == []  # own keys override merged ones
    docs, questions = tiny_docs(tmp_path)
    questions.write_text("- &first {id: q1, query: \"How long is the return window?\", gold_snippets: within 30 days}\n"
                         "- <<: *first\n  id: q2\n", encoding="utf-8")
    corpus = load_user_corpus(docs, questions)
    assert [q.qid for q in corpus.questions] == ["q1", "q2"]


@pytest.mark.parametrize("text, message", [
    (BOMB, "alias bomb"),
    ("questions:\n" + "  " + "[" * 5000 + "]" * 5000 + "\n", "nested more than 100 levels"),
    ("a: &a [*a]\n", "contains it"),
])
def test_alias_bombs_deep_nesting_and_self_reference_are_refused_at_once(tmp_path, text, message):
    assert len(BOMB) < 700
    docs, _ = tiny_docs(tmp_path)
    for name in ("questions.yaml", "config.yaml"):
        (tmp_path / name).write_text(text, encoding="utf-8")
    started = time.monotonic()
    with pytest.raises(ValidationError) as err:
        load_user_corpus(docs, tmp_path / "questions.yaml")
    assert message in " ".join(err.value.problems)
    with pytest.raises(ValidationError, match=message):
        load_config(tmp_path / "config.yaml")
    assert time.monotonic() - started < 30  # not a timing claim: a bomb took ~35 s and then MemoryError


def test_a_deeply_nested_json_line_is_invalid_json_not_a_recursion_error(tmp_path):
    docs, _ = tiny_docs(tmp_path)
    questions = tmp_path / "q.jsonl"
    questions.write_text("[" * 100000 + "]" * 100000 + "\n", encoding="utf-8")
    with pytest.raises(ValidationError, match="line 1: invalid JSON"):
        load_user_corpus(docs, questions)
