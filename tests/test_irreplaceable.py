"""Irreplaceable inputs apart from regenerated tables (issue 12, item 5): the folders, the
snapshot that notices a write, and the notebook runner that fails a notebook writing there."""

from __future__ import annotations

import hashlib
import json
import re
import subprocess

import nbformat
import pytest

from chunklab_core.audit.synthetic import write_synthetic_audit
from chunklab_core.core import paths
from chunklab_core.core.snapshot import FileState, compare, describe, snapshot
from chunklab_core.llm.records import CallStore
from chunklab_core.reports.notebook_run import IRREPLACEABLE_WRITTEN, run_notebook


# ---- the folders ---------------------------------------------------------------------------------
def test_the_irreplaceable_folders_are_records_audit_and_runs_under_data():
    assert paths.IRREPLACEABLE_DIRS == (paths.RECORDS_DIR, paths.AUDIT_DIR, paths.RUNS_DIR)
    assert paths.RECORDS_DIR == paths.DATA_DIR / "records" and paths.AUDIT_DIR == paths.DATA_DIR / "audit"
    assert paths.RUNS_DIR == paths.DATA_DIR / "runs"
    assert all(folder.is_dir() and any(folder.iterdir()) for folder in paths.IRREPLACEABLE_DIRS)
    assert paths.irreplaceable_folder_of(paths.RECORDS_DIR / "answers_qwen15.jsonl") == paths.RECORDS_DIR
    assert paths.irreplaceable_folder_of(paths.AUDIT_DIR) == paths.AUDIT_DIR
    assert paths.irreplaceable_folder_of(paths.TABLES_DIR / "05_answers.csv") is None
    assert paths.irreplaceable_folder_of(paths.DATA_DIR / "records_old" / "x.jsonl") is None  # a prefix is not inside


def test_no_committed_table_sits_in_an_irreplaceable_folder():
    """The notebooks' tables (``NN_*.csv``) live at the top of data/, never among the inputs."""
    tables = [p for p in paths.DATA_DIR.rglob("*") if re.match(r"\d\d_", p.name)]
    assert tables and all(p.parent == paths.TABLES_DIR for p in tables)


def test_recorded_stages_are_read_from_the_records_folder_by_default():
    for stage in ("answers_qwen15", "judges_qwen15", "judges_qwen05", "questions_qwen15", "rerank_qwen15",
                  "judge_retest_qwen15"):
        store = CallStore.for_stage(stage)
        assert store.path == paths.RECORDS_DIR / f"{stage}.jsonl" and store.path.is_file()


def test_post05_runtime_is_read_from_the_records_folder_and_a_missing_folder_is_an_error(tmp_path, monkeypatch):
    from chunklab_core.reports.post05.claims import recorded_runtime

    record = {"backend": "llamacpp", "runtime": {"llama_cpp": "0.3.16", "n_threads": 2, "n_ctx": 4096}}
    (tmp_path / "answers_x.jsonl").write_text(json.dumps(record) + "\n" + json.dumps(record) + "\n")
    monkeypatch.setattr(paths, "RECORDS_DIR", tmp_path)
    assert recorded_runtime() == "llamacpp, llama_cpp 0.3.16, n_threads 2"  # n_ctx left out, one line per runtime
    with pytest.raises(FileNotFoundError, match="llm_calls does not exist"):
        recorded_runtime(tmp_path / "llm_calls")  # the old folder: an error, not "runtime not recorded"


def test_the_makefile_inputs_name_existing_files_in_the_new_folders():
    """``$(wildcard ...)`` drops a stale path silently; every input variable must list real files."""
    database = subprocess.run(["make", "-pn", "-o", ".venv/.installed", "help"], capture_output=True,
                              text=True, cwd=paths.PROJ_ROOT, timeout=60).stdout
    for name, folder in (("LLM_CALLS", "records"), ("QUESTION_CALLS", "records"), ("RERANK_CALLS", "records"),
                         ("POST06_INPUTS", "audit")):
        line = re.search(rf"^{name} := (.*)$", database, flags=re.M)
        files = line.group(1).split() if line else []
        assert files, name
        assert all((paths.PROJ_ROOT / f).is_file() for f in files), name
        assert any(f.startswith(f"data/{folder}/") for f in files), name
    assert "llm_calls" not in (paths.PROJ_ROOT / "Makefile").read_text(encoding="utf-8")


def test_a_synthetic_audit_is_never_written_into_an_irreplaceable_folder(tmp_path, monkeypatch):
    audit = tmp_path / "audit"
    monkeypatch.setattr(paths, "IRREPLACEABLE_DIRS", (tmp_path / "records", audit))
    with pytest.raises(ValueError, match="inside .*audit"):
        write_synthetic_audit(audit / "trial", n_items=240, n_sample=60, seed=4)
    assert not audit.exists()
    files, _ = write_synthetic_audit(tmp_path / "elsewhere", n_items=240, n_sample=60, seed=4)
    assert files["sheet"].is_file()


# ---- snapshots -----------------------------------------------------------------------------------
def test_a_snapshot_keeps_size_and_sha256_of_every_file_including_nested_and_hidden(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "deep").mkdir()
    (tmp_path / "a" / "x.jsonl").write_bytes(b"abc")
    (tmp_path / "a" / "deep" / ".lock").write_bytes(b"")
    state = snapshot([tmp_path / "a", tmp_path / "missing"])
    assert state == {
        (tmp_path / "a" / "x.jsonl").resolve(): FileState(3, hashlib.sha256(b"abc").hexdigest()),
        (tmp_path / "a" / "deep" / ".lock").resolve(): FileState(0, hashlib.sha256(b"").hexdigest()),
    }


def test_compare_names_added_changed_and_removed_files(tmp_path):
    for name, text in (("keep", "same"), ("edit", "abc"), ("gone", "x")):
        (tmp_path / name).write_text(text)
    before = snapshot([tmp_path])
    (tmp_path / "edit").write_text("abd")  # same size, other bytes: the sha256 tells
    (tmp_path / "gone").unlink()
    (tmp_path / "new").write_text("y")
    changes = compare(before, snapshot([tmp_path]))
    assert changes.added == ((tmp_path / "new").resolve(),)
    assert changes.changed == ((tmp_path / "edit").resolve(),)
    assert changes.removed == ((tmp_path / "gone").resolve(),)
    assert describe(changes).splitlines() == [f"  added {tmp_path.resolve() / 'new'}",
                                              f"  changed {tmp_path.resolve() / 'edit'}",
                                              f"  removed {tmp_path.resolve() / 'gone'}"]
    assert not compare(before, before)


# ---- the notebook runner: a notebook that writes into the inputs fails -----------------------------
def writing_notebook(path):
    """A post whose code appends a line to each file of ``APPEND`` and deletes each of ``REMOVE``."""
    nb = nbformat.v4.new_notebook()
    params = nbformat.v4.new_code_cell("APPEND = []\nREMOVE = []")
    params.metadata["tags"] = ["parameters"]
    body = ("from pathlib import Path\n"
            "for target in APPEND:\n"
            "    Path(target).parent.mkdir(parents=True, exist_ok=True)\n"
            "    with open(target, 'a', encoding='utf-8') as f:\n        f.write('one more line\\n')\n"
            "for target in REMOVE:\n    Path(target).unlink()\n"
            "print('done', len(APPEND), len(REMOVE))")
    nb.cells = [params, nbformat.v4.new_code_cell(body)]
    nb.metadata["kernelspec"] = {"name": "chunklab", "display_name": "chunklab", "language": "python"}
    nbformat.write(nb, str(path))
    return path


@pytest.fixture
def guarded(tmp_path, monkeypatch):
    """Temporary irreplaceable folders holding committed-looking files."""
    records, audit = tmp_path / "records", tmp_path / "audit"
    records.mkdir()
    audit.mkdir()
    (records / "answers.jsonl").write_text('{"key": "k"}\n', encoding="utf-8")
    (audit / "sheet.csv").write_text("item_id,grade\nA1,correct\n", encoding="utf-8")
    (audit / "key.csv").write_text("item_id,weight\nA1,2.0\n", encoding="utf-8")
    monkeypatch.setattr(paths, "IRREPLACEABLE_DIRS", (records, audit))
    return records, audit


@pytest.mark.heavy
def test_a_notebook_writing_into_the_irreplaceable_folders_fails_and_leaves_the_output(tmp_path, guarded, capsys):
    records, audit = guarded
    source = writing_notebook(tmp_path / "src.ipynb")
    output = tmp_path / "post.ipynb"
    output.write_text("the committed post", encoding="utf-8")
    args = ["-y", f"APPEND: ['{records / 'answers.jsonl'}', '{audit / 'new_sheet.csv'}']\n"
                  f"REMOVE: ['{audit / 'key.csv'}']"]
    assert run_notebook(source, output, args) == IRREPLACEABLE_WRITTEN
    assert output.read_text(encoding="utf-8") == "the committed post"  # not replaced by the run
    assert sorted(p.name for p in tmp_path.iterdir()) == ["audit", "post.ipynb", "records", "src.ipynb"]
    message = capsys.readouterr().err
    assert "WROTE INTO THE IRREPLACEABLE FOLDERS" in message
    for line in (f"changed {(records / 'answers.jsonl').resolve()}", f"added {(audit / 'new_sheet.csv').resolve()}",
                 f"removed {(audit / 'key.csv').resolve()}"):
        assert line in message
    assert f"{audit / 'sheet.csv'}" not in message  # an untouched file is not named


@pytest.mark.heavy
def test_a_notebook_writing_elsewhere_succeeds(tmp_path, guarded):
    before = snapshot(guarded)
    source = writing_notebook(tmp_path / "src.ipynb")
    output = tmp_path / "post.ipynb"
    output.write_text("the committed post", encoding="utf-8")
    table = tmp_path / "tables" / "05_x.csv"
    assert run_notebook(source, output, ["-y", f"APPEND: ['{table}']"]) == 0
    assert "done 1 0" in output.read_text(encoding="utf-8")  # the executed post moved into place
    assert table.read_text(encoding="utf-8") == "one more line\n"
    assert not compare(before, snapshot(guarded))
