"""Wiring the recorded models of a study: which backend, which model, which call store.

Handles: :class:`MeteredLLM` (a recorded LLM that also keeps the cost of every call made
through it, per thread, so items processed at once by ``llm.pool`` keep their own costs),
:func:`default_backend` (a live Ollama server if one answers, else the embedded model),
:func:`make_backend` (an unloaded llama.cpp, Ollama or OpenAI-compatible backend for a model
name), :func:`make_models` (the answerer and the judges of a study, each recorded under its
own stage), :func:`make_chunker_llm` (the recorded model of Chroma's LLM chunker) and :func:`replaying` (serve the models from their records only, for a while). Not handled: prompts and parsing (``answering``, ``judges``), the call records
themselves (``records``), which questions are asked (``chunklab_core.answers.study``).
"""

from __future__ import annotations

import contextlib
import threading

from chunklab_core.llm.base import LLM

DEFAULT_ANSWERER = ("qwen15", "qwen-1.5b")
DEFAULT_JUDGES = {"qwen15": "qwen-1.5b", "qwen05": "qwen-0.5b"}


def default_backend(*, ollama_model: str = "qwen2.5-coder:1.5b", gguf: str = "qwen-1.5b",
                    host: str | None = None, probe_timeout_s: float = 2.0, **kwargs) -> LLM:
    """An ``OllamaBackend`` when a server answers at ``host``/``OLLAMA_HOST``, else the embedded
    ``LlamaCppBackend`` for ``gguf`` (a registered alias such as ``"qwen-0.5b"`` or a path).

    ``kwargs`` go to the chosen backend's constructor.
    """
    from chunklab_core.llm.ollama_backend import OllamaBackend, resolve_host, server_answers

    resolved = resolve_host(host)
    if server_answers(resolved, timeout_s=probe_timeout_s):
        return OllamaBackend(ollama_model, host=resolved, **kwargs)
    from chunklab_core.llm.llamacpp_backend import LlamaCppBackend

    return LlamaCppBackend(gguf, **kwargs)


class MeteredLLM:
    """A ``RecordedLLM`` that also remembers the cost of every call made through it.

    ``take()`` returns and clears the calls since the last ``take()``: (stage, prompt tokens,
    completion tokens, seconds, replayed). Replayed calls report the recorded cost, so a
    replayed run shows what the recording run paid.
    """

    def __init__(self, recorded):
        self.recorded = recorded
        self.store = recorded.store
        self._local = threading.local()  # each thread's calls since its last take()
        self._log_lock = threading.Lock()
        self.log: dict[str, dict] = {}  # every distinct call made through this wrapper, by key

    @property
    def _calls(self) -> list[tuple]:
        if not hasattr(self._local, "calls"):
            self._local.calls = []
        return self._local.calls

    def call(self, messages, schema=None, **options):
        reply = self.recorded.call(messages, schema, **options)
        self._calls.append((self.store.stage, reply.prompt_tokens, reply.completion_tokens,
                            reply.latency_s, reply.replayed))
        with self._log_lock:
            self.log.setdefault(reply.key, {"stage": self.store.stage,
                                            "tokens_in": reply.prompt_tokens,
                                            "tokens_out": reply.completion_tokens,
                                            "seconds": reply.latency_s})
        return reply

    def complete(self, messages, schema=None, **options) -> str:
        return self.call(messages, schema, **options).text

    def take(self) -> list[tuple]:
        """This thread's calls since its last ``take()`` (and forget them)."""
        calls, self._local.calls = self._calls, []
        return calls


@contextlib.contextmanager
def replaying(models: dict):
    """Within the block, every recorded model of ``models`` serves its records only
    (``mode="replay"``) and starts a fresh cost log; the modes are restored afterwards.

    Used to build a study's table from its records after a concurrent recording pass, so the
    table is the one a later replay gives, whatever the concurrency was.
    """
    saved = {}
    for name, llm in models.items():
        recorded = getattr(llm, "recorded", llm)
        saved[name] = recorded.mode
        recorded.mode = "replay"
        if hasattr(llm, "log"):
            llm.log.clear()
            llm.take()
    try:
        yield models
    finally:
        for name, llm in models.items():
            getattr(llm, "recorded", llm).mode = saved[name]


BACKENDS = ("llamacpp", "ollama", "openai")


def make_backend(backend: str, model: str, n_threads: int | None = None, host: str | None = None,
                 base_url: str | None = None):
    """An unloaded backend: ``llamacpp`` (a registered alias or a .gguf path), ``ollama``
    (``host``, else ``$OLLAMA_HOST``) or ``openai`` (an OpenAI-compatible server at
    ``base_url``, else ``$OPENAI_BASE_URL``; ``model`` is the id the server lists)."""
    if backend == "llamacpp":
        from chunklab_core.llm.llamacpp_backend import LlamaCppBackend

        return LlamaCppBackend(model, n_threads=n_threads)
    if backend == "ollama":
        from chunklab_core.llm.ollama_backend import OllamaBackend

        return OllamaBackend(model, host=host)
    if backend == "openai":
        from chunklab_core.llm.openai_backend import OpenAIBackend

        return OpenAIBackend(model, base_url=base_url)
    raise ValueError(f"backend must be one of {BACKENDS}, not {backend!r}")


def make_models(mode: str = "replay_or_record", n_threads: int | None = None, root=None, *,
                backend: str = "llamacpp", answerer: tuple[str, str] = DEFAULT_ANSWERER,
                judges: dict[str, str] | None = None, host: str | None = None,
                base_url: str | dict[str, str] | None = None) -> dict:
    """The recorded answerer and judges, each a :class:`MeteredLLM`; no model is loaded here.

    ``answerer`` is ``(name, model)`` and ``judges`` maps a short name to a model; calls go
    to the stages ``answers_<name>`` and ``judges_<name>`` under ``root`` (default
    ``data/records``). One backend object per distinct model, so a model that both answers
    and judges is loaded once. Defaults: Qwen2.5-Coder-1.5B answers; it and the 0.5B judge.
    ``base_url`` (backend ``openai``) is one URL for every model, or a dict model -> URL
    (vLLM serves one model per server); a model missing from the dict uses ``$OPENAI_BASE_URL``.
    """
    from chunklab_core.llm.records import CallStore, RecordedLLM

    judges = dict(DEFAULT_JUDGES if judges is None else judges)
    if not judges:
        raise ValueError("name at least one judge model")
    backends: dict[str, object] = {}

    def backend_for(model: str):
        if model not in backends:
            url = base_url.get(model) if isinstance(base_url, dict) else base_url
            backends[model] = make_backend(backend, model, n_threads, host, url)
        return backends[model]

    def recorded(stage: str, model: str):
        store = CallStore.for_stage(stage, root, make_target="llm-run")
        return MeteredLLM(RecordedLLM(backend_for(model), store, mode))

    name, model = answerer
    models = {"answerer": recorded(f"answers_{name}", model)}
    for judge_name, judge_model in judges.items():
        if judge_name == "answerer":
            raise ValueError("'answerer' cannot be a judge name")
        models[judge_name] = recorded(f"judges_{judge_name}", judge_model)
    return models


CHUNKER_STAGE = "chunker_qwen15"


def make_chunker_llm(mode: str = "replay", root=None, model: str = "qwen-1.5b", stage: str = CHUNKER_STAGE,
                     n_threads: int | None = None, backend: str = "llamacpp", host: str | None = None,
                     base_url: str | None = None):
    """The recorded model that chooses split points for Chroma's LLM chunker
    (``chunking.llm_split``), recorded under ``data/records/<stage>.jsonl``; its ``complete``
    is what ``llm_semantic`` calls. Nothing is loaded here: the backend loads on the first call
    that is not recorded, so ``mode="replay"`` never loads a model."""
    from chunklab_core.llm.records import CallStore, RecordedLLM

    store = CallStore.for_stage(stage, root, make_target="llm-chunker")
    return RecordedLLM(make_backend(backend, model, n_threads, host, base_url), store, mode)
