"""The auditor's workbench: grade a sheet in the browser, one item and one key at a time.

    chunklab-workbench SHEET [--grader NAME] [--port N] [--no-browser] [--key KEY]
    (also: chunklab-own audit grade --answers DIR --grader NAME)

A local page served on ``127.0.0.1`` only (standard library ``http.server``; nothing leaves the
machine): one item at a time -- the question, the answer, the reference and the retrieved
passage with every occurrence of the reference highlighted (:func:`highlight_spans`) -- and one
key per grade as in the terminal grader: ``c``/``p``/``w`` grade and move on, ``s`` skip,
``b`` back, ``n`` the note field (Enter saves it, Esc leaves it), ``?`` help. Progress shows
graded / to go and this session's median seconds per item; the page opens at the first
ungraded item (resume). Pressing another grade on a graded item asks for the same key again
before it overwrites.

Why a page served by a chunklab command rather than a JupyterLab panel: it needs nothing but
Python and a browser (a domain expert does not have to run JupyterLab), it reads and writes the
sheet through exactly the terminal grader's layer (:mod:`chunklab_core.audit.sheet_file`) in one
process, and a real headless Chromium can drive it in a test without a Jupyter server.

The sheet file, as in the terminal grader: the process holds ``SHEET.lock`` for as long as it
serves (:class:`~chunklab_core.audit.sheet_file.SheetLock`: a second workbench or
``chunklab-grade`` on the same sheet is refused, exit status 3); every grade and note is saved
at once by :meth:`~chunklab_core.audit.sheet_file.SheetFile.save` (atomic replace; the BOM, line
endings, unknown columns and cells and the file mode kept), which refuses to overwrite a sheet
changed on disk since it was read: the page then stops grading and says where this session's
rows were kept (``SHEET.unsaved-<time>.csv``). Grades are saved with kind ``human`` (the page is
for people); ``--grader-kind model:<name>`` records a program that drives the page (a browser
test), so its grades are never taken for a person's.

One browser tab at a time: the first tab claims the sheet with a random token kept in its
``sessionStorage`` (a reload keeps it, a new tab does not); any other tab is refused with a
message and every request it makes is refused (HTTP 423) while the holder's tab is alive (it
renews its claim every few seconds; a claim unrenewed for :data:`CLAIM_TTL_S` lapses).

Blind by default: the page shows no judge verdict (the sheet holds none). ``--key KEY`` shows
the key's verdicts beside each item, for reviewing a finished audit only.

A save that fails for any other reason (a full disk, the folder made read-only meanwhile)
stops grading the same way: the session's rows are kept aside (``SHEET.unsaved-<time>.csv``, or
listed on the terminal when even that cannot be written, as the terminal grader does), the page
says so, only grades the sheet received are counted, and the command exits with status 5. A
sheet that cannot take grades (read-only, in a read-only folder) is refused before serving
(status 2), as the terminal grader refuses it.

Safety (a service that trusts nobody, issue 41): every string reaches the page as JSON and is
put in the document with ``textContent`` (never ``innerHTML``), and the one server-rendered
string (the sheet's name) is ``html.escape``-d, so a passage holding ``<script>`` shows as text.
The per-server secret never appears in a response: the command prints (and opens) the address
with the secret in its fragment (``#s=...``, which a browser never sends to a server), and the
page keeps it in the tab's ``sessionStorage``; so a local process that can reach the port but
did not see the printed address gets nothing (:func:`page_address`). Every API request must
carry the secret and a ``Host`` of ``127.0.0.1``/``localhost``; its body is read only when its
``Content-Length`` is at most :data:`MAX_BODY` bytes (413 otherwise, 400 when missing or
negative) and must be a JSON object whose fields have their types (400 otherwise), checked
before any work. Every response forbids framing (``frame-ancestors 'none'``,
``X-Frame-Options: DENY``).

Not handled: several graders on one sheet at once (give each a copy:
``chunklab-blank-sheet``), remote access, editing the item texts.
"""

from __future__ import annotations

import argparse
import html
import json
import re
import secrets
import statistics
import sys
import threading
import time
from datetime import datetime, timezone
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from chunklab_core.core import bounds
from chunklab_core.audit.sheet_file import (SheetChanged, SheetFile, SheetLock, SheetLocked, keep_aside,
                                            sheet_access_problem, unwritable_text)
from chunklab_core.audit.sheets import GRADE_COLUMNS, HUMAN_KIND, LETTERS, grader_kind_problem, normalize_label, sheet_problems
from chunklab_core.audit.workbench_page import PAGE
from chunklab_core.core.cli_errors import command_edge

CLAIM_TTL_S = 15.0
MAX_BODY = 64 * 1024  # bytes: a note of a few pages; anything longer is refused unread (413)
FIELD_TYPES = {"secret": str, "token": str, "page": str, "grader": str, "grade": str, "note": str,
               "index": int, "seconds": (int, float, type(None))}


class SaveFailed(RuntimeError):
    """A save the disk refused (full, read-only): grading stops, the rows are kept aside."""


class Unwritable(ValueError):
    """A change whose text no UTF-8 sheet can hold: refused (400), the row as it was, grading goes on."""


def body_problem(body) -> str | None:
    """Why a parsed request body is refused (not an object, a field of the wrong type), or None."""
    if not isinstance(body, dict):
        return f"the request body must be a JSON object, not {type(body).__name__}"
    for name, kind in FIELD_TYPES.items():
        if name in body and (not isinstance(body[name], kind) or isinstance(body[name], bool)):
            return f"field {name!r} has the wrong type ({type(body[name]).__name__})"
    for name, value in body.items():
        problem = unwritable_text(value) if isinstance(value, str) else None
        if problem:
            return (f"field {name!r} holds {problem}, which no UTF-8 sheet can store; nothing was saved: remove "
                    "that character (retype the emoji or symbol) and save again")
    return None


REQUIRED = ("item_id", "question", "reference", "answer")


def reference_terms(reference: str) -> list[str]:
    """The strings to highlight: every alternative of every part of the reference, split at
    `` | `` and ``;`` (post 05's sheets) and at `` OR `` and `` AND `` (``chunklab-own``'s)."""
    parts = re.split(r"\s*(?:\||;|\sOR\s|\sAND\s)\s*", f" {reference} ")
    return list(dict.fromkeys(t.strip() for t in parts if t.strip()))


def highlight_spans(passage: str, reference: str) -> list[tuple[int, int]]:
    """Sorted, merged ``(start, end)`` character spans of every occurrence of every reference term.

    A term matches case-insensitively, with any run of whitespace standing for its spaces; spans
    that overlap or touch are merged.
    """
    spans = []
    for term in reference_terms(reference):
        words = term.split()
        if not words:
            continue
        pattern = re.compile(r"\s+".join(re.escape(w) for w in words), re.IGNORECASE)
        spans += [(m.start(), m.end()) for m in pattern.finditer(passage) if m.end() > m.start()]
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


class Workbench:
    """The state behind the page: the sheet, the tab claim, the session's timings."""

    def __init__(self, sheet: SheetFile, grader: str | None, verdicts: dict[str, dict] | None = None,
                 grader_kind: str = HUMAN_KIND):
        problem = grader_kind_problem(grader_kind)
        if problem:
            raise ValueError(problem)
        self.grader_kind = grader_kind.strip()
        self.sheet = sheet
        self.grader = (grader or "").strip() or self._only_grader()
        self.verdicts = verdicts
        self.secret = secrets.token_urlsafe(16)
        self.holder: str | None = None
        self.holder_page: str = ""  # which load of the holder's tab claimed last (a reload is a new load)
        self.renewed = 0.0
        self.stopped: str | None = None  # why grading stopped (the sheet changed on disk, a save failed)
        self.save_failed = False
        self.saved_graded = self._graded()  # grades the sheet on disk holds (what is counted)
        self.seconds: list[float] = []
        self.lock = threading.Lock()

    def _graded(self) -> int:
        return sum(normalize_label(r.get("grade")) is not None for r in self.sheet.rows)

    def _only_grader(self) -> str:
        names = {r.get("grader", "").strip() for r in self.sheet.rows} - {""}
        return names.pop() if len(names) == 1 else ""

    # ---- the tab claim
    def claim(self, token: str, page: str = "") -> bool:
        """True when ``token``'s tab holds (or now takes) the sheet; ``page`` names this load of it."""
        now = time.monotonic()
        if self.holder in (None, token) or now - self.renewed > CLAIM_TTL_S:
            self.holder, self.holder_page, self.renewed = token, page, now
            return True
        return False

    def release(self, token: str, page: str = "") -> None:
        """The tab's page is going away. Only the load that claimed last releases: a reload's old
        page sends its release beacon late, after the new page of the same tab has claimed, and
        must not free the sheet for another tab."""
        if self.holder == token and self.holder_page == page:
            self.holder = None

    # ---- the items
    def item(self, i: int) -> dict:
        row = self.sheet.rows[i]
        passage = row.get("passage", "")
        out = {"index": i, "item_id": row["item_id"], "question": row["question"], "reference": row["reference"],
               "answer": row["answer"], "passage": passage, "highlights": highlight_spans(passage, row["reference"]),
               "grade": normalize_label(row.get("grade")) or "", "note": row.get("note", ""),
               "grader": row.get("grader", ""), "graded_at": row.get("graded_at", "")}
        if self.verdicts is not None:
            out["verdicts"] = self.verdicts.get(row["item_id"], {})
        return out

    def state(self) -> dict:
        rows = self.sheet.rows
        graded = self.saved_graded  # never a grade the file did not receive
        first = next((i for i, r in enumerate(rows) if normalize_label(r.get("grade")) is None), 0)
        return {"sheet": self.sheet.path.name, "grader": self.grader, "total": len(rows), "graded": graded,
                "start": first, "items": [self.item(i) for i in range(len(rows))], "stopped": self.stopped,
                "blind": self.verdicts is None,
                "median_seconds": statistics.median(self.seconds) if self.seconds else None}

    def _save(self) -> None:
        try:
            self.sheet.save()
        except UnicodeError as err:  # a value no UTF-8 file can hold: nothing was written, nothing kept
            raise Unwritable(f"the sheet cannot store this text ({err}); nothing was saved") from None
        except SheetChanged as err:
            aside = self.sheet.save_aside()
            self.stopped = (f"{err}. This session's grades and notes are kept in {aside}; restart the workbench "
                            "to reload the sheet, and copy over what is missing from that file.")
            raise
        except OSError as err:
            self.save_failed = True
            self.stopped = (f"{self.sheet.path} could not be saved ({err.strerror or err}); grading stopped: "
                            f"{keep_aside(self.sheet, 'restart the workbench')}")
            print(f"chunklab-workbench: {self.stopped}", file=sys.stderr, flush=True)
            raise SaveFailed(self.stopped) from None
        self.saved_graded = self._graded()

    def grade(self, i: int, label: str, seconds: float | None) -> dict:
        """Save ``label`` for item ``i`` (with the grader's kind, UTC time); the same label keeps its time."""
        row = self.sheet.rows[i]
        if normalize_label(row.get("grade")) != label:
            stamp = datetime.now(timezone.utc).isoformat(timespec="seconds")
            self._change(row, grade=label, grader=self.grader, grader_kind=self.grader_kind, graded_at=stamp)
        if seconds is not None and 0 < seconds < 3600:
            self.seconds.append(float(seconds))
        return self.state()

    def note(self, i: int, text: str) -> dict:
        self._change(self.sheet.rows[i], note=text)
        return self.state()

    def _change(self, row: dict, **cells: str) -> None:
        """Set ``cells`` of ``row`` and save; a save refused for its text (:class:`Unwritable`) puts the
        row back as it was, so the next request saves the sheet as before (every earlier grade kept)."""
        before = dict(row)
        row.update(cells)
        try:
            self._save()
        except Unwritable:
            row.clear()
            row.update(before)
            raise


PAGE_HEAD = """<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Grading {title}</title></head><body>
"""


class Handler(BaseHTTPRequestHandler):
    """The page and its JSON API (``/api/state``, ``/api/grade``, ``/api/note``, ``/api/grader``,
    ``/api/release``); every API request names its tab token and the server's secret."""

    bench: Workbench  # set on the subclass made by make_server
    port: int

    def log_message(self, *args) -> None:  # quiet: the terminal shows the address only
        pass

    def _send(self, status: int, body: bytes, kind: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Content-Security-Policy", "default-src 'self'; script-src 'unsafe-inline'; "
                         "style-src 'unsafe-inline'; frame-ancestors 'none'")
        self.send_header("X-Frame-Options", "DENY")
        self.send_header("Referrer-Policy", "no-referrer")
        self.end_headers()
        self.wfile.write(body)

    def _json(self, status: int, payload: dict) -> None:
        self._send(status, json.dumps(payload).encode("utf-8"), "application/json; charset=utf-8")

    def _host_ok(self) -> bool:
        host = (self.headers.get("Host") or "").rsplit(":", 1)[0]
        return host in ("127.0.0.1", "localhost")

    def do_GET(self) -> None:
        if not self._host_ok():
            return self._json(HTTPStatus.FORBIDDEN, {"error": "only 127.0.0.1 / localhost"})
        if self.path.split("?")[0] != "/":
            return self._json(HTTPStatus.NOT_FOUND, {"error": "not found"})
        head = PAGE_HEAD.format(title=html.escape(self.bench.sheet.path.name))  # no secret: it is in the fragment
        self._send(HTTPStatus.OK, (head + PAGE).encode("utf-8"), "text/html; charset=utf-8")

    def _refuse(self, status: int, error: str) -> None:
        self.close_connection = True  # an unread body must not be taken for the next request
        return self._json(status, {"error": error})

    def _body(self):
        """The request's JSON object, or ``None`` after replying 400/403/413 (nothing else done)."""
        if not self._host_ok():
            return self._refuse(HTTPStatus.FORBIDDEN, "only 127.0.0.1 / localhost")
        try:
            length = int(self.headers.get("Content-Length", ""))
        except ValueError:
            return self._refuse(HTTPStatus.BAD_REQUEST, "a Content-Length (a whole number of bytes) is needed")
        if length < 0:
            return self._refuse(HTTPStatus.BAD_REQUEST, "a negative Content-Length")
        if length > MAX_BODY:
            return self._refuse(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, f"the request body is over {MAX_BODY} bytes")
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
        except (ValueError, RecursionError):
            return self._refuse(HTTPStatus.BAD_REQUEST, "the request is not JSON")
        problem = body_problem(body)
        if problem:
            return self._refuse(HTTPStatus.BAD_REQUEST, problem)
        if not secrets.compare_digest(body.get("secret", ""), self.bench.secret):
            return self._refuse(HTTPStatus.FORBIDDEN, "this page is not the workbench's: open the address the "
                                "command printed (with its #s=... part)")
        return body

    def do_POST(self) -> None:
        bench = self.bench
        body = self._body()
        if body is None:
            return None
        token, action = str(body.get("token") or ""), self.path
        page = str(body.get("page") or "")
        with bench.lock:
            if action == "/api/release":
                bench.release(token, page)
                return self._json(HTTPStatus.OK, {})
            if not token or not bench.claim(token, page):
                return self._json(HTTPStatus.LOCKED, {"error": f"{bench.sheet.path.name} is being graded in another "
                                                      "browser tab or window: one tab per sheet at a time. Close this "
                                                      "tab, or close the other one and reload this one."})
            if bench.stopped:
                return self._json(HTTPStatus.CONFLICT, {"error": bench.stopped, **bench.state()})
            try:
                if action == "/api/state":
                    return self._json(HTTPStatus.OK, bench.state())
                if action == "/api/grader":
                    name = str(body.get("grader") or "").strip()
                    if not name:
                        return self._json(HTTPStatus.BAD_REQUEST, {"error": "a grader name is needed"})
                    bench.grader = name
                    return self._json(HTTPStatus.OK, bench.state())
                index = body.get("index", -1)
                if not 0 <= index < len(bench.sheet.rows):
                    return self._json(HTTPStatus.BAD_REQUEST, {"error": f"no item {index}"})
                if action == "/api/grade":
                    label = LETTERS.get(str(body.get("grade") or ""), "")
                    if not label or not bench.grader:
                        return self._json(HTTPStatus.BAD_REQUEST, {"error": "a grade (c/p/w) and a grader are needed"})
                    seconds = body.get("seconds")
                    return self._json(HTTPStatus.OK, bench.grade(index, label, float(seconds) if seconds else None))
                if action == "/api/note":
                    return self._json(HTTPStatus.OK, bench.note(index, str(body.get("note") or "")))
            except (SheetChanged, SaveFailed):
                return self._json(HTTPStatus.CONFLICT, {"error": bench.stopped, **bench.state()})
            except Unwritable as err:
                return self._json(HTTPStatus.BAD_REQUEST, {"error": str(err), **bench.state()})
        return self._json(HTTPStatus.NOT_FOUND, {"error": "not found"})


def open_sheet(path: str | Path) -> SheetFile:
    """The sheet, read and checked as the terminal grader checks it (``ValueError`` listing problems)."""
    sheet = SheetFile.read(path)
    absent = [c for c in REQUIRED if c not in sheet.fieldnames]
    problems = ([f"row 1: the header lacks column(s) {absent}"] if absent else
                sheet_problems(sheet.rows, require_grader=False))
    if problems:
        raise ValueError(f"{path}: cannot grade this sheet:\n" + "\n".join(f"  - {p}" for p in problems))
    sheet.add_columns(GRADE_COLUMNS)
    return sheet


def read_verdicts(key_path: str | Path) -> dict[str, dict]:
    """The key's verdict columns per item id (for ``--key``: not blind)."""
    from chunklab_core.audit.sheets import read_key

    key = read_key(key_path)
    columns = [c for c in key.columns if c.startswith("judge_") or c == "reference_grader"]
    return {row["item_id"]: {c: str(row[c]) for c in columns} for _, row in key.iterrows()}


def page_address(server: ThreadingHTTPServer, bench: Workbench) -> str:
    """The address to open: the secret in the fragment, which the browser keeps and never sends."""
    return f"http://127.0.0.1:{server.server_address[1]}/#s={bench.secret}"


def make_server(bench: Workbench, port: int = 0) -> ThreadingHTTPServer:
    """A server on ``127.0.0.1:port`` (0: a free port) serving ``bench``."""
    handler = type("BoundHandler", (Handler,), {"bench": bench})
    server = ThreadingHTTPServer(("127.0.0.1", port), handler)
    server.daemon_threads = True
    return server


def serve(sheet_path: str | Path, grader: str | None = None, port: int = 0, open_browser: bool = True,
          key: str | Path | None = None, out=None, grader_kind: str = HUMAN_KIND) -> int:
    """Serve the workbench until Ctrl-C; exit status 0, 2 (bad or read-only sheet), 3 (locked), 4 (changed
    on disk), 5 (a save failed: the rows kept aside)."""
    out = out or sys.stdout
    problem = sheet_access_problem(sheet_path)
    if problem:
        print(problem, file=out)
        return 2
    lock = SheetLock(sheet_path)
    try:
        lock.acquire()
    except SheetLocked as err:
        print(err, file=out)
        return 3
    try:
        try:
            sheet = open_sheet(sheet_path)
        except ValueError as err:
            print(err, file=out)
            return 2
        try:
            bench = Workbench(sheet, grader, read_verdicts(key) if key else None, grader_kind)
        except ValueError as err:
            print(err, file=out)
            return 2
        server = make_server(bench, port)
        url = page_address(server, bench)
        print(f"grading {sheet_path} at {url} (Ctrl-C to stop; every grade is saved at once; the address "
              "holds this session's secret: do not share it)", file=out, flush=True)
        if open_browser:
            import webbrowser

            webbrowser.open(url)
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
        finally:
            server.server_close()
        return finish(bench, sheet_path, out)
    finally:
        lock.release()


def finish(bench: Workbench, sheet_path: str | Path, out) -> int:
    """The closing lines (grades the sheet received; why grading stopped) and the exit status."""
    state = bench.state()
    try:
        on_disk = sum(normalize_label(r.get("grade")) is not None for r in SheetFile.read(sheet_path).rows)
    except (OSError, ValueError):
        on_disk = None
    if on_disk is None:
        print(f"{sheet_path} could not be read back: how many grades it holds is unknown (the session counted "
              f"{state['graded']}/{state['total']} saved)", file=out)
    else:  # what the file holds, never what the session believes
        print(f"graded {on_disk}/{state['total']} (saved in the sheet) -> {sheet_path}", file=out)
    if bench.stopped:
        print(f"grading stopped: {bench.stopped}", file=out)
    return 5 if bench.save_failed else 4 if bench.stopped else 0


@command_edge
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="chunklab-workbench",
                                     description="Grade an audit sheet in the browser, one key per item.")
    parser.add_argument("sheet", type=Path, help="the sheet CSV")
    parser.add_argument("--grader", help="your name or initials, saved with each grade")
    parser.add_argument("--port", type=bounds.int_in("port"), default=0, help="port on 127.0.0.1 (default: a free one)")
    parser.add_argument("--no-browser", action="store_true", help="print the address only")
    parser.add_argument("--key", type=Path, default=None, help="show the key's verdicts (not blind)")
    parser.add_argument("--grader-kind", default=HUMAN_KIND,
                        help="human (default: the page is for people) or model:<name> for a program driving it")
    args = parser.parse_args(argv)
    if not args.sheet.is_file():
        parser.error(f"no such sheet: {args.sheet}")
    return serve(args.sheet, args.grader, args.port, not args.no_browser, args.key, grader_kind=args.grader_kind)


if __name__ == "__main__":
    sys.exit(main())
