"""Test fixture: a tiny local stand-in for an Ollama server (stdlib ``http.server``).

Implements the subset of the Ollama REST API the official ``ollama`` client uses here:
``POST /api/chat`` (non-streaming), ``GET /api/tags`` (model list with digests),
``POST /api/show`` and ``GET /api/version``. It listens on 127.0.0.1 on a free port, in a
thread, and records every request body in ``requests`` so tests can check what the client
sent. Replies come from ``responder(model, messages, format, options) -> (text, prompt_tokens,
completion_tokens)``: ``canned_responder`` (deterministic, no model) by default, or
``model_responder(backend)``, which answers with a real embedded model (used when the 0.5B
GGUF is assembled).

Not a general Ollama emulator: no streaming, pulls, embeddings or errors beyond 404.
"""

from __future__ import annotations

import hashlib
import json
import threading
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable

Responder = Callable[[str, list[dict], Any, dict], tuple[str, int, int]]


def canned_responder(model: str, messages: list[dict], fmt: Any, options: dict) -> tuple[str, int, int]:
    """A reply that depends only on the request: the first enum label of a verdict schema,
    else ``canned:<8 hex of the messages>``."""
    if isinstance(fmt, dict):
        label = fmt.get("properties", {}).get("verdict", {}).get("enum", ["?"])[0]
        text = json.dumps({"verdict": label})
    else:
        digest = hashlib.sha256(json.dumps(messages, sort_keys=True).encode()).hexdigest()
        text = f"canned:{digest[:8]}"
    return text, sum(len(m["content"].split()) for m in messages), len(text.split())


def model_responder(backend) -> Responder:
    """Answer with ``backend`` (an ``LLM``), mapping Ollama options back to the shared ones."""
    def respond(model: str, messages: list[dict], fmt: Any, options: dict) -> tuple[str, int, int]:
        shared = {("max_tokens" if k == "num_predict" else k): v for k, v in options.items()
                  if k != "num_ctx"}
        reply = backend.call(messages, fmt if isinstance(fmt, dict) else None, **shared)
        return reply.text, reply.prompt_tokens or 0, reply.completion_tokens or 0
    return respond


class FakeOllamaServer:
    """``with FakeOllamaServer(models={"name:tag": "sha256:..."}) as server: server.host``."""

    def __init__(self, models: dict[str, str] | None = None, responder: Responder = canned_responder):
        self.models = models or {"qwen2.5-coder:0.5b": "sha256:" + "ab" * 32}
        self.responder = responder
        self.requests: list[tuple[str, dict]] = []
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def host(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> "FakeOllamaServer":
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep test output clean
                pass

            def _send(self, status: int, payload: dict) -> None:
                body = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self):
                fake.requests.append((self.path, {}))
                if self.path == "/api/tags":
                    self._send(200, {"models": [
                        {"name": name, "model": name, "digest": digest, "size": 1,
                         "modified_at": "2025-01-01T00:00:00Z"}
                        for name, digest in fake.models.items()]})
                elif self.path == "/api/version":
                    self._send(200, {"version": "0.0.0-fake"})
                else:
                    self._send(404, {"error": f"unknown path {self.path}"})

            def do_POST(self):
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                fake.requests.append((self.path, body))
                model = body.get("model", "")
                if ":" not in model.rsplit("/", 1)[-1]:  # Ollama reads "name" as "name:latest"
                    model += ":latest"
                if self.path in ("/api/chat", "/api/show") and model not in fake.models:
                    self._send(404, {"error": f"model '{model}' not found"})
                elif self.path == "/api/show":
                    self._send(200, {"modelfile": "", "parameters": "", "template": "",
                                     "details": {"format": "gguf"}, "model_info": {}})
                elif self.path == "/api/chat":
                    if body.get("stream", True):
                        self._send(400, {"error": "the fake server only answers stream=false"})
                        return
                    text, n_prompt, n_out = fake.responder(
                        model, body.get("messages", []), body.get("format"), body.get("options") or {})
                    self._send(200, {
                        "model": model, "done": True, "done_reason": "stop",
                        "created_at": datetime.now(timezone.utc).isoformat(),
                        "message": {"role": "assistant", "content": text},
                        "prompt_eval_count": n_prompt, "eval_count": n_out})
                else:
                    self._send(404, {"error": f"unknown path {self.path}"})

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)
