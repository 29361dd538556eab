"""Faults, round three: the workbench (issue 41, classes 2 and 3).

- class 3: ``GET /`` handed the per-server secret to any local process; a body with
  ``Content-Length: -1`` was read whole before the secret was checked; a JSON list, string or
  null, or ``index: "abc"``, killed the handler with no reply; no framing protection; a
  read-only sheet was replaced on the first grade.
- class 2: on a full disk every grade request dropped the connection and the server counted
  grades the file never received, exiting 0 and keeping no copy aside.
"""

from __future__ import annotations

import errno
import http.client
import io
import json
import threading

import pytest

from chunklab_core.audit import workbench
from chunklab_core.audit.sheet_file import SheetFile
from chunklab_core.audit.workbench import Workbench, make_server, open_sheet, page_address, serve

from test_workbench import write_sheet


@pytest.fixture
def served(tmp_path):
    sheet = write_sheet(tmp_path / "sheet.csv")
    bench = Workbench(open_sheet(sheet), "ana")
    server = make_server(bench)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
    yield bench, server, sheet
    server.shutdown()
    server.server_close()


def request(server, method, path, body=b"", headers=None):
    connection = http.client.HTTPConnection("127.0.0.1", server.server_address[1], timeout=10)
    connection.putrequest(method, path, skip_accept_encoding=True)
    for name, value in {"Host": "127.0.0.1", **(headers or {})}.items():
        connection.putheader(name, value)
    connection.endheaders()
    if body:
        connection.send(body)
    response = connection.getresponse()
    data = response.read()
    connection.close()
    return response.status, dict(response.getheaders()), data


def post(server, path, payload, **headers):
    data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    return request(server, "POST", path, data, {"Content-Type": "application/json",
                                               "Content-Length": str(len(data)), **headers})


# ---- class 3 -----------------------------------------------------------------------------
def test_no_response_to_a_request_without_the_secret_carries_it(served):
    bench, server, _ = served
    for path in ("/", "/?x=1", "/api/state", "/favicon.ico"):
        _, _, data = request(server, "GET", path)
        assert bench.secret.encode() not in data
    for path in ("/api/state", "/api/grade", "/api/release"):
        status, _, data = post(server, path, {"token": "t", "index": 0, "grade": "c"})
        assert status == 403 and bench.secret.encode() not in data and b"question" not in data.lower()
    assert page_address(server, bench).endswith(f"/#s={bench.secret}")  # handed over in the fragment only
    assert SheetFile.read(served[2]).rows[0]["grade"] == ""


def test_every_response_forbids_framing(served):
    bench, server, _ = served
    for status, headers, _ in (request(server, "GET", "/"), post(server, "/api/state", {"secret": bench.secret,
                                                                                          "token": "t"})):
        assert status == 200
        assert "frame-ancestors 'none'" in headers["Content-Security-Policy"] and headers["X-Frame-Options"] == "DENY"


@pytest.mark.parametrize("length, status", [("-1", 400), ("abc", 400), (str(400 * 1024 * 1024), 413)])
def test_a_bad_or_huge_content_length_is_refused_unread(served, length, status):
    _, server, _ = served
    got, _, data = request(server, "POST", "/api/state", b"x" * 1024, {"Content-Length": length})
    assert got == status and "error" in json.loads(data)


@pytest.mark.parametrize("payload", [b"[1, 2]", b'"text"', b"null", b"{not json", b"[" * 60_000])
def test_a_body_that_is_not_an_object_is_a_400(served, payload):
    bench, server, _ = served
    status, _, data = post(server, "/api/state", payload)
    assert status == 400 and "error" in json.loads(data)
    assert post(server, "/api/state", {"secret": bench.secret, "token": "t"})[0] == 200  # the server lives on


@pytest.mark.parametrize("field, value", [("index", "abc"), ("index", True), ("index", 1.5), ("seconds", "x"),
                                          ("grade", 3), ("note", ["a"]), ("token", 5), ("secret", None)])
def test_a_field_of_the_wrong_type_is_a_400(served, field, value):
    bench, server, sheet = served
    payload = {"secret": bench.secret, "token": "t", "index": 0, "grade": "c", field: value}
    status, _, data = post(server, "/api/grade", payload)
    assert status == 400 and field in json.loads(data)["error"]
    assert SheetFile.read(sheet).rows[0]["grade"] == ""


def test_a_read_only_sheet_is_refused_before_serving(tmp_path):
    sheet = write_sheet(tmp_path / "sheet.csv")
    sheet.chmod(0o444)
    out = io.StringIO()
    assert serve(sheet, "ana", open_browser=False, out=out) == 2
    assert "read-only" in out.getvalue() and "chmod u+w" in out.getvalue()


# ---- class 2 -----------------------------------------------------------------------------
def test_a_full_disk_keeps_the_grades_aside_counts_only_saved_ones_and_exits_5(served, monkeypatch):
    bench, server, sheet = served
    me = {"secret": bench.secret, "token": "t"}
    assert post(server, "/api/grade", {**me, "index": 0, "grade": "c"})[0] == 200
    real_save = SheetFile.save

    def full(self):
        if self.path == sheet:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_save(self)

    monkeypatch.setattr(SheetFile, "save", full)
    status, _, data = post(server, "/api/grade", {**me, "index": 1, "grade": "w"})
    body = json.loads(data)
    assert status == 409 and "No space left" in body["error"] and "kept in" in body["error"]
    assert body["graded"] == 1  # the grade the file did not receive is not counted
    aside = list(sheet.parent.glob("sheet.unsaved-*.csv"))
    assert len(aside) == 1 and [r["grade"] for r in SheetFile.read(aside[0]).rows][:2] == ["correct", "wrong"]
    assert post(server, "/api/grade", {**me, "index": 2, "grade": "c"})[0] == 409  # grading stays stopped
    out = io.StringIO()
    assert workbench.finish(bench, sheet, out) == 5
    assert "graded 1/3" in out.getvalue() and "could not be saved" in out.getvalue()
    assert [r["grade"] for r in SheetFile.read(sheet).rows] == ["correct", "", ""]
