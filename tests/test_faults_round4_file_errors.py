"""Faults, round four, class 7: every OS and format error on a user's file names the file and the fix (issue 49).

Earlier rounds left raw exceptions at some commands' edges: the cache location pointing at a
file (``NotADirectoryError``), an unreadable records file (``PermissionError``), a torn
``population.csv`` / ``answers.json`` of an audit, an ``.npz`` given as ``--vectors``. Each was
fixed where it was found; the class was not. Now one handler (``core.cli_errors.user_errors``)
sits at the edge of every command: this file checks that every console script and every
``python -m`` entry of the Makefile is wrapped, that each kind of file error becomes one line
naming the file (exit 2, no traceback), and runs real commands on bad files of each kind.
"""

from __future__ import annotations

import builtins
import errno
import importlib
import io
import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from chunklab_core.core import cli_errors
from chunklab_core.core.paths import PROJ_ROOT


def _commands() -> dict[str, str]:
    """Every command's module: pyproject's console scripts and the Makefile's ``python -m chunklab_core...``."""
    scripts = tomllib.loads((PROJ_ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"]
    found = {name: target.split(":")[0] for name, target in scripts.items()}
    makefile = (PROJ_ROOT / "Makefile").read_text(encoding="utf-8")
    for module in re.findall(r"\$\(PY\) -m (chunklab_core[\w.]+)", makefile):
        found.setdefault(f"make: {module}", module)
    return found


COMMANDS = _commands()


def test_the_command_list_is_read_from_pyproject_and_the_makefile():
    assert {"chunklab-own", "chunklab-evaluate", "chunklab-workbench"} <= set(COMMANDS)
    assert "chunklab_core.reports.website" in COMMANDS.values() and "chunklab_core.reports.notebook_run" in COMMANDS.values()


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_command_has_the_edge_handler(name):
    main = importlib.import_module(COMMANDS[name]).main
    assert getattr(main, cli_errors.WRAPPED, False), f"{name}: main is not wrapped by core.cli_errors.user_errors"


# ---- the handler on each kind of error -----------------------------------------------------
def _json(path):
    return json.loads(Path(path).read_text(encoding="utf-8"))


def _yaml(path):
    import yaml

    return yaml.safe_load(Path(path).read_text(encoding="utf-8"))


def _csv(path):
    import pandas as pd

    return pd.read_csv(path)


def _npz(path):
    import numpy as np

    return np.load(path)["a"]


KINDS = {  # kind -> (file bytes, reader, words the message must hold)
    "missing": (None, lambda p: open(p, encoding="utf-8").read(), "no such file"),
    "a folder": ("DIR", lambda p: open(p, encoding="utf-8").read(), "is a folder where a file is expected"),
    "under a file": ("FILE_PARENT", lambda p: open(p, "w"), "is a file where a folder is expected"),
    "not utf-8": (b"\xff\xfeabc", lambda p: Path(p).read_text(encoding="utf-8"), "not UTF-8 text"),
    "torn json": (b'{"qid": "a", "gold', _json, "not valid JSON"),
    "bad yaml": (b"- id: q1\n  query: [unclosed\n", _yaml, "not valid YAML"),
    "torn csv": (b'a,b\n"1,2\n', _csv, "not a readable CSV table"),
    "torn npz": (b"PK\x03\x04torn", _npz, "not a readable .npz/zip archive"),
}


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_each_kind_of_file_error_names_the_file_and_exits_2(kind, tmp_path, capsys):
    content, reader, words = KINDS[kind]
    path = tmp_path / "user_file.dat"
    if content == "DIR":
        path.mkdir()
    elif content == "FILE_PARENT":
        (tmp_path / "plain").write_text("x")
        path = tmp_path / "plain" / "inside.dat"
    elif content is not None:
        path.write_bytes(content)

    @cli_errors.command_edge
    def main():
        reader(path)
        return 0

    assert main() == 2
    err = capsys.readouterr().err
    shown = str(path) if kind not in ("under a file",) else str(tmp_path / "plain")
    assert shown in err and words in err and "Traceback" not in err, err


def test_a_bug_still_raises_with_its_traceback():
    @cli_errors.command_edge
    def main():
        raise KeyError("a bug")

    with pytest.raises(KeyError):
        main()


# ---- real commands on bad files ------------------------------------------------------------
def _files(tmp: Path) -> dict[str, Path]:
    folder = tmp / "bad"
    folder.mkdir()
    (folder / "latin1.csv").write_bytes("item_id,answer\nA1,caf\xe9\n".encode("latin-1"))
    (folder / "latin1.jsonl").write_bytes('{"qid": "caf\xe9"}\n'.encode("latin-1"))
    (folder / "torn.ipynb").write_text('{"cells": [', encoding="utf-8")
    (folder / "a_folder.csv").mkdir()
    (folder / "a_folder.jsonl").mkdir()
    (folder / "plain").write_text("x", encoding="utf-8")
    return {p.name: p for p in folder.iterdir()}


def _mains():
    from chunklab_core.audit import grade_batch, loading, terminal_grader, workbench
    from chunklab_core.evaluators import cli as evaluate_cli
    from chunklab_core.reports import website

    return {
        "chunklab-evaluate records": (evaluate_cli.main, lambda f, t: [str(f), "--out", str(t / "o")], ".jsonl"),
        "chunklab-evaluate --chunks": (evaluate_cli.main, lambda f, t: [str(_records(t)), "--chunks", str(f), "--out",
                                                                       str(t / "o")], ".jsonl"),
        "chunklab-workbench": (workbench.main, lambda f, t: [str(f), "--no-browser"], ".csv"),
        "chunklab-grade": (terminal_grader.main, lambda f, t: [str(f)], ".csv"),
        "chunklab-blank-sheet": (loading.main, lambda f, t: [str(f), str(t / "blank.csv")], ".csv"),
        "chunklab-grade-batch": (grade_batch.main, lambda f, t: [str(f), str(f), "--grader", "g", "--grader-kind",
                                                                 "model:x"], ".csv"),
        "make site": (website.main, lambda f, t: ["--out", str(t / "site"), "--no-lab", str(f)], ".ipynb"),
    }


def _records(tmp: Path) -> Path:
    path = tmp / "records.jsonl"
    path.write_text('{"qid": "a", "gold_ids": ["c0"], "retrieved_ids": ["c0"]}\n', encoding="utf-8")
    return path


def _status(main, argv, capsys) -> tuple[int, str]:
    try:
        status = main(argv)
    except SystemExit as exc:
        status = exc.code if isinstance(exc.code, int) else 1
    captured = capsys.readouterr()
    return status, captured.out + captured.err


@pytest.mark.parametrize("command", sorted(_mains()))
@pytest.mark.parametrize("fault", ["not utf-8", "a folder", "unreadable", "missing"])
def test_every_command_names_a_bad_file_and_exits_non_zero(command, fault, tmp_path, capsys, monkeypatch):
    main, argv, suffix = _mains()[command]
    files = _files(tmp_path)
    target = {"not utf-8": files.get("latin1" + suffix, files["torn.ipynb"]), "a folder": files.get("a_folder" + suffix),
              "unreadable": files.get("latin1" + suffix, files["torn.ipynb"]),
              "missing": tmp_path / "bad" / f"missing{suffix}"}[fault]
    if target is None:
        target = files["a_folder.csv"]
    if fault == "unreadable":  # tests run as root, where chmod 000 reads anyway: the OS's answer, simulated
        real_open = io.open

        def refusing(file, *args, **kwargs):
            if isinstance(file, (str, os.PathLike)) and os.fspath(file) == str(target):
                raise PermissionError(errno.EACCES, "Permission denied", str(target))
            return real_open(file, *args, **kwargs)

        monkeypatch.setattr(builtins, "open", refusing)
        monkeypatch.setattr(io, "open", refusing)
    status, said = _status(main, argv(target, tmp_path), capsys)
    assert status not in (0, None), said
    assert target.name in said and "Traceback" not in said, said


def test_an_unreadable_file_really_is_refused_for_a_user_who_cannot_read_it(tmp_path):
    """The chmod case itself, as a user who is not root (skipped only where no such user can be made)."""
    if os.geteuid() != 0:
        records = _records(tmp_path)
        records.chmod(0)
        result = subprocess.run([sys.executable, "-m", "chunklab_core.evaluators.cli", str(records), "--out",
                                 str(tmp_path / "o")], capture_output=True, text=True, cwd=PROJ_ROOT)
        assert result.returncode == 2 and str(records) in result.stderr and "ermission" in result.stderr
        return
    import shutil

    runuser = shutil.which("setpriv")
    assert runuser, "setpriv (util-linux) is needed to run the check as another user"
    import tempfile

    shared = Path(tempfile.mkdtemp(prefix="chunklab-unreadable-", dir="/tmp"))  # pytest's tmp is root's alone
    shared.chmod(0o777)
    records = _records(shared)
    records.chmod(0o000)
    out = shared / "o"
    env = {**os.environ, "PYTHONPATH": str(PROJ_ROOT), "HOME": str(shared)}
    result = subprocess.run([runuser, "--reuid=65534", "--regid=65534", "--clear-groups", sys.executable, "-c",
                             "import sys; from chunklab_core.evaluators.cli import main; sys.exit(main(sys.argv[1:]))",
                             str(records), "--out", str(out)], capture_output=True, text=True, cwd=str(tmp_path), env=env)
    if "Permission denied" in result.stderr and "python" in result.stderr.lower() and "chunklab" not in result.stderr:
        pytest.fail(f"the interpreter itself is not readable by another user: {result.stderr[:300]}")
    shutil.rmtree(shared)
    assert result.returncode == 2, result.stderr[-800:]
    assert str(records) in result.stderr and "ermission denied" in result.stderr and "Traceback" not in result.stderr
    assert not out.exists()


def test_the_cache_location_pointing_at_a_file_names_the_setting(tmp_path):
    cache = tmp_path / "cache_is_a_file"
    cache.write_text("x", encoding="utf-8")
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# Hours\n\nThe tower opens at nine every day.\n", encoding="utf-8")
    questions = tmp_path / "q.yaml"
    questions.write_text("- id: q1\n  query: When does the tower open?\n  gold_snippets: opens at nine\n",
                         encoding="utf-8")
    config = tmp_path / "c.yaml"
    config.write_text("strategies: [fixed_500]\nretrievers: [dense]\nresamples: 200\nk: 1\n", encoding="utf-8")
    env = {**os.environ, "CHUNKLAB_CACHE": str(cache), "PYTHONPATH": str(PROJ_ROOT)}
    result = subprocess.run([sys.executable, "-m", "chunklab_core.own.cli", "run", str(docs), str(questions),
                             "--config", str(config), "--out", str(tmp_path / "out"), "--no-progress"],
                            capture_output=True, text=True, cwd=tmp_path, env=env, timeout=600)
    assert result.returncode not in (0,), result.stderr[-500:]
    assert f"CHUNKLAB_CACHE={cache}" in result.stderr and "is a file, not a folder" in result.stderr, result.stderr[-800:]
    assert "Traceback" not in result.stderr and not (tmp_path / "out").exists()
