"""Fault injection, signals and concurrent runs (issue 30): SIGTERM and SIGHUP stop the notebook
runner, ``make`` and ``chunklab-own run`` as Ctrl-C does (child kernel ended, temporary output
removed); two runs into one output never share a temporary file.

The real kernels start in a few seconds each; the ``make`` and SIGHUP variants are in the slow tier.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import nbformat
import pytest

from chunklab_core.core.paths import PROJ_ROOT
from chunklab_core.core.signals import Interrupted, run_child, signals_as_interrupt
from chunklab_core.reports import notebook_run
from chunklab_core.reports.notebook_run import run_notebook

ENV = {**os.environ, "PYTHONPATH": str(PROJ_ROOT), "PYTHONUNBUFFERED": "1"}


CELL_SECONDS = 4


def sleeping_notebook(path, folder):
    """Cell 1 writes the kernel's pid and sleeps ``CELL_SECONDS``; cell 2 would write ``late`` after it.
    A runner that stops its kernel on the signal does so inside cell 1."""
    nb = nbformat.v4.new_notebook()
    params = nbformat.v4.new_code_cell("N = 1")
    params.metadata["tags"] = ["parameters"]
    nb.cells = [params,
                nbformat.v4.new_code_cell(f"import os, time, pathlib\nfolder = pathlib.Path({str(folder)!r})\n"
                                          f"(folder / 'kernel.pid').write_text(str(os.getpid()))\ntime.sleep({CELL_SECONDS})"),
                nbformat.v4.new_code_cell("(folder / 'late').write_text('the kernel ran on')")]
    nb.metadata["kernelspec"] = {"name": "chunklab", "display_name": "chunklab", "language": "python"}
    nbformat.write(nb, str(path))
    return path


def wait_for(path, process, seconds=180):
    deadline = time.monotonic() + seconds
    while not path.exists():
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "the kernel never started"
        time.sleep(0.1)
    time.sleep(0.2)  # the pid is written
    return int(path.read_text())


def gone(pid, seconds=20):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.1)
    return False


def _ignore_sigint():
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def signalled_run(tmp_path, command, signum, cwd=None, background=False):
    """Start ``command``, signal it once the kernel runs cell 1, return (exit status, kernel pid).
    ``background``: started with SIGINT ignored, as a shell starts a background job."""
    started = time.monotonic()
    process = subprocess.Popen(command, env=ENV, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               preexec_fn=_ignore_sigint if background else None)
    try:
        pid = wait_for(tmp_path / "kernel.pid", process)
        process.send_signal(signum)
        output, _ = process.communicate(timeout=90)
    finally:
        if process.poll() is None:
            process.kill()
    assert gone(pid), f"kernel {pid} still runs after the runner exited"
    time.sleep(max(0.0, started + 1 - time.monotonic()))
    return process.returncode, output


@pytest.mark.parametrize("signum, background", [(signal.SIGTERM, False),
                                                pytest.param(signal.SIGTERM, True, marks=pytest.mark.heavy),
                                                pytest.param(signal.SIGHUP, False, marks=pytest.mark.slow)],
                         ids=["SIGTERM", "SIGTERM to a background job (SIGINT ignored)", "SIGHUP"])
def test_a_signal_stops_the_notebook_runner_like_ctrl_c(tmp_path, signum, background):
    source = sleeping_notebook(tmp_path / "src.ipynb", tmp_path)
    output = tmp_path / "post.ipynb"
    output.write_text("the committed post", encoding="utf-8")
    status, printed = signalled_run(tmp_path, [sys.executable, "-m", "chunklab_core.reports.notebook_run",
                                               "--kernel", "chunklab", str(source), str(output)], signum,
                                    background=background)
    assert status == 128 + signum, printed
    last = printed.strip().splitlines()[-1]  # papermill and the stopped kernel log above it, as on Ctrl-C
    assert last.startswith("notebook_run: ") and f"interrupted (stopped by {signum.name})" in last, printed
    time.sleep(CELL_SECONDS)  # cell 1 would have ended: cell 2 never runs
    assert output.read_text(encoding="utf-8") == "the committed post"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kernel.pid", "post.ipynb", "src.ipynb"]


@pytest.mark.slow
def test_sigterm_to_make_stops_its_notebook_rule_cleanly(tmp_path):
    source = sleeping_notebook(tmp_path / "src.ipynb", tmp_path)
    (tmp_path / "Makefile").write_text(  # the notebook rule's form, as in the project's Makefile
        f"PAPERMILL := {sys.executable} -m chunklab_core.reports.notebook_run --kernel chunklab\n"
        "post.ipynb: src.ipynb\n\t$(PAPERMILL) $< $@\n", encoding="utf-8")
    status, printed = signalled_run(tmp_path, ["make", "-C", str(tmp_path), "post.ipynb"], signal.SIGTERM)
    assert status != 0
    time.sleep(CELL_SECONDS)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["Makefile", "kernel.pid", "src.ipynb"], printed


def test_two_runs_into_one_output_never_share_a_temporary_file(tmp_path, monkeypatch):
    """Run B starts while run A executes and is stopped with Ctrl-C; A must still land whole."""
    source = sleeping_notebook(tmp_path / "src.ipynb", tmp_path)
    output = tmp_path / "post.ipynb"
    names = []

    def papermill(command):
        written = command[command.index("--progress-bar" if "--progress-bar" in command else "--no-progress-bar") + 2]
        names.append(written)
        if len(names) == 1:  # run A: while it executes, run B starts and is interrupted
            with open(written, "w", encoding="utf-8") as handle:
                handle.write("run A, every cell")
            with pytest.raises(KeyboardInterrupt):
                run_notebook(source, output, [])
            return 0
        with open(written, "w", encoding="utf-8") as handle:
            handle.write("run B, 5 of 20 cells")
        raise KeyboardInterrupt

    monkeypatch.setattr(notebook_run, "run_child", lambda command: papermill(command) if "papermill" in command else 0)
    assert run_notebook(source, output, []) == 0
    assert names[0] != names[1] and all(os.path.dirname(n) == str(tmp_path) for n in names)
    assert output.read_text(encoding="utf-8") == "run A, every cell"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["post.ipynb", "src.ipynb"]


def test_sigterm_inside_signals_as_interrupt_is_a_keyboard_interrupt_and_the_handler_comes_back():
    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(KeyboardInterrupt) as err:
        with signals_as_interrupt():
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)
    assert isinstance(err.value, Interrupted) and err.value.signum == signal.SIGTERM
    assert signal.getsignal(signal.SIGTERM) is before


def test_run_child_passes_the_interrupt_on_as_sigint_and_waits_for_the_child(tmp_path):
    script = ("import signal, sys, time, pathlib\n"
              "def stop(*a):\n    pathlib.Path(sys.argv[1]).write_text('cleaned up'); sys.exit(0)\n"
              "signal.signal(signal.SIGINT, stop)\npathlib.Path(sys.argv[2]).write_text('up')\ntime.sleep(60)\n")
    ready = tmp_path / "ready"
    killer = subprocess.Popen([sys.executable, "-c", "import os, sys, time, pathlib, signal\n"
                               f"p = pathlib.Path({str(ready)!r})\n"
                               "while not p.exists(): time.sleep(0.05)\n"
                               f"os.kill({os.getpid()}, signal.SIGTERM)"])
    try:
        with pytest.raises(Interrupted):
            run_child([sys.executable, "-c", script, str(tmp_path / "done"), str(ready)])
    finally:
        killer.wait(timeout=30)
    assert (tmp_path / "done").read_text() == "cleaned up"


def test_the_per_run_temporary_name_does_not_make_the_post_private(tmp_path, monkeypatch):
    source = sleeping_notebook(tmp_path / "src.ipynb", tmp_path)
    output = tmp_path / "post.ipynb"
    output.write_text("old", encoding="utf-8")
    os.chmod(output, 0o644)

    def papermill(command):
        if "papermill" in command:
            with open(command[-1], "w", encoding="utf-8") as handle:  # as papermill does: into the file
                handle.write("new")
        return 0

    monkeypatch.setattr(notebook_run, "run_child", papermill)
    assert run_notebook(source, output, []) == 0
    assert output.read_text(encoding="utf-8") == "new" and (output.stat().st_mode & 0o777) == 0o644
