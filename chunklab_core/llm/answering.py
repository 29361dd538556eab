"""Answering a question from retrieved contexts, and resumable batches of LLM work.

Handles: the answer prompt (a system prompt that asks for a brief answer from the numbered
contexts only, and for the exact phrase "not in the context" when they lack the answer),
``answer_question`` returning the text with its cost, and ``run_batch``: a loop with a tqdm
progress bar (rate and ETA) whose ``fn`` calls a ``RecordedLLM`` in ``replay_or_record`` mode,
so a killed run that is started again serves every finished item from the records (no model
call) and continues where it stopped; ``concurrency`` items may be in flight at once.

Not handled: choosing the contexts (retrieval does that), truncating them to the model's
window (the embedded backend raises when the prompt does not fit), grading (``judges``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable, TypeVar

from chunklab_core.core.text import normalize
from chunklab_core.llm.base import ChatModel
from chunklab_core.llm.records import CallStore

NOT_IN_CONTEXT = "not in the context"
ANSWER_MAX_TOKENS = 64

ANSWER_SYSTEM = f"""\
You answer questions using only the numbered context passages you are given, never outside knowledge.
Answer briefly: a short phrase or one sentence, with no explanation.
If the passages do not contain the answer, reply exactly: {NOT_IN_CONTEXT}"""

ANSWER_USER = """\
Context:
{contexts}

Question: {question}"""

T = TypeVar("T")
R = TypeVar("R")


@dataclass(frozen=True)
class AnswerResult:
    """A model answer with its cost; ``key``/``replayed`` come from a ``RecordedLLM``."""

    text: str
    not_in_context: bool
    prompt_tokens: int | None
    completion_tokens: int | None
    latency_s: float | None
    key: str | None = None
    replayed: bool = False


def format_contexts(contexts: list[str]) -> str:
    """``[1] first\\n\\n[2] second ...``: the contexts numbered from 1, stripped."""
    return "\n\n".join(f"[{i}] {c.strip()}" for i, c in enumerate(contexts, start=1))


def answer_messages(question: str, contexts: list[str]) -> list[dict]:
    """The chat messages asking ``question`` over ``contexts``."""
    if not isinstance(question, str) or not question.strip():
        raise ValueError("question must be a non-empty string")
    if isinstance(contexts, str) or not all(isinstance(c, str) for c in contexts):
        raise ValueError("contexts must be a list of strings (pass [text] for one context)")
    body = format_contexts(contexts) if contexts else "(no passages)"
    return [{"role": "system", "content": ANSWER_SYSTEM},
            {"role": "user", "content": ANSWER_USER.format(contexts=body, question=question.strip())}]


def says_not_in_context(text: str) -> bool:
    """True when the answer contains the phrase "not in the context" (case/space-insensitive)."""
    return NOT_IN_CONTEXT in normalize(text)


def answer_question(llm: ChatModel, question: str, contexts: list[str],
                    max_tokens: int = ANSWER_MAX_TOKENS, **options) -> AnswerResult:
    """Answer ``question`` from ``contexts`` with ``llm`` (a backend, a ``RecordedLLM`` or a
    ``MeteredLLM``)."""
    reply = llm.call(answer_messages(question, contexts), None, max_tokens=max_tokens, **options)
    text = reply.text.strip()
    return AnswerResult(text, says_not_in_context(text), reply.prompt_tokens,
                        reply.completion_tokens, reply.latency_s, reply.key, reply.replayed)


def run_batch(items: Iterable[T], fn: Callable[[T], R], store: CallStore | None = None,
              desc: str = "LLM calls", concurrency: int = 1) -> list[R]:
    """``[fn(item) for item in items]`` with a progress bar; resumable through the records.

    ``fn`` should call a ``RecordedLLM`` in ``replay_or_record`` mode writing to ``store``:
    items finished by an earlier (possibly killed) run are then served from the records,
    and the bar's postfix shows how many calls this run really made (``new``).
    ``concurrency`` items run at once (``llm.pool.map_bounded``); results keep item order.
    """
    from chunklab_core.llm.pool import map_bounded

    return map_bounded(items, fn, concurrency, store=store, desc=desc)
