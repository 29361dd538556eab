"""The terminal grader end to end in a pseudo-terminal, its line-input fallback, crash safety."""

from __future__ import annotations

import io
import os
import select
import signal
import subprocess
import sys
import threading
import time
from datetime import datetime, timezone

import numpy as np
import pexpect
import pytest

from chunklab_core.audit.terminal_grader import KeyReader, wrap
from chunklab_core.core.paths import PROJ_ROOT
from chunklab_core.audit.sheets import SHEET_COLUMNS, read_sheet, write_sheet_rows

ENV = {**os.environ, "PYTHONPATH": str(PROJ_ROOT), "PYTHONUNBUFFERED": "1"}
GRADER = [sys.executable, "-m", "chunklab_core.audit.terminal_grader"]


def make_sheet(path, n=5, passage_chars=40):
    rows = [dict(item_id=f"A{i:03d}", question=f"Question number {i}?",
                 reference=f"gold {i} | other {i}", passage=f"PASSAGE-{i} " + "x" * passage_chars,
                 answer=f"The answer is {i}, " + "word " * 40, grade="", grader="",
                 graded_at="", note="") for i in range(1, n + 1)]
    write_sheet_rows(path, SHEET_COLUMNS, rows)
    return path


def spawn(*args):
    child = pexpect.spawn(GRADER[0], GRADER[1:] + [str(a) for a in args], cwd=str(PROJ_ROOT),
                          env=ENV, encoding="utf-8", timeout=60, dimensions=(40, 100))
    child.delaybeforesend = None  # keystrokes at once; the expect calls do the waiting
    return child


def grades(path):
    return [(r["grade"], r["grader"]) for r in read_sheet(path)[1]]


def test_grade_quit_resume_finish_in_a_pty(tmp_path):
    sheet = make_sheet(tmp_path / "sheet.csv")
    before = datetime.now(timezone.utc).replace(microsecond=0)
    child = spawn(sheet, "--grader", "ana")
    for n, key in ((1, "c"), (2, "p"), (3, "w")):
        child.expect(f"item {n}/5")
        child.expect_exact("[?]help > ")
        child.send(key)  # one keypress, no Enter
    child.expect("item 4/5")
    child.send("q")
    child.expect_exact("graded 3/5, skipped 0, remaining 2")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert grades(sheet) == [("correct", "ana"), ("partial", "ana"), ("wrong", "ana"),
                             ("", ""), ("", "")]

    child = spawn(sheet)  # no --grader: the sheet's grader is reused, no question asked
    child.expect("grader: ana")
    child.expect("item 4/5")
    child.send("w")
    child.expect("item 5/5")
    child.send("c")
    child.expect_exact("graded 5/5, skipped 0, remaining 0")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    rows = read_sheet(sheet)[1]
    assert [r["grade"] for r in rows] == ["correct", "partial", "wrong", "wrong", "correct"]
    assert {r["grader"] for r in rows} == {"ana"}
    after = datetime.now(timezone.utc)
    for row in rows:
        stamp = datetime.fromisoformat(row["graded_at"])
        assert stamp.tzinfo is not None and before <= stamp <= after
    assert [r["question"] for r in rows] == [f"Question number {i}?" for i in range(1, 6)]


def test_overwrite_needs_confirmation(tmp_path):
    sheet = make_sheet(tmp_path / "sheet.csv", n=3)
    child = spawn(sheet, "--grader", "ana")
    child.expect("item 1/3")
    child.send("c")
    child.expect("item 2/3")
    child.send("b")
    child.expect("item 1/3")
    child.expect("already graded: correct by ana")
    child.send("w")
    child.expect_exact("overwrite correct with wrong? [y/N]")
    child.send("n")
    child.expect("kept correct")
    assert grades(sheet)[0] == ("correct", "ana")
    child.send("c")  # same verdict: kept without a question, moves on
    child.expect("kept correct")
    child.expect("item 2/3")
    child.send("b")
    child.expect("item 1/3")
    child.send("p")
    child.expect_exact("overwrite correct with partial? [y/N]")
    child.send("y")
    child.expect("item 2/3")
    child.send("q")
    child.expect(pexpect.EOF)
    child.close()
    assert grades(sheet) == [("partial", "ana"), ("", ""), ("", "")]


def test_skip_back_view_help_and_unknown_keys(tmp_path):
    sheet = make_sheet(tmp_path / "sheet.csv", n=4)
    child = spawn(sheet, "--grader", "bo")
    child.expect("item 1/4")
    child.send("b")
    child.expect("this is the first item")
    child.send("v")
    child.expect("PASSAGE-1 ")
    child.send("?")
    child.expect("skip +leave it ungraded")
    child.send("z")
    child.expect("unknown key 'z'")
    child.send("s")
    child.expect("item 2/4")
    child.send("c")
    child.expect("item 3/4")
    child.send("b")
    child.expect("item 2/4")
    child.send("b")
    child.expect("item 1/4")
    child.send("s")
    child.expect("item 2/4")
    child.send("s")
    child.expect("item 3/4")
    child.send("q")
    child.expect_exact("graded 1/4, skipped 1, remaining 2")
    child.expect(pexpect.EOF)
    child.close()
    assert grades(sheet) == [("", ""), ("correct", "bo"), ("", ""), ("", "")]
    child = spawn(sheet, "--grader", "bo")
    child.expect("item 1/4")  # resumes at the first ungraded item: the skipped one
    child.sendcontrol("c")
    child.expect("interrupted; every grade so far is saved")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 130


def test_keys_typed_ahead_are_kept_and_arrow_keys_ignored(tmp_path):
    sheet = make_sheet(tmp_path / "sheet.csv", n=3)
    child = spawn(sheet, "--grader", "ana")
    child.expect("item 1/3")
    child.send("cp")  # typed before the grader asks: neither key may be lost
    child.expect("item 3/3")
    child.send("\x1b[A")  # arrow up: one unknown key, not three
    child.expect("unknown key 'esc'")
    child.send("w")
    child.expect(pexpect.EOF)
    child.close()
    assert grades(sheet) == [("correct", "ana"), ("partial", "ana"), ("wrong", "ana")]


def test_grader_name_is_asked_once(tmp_path):
    sheet = make_sheet(tmp_path / "sheet.csv", n=2)
    child = spawn(sheet)
    child.expect("your name or initials")
    child.sendline("cy")
    child.expect("item 1/2")
    child.send("w")
    child.expect("item 2/2")
    child.send("w")
    child.expect(pexpect.EOF)
    child.close()
    assert grades(sheet) == [("wrong", "cy"), ("wrong", "cy")]


def test_line_input_when_stdin_is_not_a_tty(tmp_path):
    sheet = make_sheet(tmp_path / "sheet.csv", n=4)
    done = subprocess.run(GRADER + [str(sheet), "--grader", "dee"], input="correct\nw\n\ns\n",
                          capture_output=True, text=True, env=ENV, timeout=30)
    assert done.returncode == 0, done.stderr
    assert "graded 2/4, skipped 1, remaining 1" in done.stdout  # end of input = quit
    assert grades(sheet) == [("correct", "dee"), ("wrong", "dee"), ("", ""), ("", "")]


def test_a_broken_sheet_is_refused_untouched(tmp_path):
    sheet = make_sheet(tmp_path / "sheet.csv", n=2)
    text = sheet.read_text().replace("A002,", "A001,")
    sheet.write_text(text)
    done = subprocess.run(GRADER + [str(sheet), "--grader", "x"], input="c\n",
                          capture_output=True, text=True, env=ENV, timeout=30)
    assert done.returncode == 2
    assert "rows 2, 3: item_id 'A001' appears 2 times" in done.stdout
    assert sheet.read_text() == text


def press_once_raw(master, slave, data):
    """Type ``data`` on the pty as soon as the reader has switched it to raw mode."""
    import termios

    def press():
        deadline = time.monotonic() + 10
        while termios.tcgetattr(slave)[3] & termios.ICANON and time.monotonic() < deadline:
            time.sleep(0.005)
        os.write(master, data)

    thread = threading.Thread(target=press)
    thread.start()
    return thread


def test_raw_mode_is_restored_after_a_key_and_after_ctrl_c():
    import termios

    def stuck(signum, frame):
        raise AssertionError("the key was never read (typed-ahead input flushed?)")

    previous = signal.signal(signal.SIGALRM, stuck)
    signal.alarm(10)  # a lost key would block os.read forever
    master, slave = os.openpty()
    try:
        stream = os.fdopen(slave, "r", closefd=False)
        reader = KeyReader(stream, io.StringIO())
        assert reader.raw
        normal = termios.tcgetattr(slave)
        assert normal[3] & termios.ICANON
        os.write(master, b"W")  # typed ahead, while the terminal is still in line mode
        assert reader.key("> ") == "w"
        assert termios.tcgetattr(slave) == normal
        thread = press_once_raw(master, slave, b"\x03")  # in raw mode Ctrl-C is a byte
        with pytest.raises(KeyboardInterrupt):
            reader.key("> ")
        thread.join()
        assert termios.tcgetattr(slave) == normal
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
        os.close(master)
        os.close(slave)


def test_wrap_fits_the_width_and_keeps_paragraphs():
    text = "alpha " * 30 + "\n\nsecond paragraph"
    lines = wrap(text, 30).splitlines()
    assert all(len(line) <= 30 for line in lines)
    assert "" in lines and lines[-1] == "  second paragraph"
    assert wrap("  ", 30) == "  (empty)"


# ------------------------------------------------------------------ crash safety

PATCHED = """
import os, sys, time
real_replace = os.replace
def patched(src, dst):
    if MODE == "before":
        print("MARK", flush=True); time.sleep(60)
    real_replace(src, dst)
    if MODE == "after":
        print("MARK", flush=True); time.sleep(60)
os.replace = patched
from chunklab_core.audit.terminal_grader import main
sys.exit(main([SHEET, "--grader", "ana"]))
"""


def wait_for(proc, marker, timeout=60.0):
    seen, deadline = b"", time.monotonic() + timeout
    while marker not in seen:
        ready, _, _ = select.select([proc.stdout], [], [], max(0.0, deadline - time.monotonic()))
        chunk = os.read(proc.stdout.fileno(), 65536) if ready else b""
        if not chunk:
            raise AssertionError(f"no {marker!r} in output: {seen[-500:]!r}")
        seen += chunk


@pytest.mark.parametrize("mode", ["before", "after"])
def test_sigkill_around_the_rename_leaves_old_or_new_sheet(tmp_path, mode):
    sheet = make_sheet(tmp_path / "sheet.csv", n=3, passage_chars=20000)
    original = sheet.read_bytes()
    script = f"MODE = {mode!r}\nSHEET = {str(sheet)!r}\n" + PATCHED
    proc = subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, env=ENV)
    try:
        proc.stdin.write(b"c\n")
        proc.stdin.flush()
        wait_for(proc, b"MARK")
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        proc.stdin.close()
        proc.stdout.close()
    if mode == "before":  # killed with the new sheet written but not yet renamed
        assert sheet.read_bytes() == original
        assert len(list(tmp_path.glob(".sheet.csv.*.tmp"))) == 1
    else:
        assert grades(sheet) == [("correct", "ana"), ("", ""), ("", "")]


def test_sigkill_at_random_moments_never_tears_the_sheet(tmp_path):
    n = 40
    sheet = make_sheet(tmp_path / "sheet.csv", n=n, passage_chars=5000)
    original_rows = read_sheet(sheet)[1]
    rng = np.random.default_rng(20240601)
    done_before = 0
    for _ in range(20):
        proc = subprocess.Popen(GRADER + [str(sheet), "--grader", "ana"], env=ENV,
                                stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)
        proc.stdin.write(b"c\n" * n)
        proc.stdin.flush()
        time.sleep(rng.uniform(0.0, 0.4))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        proc.stdin.close()
        fieldnames, rows = read_sheet(sheet)  # parses: never torn
        assert tuple(fieldnames) == SHEET_COLUMNS and len(rows) == n
        done = sum(r["grade"] != "" for r in rows)
        assert done >= done_before
        for row, old in zip(rows, original_rows):
            assert {k: row[k] for k in SHEET_COLUMNS[:5]} == {k: old[k] for k in SHEET_COLUMNS[:5]}
        assert [r["grade"] for r in rows] == ["correct"] * done + [""] * (n - done)
        assert [r["grader"] for r in rows] == ["ana"] * done + [""] * (n - done)
        assert all(datetime.fromisoformat(r["graded_at"]) for r in rows[:done])
        done_before = done
        if done == n:  # start over so later kills land mid-run again
            write_sheet_rows(sheet, SHEET_COLUMNS, original_rows)
            done_before = 0
