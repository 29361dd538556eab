"""OpenAI-compatible backend: chat completions from any server speaking ``/v1/chat/completions``.

Handles: vLLM, llama.cpp's server (C++ ``llama-server`` and llama-cpp-python's
``python -m llama_cpp.server``), LM Studio, TGI and the like, through plain HTTP with
``httpx``. The base URL (``base_url``, else ``$OPENAI_BASE_URL``, else
http://127.0.0.1:8000/v1) and the model name (``model``, else ``$OPENAI_MODEL``) come from
parameters or the environment; an API key is read from ``$OPENAI_API_KEY`` (or the variable
named by ``api_key_env``) at request time, sent as a bearer token, and never stored or
recorded.

Identity (part of every record key): the backend, the model name and what the server's
``GET /v1/models`` reports about that model (its ``id``, and ``root``/``parent``/``owned_by``/
``meta`` where the server gives them: vLLM reports the weights' path as ``root``, llama.cpp's
C++ server a ``meta`` block with parameter and vocabulary counts). Servers report no weights
digest, so a caller who knows it (the GGUF's sha256, a Hugging Face revision) passes
``digest=`` to pin it in the identity. Per call, the record keeps (outside the key, under
``served``) the ``model`` and ``system_fingerprint`` of the response, its ``finish_reason``,
the constraint used and every retry with its reason and wait.

Constrained output (``schema_mode``): ``"json_schema"`` sends the OpenAI form
``{"type": "json_schema", "json_schema": {"name", "schema", "strict"}}`` (vLLM, OpenAI,
llama.cpp's C++ server, LM Studio); ``"json_object"`` sends ``{"type": "json_object",
"schema": ...}`` (llama-cpp-python's server, which rejects the first form); ``"none"`` sends
no constraint, so an unreadable verdict goes through the judges' retry-then-``unparsed`` rule;
``"auto"`` (default) tries them in that order, falling back when the server rejects a form
(HTTP 400/422, or a 500 whose message names ``response_format``: llama-cpp-python 0.3.36
reports its request validation errors as 500), and keeps the first form that worked; every
rejected form is counted in the record of the call that met it.

Retries: a timeout, a refused or dropped connection, HTTP 408/409/429/5xx are retried up to
``max_retries`` times after ``backoff_s * 2**i`` seconds (exponential backoff); each retry is
counted in the call's record. When all retries fail the call raises ``BackendUnavailable``
and nothing is recorded. Other HTTP errors raise at once with the server's message.

Not handled: streaming, tool calls, the legacy ``/v1/completions`` endpoint, logprobs, Azure's
deployment URLs, request batching (concurrency is ``llm.pool``'s bounded thread pool).
"""

from __future__ import annotations

import os
import threading
import time
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from chunklab_core.llm.base import (COMMON_OPTIONS, DEFAULT_OPTIONS, LLM, BackendUnavailable,
                                    Completion, IdentityUnavailable)

DEFAULT_BASE_URL = "http://127.0.0.1:8000/v1"
SCHEMA_MODES = ("auto", "json_schema", "json_object", "none")
AUTO_ORDER = ("json_schema", "json_object", "none")
RETRY_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})
REJECTED_FORMAT_STATUS = frozenset({400, 422})
IDENTITY_FIELDS = ("id", "root", "parent", "owned_by", "meta")
IDENTITY_TIMEOUT_S = 10.0


def resolve_base_url(base_url: str | None = None) -> str:
    """The server's base URL: ``base_url``, else ``$OPENAI_BASE_URL``, else the local default
    (trailing slashes removed; it usually ends in ``/v1``)."""
    return (base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")


def public_url(url: str) -> str:
    """``url`` without any user:password part, fit to be recorded."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = host + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def response_format(schema: dict, mode: str) -> dict | None:
    """The ``response_format`` request field that constrains a reply to ``schema`` in ``mode``."""
    if mode == "json_schema":
        return {"type": "json_schema",
                "json_schema": {"name": "reply", "schema": schema, "strict": True}}
    if mode == "json_object":
        return {"type": "json_object", "schema": schema}
    if mode == "none":
        return None
    raise ValueError(f"schema mode must be one of {AUTO_ORDER}, got {mode!r}")


class OpenAIBackend(LLM):
    """``model`` served at an OpenAI-compatible ``base_url``; nothing is contacted before use.

    ``timeout_s`` bounds one HTTP request; ``max_retries`` and ``backoff_s`` set the retries
    (see the module docstring). ``transport`` injects an ``httpx`` transport (tests).
    """

    backend_name = "openai"

    def __init__(self, model: str | None = None, *, base_url: str | None = None,
                 api_key_env: str = "OPENAI_API_KEY", schema_mode: str = "auto",
                 timeout_s: float = 300.0, max_retries: int = 3, backoff_s: float = 1.0,
                 digest: str | None = None, transport=None):
        model = model or os.environ.get("OPENAI_MODEL")
        if not model:
            raise ValueError("name the served model: OpenAIBackend('name') or $OPENAI_MODEL "
                             "(the id the server lists at GET /v1/models)")
        if schema_mode not in SCHEMA_MODES:
            raise ValueError(f"schema_mode must be one of {SCHEMA_MODES}, got {schema_mode!r}")
        if max_retries < 0 or backoff_s < 0 or timeout_s <= 0:
            raise ValueError("max_retries and backoff_s must be >= 0 and timeout_s > 0")
        self.model = model
        self.base_url = resolve_base_url(base_url)
        self.api_key_env = api_key_env
        self.schema_mode = schema_mode
        self.timeout_s = float(timeout_s)
        self.max_retries = int(max_retries)
        self.backoff_s = float(backoff_s)
        self._digest = digest
        self._transport = transport
        self._client = None
        self._served: dict | None = None
        self._working_mode: str | None = None if schema_mode == "auto" else schema_mode
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"OpenAIBackend({self.model!r}, base_url={public_url(self.base_url)!r})"

    # ---- HTTP --------------------------------------------------------------------------
    def client(self):
        """The shared ``httpx.Client`` (thread-safe; created on first use)."""
        with self._lock:
            if self._client is None:
                import httpx

                self._client = httpx.Client(timeout=self.timeout_s, transport=self._transport)
            return self._client

    def _headers(self) -> dict[str, str]:
        key = os.environ.get(self.api_key_env)
        return {"Authorization": f"Bearer {key}"} if key else {}

    def _request(self, method: str, path: str, body: dict | None, retries: list[dict],
                 max_retries: int | None = None, timeout_s: float | None = None):
        """One request with the retry rule; appends each retry to ``retries``."""
        import httpx

        url = f"{self.base_url}/{path.lstrip('/')}"
        max_retries = self.max_retries if max_retries is None else max_retries
        timeout = self.timeout_s if timeout_s is None else timeout_s
        for attempt in range(max_retries + 1):
            try:
                response = self.client().request(method, url, json=body, headers=self._headers(),
                                                 timeout=timeout)
                if response.status_code not in RETRY_STATUS or self.rejects_format(response):
                    return response
                reason = f"http {response.status_code}"
            except httpx.TimeoutException as err:
                reason = f"timeout ({type(err).__name__})"
            except httpx.TransportError as err:
                reason = f"connection ({type(err).__name__}: {err})"
            if attempt == max_retries:
                raise BackendUnavailable(
                    f"{method} {public_url(url)} failed {attempt + 1} time(s); last: {reason}. "
                    f"Is the OpenAI-compatible server running there (base URL from "
                    f"$OPENAI_BASE_URL or the backend's base_url)?")
            wait = self.backoff_s * 2 ** attempt
            retries.append({"reason": reason, "wait_s": wait})
            time.sleep(wait)
        raise AssertionError("unreachable")  # pragma: no cover

    @classmethod
    def rejects_format(cls, response) -> bool:
        """True when the server refused the request's ``response_format`` (see ``schema_mode``)."""
        return (response.status_code in REJECTED_FORMAT_STATUS or
                (response.status_code == 500 and "response_format" in cls._error_text(response)))

    @staticmethod
    def _error_text(response) -> str:
        try:
            payload = response.json()
        except ValueError:
            return response.text[:500]
        error = payload.get("error", payload) if isinstance(payload, dict) else payload
        message = error.get("message", error) if isinstance(error, dict) else error
        return str(message)[:500]

    # ---- identity ----------------------------------------------------------------------
    def served_model(self) -> dict:
        """The server's ``/v1/models`` entry for this model (asked once, then cached).

        Asked once with a short timeout (``IDENTITY_TIMEOUT_S``) and no retry: replaying records
        with no server must not wait on it (``RecordedLLM`` then uses the recorded identity).
        """
        if self._served is None:
            try:
                response = self._request("GET", "models", None, [], max_retries=0,
                                         timeout_s=min(self.timeout_s, IDENTITY_TIMEOUT_S))
            except BackendUnavailable as err:
                raise IdentityUnavailable(str(err)) from None
            if response.status_code != 200:
                raise BackendUnavailable(f"GET {public_url(self.base_url)}/models answered "
                                         f"{response.status_code}: {self._error_text(response)}")
            listed = response.json().get("data") or []
            matches = [m for m in listed if m.get("id") == self.model]
            if not matches:
                names = sorted(str(m.get("id")) for m in listed)
                raise BackendUnavailable(f"the server at {public_url(self.base_url)} serves "
                                         f"{names}, not {self.model!r}; pass one of those names")
            self._served = matches[0]
        return self._served

    def identity(self) -> dict:
        entry = self.served_model()
        served = {k: entry[k] for k in IDENTITY_FIELDS if entry.get(k) is not None}
        identity = {"backend": self.backend_name, "model": self.model, "served": served}
        if self._digest:
            identity["digest"] = self._digest
        return identity

    def runtime(self) -> dict[str, Any]:
        import httpx

        return {"base_url": public_url(self.base_url), "httpx": httpx.__version__,
                "schema_mode": self.schema_mode, "timeout_s": self.timeout_s,
                "max_retries": self.max_retries}

    # ---- completion --------------------------------------------------------------------
    def normalize_options(self, options: dict[str, Any]) -> dict[str, Any]:
        unknown = set(options) - set(COMMON_OPTIONS)
        if unknown:
            raise ValueError(f"unknown option(s) {sorted(unknown)} for the OpenAI-compatible "
                             f"backend; allowed: {COMMON_OPTIONS}")
        return {**DEFAULT_OPTIONS, **options}

    def request_body(self, messages: list[dict], options: dict[str, Any]) -> dict:
        """The JSON body of a chat request without ``response_format``.

        ``top_k`` is not in the OpenAI API but vLLM and llama.cpp accept it; ``repeat_penalty``
        goes out under llama.cpp's name and vLLM's (``repetition_penalty``); servers ignore
        the name they do not know.
        """
        body: dict[str, Any] = {"model": self.model, "messages": messages, "stream": False}
        for name, value in options.items():
            if name == "repeat_penalty":
                body["repeat_penalty"] = body["repetition_penalty"] = value
            else:
                body[name] = value
        return body

    def _generate(self, messages: list[dict], schema: dict | None,
                  options: dict[str, Any]) -> Completion:
        body = self.request_body(messages, options)
        retries: list[dict] = []
        modes = [None] if schema is None else (
            [self._working_mode] if self._working_mode else list(AUTO_ORDER))
        rejected = []
        for mode in modes:
            if mode is not None:
                body.pop("response_format", None)
                form = response_format(schema, mode)
                if form is not None:
                    body["response_format"] = form
            response = self._request("POST", "chat/completions", body, retries)
            if (self.schema_mode == "auto" and mode not in (None, "none")
                    and self.rejects_format(response)):
                rejected.append({"mode": mode, "status": response.status_code,
                                 "message": self._error_text(response)[:200]})
                continue
            break
        if response.status_code != 200:
            raise RuntimeError(f"POST {public_url(self.base_url)}/chat/completions answered "
                               f"{response.status_code}: {self._error_text(response)}")
        if mode is not None and self._working_mode is None:
            self._working_mode = mode
        payload = response.json()
        choice = (payload.get("choices") or [{}])[0]
        usage = payload.get("usage") or {}
        served = {"model": payload.get("model"),
                  "system_fingerprint": payload.get("system_fingerprint"),
                  "finish_reason": choice.get("finish_reason"),
                  "constraint": mode if schema is not None else None,
                  "rejected_constraints": rejected, "retries": retries}
        return Completion(text=(choice.get("message") or {}).get("content") or "",
                          prompt_tokens=usage.get("prompt_tokens"),
                          completion_tokens=usage.get("completion_tokens"), served=served)
