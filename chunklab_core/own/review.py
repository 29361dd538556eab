"""``chunklab-own review QUESTIONS DOCS``: accept, reject or edit generated questions in the browser.

Handles: reading a questions file written by ``chunklab-own questions`` (``own.generate``) --
active entries and the commented-out ones with their ``# FLAGGED:`` / ``# REJECTED:`` reasons --
(``read_file``), one decision per entry (``Review``: accept, reject, edit the query or the gold
snippet; an edit re-runs the checks a question and its document allow: the gold found in the
document as written, context-dependent wording, answer in the question, numbers, not a question),
writing the file back after every decision (atomically, the header kept; accepted and unflagged
entries active, flagged-unreviewed and rejected ones commented out with their reasons; the
decision kept as ``checks: reviewed``), and a local page to do it (``own.review_page``).

The server follows the grading workbench's rules (``audit.workbench``): ``127.0.0.1`` only, a
per-server secret in the printed address's fragment that every API request must carry, a
``Host`` of ``127.0.0.1``/``localhost``, bodies of at most ``MAX_BODY`` bytes that must be JSON
objects, every string put in the page with ``textContent``, no framing.

Not handled: files not written by ``chunklab-own questions`` (edit those in a text editor),
several reviewers at once, adding questions.
"""

from __future__ import annotations

from chunklab_core.core import bounds

import html
import json
import secrets
import sys
import threading
from dataclasses import dataclass, field
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import yaml

from chunklab_core.own.generate import FLAG_PREFIX, HEADER_START, REJECT_PREFIX, yaml_block

MAX_BODY = 64 * 1024
DECISIONS = ("accept", "reject", "edit")


@dataclass
class Entry:
    """One entry of the file: its fields, whether it is flagged (and why), and the review decision."""

    fields: dict
    reasons: list[str] = field(default_factory=list)
    decision: str = ""  # "", "accepted", "rejected"

    @property
    def active(self) -> bool:
        return self.decision == "accepted" or (not self.decision and not self.reasons)


def read_file(path: str | Path) -> tuple[list[str], list[Entry]]:
    """``(header lines, entries)`` of a generated questions file; ``ValueError`` naming the file otherwise."""
    path = Path(path)
    lines = path.read_text(encoding="utf-8").splitlines()
    if not lines or not lines[0].startswith(HEADER_START) or "questions:" not in lines:
        raise ValueError(f"{path}: not a file written by chunklab-own questions (its first line would start "
                         f"{HEADER_START!r}); edit your own questions in a text editor")
    start = lines.index("questions:")
    blocks: list[tuple[list[str], list[str], str]] = []  # (yaml lines, reasons, decision)
    for line in lines[start + 1:]:
        if line.startswith((FLAG_PREFIX, REJECT_PREFIX)):
            prefix = FLAG_PREFIX if line.startswith(FLAG_PREFIX) else REJECT_PREFIX
            blocks.append(([], [r for r in line[len(prefix):].split("; ") if r],
                           "rejected" if prefix == REJECT_PREFIX else ""))
        elif line.startswith("#   - ") and blocks and not blocks[-1][0]:
            blocks[-1][0].append(line[2:])
        elif line.startswith("#     ") and blocks:
            blocks[-1][0].append(line[2:])
        elif line.startswith("  - "):
            blocks.append(([line], [], ""))
        elif line.startswith("    ") and blocks:
            blocks[-1][0].append(line)
        elif line.strip():
            raise ValueError(f"{path}: cannot read the line {line!r} (not an entry of chunklab-own questions)")
    entries = []
    for text, reasons, decision in blocks:
        parsed = yaml.safe_load("\n".join(text))
        if not isinstance(parsed, list) or len(parsed) != 1 or not isinstance(parsed[0], dict):
            raise ValueError(f"{path}: an entry is not one YAML mapping: {' '.join(text)[:80]!r}")
        entry = Entry(parsed[0], reasons, decision)
        entry.decision = entry.decision or str((parsed[0].get("checks") or {}).get("reviewed", ""))
        entries.append(entry)
    return lines[:start], entries


def render(header: list[str], entries: list[Entry]) -> str:
    """The file text: the header kept, then every entry (inactive ones commented out with their reasons)."""
    out = [*header, "questions:"]
    for entry in entries:
        block = yaml_block(entry.fields)
        if entry.active:
            out += block
        else:
            prefix = REJECT_PREFIX if entry.decision == "rejected" else FLAG_PREFIX
            reasons = entry.reasons or ["rejected in review"]
            out += [prefix + "; ".join(reasons)] + ["# " + line for line in block]
    return "\n".join(out) + "\n"


def recheck(query: str, gold: str, document: str) -> dict:
    """The checks an edited entry allows without its passage: the document stands in for it."""
    from chunklab_core.questions import checks as qchecks

    return {"answer not in passage": qchecks.answer_not_in_passage(gold, document),
            "numbers disagree": qchecks.numbers_disagree(query, document),
            "context-dependent": qchecks.context_dependent(query),
            "answer in question": qchecks.answer_in_question(query, gold),
            "not a question": qchecks.not_a_question(query)}


class Review:
    """The file, its documents and the decisions; every decision is written at once."""

    def __init__(self, path: str | Path, docs: str | Path):
        from chunklab_core.data.loaders import load_folder

        self.path = Path(path)
        self.header, self.entries = read_file(self.path)
        self.documents = {d.doc_id: d.text for d in load_folder(docs, exclude=(self.path,))}
        self.secret = secrets.token_urlsafe(16)
        self.lock = threading.Lock()

    def context(self, entry: Entry, width: int = 400) -> dict:
        """The document text around the gold snippet (``before``, ``gold``, ``after``) for the page."""
        from chunklab_core.questions import checks as qchecks

        text = self.documents.get(str(entry.fields.get("doc", "")), "")
        gold = str(entry.fields.get("gold_snippets") or "")
        spans = qchecks.locate_ignoring_spacing(text, gold) if gold.strip() else []
        if not spans:
            return {"before": text[:2 * width], "gold": "", "after": ""}
        s, e = spans[0]
        return {"before": text[max(0, s - width):s], "gold": text[s:e], "after": text[e:e + width]}

    def state(self) -> dict:
        return {"file": self.path.name, "items": [
            {"id": str(e.fields.get("id")), "query": str(e.fields.get("query", "")),
             "gold": str(e.fields.get("gold_snippets", "")), "doc": str(e.fields.get("doc", "")),
             "reasons": e.reasons, "decision": e.decision, "active": e.active, **self.context(e)}
            for e in self.entries]}

    def decide(self, index: int, decision: str, query: str | None = None, gold: str | None = None) -> dict:
        """Apply one decision and write the file; the new state."""
        entry = self.entries[index]
        if decision == "edit":
            entry.fields["query"] = (query if query is not None else entry.fields["query"]).strip()
            entry.fields["gold_snippets"] = (gold if gold is not None else entry.fields["gold_snippets"]).strip()
            found = recheck(entry.fields["query"], entry.fields["gold_snippets"],
                            self.documents.get(str(entry.fields.get("doc", "")), ""))
            entry.fields["checks"] = {name: ("flag: " + c.evidence if c.evidence else "flag") if c.flag else "pass"
                                      for name, c in found.items()}
            entry.reasons = [f"{n}: {c.evidence}" if c.evidence else n for n, c in found.items() if c.flag]
            entry.decision = ""
        elif decision == "accept":
            entry.decision = "accepted"
        else:
            entry.decision = "rejected"
        checks = dict(entry.fields.get("checks") or {})
        checks.pop("reviewed", None)
        entry.fields["checks"] = {**checks, **({"reviewed": entry.decision} if entry.decision else {})}
        from chunklab_core.core.atomic_files import atomic_write_text

        atomic_write_text(self.path, render(self.header, self.entries))
        return self.state()


class Handler(BaseHTTPRequestHandler):
    """The page and ``/api/state`` and ``/api/decide`` (secret and Host checked, as the workbench)."""

    review: Review

    def log_message(self, *args) -> None:
        pass

    def _send(self, status: int, body: bytes, kind: str) -> None:
        self.send_response(status)
        for name, value in (("Content-Type", kind), ("Content-Length", str(len(body))), ("Cache-Control", "no-store"),
                            ("X-Content-Type-Options", "nosniff"), ("X-Frame-Options", "DENY"),
                            ("Referrer-Policy", "no-referrer"),
                            ("Content-Security-Policy", "default-src 'self'; script-src 'unsafe-inline'; "
                             "style-src 'unsafe-inline'; frame-ancestors 'none'")):
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def _json(self, status: int, payload: dict) -> None:
        self._send(status, json.dumps(payload).encode("utf-8"), "application/json; charset=utf-8")

    def _host_ok(self) -> bool:
        return (self.headers.get("Host") or "").rsplit(":", 1)[0] in ("127.0.0.1", "localhost")

    def do_GET(self) -> None:
        from chunklab_core.own.review_page import PAGE

        if not self._host_ok():
            return self._json(HTTPStatus.FORBIDDEN, {"error": "only 127.0.0.1 / localhost"})
        if self.path.split("?")[0] != "/":
            return self._json(HTTPStatus.NOT_FOUND, {"error": "not found"})
        page = PAGE.replace("{title}", html.escape(self.review.path.name))
        self._send(HTTPStatus.OK, page.encode("utf-8"), "text/html; charset=utf-8")

    def do_POST(self) -> None:
        if not self._host_ok():
            return self._json(HTTPStatus.FORBIDDEN, {"error": "only 127.0.0.1 / localhost"})
        try:
            length = int(self.headers.get("Content-Length", ""))
        except ValueError:
            length = -1
        if not 0 <= length <= MAX_BODY:
            self.close_connection = True
            return self._json(HTTPStatus.BAD_REQUEST, {"error": f"a Content-Length of 0 to {MAX_BODY} bytes is needed"})
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
        except (ValueError, RecursionError):
            body = None
        if not isinstance(body, dict) or not isinstance(body.get("secret", ""), str):
            return self._json(HTTPStatus.BAD_REQUEST, {"error": "the request is not a JSON object"})
        if not secrets.compare_digest(body.get("secret", ""), self.review.secret):
            return self._json(HTTPStatus.FORBIDDEN, {"error": "open the address the command printed (with #s=...)"})
        with self.review.lock:
            if self.path == "/api/state":
                return self._json(HTTPStatus.OK, self.review.state())
            if self.path != "/api/decide":
                return self._json(HTTPStatus.NOT_FOUND, {"error": "not found"})
            index, decision = body.get("index"), body.get("decision")
            texts = [body.get(k) for k in ("query", "gold")]
            if (not isinstance(index, int) or not 0 <= index < len(self.review.entries) or decision not in DECISIONS
                    or any(t is not None and not isinstance(t, str) for t in texts)):
                return self._json(HTTPStatus.BAD_REQUEST, {"error": "index (an entry), decision (accept, reject, "
                                                                    "edit) and string query/gold are needed"})
            return self._json(HTTPStatus.OK, self.review.decide(index, decision, *texts))


def make_server(review: Review, port: int = 0) -> ThreadingHTTPServer:
    server = ThreadingHTTPServer(("127.0.0.1", port), type("BoundHandler", (Handler,), {"review": review}))
    server.daemon_threads = True
    return server


def add_parser(sub) -> None:
    parser = sub.add_parser("review", help="accept / reject / edit generated questions in the browser")
    parser.add_argument("questions", help="the file chunklab-own questions wrote")
    parser.add_argument("docs", help="the documents folder it was generated from")
    parser.add_argument("--port", type=bounds.int_in("port"), default=0, help="port on 127.0.0.1 (default: a free one)")
    parser.add_argument("--no-browser", action="store_true", help="print the address, do not open a browser")


def command(args) -> int:
    from chunklab_core.data.loaders import ValidationError

    try:
        review = Review(args.questions, args.docs)
    except (ValueError, ValidationError, FileNotFoundError) as err:
        print(f"chunklab-own review: {err}", file=sys.stderr)
        return 1
    server = make_server(review, args.port)
    url = f"http://127.0.0.1:{server.server_address[1]}/#s={review.secret}"
    print(f"reviewing {args.questions} at {url} (Ctrl-C to stop; every decision is saved at once)", flush=True)
    if not args.no_browser:
        import webbrowser

        webbrowser.open(url)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0
