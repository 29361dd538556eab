"""Fault injection, sheets and files on disk (issue 30): file modes under a umask, symbolic
links, read-only sheets and folders, a full disk, Windows-1252 sheets, a column named twice,
missing files -- each refused before a session starts or handled without losing a grade."""

from __future__ import annotations

import errno
import io
import os
import stat
import subprocess
import sys

import pytest

from chunklab_core.audit import sheet_file
from chunklab_core.audit.grade_batch import apply_grades
from chunklab_core.audit.sheet_file import SheetUnreadable
from chunklab_core.audit.sheets import SHEET_COLUMNS, read_sheet, write_key, write_sheet_rows
from chunklab_core.audit.terminal_grader import grade_sheet
from chunklab_core.core.atomic_files import atomic_write_text
from chunklab_core.core.paths import PROJ_ROOT

ENV = {**os.environ, "PYTHONPATH": str(PROJ_ROOT), "PYTHONUNBUFFERED": "1"}
HEADER = ",".join(SHEET_COLUMNS)
BLANK = "," * (len(SHEET_COLUMNS) - 5)


def make_sheet(path, n=3):
    rows = [dict(item_id=f"A{i}", question=f"Q{i}?", reference=f"gold {i}", passage=f"P{i}",
                 answer=f"ans {i}") for i in range(1, n + 1)]
    write_sheet_rows(path, SHEET_COLUMNS, rows)
    return path


def run(path, keys):
    out = io.StringIO()
    status = grade_sheet(path, grader="ana", stdin=io.StringIO(keys), stdout=out)
    return status, out.getvalue()


def under_umask(mask, action):
    old = os.umask(mask)
    try:
        return action()
    finally:
        os.umask(old)


# ---- modes and links -----------------------------------------------------------------------
def test_new_files_follow_the_umask_so_a_key_stays_private(tmp_path):
    import pandas as pd

    key = tmp_path / "k_key.csv"
    under_umask(0o077, lambda: write_key(pd.DataFrame({"item_id": ["A1"], "weight": [2.0]}), key))
    under_umask(0o077, lambda: make_sheet(tmp_path / "k_sheet.csv"))
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / "k_sheet.csv").stat().st_mode) == 0o600
    under_umask(0o022, lambda: atomic_write_text(tmp_path / "open.txt", "x"))
    assert stat.S_IMODE((tmp_path / "open.txt").stat().st_mode) == 0o644


def test_a_replaced_file_keeps_its_mode_whatever_the_umask(tmp_path):
    target = tmp_path / "f.txt"
    target.write_text("old")
    os.chmod(target, 0o640)
    under_umask(0o077, lambda: atomic_write_text(target, "new"))
    assert stat.S_IMODE(target.stat().st_mode) == 0o640 and target.read_text() == "new"


def test_a_symlinked_sheet_is_graded_in_its_target_and_stays_a_link(tmp_path):
    real = make_sheet(tmp_path / "real" / "sheet.csv")
    link = tmp_path / "link.csv"
    link.symlink_to(real)
    status, out = run(link, "c\nw\nq\n")
    assert status == 0 and "graded 2/3" in out
    assert link.is_symlink() and os.path.realpath(link) == str(real)
    assert [r["grade"] for r in read_sheet(real)[1]] == ["correct", "wrong", ""]
    assert not (real.parent / "sheet.csv.lock").exists() and not (tmp_path / "link.csv.lock").exists()


# ---- refused before the session starts -----------------------------------------------------
def test_a_read_only_sheet_is_refused_before_any_grade_is_typed(tmp_path):
    sheet = make_sheet(tmp_path / "sheet.csv")
    os.chmod(sheet, 0o444)
    before = sheet.read_bytes()
    status, out = run(sheet, "c\nq\n")
    assert status == 2 and "read-only" in out and "chmod u+w" in out and "QUESTION" not in out
    assert sheet.read_bytes() == before and stat.S_IMODE(sheet.stat().st_mode) == 0o444
    with pytest.raises(SheetUnreadable, match="read-only"):
        apply_grades(sheet, [{"item_id": "A1", "grade": "c"}], "m", "model:x")


def test_a_folder_that_is_not_writable_is_named_with_the_fix(tmp_path, monkeypatch):
    folder = tmp_path / "ro"
    sheet = make_sheet(folder / "sheet.csv")
    os.chmod(folder, 0o555)
    if os.geteuid() == 0:  # root writes into any folder: let access() answer as for a user
        real_access = os.access
        monkeypatch.setattr(os, "access", lambda p, m: False if str(p) == str(folder) and m & os.W_OK
                            else real_access(p, m))
    try:
        status, out = run(sheet, "c\nq\n")
    finally:
        os.chmod(folder, 0o755)
    assert status == 2 and f"its folder {folder} is not writable" in out and "Traceback" not in out


def test_a_missing_sheet_or_batch_is_one_line_without_traceback(tmp_path):
    grader = subprocess.run([sys.executable, "-m", "chunklab_core.audit.terminal_grader",
                             str(tmp_path / "none.csv"), "--grader", "a"], env=ENV,
                            capture_output=True, text=True, timeout=60)
    assert grader.returncode == 2 and "no such sheet" in grader.stdout + grader.stderr
    sheet = make_sheet(tmp_path / "sheet.csv")
    batch = subprocess.run([sys.executable, "-m", "chunklab_core.audit.grade_batch", str(sheet),
                            str(tmp_path / "batch.csv"), "--grader", "m", "--grader-kind", "model:x"],
                           env=ENV, capture_output=True, text=True, timeout=60)
    assert batch.returncode == 2 and "batch.csv: no such file" in batch.stderr
    assert "Traceback" not in batch.stderr + grader.stderr


def test_batch_import_problems_are_printed_alone_and_exit_non_zero(tmp_path):
    sheet = make_sheet(tmp_path / "sheet.csv")
    batch = tmp_path / "batch.csv"
    batch.write_text("item_id,grade,note\nA9,c,\nA1,maybe,\n")
    result = subprocess.run([sys.executable, "-m", "chunklab_core.audit.grade_batch", str(sheet), str(batch),
                             "--grader", "m", "--grader-kind", "model:x"], env=ENV, capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "'A9' is not on the sheet" in result.stderr and "'maybe'" in result.stderr


def test_a_windows_1252_sheet_is_refused_with_how_to_convert_it(tmp_path):
    sheet = tmp_path / "sheet.csv"
    sheet.write_bytes(f"{HEADER}\nA1,Caf\xe9?,g,p,a{BLANK}\n".encode("cp1252"))
    before = sheet.read_bytes()
    status, out = run(sheet, "c\nq\n")
    assert status == 2 and "line 2: not UTF-8" in out and "iconv -f cp1252" in out
    assert sheet.read_bytes() == before
    batch = tmp_path / "batch.csv"
    batch.write_bytes("item_id,grade,note\nA1,c,d\xe9j\xe0 vu\n".encode("cp1252"))
    with pytest.raises(SheetUnreadable, match="not UTF-8"):
        read_sheet(batch)


def test_a_sheet_with_a_column_named_twice_is_refused_and_loses_nothing(tmp_path):
    sheet = tmp_path / "sheet.csv"
    sheet.write_text(f"{HEADER},note\nA1,Q?,g,p,a,,,,,my first note,my second note\n", encoding="utf-8")
    before = sheet.read_bytes()
    status, out = run(sheet, "c\nq\n")
    assert status == 2 and "['note'] more than once" in out
    assert sheet.read_bytes() == before
    with pytest.raises(SheetUnreadable, match="more than once"):
        apply_grades(sheet, [{"item_id": "A1", "grade": "c"}], "m", "model:x")
    assert sheet.read_bytes() == before


# ---- a full disk ---------------------------------------------------------------------------
def full_disk_for(paths, monkeypatch):
    """``atomic_write`` as on a full disk for the files in ``paths`` (all files when None)."""
    real = sheet_file.atomic_write

    def write(target, *args, **kwargs):
        if paths is None or os.path.realpath(target) in paths:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(target, *args, **kwargs)

    monkeypatch.setattr(sheet_file, "atomic_write", write)


def test_a_full_disk_keeps_the_grade_just_typed_aside(tmp_path, monkeypatch):
    sheet = make_sheet(tmp_path / "sheet.csv")
    before = sheet.read_bytes()
    full_disk_for({str(sheet)}, monkeypatch)
    status, out = run(sheet, "c\nq\n")
    assert status == 5 and "No space left on device" in out and "Traceback" not in out
    assert sheet.read_bytes() == before
    [aside] = tmp_path.glob("sheet.unsaved-*.csv")
    assert str(aside) in out and read_sheet(aside)[1][0]["grade"] == "correct"


def test_when_not_even_the_copy_fits_the_unsaved_grades_are_printed(tmp_path, monkeypatch):
    sheet = make_sheet(tmp_path / "sheet.csv")
    full_disk_for(None, monkeypatch)
    status, out = run(sheet, "n\nsee the passage\nq\n")
    assert status == 5 and "copy them by hand" in out and "A1: (no grade) -- note: see the passage" in out
    assert not list(tmp_path.glob("sheet.unsaved-*"))


def test_a_batch_on_a_full_disk_leaves_the_sheet_and_says_so(tmp_path, monkeypatch):
    from chunklab_core.audit import grade_batch

    sheet = make_sheet(tmp_path / "sheet.csv")
    batch = tmp_path / "batch.csv"
    batch.write_text("item_id,grade,note\nA1,c,\n")
    before = sheet.read_bytes()
    full_disk_for(None, monkeypatch)
    err = io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    status = grade_batch.main([str(sheet), str(batch), "--grader", "m", "--grader-kind", "model:x"])
    assert status == 5 and "No space left on device" in err.getvalue() and "still holds every grade" in err.getvalue()
    assert sheet.read_bytes() == before
