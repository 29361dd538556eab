"""Local LLMs for answering and judging, with every call recorded.

One interface, ``complete(messages, schema=None, **options) -> str``, three backends
(``OllamaBackend`` through the official client, ``LlamaCppBackend`` for an in-process GGUF
model, ``OpenAIBackend`` for any OpenAI-compatible server such as vLLM or llama.cpp's), ``default_backend()`` to pick one, ``RecordedLLM`` + ``CallStore`` to record and replay
calls, ``answer_question`` / ``run_batch`` for answering, ``judge_three_way`` /
``judge_yes_no`` for verdicts, ``models`` to assemble the GGUF files from PyPI packages, and
``assemble``, the ``chunklab-models`` command (the embedding model too).
Importing this package imports neither ``llama_cpp`` nor a model.
"""

from chunklab_core.llm.answering import (ANSWER_SYSTEM, NOT_IN_CONTEXT, AnswerResult,
                                         answer_messages, answer_question, run_batch)
from chunklab_core.llm.base import LLM, BackendUnavailable, Completion, IdentityUnavailable
from chunklab_core.llm.judges import (THREE_WAY_LABELS, UNPARSED, YES_NO_LABELS, JudgeResult,
                                      judge_three_way, judge_yes_no, parse_verdict,
                                      verdict_counts)
from chunklab_core.llm.llamacpp_backend import LlamaCppBackend
from chunklab_core.llm.ollama_backend import OllamaBackend
from chunklab_core.llm.openai_backend import OpenAIBackend
from chunklab_core.llm.records import CallStore, RecordedLLM, ReplayMiss, call_key
from chunklab_core.llm.wiring import default_backend

__all__ = [
    "ANSWER_SYSTEM", "NOT_IN_CONTEXT", "AnswerResult", "answer_messages", "answer_question",
    "run_batch", "LLM", "BackendUnavailable", "Completion", "IdentityUnavailable",
    "default_backend", "THREE_WAY_LABELS", "UNPARSED", "YES_NO_LABELS", "JudgeResult",
    "judge_three_way", "judge_yes_no", "parse_verdict", "verdict_counts", "LlamaCppBackend",
    "OllamaBackend", "OpenAIBackend", "CallStore", "RecordedLLM", "ReplayMiss", "call_key",
]
