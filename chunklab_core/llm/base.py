"""The one small interface every LLM backend implements, and the one path a call takes.

Handles: the ``LLM`` base class (``complete(messages, schema=None, **options) -> str``), the
``ChatModel`` protocol (what answering, judging and question generation ask of a model: a
backend, a ``RecordedLLM`` or a ``MeteredLLM``), the ``Completion`` value returned by
``call``, the ``Request`` a call is prepared into, message validation, the shared option
vocabulary and its defaults, and canonical JSON (the basis of every record key).

A call has two steps, both here and nowhere else: ``LLM.prepare`` validates the messages and
the schema, splits off the key-only options and fills in the defaults (a ``Request``);
``LLM.run`` times the backend's ``_generate`` on that request. ``LLM.call`` is
``run(prepare(...))``; ``llm.records.RecordedLLM`` computes its record key from the same
``Request`` and calls ``run`` only when the call is not recorded.

Options use one vocabulary across backends so that a record key means the same thing
everywhere: ``temperature`` (default 0: greedy), ``seed`` (default 0), ``max_tokens``
(default 256), ``top_p``, ``top_k``, ``repeat_penalty``, ``stop``. Backends may accept more
(the Ollama backend passes ``num_ctx`` and other Ollama options through). ``attempt`` is a
key-only option: it makes a retry a distinct recorded call and is never sent to a model.

Not handled: choosing a backend (``llm.wiring``), the backends themselves (``*_backend``),
recording (``llm.records``), streaming, tool calls, images, multi-turn state (each call is
independent).
"""

from __future__ import annotations

import json
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, Protocol

ROLES = ("system", "user", "assistant")
COMMON_OPTIONS = ("temperature", "seed", "max_tokens", "top_p", "top_k", "repeat_penalty", "stop")
DEFAULT_OPTIONS: dict[str, Any] = {"temperature": 0.0, "seed": 0, "max_tokens": 256}
KEY_ONLY_OPTIONS = ("attempt", "repeat")  # part of the record key, never sent to a model


class BackendUnavailable(RuntimeError):
    """The backend cannot run: no server answers, or the model or library is missing."""


class IdentityUnavailable(BackendUnavailable):
    """The model identity (digest or file sha256) cannot be determined right now."""


@dataclass(frozen=True)
class Completion:
    """One model reply with its cost. ``key``/``replayed`` are set by ``RecordedLLM``.

    ``served`` holds per-call facts a server reports (the model name in its response, its
    ``system_fingerprint``, the constraint used, retries made); ``RecordedLLM`` stores them
    with the call, outside its key.
    """

    text: str
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    latency_s: float | None = None
    key: str | None = None
    replayed: bool = False
    served: dict | None = None


@dataclass(frozen=True)
class Request:
    """A call prepared by ``LLM.prepare``: what the model is sent, and what only keys the call.

    ``messages`` are validated plain copies, ``options`` the effective model options (defaults
    filled in), ``key_only`` the options that distinguish a recorded call but never reach a
    model (``attempt``, ``repeat``).
    """

    messages: list[dict]
    schema: dict | None
    options: dict[str, Any]
    key_only: dict[str, Any]

    @property
    def key_options(self) -> dict[str, Any]:
        """The options a record key is computed from: model options plus key-only options."""
        return {**self.options, **self.key_only}


class ChatModel(Protocol):
    """A chat model as its users see it (answering, judges, question generation): an ``LLM``
    backend, a ``llm.records.RecordedLLM`` or a ``llm.wiring.MeteredLLM``."""

    def call(self, messages: list[dict], schema: dict | None = None, **options) -> Completion: ...

    def complete(self, messages: list[dict], schema: dict | None = None, **options) -> str: ...


def canonical_json(obj: Any) -> str:
    """JSON with sorted keys, no whitespace and raw unicode: equal objects, equal strings."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def validate_messages(messages: list[dict]) -> list[dict]:
    """Check the chat messages and return plain ``{"role", "content"}`` copies.

    Raises ``ValueError`` for an empty list, an unknown role or non-string content.
    """
    if not isinstance(messages, (list, tuple)) or not messages:
        raise ValueError("messages must be a non-empty list of {'role', 'content'} dicts")
    clean = []
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or set(message) - {"role", "content"}:
            raise ValueError(f"message {i} must be a dict with only 'role' and 'content': {message!r}")
        role, content = message.get("role"), message.get("content")
        if role not in ROLES:
            raise ValueError(f"message {i} has role {role!r}; allowed roles: {ROLES}")
        if not isinstance(content, str):
            raise ValueError(f"message {i} content must be a string, got {type(content).__name__}")
        clean.append({"role": role, "content": content})
    return clean


def split_key_only(options: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(model options, key-only options such as ``attempt``)."""
    model = {k: v for k, v in options.items() if k not in KEY_ONLY_OPTIONS}
    key_only = {k: v for k, v in options.items() if k in KEY_ONLY_OPTIONS}
    return model, key_only


class LLM(ABC):
    """A chat model. Subclasses implement ``identity`` and ``_generate`` (called only by ``run``),
    and may override ``normalize_options`` and ``runtime``.

    Construction must be cheap and must not load a model or contact a server: replaying
    recorded calls constructs a backend and never uses it.
    """

    backend_name: str = "abstract"
    model: str = ""

    @abstractmethod
    def identity(self) -> dict[str, str]:
        """``{"backend", "model", and "digest" or "sha256"}``: what produced the output."""

    def normalize_options(self, options: dict[str, Any]) -> dict[str, Any]:
        """The effective options of a call (defaults filled in); ``ValueError`` for unknown ones."""
        unknown = set(options) - set(COMMON_OPTIONS)
        if unknown:
            raise ValueError(f"unknown option(s) {sorted(unknown)} for {self.backend_name}; "
                             f"allowed: {COMMON_OPTIONS}")
        return {**DEFAULT_OPTIONS, **options}

    @abstractmethod
    def _generate(self, messages: list[dict], schema: dict | None,
                  options: dict[str, Any]) -> Completion:
        """Run the model on validated messages and normalised options."""

    def runtime(self) -> dict[str, Any]:
        """Facts recorded beside each call that are not part of its key (library versions...)."""
        return {}

    def prepare(self, messages: list[dict], schema: dict | None = None, **options) -> Request:
        """The ``Request`` of one call: messages validated, schema checked, key-only options
        split off and the model options normalised (``ValueError`` for any bad input)."""
        if schema is not None and not isinstance(schema, dict):
            raise ValueError(f"schema must be a JSON-schema dict or None, got {type(schema).__name__}")
        clean = validate_messages(messages)
        model_options, key_only = split_key_only(options)
        return Request(clean, schema, self.normalize_options(model_options), key_only)

    def run(self, request: Request) -> Completion:
        """Run the model on a prepared ``request``; the reply with token counts and latency."""
        if not isinstance(request, Request):
            raise TypeError(f"run() takes a Request from prepare(), got {type(request).__name__}")
        start = time.perf_counter()
        reply = self._generate(request.messages, request.schema, request.options)
        latency = time.perf_counter() - start
        return Completion(reply.text, reply.prompt_tokens, reply.completion_tokens, latency,
                          served=reply.served)

    def call(self, messages: list[dict], schema: dict | None = None, **options) -> Completion:
        """Run one chat completion and return the reply with token counts and latency."""
        return self.run(self.prepare(messages, schema, **options))

    def complete(self, messages: list[dict], schema: dict | None = None, **options) -> str:
        """The reply text of one chat completion (``schema`` constrains it to that JSON schema)."""
        return self.call(messages, schema, **options).text
