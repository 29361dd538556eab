"""Ollama backend: chat completions from an Ollama server through the official client.

Handles: host resolution (argument, else ``OLLAMA_HOST``, else http://127.0.0.1:11434), the
mapping of the shared options onto Ollama options (``max_tokens`` -> ``num_predict``; other
Ollama options such as ``num_ctx`` pass through), JSON-schema constrained output through
Ollama's ``format=``, token counts from the response, and the model digest from the server's
model list (``client.list()``) as the identity of every recorded call. A server that does not
answer raises ``BackendUnavailable`` naming the host and the embedded alternative.

Not handled: pulling models (``ollama pull NAME`` is the user's step), streaming, the async
client, authentication beyond what the client reads from the environment.
"""

from __future__ import annotations

import os
from typing import Any

from chunklab_core.llm.base import (COMMON_OPTIONS, DEFAULT_OPTIONS, LLM, BackendUnavailable,
                                    Completion, IdentityUnavailable)

DEFAULT_HOST = "http://127.0.0.1:11434"
DEFAULT_NUM_CTX = 8192
# Ollama runtime options accepted besides the shared vocabulary (ollama._types.Options).
OLLAMA_OPTIONS = ("num_ctx", "num_keep", "num_batch", "num_gpu", "main_gpu", "num_thread",
                  "min_p", "typical_p", "repeat_last_n", "presence_penalty",
                  "frequency_penalty", "penalize_newline", "numa", "use_mmap")


def resolve_host(host: str | None = None) -> str:
    """The Ollama host: ``host``, else ``$OLLAMA_HOST``, else the local default."""
    return host or os.environ.get("OLLAMA_HOST") or DEFAULT_HOST


def _unavailable(host: str, err: Exception) -> BackendUnavailable:
    return BackendUnavailable(
        f"no Ollama server answers at {host} ({type(err).__name__}: {err}). Start one with "
        "`ollama serve` (or set OLLAMA_HOST to where it runs), or use the embedded backend "
        "instead: `LlamaCppBackend('qwen-0.5b')` from chunklab_core.llm (assemble the model "
        "file with `make llm-models`), or `default_backend()`, which picks it when no server answers.")


def _connection_errors() -> tuple[type[BaseException], ...]:
    import httpx

    return (ConnectionError, httpx.TransportError)


def server_answers(host: str | None = None, timeout_s: float = 2.0) -> bool:
    """True when an Ollama server at ``host`` answers its model list within ``timeout_s``."""
    import ollama

    try:
        with ollama.Client(host=resolve_host(host), timeout=timeout_s) as client:
            client.list()
        return True
    except (*_connection_errors(), ollama.ResponseError):
        return False


def _same_model(listed: str, wanted: str) -> bool:
    def full(name: str) -> str:
        return name if ":" in name.rsplit("/", 1)[-1] else name + ":latest"

    return full(listed) == full(wanted)


class OllamaBackend(LLM):
    """``model`` served by Ollama at ``host``; nothing is contacted before the first use.

    ``digest`` may be given to fix the identity without asking the server (replaying records).
    ``timeout_s`` bounds one HTTP request.
    """

    backend_name = "ollama"

    def __init__(self, model: str, *, host: str | None = None, num_ctx: int = DEFAULT_NUM_CTX,
                 timeout_s: float = 600.0, digest: str | None = None, keep_alive: str = "10m"):
        if not model:
            raise ValueError("model must name an Ollama model, e.g. 'qwen2.5-coder:1.5b'")
        self.model = model
        self.host = resolve_host(host)
        self.num_ctx = int(num_ctx)
        self.timeout_s = timeout_s
        self.keep_alive = keep_alive
        self._digest = digest
        self._client = None

    def __repr__(self) -> str:
        return f"OllamaBackend({self.model!r}, host={self.host!r})"

    def client(self):
        """The ``ollama.Client`` for this host (created on first use)."""
        if self._client is None:
            import ollama

            self._client = ollama.Client(host=self.host, timeout=self.timeout_s)
        return self._client

    def digest(self) -> str:
        """The model digest reported by the server's model list (cached after the first ask)."""
        if self._digest is None:
            try:
                listed = self.client().list().models
            except _connection_errors() as err:
                raise IdentityUnavailable(str(_unavailable(self.host, err))) from None
            matches = [m for m in listed if m.model and _same_model(m.model, self.model)]
            if not matches or not matches[0].digest:
                names = sorted(m.model for m in listed if m.model)
                raise BackendUnavailable(
                    f"the Ollama server at {self.host} has no model {self.model!r} "
                    f"(it has {names}); pull it with `ollama pull {self.model}`")
            self._digest = matches[0].digest
        return self._digest

    def identity(self) -> dict[str, str]:
        return {"backend": self.backend_name, "model": self.model, "digest": self.digest()}

    def normalize_options(self, options: dict[str, Any]) -> dict[str, Any]:
        options = dict(options)
        if "num_predict" in options:  # Ollama's own name for max_tokens
            options["max_tokens"] = options.pop("num_predict")
        unknown = set(options) - set(COMMON_OPTIONS) - set(OLLAMA_OPTIONS)
        if unknown:
            raise ValueError(f"unknown option(s) {sorted(unknown)} for the Ollama backend; "
                             f"allowed: {COMMON_OPTIONS + OLLAMA_OPTIONS}")
        return {**DEFAULT_OPTIONS, "num_ctx": self.num_ctx, **options}

    def runtime(self) -> dict[str, Any]:
        import ollama

        return {"host": self.host, "ollama_client": getattr(ollama, "__version__", "unknown")}

    def _generate(self, messages: list[dict], schema: dict | None,
                  options: dict[str, Any]) -> Completion:
        import ollama

        ollama_options = {("num_predict" if k == "max_tokens" else k): v for k, v in options.items()}
        try:
            response = self.client().chat(model=self.model, messages=messages, format=schema,
                                          options=ollama_options, stream=False,
                                          keep_alive=self.keep_alive)
        except _connection_errors() as err:
            raise _unavailable(self.host, err) from None
        except ollama.ResponseError as err:
            if err.status_code == 404:
                raise BackendUnavailable(f"the Ollama server at {self.host} has no model "
                                         f"{self.model!r}; pull it with `ollama pull {self.model}`"
                                         ) from None
            raise
        return Completion(text=response.message.content or "",
                          prompt_tokens=response.prompt_eval_count,
                          completion_tokens=response.eval_count)
