"""Fault injection, grader and sheets: two graders, a spreadsheet saving meanwhile, kills,
and the cells, columns, BOM, line endings and file mode a save must keep (issue 15)."""

from __future__ import annotations

import codecs
import io
import json
import os
import socket
import stat
import subprocess
import sys
import time

from chunklab_core.audit.terminal_grader import grade_sheet
from chunklab_core.core.paths import PROJ_ROOT
from chunklab_core.audit.sheet_file import SheetFile, SheetLock
from chunklab_core.audit.sheets import SHEET_COLUMNS, read_sheet, write_sheet_rows

ENV = {**os.environ, "PYTHONPATH": str(PROJ_ROOT), "PYTHONUNBUFFERED": "1"}
GRADER = [sys.executable, "-m", "chunklab_core.audit.terminal_grader"]


def make_sheet(path, n=3):
    rows = [dict(item_id=f"A{i}", question=f"Q{i}?", reference=f"gold {i}", passage=f"P{i}",
                 answer=f"ans {i}", grade="", grader="", graded_at="", note="") for i in range(1, n + 1)]
    write_sheet_rows(path, SHEET_COLUMNS, rows)
    return path


def run(path, keys, **kwargs):
    out = io.StringIO()
    status = grade_sheet(path, grader="ana", stdin=io.StringIO(keys), stdout=out, **kwargs)
    return status, out.getvalue()


def spreadsheet_csv(path, lines, bom=True, newline="\r\n"):
    """A sheet as Excel saves one: BOM, CRLF, every line given as raw CSV text."""
    path.write_bytes((codecs.BOM_UTF8 if bom else b"") + newline.join(lines).encode("utf-8") + newline.encode())
    return path


HEADER = ",".join(SHEET_COLUMNS)


# ---- two graders, one sheet --------------------------------------------------------------
def test_two_graders_on_one_sheet_the_second_is_refused_naming_the_first(tmp_path):
    sheet = make_sheet(tmp_path / "sheet.csv")
    first = subprocess.Popen(GRADER + [str(sheet), "--grader", "ana"], env=ENV, stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
    try:
        first.stdin.write("c\n")
        first.stdin.flush()
        deadline = time.monotonic() + 30
        while "saved: correct" not in first.stdout.readline():  # the first grader is at work
            assert time.monotonic() < deadline and first.poll() is None
        second = subprocess.run(GRADER + [str(sheet), "--grader", "bo"], input="w\nw\n", env=ENV,
                                capture_output=True, text=True, timeout=30)
        assert second.returncode == 3
        assert f"pid {first.pid}" in second.stdout and "one grader per sheet" in second.stdout
        first.stdin.write("p\nq\n")
        first.stdin.flush()
        first.communicate(timeout=30)
    finally:
        if first.poll() is None:
            first.kill()
    assert first.returncode == 0
    assert [(r["grade"], r["grader"]) for r in read_sheet(sheet)[1]] == \
        [("correct", "ana"), ("partial", "ana"), ("", "")]
    assert not (tmp_path / "sheet.csv.lock").exists()  # released at exit


def test_a_lock_left_by_a_killed_grader_is_cleared(tmp_path):
    sheet = make_sheet(tmp_path / "sheet.csv")
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    (tmp_path / "sheet.csv.lock").write_text(json.dumps(
        {"pid": dead.pid, "host": socket.gethostname(), "user": "x", "started": "then"}))
    status, out = run(sheet, "c\nq\n")
    assert status == 0 and f"cleared a stale lock left by pid {dead.pid}" in out
    assert read_sheet(sheet)[1][0]["grade"] == "correct"


def test_a_live_lock_on_another_host_is_refused_with_how_to_clear_it(tmp_path):
    sheet = make_sheet(tmp_path / "sheet.csv")
    lock = tmp_path / "sheet.csv.lock"
    lock.write_text(json.dumps({"pid": 1, "host": "elsewhere", "user": "bo", "started": "t"}))
    before = sheet.read_bytes()
    status, out = run(sheet, "c\n")
    assert status == 3 and "host elsewhere" in out and f"delete {lock}" in out
    assert sheet.read_bytes() == before and lock.exists()


def test_lock_is_exclusive_within_one_process_too(tmp_path):
    sheet = make_sheet(tmp_path / "sheet.csv")
    with SheetLock(sheet):
        status, out = run(sheet, "c\n")
    assert status == 3 and f"pid {os.getpid()}" in out
    assert read_sheet(sheet)[1][0]["grade"] == ""


# ---- the sheet changed on disk meanwhile --------------------------------------------------
class EditsSheetOnFirstKey(io.StringIO):
    """Keys for the grader; before the first one, a "spreadsheet" saves the sheet."""

    def __init__(self, keys, sheet, edit):
        super().__init__(keys)
        self.sheet, self.edit, self.done = sheet, edit, False

    def readline(self, *args):
        if not self.done:
            self.done = True
            self.edit(self.sheet)
        return super().readline(*args)


def test_a_save_never_overwrites_a_sheet_changed_on_disk(tmp_path):
    sheet = make_sheet(tmp_path / "sheet.csv")

    def spreadsheet_save(path):
        fieldnames, rows = read_sheet(path)
        rows[2].update(grade="wrong", grader="bo", note="typed in a spreadsheet")
        write_sheet_rows(path, fieldnames, rows)

    out = io.StringIO()
    status = grade_sheet(sheet, grader="ana", stdin=EditsSheetOnFirstKey("c\n", sheet, spreadsheet_save),
                         stdout=out)
    assert status == 4
    assert "changed on disk since it was read" in out.getvalue() and "NOT overwritten" in out.getvalue()
    rows = read_sheet(sheet)[1]
    assert rows[2]["note"] == "typed in a spreadsheet" and rows[0]["grade"] == ""  # the other save kept
    [aside] = tmp_path.glob("sheet.unsaved-*.csv")
    assert str(aside) in out.getvalue()
    assert read_sheet(aside)[1][0]["grade"] == "correct"  # this session's grade kept too


def test_touching_the_sheet_without_changing_it_is_not_a_conflict(tmp_path):
    sheet = make_sheet(tmp_path / "sheet.csv")
    status = grade_sheet(sheet, grader="ana", stdout=io.StringIO(),
                         stdin=EditsSheetOnFirstKey("c\nq\n", sheet, lambda p: os.utime(p)))
    assert status == 0 and read_sheet(sheet)[1][0]["grade"] == "correct"


# ---- what a save keeps --------------------------------------------------------------------
def test_extra_unnamed_cells_and_unknown_columns_survive_a_save(tmp_path):
    blank = "," * (len(SHEET_COLUMNS) - 5)  # the grade columns, empty
    sheet = spreadsheet_csv(tmp_path / "sheet.csv", [
        HEADER + ",team,my_column",
        f"A1,Q1?,g1,P1,a1{blank},audit,keep me,a note in an unnamed cell,and another",
        f"A2,Q2?,g2,P2,a2{blank},audit,",
        "A3,Q3?,g3,P3,a3",  # a short row, as some tools write them
    ], bom=False, newline="\n")
    status, _ = run(sheet, "c\nw\nq\n")
    assert status == 0
    lines = sheet.read_text(encoding="utf-8").splitlines()
    assert lines[0] == HEADER + ",team,my_column"
    assert lines[1].startswith("A1,Q1?,g1,P1,a1,correct,ana,")
    assert lines[1].endswith(",audit,keep me,a note in an unnamed cell,and another")
    assert lines[2].startswith("A2,Q2?,g2,P2,a2,wrong,ana,") and lines[2].endswith(",audit,")
    assert lines[3] == "A3,Q3?,g3,P3,a3"  # untouched row, untouched shape
    rows = read_sheet(sheet)[1]
    assert [r["grade"] for r in rows] == ["correct", "wrong", ""]
    assert [r["team"] for r in rows] == ["audit", "audit", ""] and rows[0]["my_column"] == "keep me"


def test_bom_crlf_and_file_mode_are_kept(tmp_path):
    blank = "," * (len(SHEET_COLUMNS) - 5)
    sheet = spreadsheet_csv(tmp_path / "sheet.csv", [HEADER, f"A1,Q1?,g1,P1,a1{blank}", f"A2,Q2?,g2,P2,a2{blank}"])
    os.chmod(sheet, 0o600)
    status, _ = run(sheet, "p\nq\n")
    assert status == 0
    data = sheet.read_bytes()
    assert data.startswith(codecs.BOM_UTF8)
    assert data.count(b"\r\n") == 3 and data.replace(b"\r\n", b"").count(b"\n") == 0
    assert stat.S_IMODE(sheet.stat().st_mode) == 0o600
    assert read_sheet(sheet)[1][0]["grade"] == "partial"


def test_note_key_writes_keeps_and_clears_a_note(tmp_path):
    sheet = make_sheet(tmp_path / "sheet.csv")
    status, out = run(sheet, "n\nanswer cites the wrong year\nc\nn\n\nb\nn\n-\nq\n")
    assert status == 0 and "note saved" in out and "note unchanged" in out and "note cleared" in out
    rows = read_sheet(sheet)[1]
    assert [r["note"] for r in rows] == ["", "", ""]
    status, out = run(sheet, "n\ncheck the passage\nq\n", start=2)
    assert read_sheet(sheet)[1][1]["note"] == "check the passage"
    assert read_sheet(sheet)[1][0]["grade"] == "correct"
    status, out = run(sheet, "q\n", start=2)
    assert "NOTE\n  check the passage" in out  # shown with the item


def test_sheet_file_round_trip_is_byte_identical(tmp_path):
    sheet = spreadsheet_csv(tmp_path / "s.csv", [HEADER + ",x", 'A1,"multi\r\nline",g,p,a,,,,,y,extra', "A2,q,g,p,a"])
    before = sheet.read_bytes()
    SheetFile.read(sheet).save()
    assert sheet.read_bytes() == before


def test_a_batch_of_grades_waits_for_no_one_and_overwrites_nothing(tmp_path):
    import pytest

    from chunklab_core.audit.grade_batch import apply_grades
    from chunklab_core.audit.sheet_file import SheetLocked

    sheet = make_sheet(tmp_path / "sheet.csv")
    os.chmod(sheet, 0o600)
    with SheetLock(sheet):  # a person is grading it in the terminal
        with pytest.raises(SheetLocked, match="one grader per sheet"):
            apply_grades(sheet, [{"item_id": "A1", "grade": "c"}], "m", "model:x")
    assert apply_grades(sheet, [{"item_id": "A1", "grade": "c"}], "m", "model:x") == 1
    assert stat.S_IMODE(sheet.stat().st_mode) == 0o600 and read_sheet(sheet)[1][0]["grade"] == "correct"
