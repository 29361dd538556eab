"""A scripted stand-in backend for tests, examples and dry runs of the pipeline.

Handles: ``ScriptedLLM``, an ``LLM`` whose replies come from a fixed string, a list (cycled)
or a function of the request, with a fixed identity, call counting, an optional delay
(to simulate a slow model when testing interruption) and ``fail=True`` for a backend that
raises if it is ever asked to generate (proving that replay touches no model).

Not handled: anything a real model does; never use it for reported numbers.
"""

from __future__ import annotations

import time
from typing import Any, Callable

from chunklab_core.llm.base import LLM, Completion

Reply = str | list[str] | Callable[[list[dict], dict | None, dict[str, Any]], str]


class BackendUsed(AssertionError):
    """A ``fail=True`` backend was asked to generate."""


class ScriptedLLM(LLM):
    """Replies from ``reply``; ``calls`` lists every (messages, schema, options) it served."""

    backend_name = "scripted"

    def __init__(self, reply: Reply = "scripted reply", *, model: str = "scripted",
                 version: str = "v1", delay_s: float = 0.0, fail: bool = False):
        self.reply = reply
        self.model = model
        self.version = version
        self.delay_s = delay_s
        self.fail = fail
        self.calls: list[tuple[list[dict], dict | None, dict[str, Any]]] = []

    def identity(self) -> dict[str, str]:
        return {"backend": self.backend_name, "model": self.model, "digest": self.version}

    def _generate(self, messages: list[dict], schema: dict | None,
                  options: dict[str, Any]) -> Completion:
        if self.fail:
            raise BackendUsed(f"{self.model} was asked to generate, but it must not be used")
        if self.delay_s:
            time.sleep(self.delay_s)
        index = len(self.calls)
        self.calls.append((messages, schema, options))
        if callable(self.reply):
            text = self.reply(messages, schema, options)
        elif isinstance(self.reply, list):
            text = self.reply[index % len(self.reply)]
        else:
            text = self.reply
        prompt_tokens = sum(len(m["content"].split()) for m in messages)
        return Completion(text, prompt_tokens, len(text.split()))
