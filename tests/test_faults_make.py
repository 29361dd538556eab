"""Fault injection, make targets, parameters and data: a failed run never replaces a post, a
mistyped parameter stops before execution, data errors come all at once with fitting advice
(issue 15)."""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import os
import re
import subprocess
import sys

import nbformat
import pytest

from chunklab_core.data import registry as datasets
from chunklab_core.reports.notebook_run import (ParameterError, check_parameters, notebook_parameters,
                                        papermill_parameter_names, run_notebook)
from chunklab_core.core.paths import PROJ_ROOT

POST01 = PROJ_ROOT / "notebooks" / "src" / "01_chunking.ipynb"


def tiny_notebook(path, body):
    nb = nbformat.v4.new_notebook()
    params = nbformat.v4.new_code_cell("FAIL = False\nN = 1")
    params.metadata["tags"] = ["parameters"]
    nb.cells = [params, nbformat.v4.new_code_cell(body)]
    nb.metadata["kernelspec"] = {"name": "chunklab", "display_name": "chunklab", "language": "python"}
    nbformat.write(nb, str(path))
    return path


# ---- parameters -----------------------------------------------------------------------------
def test_parameter_names_come_from_the_parameters_cell():
    names = notebook_parameters(POST01)
    assert "N_QUESTIONS" in names and "WRITE_OUTPUTS" in names and "N_QUESTION" not in names


def test_every_papermill_parameter_form_is_read(tmp_path):
    (tmp_path / "p.yaml").write_text("E: 5\n", encoding="utf-8")
    encoded = base64.b64encode(b"F: 6").decode()
    args = ["-p", "A", "1", "--parameters", "B", "2", "-r", "C", "x", "-y", "D: 4", "-f", str(tmp_path / "p.yaml"),
            "-b", encoded, "--parameters_yaml=G: 7", "--log-output"]
    assert papermill_parameter_names(args) == ["A", "B", "C", "D", "E", "F", "G"]


def test_an_unknown_parameter_fails_before_anything_runs(tmp_path):
    out = tmp_path / "01.ipynb"
    done = subprocess.run([sys.executable, "-m", "chunklab_core.reports.notebook_run", str(POST01), str(out),
                           "-p", "N_QUESTION", "80", "-y", "RESAMPLE: 3"],
                          capture_output=True, text=True, timeout=60, cwd=PROJ_ROOT)
    assert done.returncode == 2 and not out.exists() and not list(tmp_path.iterdir())
    assert "N_QUESTION (did you mean N_QUESTIONS?)" in done.stderr and "RESAMPLE (did you mean RESAMPLES?)" in done.stderr
    assert "nothing was run" in done.stderr
    check_parameters(POST01, ["N_QUESTIONS", "RESAMPLES"])  # the right names pass


def test_a_notebook_without_a_parameters_cell_is_refused(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("x = 1")]
    nbformat.write(nb, str(tmp_path / "n.ipynb"))
    with pytest.raises(ParameterError, match="no cell tagged 'parameters'"):
        check_parameters(tmp_path / "n.ipynb", ["x"])


# ---- a failed run never replaces the output ------------------------------------------------------
def test_a_run_failing_midway_leaves_the_output_as_it_was(tmp_path, monkeypatch):
    """papermill stand-in: writes part of the output (as papermill does while it runs), then fails."""
    from chunklab_core.reports import notebook_run

    def fake_papermill(command):
        if "papermill" in command:
            flag = next(a for a in command if a in ("--progress-bar", "--no-progress-bar"))  # CI decides
            written = command[command.index(flag) + 2]
            with open(written, "w", encoding="utf-8") as handle:
                handle.write("{half an error notebook")
            return 1
        raise AssertionError("the cleaner must not run after a failure")

    monkeypatch.setattr(notebook_run, "run_child", fake_papermill)
    output = tmp_path / "02_retrievers.ipynb"
    output.write_text("the committed 864 KB post", encoding="utf-8")
    source = tiny_notebook(tmp_path / "src.ipynb", "pass")
    assert run_notebook(source, output, ["-p", "N", "2"]) == 1
    assert output.read_text(encoding="utf-8") == "the committed 864 KB post"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["02_retrievers.ipynb", "src.ipynb"]


@pytest.mark.slow
def test_a_failed_real_run_leaves_the_committed_output_and_no_temporary_file(tmp_path):
    source = tiny_notebook(tmp_path / "src.ipynb", "if FAIL:\n    raise ValueError('bad documents')\nprint('ran', N)")
    output = tmp_path / "post.ipynb"
    output.write_text("the committed post", encoding="utf-8")
    assert run_notebook(source, output, ["-p", "FAIL", "True"], keep_failed=tmp_path / "failed.ipynb") != 0
    assert output.read_text(encoding="utf-8") == "the committed post"
    assert "bad documents" in (tmp_path / "failed.ipynb").read_text(encoding="utf-8")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["failed.ipynb", "post.ipynb", "src.ipynb"]
    assert run_notebook(source, output, ["-p", "N", "7"]) == 0  # success: moved into place, cleaned
    executed = json.loads(output.read_text(encoding="utf-8"))
    assert "ran 7" in json.dumps(executed["cells"]) and "start_time" not in executed["metadata"]["papermill"]


def test_every_notebook_rule_of_the_makefile_goes_through_the_safe_runner():
    makefile = (PROJ_ROOT / "Makefile").read_text(encoding="utf-8")
    rules = re.findall(r"^(notebooks/\S+\.ipynb):.*\n((?:\t.*\n)+)", makefile, flags=re.M)
    assert [target for target, _ in rules] == ["notebooks/%.ipynb"]  # one pattern rule for every post
    for target, recipe in rules:
        assert "$(PAPERMILL) $< $@" in recipe, target
    assert re.search(r"^PAPERMILL\s*:=\s*\$\(PY\) -m chunklab_core\.reports\.notebook_run ", makefile, flags=re.M)
    assert "-m papermill" not in makefile
    dry = subprocess.run(["make", "-n", "-B", "-o", ".venv/.installed", "-o", ".venv/.llm-installed",
                          "notebooks/01_chunking.ipynb", "PARAMS=-p RESAMPLES 500"],
                         capture_output=True, text=True, cwd=PROJ_ROOT, timeout=60)
    assert "-m chunklab_core.reports.notebook_run --kernel chunklab --runs replay notebooks/src/01_chunking.ipynb " \
           "notebooks/01_chunking.ipynb -p RESAMPLES 500" in dry.stdout  # make all replays the recorded runs


# ---- data errors: all at once, advice fitting the mirror ------------------------------------------
@pytest.fixture
def two_fake_files(monkeypatch):
    entries = []
    for key in ("fake-a", "fake-b"):
        content = key.encode()
        entry = datasets.DataFile(key, f"{key}.json.gz", "http://127.0.0.1:9/none",
                                  hashlib.sha256(content).hexdigest(), len(content), True, key, "none", "none")
        monkeypatch.setitem(datasets.REGISTRY, key, entry)
        entries.append(entry)
    return entries


def test_data_errors_are_listed_together_with_mirror_advice(tmp_path, two_fake_files, monkeypatch):
    monkeypatch.setenv(datasets.MIRROR_ENV, str(tmp_path))
    (tmp_path / "fake-a.json.gz").write_bytes(b"not gzip")
    with gzip.open(tmp_path / "fake-b.json.gz", "wb") as handle:
        handle.write(b"tampered")
    with pytest.raises(datasets.DataError) as err:
        datasets.fetch_all(["fake-a", "fake-b"])
    message = str(err.value)
    assert message.startswith("2 of 2 data file(s) failed")
    assert "fake-a: " in message and "cannot be read" in message and "fake-b: " in message and "checksum mismatch" in message
    assert message.count("replace fake-") == 2 and "fetching again would read the same file" in message
    assert "delete it and fetch again" not in message


def test_without_a_mirror_the_advice_is_to_download(tmp_path, two_fake_files, monkeypatch):
    monkeypatch.delenv(datasets.MIRROR_ENV, raising=False)
    monkeypatch.setattr(datasets.paths, "RAW_DIR", tmp_path)
    with pytest.raises(datasets.DataError) as err:
        datasets.fetch_all(["fake-a", "fake-b"])
    message = str(err.value)
    assert message.count("cannot download") == 2 and f"set {datasets.MIRROR_ENV}" in message


def test_a_failed_run_puts_back_the_tables_and_figures_it_wrote(tmp_path, monkeypatch):
    """A post writes its tables as it runs; a run failing (or killed) after some of them leaves
    every table and figure as it was before the run: replaced ones restored, new ones removed."""
    from chunklab_core.reports import notebook_run

    tables, figures = tmp_path / "data", tmp_path / "figures"
    tables.mkdir(), figures.mkdir()
    (tables / "02_matrix.csv").write_text("committed matrix\n", encoding="utf-8")
    (tables / "01_results.csv").write_text("another post's table\n", encoding="utf-8")
    (figures / "02_matrix.png").write_bytes(b"committed figure")
    monkeypatch.setattr(notebook_run.paths, "TABLES_DIR", tables)
    monkeypatch.setattr(notebook_run.paths, "FIGURES_DIR", figures)

    def half_a_run(command):
        if "papermill" in command:  # the post replaces two outputs and adds one, then fails
            for path, text in ((tables / "02_matrix.csv", "half-written matrix\n"),
                               (tables / "02_new.csv", "new table\n")):
                tmp = path.with_suffix(".tmp")
                tmp.write_text(text, encoding="utf-8")
                os.replace(tmp, path)
            (figures / "02_matrix.png").write_bytes(b"half a figure")  # written in place
            return 1
        raise AssertionError("the cleaner must not run after a failure")

    monkeypatch.setattr(notebook_run, "run_child", half_a_run)
    output = tmp_path / "02_retrievers.ipynb"
    output.write_text("the committed post", encoding="utf-8")
    assert run_notebook(tiny_notebook(tmp_path / "src.ipynb", "pass"), output, []) == 1
    assert (tables / "02_matrix.csv").read_text(encoding="utf-8") == "committed matrix\n"
    assert (tables / "01_results.csv").read_text(encoding="utf-8") == "another post's table\n"
    assert not (tables / "02_new.csv").exists()
    assert (figures / "02_matrix.png").read_bytes() == b"committed figure"
    assert not [p for p in tmp_path.rglob(".outputs-backup-*")]


def test_a_successful_run_keeps_what_it_wrote(tmp_path, monkeypatch):
    from chunklab_core.reports import notebook_run

    tables = tmp_path / "data"
    tables.mkdir()
    (tables / "02_matrix.csv").write_text("old\n", encoding="utf-8")
    monkeypatch.setattr(notebook_run.paths, "TABLES_DIR", tables)
    monkeypatch.setattr(notebook_run.paths, "FIGURES_DIR", tmp_path / "no-figures")

    def a_run(command):
        if "papermill" in command:
            (tables / "02_matrix.csv").write_text("new\n", encoding="utf-8")
        return 0

    monkeypatch.setattr(notebook_run, "run_child", a_run)
    output = tmp_path / "02_retrievers.ipynb"
    assert run_notebook(tiny_notebook(tmp_path / "src.ipynb", "pass"), output, []) == 0
    assert (tables / "02_matrix.csv").read_text(encoding="utf-8") == "new\n"


def test_a_number_given_to_a_notebook_is_bounded_before_anything_runs(tmp_path):
    """Issue 49, class 3: numbers reach a post through PARAMS too. A parameter's kind comes from its
    name (``notebook_run.PARAMETER_KINDS``: RESAMPLES, SEED, N_*/ *_QUESTIONS, K/DEPTHS, *_REPEATS ...);
    any other number must be finite. Every papermill form is read, lists and mappings searched."""
    from chunklab_core.reports.notebook_run import ParameterError, check_parameter_values, papermill_parameter_values

    ok = papermill_parameter_values(["-p", "N_QUESTIONS", "80", "-p", "RESAMPLES", "500", "-p", "WRITE_OUTPUTS", "False",
                                     "-y", "DEPTHS: [5, 10]\nCORPORA: {squad: 8}\nRATE_SPREADS: [0.06]", "-r", "X", "1e999"])
    assert ok == [("N_QUESTIONS", 80), ("RESAMPLES", 500), ("WRITE_OUTPUTS", False), ("DEPTHS", [5, 10]),
                  ("CORPORA", {"squad": 8}), ("RATE_SPREADS", [0.06]), ("X", "1e999")]
    check_parameter_values("post", ok)  # CI's own values pass; a raw (-r) text is text
    for args, said in ((["-p", "RESAMPLES", "0"], "RESAMPLES must be"), (["-p", "N_QUESTIONS", "1000000000000"], "N_QUESTIONS"),
                       (["-y", "DEPTHS: [5, 1000000000]"], "DEPTHS"), (["-p", "SEED", "-1"], "SEED"),
                       (["-p", "SCALE", "nan"], "SCALE must be a finite number"), (["-y", "CORPORA: {squad: .inf}"], "CORPORA"),
                       (["-p", "HELD_OUT_SPLITS", "-3"], "HELD_OUT_SPLITS")):
        with pytest.raises(ParameterError, match=said):
            check_parameter_values("post", papermill_parameter_values(args))


def test_an_out_of_range_number_fails_before_the_notebook_runs(tmp_path):
    out = tmp_path / "01.ipynb"
    done = subprocess.run([sys.executable, "-m", "chunklab_core.reports.notebook_run", str(POST01), str(out),
                           "-p", "N_QUESTIONS", "-5"], capture_output=True, text=True, timeout=60, cwd=PROJ_ROOT)
    assert done.returncode == 2 and not out.exists() and not list(tmp_path.iterdir())
    assert "N_QUESTIONS must be" in done.stderr and "nothing was run" in done.stderr and "Traceback" not in done.stderr
