"""Faults, round four: the workbench keeps its session after any bad request (issue 49, class 7).

A note holding a lone surrogate (``\\ud83d``, what a browser sends for half an emoji) made the
save raise ``UnicodeEncodeError``: the request was lost, the row kept the note in memory so the
next grade failed too, the file held 0 grades and the exit said "saved". Now such text is
refused with a 400 naming the field, nothing is changed, every earlier and later grade is saved,
and the closing line counts the grades the file holds.
"""

from __future__ import annotations

import io
import json

import pytest

from chunklab_core.audit import workbench
from chunklab_core.audit.sheet_file import SheetFile

from test_faults_workbench import post, served  # noqa: F401  (the served fixture)

LONE = "half an emoji \ud83d here"


def _raw(payload: dict) -> bytes:
    return json.dumps(payload).encode("ascii")  # json escapes the lone surrogate as \ud83d, as a browser does


@pytest.mark.parametrize("path, field", [("/api/note", "note"), ("/api/grader", "grader"), ("/api/grade", "grade")])
def test_a_lone_surrogate_is_refused_and_the_session_and_every_grade_kept(served, path, field):
    bench, server, sheet = served
    me = {"secret": bench.secret, "token": "t"}
    assert post(server, "/api/grade", {**me, "index": 0, "grade": "c"})[0] == 200
    status, _, data = post(server, path, _raw({**me, "index": 1, "grade": "w", field: LONE}))
    body = json.loads(data)
    assert status == 400 and repr(field) in body["error"] and "surrogate" in body["error"]
    assert "nothing was saved" in body["error"]
    # the next grade and note go through, the earlier grade is kept, the bad text is nowhere
    assert post(server, "/api/grade", {**me, "index": 1, "grade": "w"})[0] == 200
    assert post(server, "/api/note", {**me, "index": 2, "note": "fine \U0001F600"})[0] == 200
    rows = SheetFile.read(sheet).rows
    assert [r["grade"] for r in rows] == ["correct", "wrong", ""]
    assert rows[2]["note"] == "fine \U0001F600" and all("\ud83d" not in r["note"] for r in rows)
    out = io.StringIO()
    assert workbench.finish(bench, sheet, out) == 0
    assert "graded 2/3 (saved in the sheet)" in out.getvalue()


def test_a_save_refused_for_its_text_puts_the_row_back(served, monkeypatch):
    """Past the request check too (the sheet's own encoding fails): the row is restored, 400, grading goes on."""
    bench, server, sheet = served
    me = {"secret": bench.secret, "token": "t"}
    monkeypatch.setattr(workbench, "body_problem", lambda body: None)
    before = dict(bench.sheet.rows[0])
    status, _, data = post(server, "/api/note", _raw({**me, "index": 0, "note": LONE}))
    assert status == 400 and "nothing was saved" in json.loads(data)["error"]
    assert bench.sheet.rows[0] == before  # as it was read
    assert post(server, "/api/grade", {**me, "index": 0, "grade": "p"})[0] == 200
    assert [r["grade"] for r in SheetFile.read(sheet).rows] == ["partial", "", ""]


def test_the_closing_line_counts_what_the_file_holds(served, monkeypatch):
    bench, server, sheet = served
    bench.saved_graded = 3  # a session that believes more than the file holds
    out = io.StringIO()
    workbench.finish(bench, sheet, out)
    assert "graded 0/3 (saved in the sheet)" in out.getvalue()
    sheet.unlink()
    out = io.StringIO()
    workbench.finish(bench, sheet, out)
    assert "could not be read back" in out.getvalue() and "saved in the sheet" not in out.getvalue()


def test_the_terminal_grader_refuses_such_a_note_and_keeps_grading(tmp_path):
    """The same text from a terminal (bytes it could not decode arrive as lone surrogates)."""
    from test_faults_grader import make_sheet, run

    sheet = make_sheet(tmp_path / "sheet.csv")
    status, out = run(sheet, "c\nn\nbad \udcff byte\nw\nq\n")
    assert status == 0 and "note not saved" in out and "surrogate" in out
    rows = SheetFile.read(sheet).rows
    assert [r["grade"] for r in rows][:2] == ["correct", "wrong"] and all(r["note"] == "" for r in rows)
