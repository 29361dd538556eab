"""The auditor's workbench without a browser: highlighting, the JSON API, the lock, the sheet file kept.

The server runs in a thread on 127.0.0.1; requests go through ``urllib``. The browser test
(``tests/test_workbench_browser.py``) drives the page itself in headless Chromium.
"""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from chunklab_core.audit.sheet_file import SheetFile, SheetLock
from chunklab_core.audit.workbench import Workbench, highlight_spans, make_server, open_sheet, reference_terms, serve

HEADER = "item_id,question,reference,answer,passage,grade,grader,grader_kind,graded_at,note,extra_col"


def write_sheet(path: Path, rows: int = 3, bom: bool = True, newline: str = "\r\n") -> Path:
    lines = [HEADER] + [f'A00{i},Question {i}?,ref {i} | alt {i},answer {i},"the passage says Ref {i} and\n'
                        f'ALT   {i} again <script>alert(1)</script>",,,,,,keep{i}' for i in range(1, rows + 1)]
    data = newline.join(lines) + newline
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + data.encode("utf-8"))
    return path


def test_reference_terms_and_highlight_spans():
    assert reference_terms("30 days | thirty days ; store manager") == ["30 days", "thirty days", "store manager"]
    assert reference_terms("30 days OR thirty days AND Store manager") == ["30 days", "thirty days", "Store manager"]
    assert reference_terms("ORBIT ANDES") == ["ORBIT ANDES"]  # only the spaced words separate
    text = "Returns within 30  DAYS; the Store\nManager signs. 30 days!"
    spans = highlight_spans(text, "30 days | store manager")
    assert [text[s:e] for s, e in spans] == ["30  DAYS", "Store\nManager", "30 days"]
    assert highlight_spans("abcdef", "abc | bcd") == [(0, 4)]  # overlapping occurrences merged
    assert highlight_spans("nothing here", "absent") == []


@pytest.fixture
def bench_server(tmp_path):
    sheet = write_sheet(tmp_path / "sheet<&>.csv")
    bench = Workbench(open_sheet(sheet), "ana")
    server = make_server(bench)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    yield bench, f"http://127.0.0.1:{server.server_address[1]}", sheet
    server.shutdown()
    server.server_close()


def post(url, path, payload, host=None):
    request = urllib.request.Request(url + path, data=json.dumps(payload).encode(), method="POST",
                                     headers={"Content-Type": "application/json", **({"Host": host} if host else {})})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def test_page_escapes_and_api_grades_keeping_the_file_format(bench_server):
    bench, url, sheet = bench_server
    page = urllib.request.urlopen(url + "/", timeout=10).read().decode()
    assert "sheet&lt;&amp;&gt;.csv" in page and "sheet<&>.csv" not in page
    assert "innerHTML" not in page and "textContent" in page
    me = {"secret": bench.secret, "token": "tab-1"}
    status, state = post(url, "/api/state", me)
    assert status == 200 and state["total"] == 3 and state["start"] == 0 and state["blind"]
    assert "verdicts" not in state["items"][0]
    assert state["items"][0]["passage"].endswith("<script>alert(1)</script>")  # sent as data, shown as text
    passage = state["items"][0]["passage"]
    assert [passage[s:e] for s, e in state["items"][0]["highlights"]] == ["Ref 1", "ALT   1"]
    status, state = post(url, "/api/grade", {**me, "index": 0, "grade": "c", "seconds": 4.0})
    assert status == 200 and state["graded"] == 1 and state["start"] == 1 and state["median_seconds"] == 4.0
    post(url, "/api/note", {**me, "index": 1, "note": 'a "quoted", note'})
    data = sheet.read_bytes()
    assert data.startswith(b"\xef\xbb\xbf") and b"\r\n" in data and b"\n" not in data.replace(b"\r\n", b"").replace(
        b"and\n", b"")  # BOM and CRLF kept (the passage's own newline is a cell's content)
    reread = SheetFile.read(sheet)
    assert reread.rows[0]["grade"] == "correct" and reread.rows[0]["grader_kind"] == "human"
    assert reread.rows[0]["grader"] == "ana" and reread.rows[0]["extra_col"] == "keep1"
    assert reread.rows[1]["note"] == 'a "quoted", note' and reread.rows[1]["grade"] == ""


def test_a_second_tab_and_a_foreign_page_are_refused(bench_server):
    bench, url, sheet = bench_server
    assert post(url, "/api/state", {"secret": bench.secret, "token": "tab-1"})[0] == 200
    status, body = post(url, "/api/grade", {"secret": bench.secret, "token": "tab-2", "index": 0, "grade": "w"})
    assert status == 423 and "another browser tab" in body["error"]
    assert post(url, "/api/state", {"secret": "guessed", "token": "tab-1"})[0] == 403
    assert post(url, "/api/state", {"secret": bench.secret, "token": "tab-1"}, host="evil.example")[0] == 403
    assert SheetFile.read(sheet).rows[0]["grade"] == ""
    post(url, "/api/release", {"secret": bench.secret, "token": "tab-1"})
    assert post(url, "/api/state", {"secret": bench.secret, "token": "tab-2"})[0] == 200  # released: tab 2 may


def test_sheet_changed_on_disk_stops_grading_and_keeps_the_rows(bench_server):
    bench, url, sheet = bench_server
    me = {"secret": bench.secret, "token": "tab-1"}
    post(url, "/api/grade", {**me, "index": 0, "grade": "p"})
    sheet.write_bytes(sheet.read_bytes() + b"A009,q,r,a,p,,,,,,\r\n")  # a spreadsheet saved meanwhile
    status, body = post(url, "/api/grade", {**me, "index": 1, "grade": "w"})
    assert status == 409 and "NOT overwritten" in body["error"]
    assert b"A009" in sheet.read_bytes()  # the other program's save survives
    aside = list(sheet.parent.glob("*.unsaved-*.csv"))
    assert len(aside) == 1 and SheetFile.read(aside[0]).rows[1]["grade"] == "wrong"
    assert post(url, "/api/grade", {**me, "index": 2, "grade": "c"})[0] == 409  # stays stopped


def test_serve_refuses_a_locked_sheet(tmp_path, capsys):
    sheet = write_sheet(tmp_path / "sheet.csv")
    with SheetLock(sheet):  # another grader (this live process) holds it
        assert serve(sheet, "ana", open_browser=False) == 3
    assert "being graded by another grader" in capsys.readouterr().out


def test_bad_sheet_is_named(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("item_id,question\nA1,q\n", encoding="utf-8")
    with pytest.raises(ValueError, match="lacks column"):
        open_sheet(bad)
