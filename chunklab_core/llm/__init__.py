"""Local LLMs for answering and judging, with every call recorded.

One interface, ``complete(messages, schema=None, **options) -> str``, and one path per call.
The modules, in import order (each imports only modules listed before it and
``chunklab_core.core``; checked by ``tests/test_llm_layout.py``):

- ``base``: the ``LLM`` class, the ``ChatModel`` protocol its users accept, ``Completion``,
  ``Request``; ``LLM.prepare`` (validate, normalise options, split key-only ones) and
  ``LLM.run`` (time the backend's ``_generate``) are the only place those steps happen.
- ``models``: the GGUF files assembled from PyPI packages, and their hashes.
- ``llamacpp_backend``, ``ollama_backend``, ``openai_backend``: the three backends (an
  in-process GGUF model through llama-cpp-python, an Ollama server through the official
  client, any OpenAI-compatible server such as vLLM or llama.cpp's); ``testing.ScriptedLLM``,
  a scripted stand-in for tests; ``local_server``, llama-cpp-python's OpenAI-compatible
  server in a subprocess.
- ``record_schema``, ``records``: ``CallStore`` (the JSONL records) and ``RecordedLLM``,
  which keys a call by ``backend.prepare``'s request and runs ``backend.run`` only on a miss.
- ``pool`` (calls in threads), ``wiring`` (``default_backend``, ``make_backend``,
  ``make_models``: which backend, model and store; ``MeteredLLM``: per-call costs).
- ``assemble``: the ``chunklab-models`` command (the GGUF files, and the embedding model
  through ``chunklab_core.retrieval.model_assembly``).
- ``answering`` (``answer_question``, ``run_batch``), ``judges`` (``judge_three_way``,
  ``judge_yes_no``), ``relevance`` (a YES/NO passage-relevance judge): the prompts.

Importing this package imports neither ``llama_cpp`` nor a model. Not here: which questions
are answered and how answers are scored (``chunklab_core.answers``), question generation
(``chunklab_core.questions``), reranking (``chunklab_core.rerank``).
"""

from chunklab_core.llm.answering import (ANSWER_SYSTEM, NOT_IN_CONTEXT, AnswerResult,
                                         answer_messages, answer_question, run_batch)
from chunklab_core.llm.base import (LLM, BackendUnavailable, ChatModel, Completion, IdentityUnavailable,
                                    Request)
from chunklab_core.llm.judges import (THREE_WAY_LABELS, UNPARSED, YES_NO_LABELS, JudgeResult,
                                      judge_three_way, judge_yes_no, parse_verdict,
                                      verdict_counts)
from chunklab_core.llm.llamacpp_backend import LlamaCppBackend
from chunklab_core.llm.ollama_backend import OllamaBackend
from chunklab_core.llm.openai_backend import OpenAIBackend
from chunklab_core.llm.records import CallStore, RecordedLLM, ReplayMiss, call_key, request_key
from chunklab_core.llm.wiring import default_backend

__all__ = [
    "ANSWER_SYSTEM", "NOT_IN_CONTEXT", "AnswerResult", "answer_messages", "answer_question",
    "run_batch", "LLM", "BackendUnavailable", "ChatModel", "Completion", "IdentityUnavailable",
    "Request", "default_backend", "THREE_WAY_LABELS", "UNPARSED", "YES_NO_LABELS", "JudgeResult",
    "judge_three_way", "judge_yes_no", "parse_verdict", "verdict_counts", "LlamaCppBackend",
    "OllamaBackend", "OpenAIBackend", "CallStore", "RecordedLLM", "ReplayMiss", "call_key",
    "request_key",
]
