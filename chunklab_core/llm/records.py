"""Recorded LLM calls: an append-only JSONL store and a replaying wrapper around a backend.

Handles: ``call_key`` (sha256 of the canonical JSON of messages, schema, effective options and
model identity: a new model, prompt or option is a new key, hence a new call); ``CallStore``,
one JSONL file per run or stage (``data/llm_calls/<stage>.jsonl``), each record written with a
single ``os.write`` + ``os.fsync`` so a run killed with ``kill -9`` loses no finished call, and
a torn or unreadable line (a crash mid-write) is skipped on load with a warning, never fatal;
``RecordedLLM``, which serves recorded calls without touching the backend (``mode="replay"``
never loads a model) and records new ones (``"record"``, ``"replay_or_record"``).

A record holds: key, backend, model, digest or sha256, the effective options, attempt, the
output text, latency in seconds, prompt and completion token counts, a UTC timestamp and the
runtime (library version, host...), and for a server backend what the server reported about
the call (``served``: the model in its response, ``system_fingerprint``, retries made). The
prompt itself is not stored, only its hash (the key): the tables that use the calls hold the
questions and contexts. When a key is recorded more
than once (``mode="record"`` re-records), the last record wins.

Concurrency (``llm.pool`` runs calls in threads): ``CallStore.append`` holds a lock, so each
record stays one whole fsynced line whatever the completion order; ``RecordedLLM`` counts
under a lock and makes a call whose key is already in flight in another thread wait for that
call's result instead of running it twice. The key never depends on order, so the records of a
run replay to the same tables whatever its concurrency was.

Not handled: several processes appending to one file at once (one writer per stage file).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import threading
import time
import warnings
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

from chunklab_core import paths
from chunklab_core.llm.base import (LLM, Completion, IdentityUnavailable, canonical_json,
                                    split_key_only, validate_messages)

MODES = ("record", "replay", "replay_or_record")


class ReplayMiss(LookupError):
    """A replay-only call whose key is not in the store."""


def call_key(messages: list[dict], schema: dict | None, options: dict[str, Any],
             identity: dict[str, str]) -> str:
    """sha256 hex of ``canonical_json({"messages", "schema", "options", "model": identity})``."""
    payload = {"messages": messages, "schema": schema, "options": options, "model": identity}
    return hashlib.sha256(canonical_json(payload).encode("utf-8")).hexdigest()


class CallStore:
    """Append-only JSONL records of LLM calls in ``path`` (created on the first append).

    ``stage`` and ``make_target`` only shape the error message of a replay miss.
    """

    def __init__(self, path: str | Path, *, stage: str | None = None,
                 make_target: str | None = None):
        self.path = Path(path)
        self.stage = stage or self.path.stem
        self.make_target = make_target
        self._index: dict[str, dict] | None = None
        self._checked_tail = False
        self._append_lock = threading.Lock()

    @classmethod
    def for_stage(cls, stage: str, root: str | Path | None = None, **kwargs) -> "CallStore":
        """The store ``<root>/<stage>.jsonl``; ``root`` defaults to ``data/llm_calls``."""
        if not stage or any(c in stage for c in "/\\") or stage.startswith("."):
            raise ValueError(f"stage must be a plain file stem, got {stage!r}")
        root = Path(root) if root is not None else paths.DATA_DIR / "llm_calls"
        return cls(root / f"{stage}.jsonl", stage=stage, **kwargs)

    def _load(self) -> dict[str, dict]:
        if self._index is None:
            index, bad = {}, []
            if self.path.exists():
                with open(self.path, "rb") as handle:
                    for number, raw in enumerate(handle, start=1):
                        try:
                            record = json.loads(raw.decode("utf-8"))
                            index[record["key"]] = record
                        except (ValueError, KeyError, TypeError):
                            if raw.strip():
                                bad.append(number)
            if bad:
                warnings.warn(f"{self.path}: ignored {len(bad)} unreadable line(s) {bad[:10]} "
                              "(a run killed mid-write leaves a torn last line; the calls "
                              "they held will be made again)", RuntimeWarning, stacklevel=3)
            self._index = index
        return self._index

    def __contains__(self, key: str) -> bool:
        return key in self._load()

    def __len__(self) -> int:
        return len(self._load())

    def get(self, key: str) -> dict | None:
        """The record stored under ``key``, or None."""
        return self._load().get(key)

    def records(self) -> list[dict]:
        """All records, one per key, in first-written order."""
        return list(self._load().values())

    def identities(self, backend: str, model: str) -> list[dict[str, str]]:
        """Distinct model identities recorded for ``backend``/``model``."""
        seen = {canonical_json(r["identity"]) for r in self.records()
                if r.get("backend") == backend and r.get("model") == model and "identity" in r}
        return [json.loads(s) for s in sorted(seen)]

    def append(self, record: dict) -> None:
        """Write ``record`` as one line and fsync it before returning."""
        if "key" not in record:
            raise ValueError("a record needs a 'key'")
        line = (canonical_json(record) + "\n").encode("utf-8")
        with self._append_lock:  # threads of llm.pool: one whole line at a time
            self._load()
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                if not self._checked_tail:  # never glue a record onto a torn last line
                    size = os.fstat(fd).st_size
                    if size and os.pread(fd, 1, size - 1) != b"\n":
                        line = b"\n" + line
                    self._checked_tail = True
                os.write(fd, line)
                os.fsync(fd)
            finally:
                os.close(fd)
            self._index[record["key"]] = record

    def miss_message(self, key: str) -> str:
        hint = (f"`make {self.make_target}`" if self.make_target else
                f"the make target that records stage {self.stage!r} (see `make help`)")
        return (f"no recorded LLM call for key {key[:12]}... in stage {self.stage!r} "
                f"({self.path}). Replay mode never runs a model: record the call with {hint}, "
                "or use mode='replay_or_record' with a model available.")


class _InFlight:
    """A call running in one thread that others with the same key wait for."""

    def __init__(self):
        self.done = threading.Event()
        self.result: Completion | None = None


class RecordedLLM:
    """A backend wrapped so every call is recorded in ``store`` and served from it when known.

    ``backend`` is an ``LLM`` (constructing one loads nothing) or a zero-argument factory,
    called only when a call must really run. ``mode``: ``"replay"`` (misses raise
    ``ReplayMiss``), ``"replay_or_record"`` (misses run and are recorded), ``"record"`` (every
    call runs and is recorded again). ``hits``/``new_calls`` count what happened.
    """

    def __init__(self, backend: LLM | Callable[[], LLM], store: CallStore,
                 mode: str = "replay_or_record"):
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
        self._backend = backend
        self.store = store
        self.mode = mode
        self.hits = 0
        self.new_calls = 0
        self._identity: dict[str, str] | None = None
        self._lock = threading.Lock()  # counters, identity and the in-flight table
        self._in_flight: dict[str, _InFlight] = {}

    @property
    def backend(self) -> LLM:
        """The backend, built from its factory on first access."""
        if not isinstance(self._backend, LLM):
            self._backend = self._backend()
            if not isinstance(self._backend, LLM):
                raise TypeError(f"the backend factory returned {type(self._backend).__name__}, not an LLM")
        return self._backend

    def identity(self) -> dict[str, str]:
        """The backend's model identity; when it cannot tell (server down, file absent) and the
        mode replays, the single identity recorded for that backend and model."""
        with self._lock:
            return self._resolve_identity()

    def _resolve_identity(self) -> dict[str, str]:
        if self._identity is None:
            try:
                self._identity = self.backend.identity()
            except IdentityUnavailable:
                known = self.store.identities(self.backend.backend_name, self.backend.model)
                if self.mode == "record" or len(known) > 1:
                    raise
                if not known and self.mode == "replay":
                    raise ReplayMiss(f"{self.backend!r} cannot tell its model identity and stage "
                                     f"{self.store.stage!r} ({self.store.path}) holds no record of "
                                     f"model {self.backend.model!r}; record the stage first") from None
                if not known:
                    raise
                self._identity = known[0]
        return self._identity

    def call(self, messages: list[dict], schema: dict | None = None, **options) -> Completion:
        """One chat completion, served from the store when recorded (``replayed=True``)."""
        clean = validate_messages(messages)
        model_options, key_only = split_key_only(options)
        effective = self.backend.normalize_options(model_options)
        identity = self.identity()
        key = call_key(clean, schema, {**effective, **key_only}, identity)
        while True:
            with self._lock:
                record = self.store.get(key) if self.mode != "record" else None
                if record is not None:
                    self.hits += 1
                    return Completion(record["output"], record.get("prompt_tokens"),
                                      record.get("completion_tokens"), record.get("latency_s"),
                                      key=key, replayed=True)
                if self.mode == "replay":
                    raise ReplayMiss(self.store.miss_message(key))
                waiting = self._in_flight.get(key)
                if waiting is None:  # this thread makes the call
                    mine = self._in_flight[key] = _InFlight()
                    break
            waiting.done.wait()  # the same call runs in another thread: take its result
            if waiting.result is not None:
                with self._lock:
                    self.hits += 1
                return dataclasses.replace(waiting.result, replayed=True)
            # that call failed: loop, and make it here unless it is recorded by now
        try:
            mine.result = self._run_and_record(key, clean, schema, effective, key_only, identity)
            return mine.result
        finally:
            with self._lock:
                self._in_flight.pop(key)
            mine.done.set()

    def _run_and_record(self, key, clean, schema, effective, key_only, identity) -> Completion:
        start = time.perf_counter()
        reply = self.backend._generate(clean, schema, effective)
        latency = round(time.perf_counter() - start, 4)  # as stored, so replay returns the same
        self.store.append({
            "key": key, "backend": identity["backend"], "model": identity["model"],
            "identity": identity, "options": effective, "attempt": key_only.get("attempt", 1),
            "output": reply.text, "latency_s": latency,
            "prompt_tokens": reply.prompt_tokens, "completion_tokens": reply.completion_tokens,
            "timestamp": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "runtime": self.backend.runtime(),
            **({"served": reply.served} if reply.served is not None else {}),
        })
        with self._lock:
            self.new_calls += 1
        return Completion(reply.text, reply.prompt_tokens, reply.completion_tokens, latency,
                          key=key, replayed=False)

    def complete(self, messages: list[dict], schema: dict | None = None, **options) -> str:
        """The reply text (same contract as ``LLM.complete``)."""
        return self.call(messages, schema, **options).text
