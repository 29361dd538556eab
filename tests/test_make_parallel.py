"""`make all` replays independent posts at once, in dependency order, with readable output.

A copy of the repository's Makefile runs `make all JOBS=2` with a stand-in for the notebook
runner (it logs when each post starts and ends, then writes the post): two posts run at the same
time, post 03 starts after post 01 ends, post 00 after every other post, and each post's lines
come out together (``--output-sync``), never interleaved with another post's.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from chunklab_core.core.paths import PROJ_ROOT

FAKE_RUNNER = """#!/bin/sh
# stand-in for the notebook runner: $1 source, $2 output
echo "begin $2"
echo "$2 start $(date +%s.%N)" >> "{log}"
sleep 1.5
echo "$2 end $(date +%s.%N)" >> "{log}"
echo "{{}}" > "$2"
echo "end $2 progress=$CHUNKLAB_PROGRESS"
"""


def _repo_copy(tmp: Path) -> Path:
    copy = tmp / "repo"
    copy.mkdir()
    shutil.copy2(PROJ_ROOT / "Makefile", copy / "Makefile")
    shutil.copytree(PROJ_ROOT / "scripts", copy / "scripts")
    shutil.copytree(PROJ_ROOT / "notebooks" / "src", copy / "notebooks" / "src")
    shutil.copytree(PROJ_ROOT / "chunklab_core", copy / "chunklab_core", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(PROJ_ROOT / "requirements", copy / "requirements")
    shutil.copy2(PROJ_ROOT / "pyproject.toml", copy / "pyproject.toml")
    installed = copy / ".venv" / ".installed"  # the environment counts as made (newer than the lock)
    installed.parent.mkdir()
    installed.touch()
    os.utime(installed, (2_000_000_000, 2_000_000_000))
    makefile = (copy / "Makefile").read_text(encoding="utf-8")
    from chunklab_core.reports.posts import POSTS, findings_tables  # the one list of posts feeds the Makefile

    audit_inputs = [i.replace("$(AUDIT)", "data/audit") for p in POSTS for i in p.inputs if i.startswith("$(AUDIT)/")]
    for name in [f"data/{t}" for t in findings_tables()] + audit_inputs:
        (copy / name).parent.mkdir(parents=True, exist_ok=True)
        (copy / name).write_text("x\n", encoding="utf-8")
    return copy


@pytest.mark.heavy  # make and the deps generator on a repository copy, and 1.5 s per post
def test_make_all_runs_posts_in_parallel_in_dependency_order(tmp_path):
    copy = _repo_copy(tmp_path)
    log = tmp_path / "times.log"
    runner = tmp_path / "runner.sh"
    runner.write_text(FAKE_RUNNER.format(log=log), encoding="utf-8")
    runner.chmod(runner.stat().st_mode | stat.S_IXUSR)
    env = {k: v for k, v in os.environ.items() if not k.startswith("MAKE")}
    done = subprocess.run(["make", "--no-print-directory", f"PYTHON_SYS={sys.executable}",
                           "PY=true", f"PAPERMILL={runner}", "JOBS=2", "all"],
                          cwd=copy, capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    spans: dict[str, dict[str, float]] = {}
    for line in log.read_text(encoding="utf-8").splitlines():
        post, what, when = line.split()
        spans.setdefault(Path(post).name[:2], {})[what] = float(when)
    assert {"00", "01", "02", "03", "05", "08"} <= set(spans), sorted(spans)
    events = sorted((t[w], +1 if w == "start" else -1) for t in spans.values() for w in ("start", "end"))
    running, most = 0, 0
    for _, step in events:
        running += step
        most = max(most, running)
    assert most == 2, f"at most {most} post(s) ran at once with JOBS=2"
    assert spans["03"]["start"] >= spans["01"]["end"]
    assert all(spans["00"]["start"] >= t["end"] for post, t in spans.items() if post != "00")
    lines = [line for line in done.stdout.splitlines() if line.startswith(("begin ", "end "))]
    for first, second in zip(lines[::2], lines[1::2]):  # each post's lines together
        assert first.startswith("begin ") and second.startswith("end ") and first.split()[1] == second.split()[1]
    assert all(line.endswith("progress=0") for line in lines if line.startswith("end "))


def test_a_failed_post_leaves_the_files_of_a_post_running_beside_it(tmp_path, monkeypatch):
    """Post 02 fails while post 08 (run in parallel) writes its tables: 02's own files are put
    back, 08's new and rewritten files stay as 08 wrote them."""
    import nbformat

    from chunklab_core.reports import notebook_run

    tables, figures = tmp_path / "data", tmp_path / "figures"
    tables.mkdir(), figures.mkdir()
    (tables / "02_matrix.csv").write_text("committed matrix\n", encoding="utf-8")
    (tables / "08_report.csv").write_text("committed report\n", encoding="utf-8")
    monkeypatch.setattr(notebook_run.paths, "TABLES_DIR", tables)
    monkeypatch.setattr(notebook_run.paths, "FIGURES_DIR", figures)

    def failing_beside_another(command):
        if "papermill" in command:
            (tables / "02_matrix.csv").write_text("half-written matrix\n", encoding="utf-8")
            (tables / "08_report.csv").write_text("post 08's new report\n", encoding="utf-8")  # the other post
            (figures / "08_builder.png").write_bytes(b"post 08's figure")
            return 1
        raise AssertionError("the cleaner must not run after a failure")

    monkeypatch.setattr(notebook_run, "run_child", failing_beside_another)
    source = tmp_path / "src.ipynb"
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("N = 1", metadata={"tags": ["parameters"]})]
    nbformat.write(nb, str(source))
    assert notebook_run.run_notebook(source, tmp_path / "02_retrievers.ipynb", []) == 1
    assert (tables / "02_matrix.csv").read_text(encoding="utf-8") == "committed matrix\n"
    assert (tables / "08_report.csv").read_text(encoding="utf-8") == "post 08's new report\n"
    assert (figures / "08_builder.png").read_bytes() == b"post 08's figure"
