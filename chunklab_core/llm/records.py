"""Recorded LLM calls: an append-only JSONL store and a replaying wrapper around a backend.

Handles: ``call_key`` (sha256 of the canonical JSON of messages, schema, effective options and
model identity: a new model, prompt or option is a new key, hence a new call); ``CallStore``,
one JSONL file per run or stage (``data/records/<stage>.jsonl``, ``paths.RECORDS_DIR``), each record written with a
single ``os.write`` + ``os.fsync`` under an exclusive ``flock`` so a run killed with ``kill -9``
loses no finished call and two processes recording into one file never interleave lines;
every record is checked on load (:mod:`chunklab_core.llm.record_schema`: any bad line is an
error naming the file, line and field, before any call is served or made), except a torn
*last* line -- what a kill mid-write leaves -- which is counted and reported, and moved aside
to ``<file>.torn-<time>`` before the next record is appended, so the file stays clean;
``RecordedLLM``, which serves recorded calls without touching the backend (``mode="replay"``
never loads a model) and records new ones (``"record"``, ``"replay_or_record"``). It takes
the backend's own path (``llm.base``): ``backend.prepare`` turns the arguments into a
``Request`` (validated messages, effective options, key-only options), the key is computed
from that request, and only a call that must really run goes to ``backend.run``.

A record holds: key, backend, model, digest or sha256, the effective options, attempt, the
output text, latency in seconds, prompt and completion token counts, a UTC timestamp and the
runtime (library version, host...), and for a server backend what the server reported about
the call (``served``: the model in its response, ``system_fingerprint``, retries made). The
prompt itself is not stored, only its hash (the key): the tables that use the calls hold the
questions and contexts. When a key is recorded more
than once (``mode="record"`` re-records), the last record wins; when the outputs differ, loading
warns, naming the lines. A stage file that holds only other models' records (a 0.5B judge's file
under the 1.5B judge's name) is :class:`RecordsOfAnotherModel` naming both, at the first call
that is not recorded, never a "not recorded" miss or a missing runtime.

A records folder that does not exist is an error in every mode (a mistyped folder would
otherwise replay nothing, or record hours of calls somewhere unexpected); create it to record
into a new one.

Concurrency (``llm.pool`` runs calls in threads): ``CallStore.append`` holds a thread lock and
an exclusive ``flock`` of the file, so each record stays one whole fsynced line whatever the
completion order or the number of writing processes; ``RecordedLLM`` counts under a lock and
makes a call whose key is already in flight in another thread wait for that call's result
instead of running it twice. The key never depends on order, so the records of a run replay to
the same tables whatever its concurrency was.

Not handled: sharing an in-memory index between processes (two processes recording the same
stage may each make a call the other already made; both records are valid, the last wins),
locking on filesystems without ``flock`` (then: one writer per stage file).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import threading
import warnings
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

from chunklab_core.core import paths
from chunklab_core.llm.base import LLM, Completion, IdentityUnavailable, Request, canonical_json
from chunklab_core.llm.record_schema import (RecordsError, conflict_message, conflicting_keys,  # noqa: F401
                                             read_records, record_problems, torn_message)

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no lock, one writer per file
    fcntl = None

MODES = ("record", "replay", "replay_or_record")


class ReplayMiss(LookupError):
    """A replay-only call whose key is not in the store."""


class RecordsOfAnotherModel(ValueError):
    """A stage file that holds only records of other models than the one asked for (not a miss)."""


class RecordsFolderMissing(FileNotFoundError):
    """The folder that should hold the records does not exist."""


def user_error_types() -> tuple[type[BaseException], ...]:
    """The records' and backends' errors a recording command prints as a message alone
    (:func:`chunklab_core.core.cli_errors.user_errors`): each names the file and the fix."""
    from chunklab_core.llm.base import BackendUnavailable

    return (RecordsError, RecordsFolderMissing, RecordsOfAnotherModel, ReplayMiss, BackendUnavailable)


def require_folder(folder: str | Path, mode: str) -> None:
    """Raise :class:`RecordsFolderMissing` (worded for ``mode``) unless ``folder`` exists."""
    folder = Path(folder)
    if folder.is_dir():
        return
    if mode == "replay":
        then = ("replay mode only reads recorded calls, so there is nothing to replay and nothing "
                "was run. Check the folder name (e.g. RECORDS_DIR), or leave it unset for data/records")
    else:
        then = (f"no model was called. Check the folder name (e.g. RECORDS_DIR); to record into a new "
                f"folder, create it first: mkdir -p {folder}")
    raise RecordsFolderMissing(f"records folder {folder} does not exist ({mode} mode): {then}")


def call_key(messages: list[dict], schema: dict | None, options: dict[str, Any],
             identity: dict[str, str]) -> str:
    """sha256 hex of ``canonical_json({"messages", "schema", "options", "model": identity})``."""
    payload = {"messages": messages, "schema": schema, "options": options, "model": identity}
    return hashlib.sha256(canonical_json(payload).encode("utf-8")).hexdigest()


def request_key(request: Request, identity: dict[str, str]) -> str:
    """The record key of a prepared call: ``call_key`` of its validated messages, its schema,
    its effective and key-only options, and the model identity."""
    return call_key(request.messages, request.schema, request.key_options, identity)


class CallStore:
    """Append-only JSONL records of LLM calls in ``path`` (created on the first append).

    ``stage`` and ``make_target`` only shape the error message of a replay miss.
    """

    def __init__(self, path: str | Path, *, stage: str | None = None,
                 make_target: str | None = None):
        self.path = Path(path)
        self.stage = stage or self.path.stem
        self.make_target = make_target
        self.mode: str | None = None  # set by RecordedLLM; words the messages
        self.torn_lines = 0  # torn last lines seen on load (0 or 1)
        self._index: dict[str, dict] | None = None
        self._models: tuple[int, set[str]] | None = None  # (records counted, their models)
        self._append_lock = threading.Lock()

    @classmethod
    def for_stage(cls, stage: str, root: str | Path | None = None, **kwargs) -> "CallStore":
        """The store ``<root>/<stage>.jsonl``; ``root`` defaults to ``paths.RECORDS_DIR`` (``data/records``)."""
        if not stage or any(c in stage for c in "/\\") or stage.startswith("."):
            raise ValueError(f"stage must be a plain file stem, got {stage!r}")
        root = Path(root) if root is not None else paths.RECORDS_DIR
        return cls(root / f"{stage}.jsonl", stage=stage, **kwargs)

    def load(self) -> "CallStore":
        """Read and check every record now (see ``record_schema.read_records``); returns self."""
        self._load()
        return self

    def _load(self) -> dict[str, dict]:
        if self._index is None:
            index: dict[str, dict] = {}
            if self.path.exists():
                records, torn = read_records(self.path, self.mode)
                for _, record in records:
                    index[record["key"]] = record
                conflicts = conflicting_keys(records)
                if conflicts:
                    warnings.warn(conflict_message(self.path, conflicts), RuntimeWarning, stacklevel=3)
                if torn is not None:
                    self.torn_lines = 1
                    warnings.warn(torn_message(self.path, torn, self.mode), RuntimeWarning, stacklevel=3)
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
        """Write ``record`` as one line and fsync it before returning.

        Under a thread lock (threads of ``llm.pool``) and an exclusive ``flock`` of the file
        (other processes): a torn last line (left by a killed writer) is first copied to
        ``<file>.torn-<time>`` and cut off, so it never ends up mid-file.
        """
        problems = record_problems(record)
        if problems:
            raise ValueError(f"refusing to record a bad call in {self.path}: " + "; ".join(problems))
        line = (canonical_json(record) + "\n").encode("utf-8")
        with self._append_lock:
            self._load()
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                if fcntl is not None:
                    fcntl.flock(fd, fcntl.LOCK_EX)
                self._set_aside_torn_tail(fd)
                os.write(fd, line)
                os.fsync(fd)
            finally:
                os.close(fd)  # releases the flock
            self._index[record["key"]] = record

    def _set_aside_torn_tail(self, fd: int) -> None:
        """Move an unterminated last line to a side file and truncate it off (lock held)."""
        size = os.fstat(fd).st_size
        if not size or os.pread(fd, 1, size - 1) == b"\n":
            return
        start = size
        while start > 0:
            block = os.pread(fd, min(65536, start), max(0, start - 65536))
            cut = block.rfind(b"\n")
            if cut >= 0:
                start = start - len(block) + cut + 1
                break
            start -= len(block)
        tail = os.pread(fd, size - start, start)
        try:
            complete = not record_problems(json.loads(tail.decode("utf-8")))
        except ValueError:
            complete = False
        if complete:  # a whole record that only lacks its newline: keep it
            os.write(fd, b"\n")
            return
        stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")
        aside = self.path.with_name(f"{self.path.name}.torn-{stamp}")
        aside.write_bytes(tail)
        os.fsync(fd)
        os.ftruncate(fd, start)
        os.fsync(fd)
        warnings.warn(f"{self.path}: moved a torn last line ({len(tail)} bytes, a run killed while "
                      f"writing it) to {aside} before appending", RuntimeWarning, stacklevel=3)

    def other_models_message(self, model: str) -> str | None:
        """Why this file cannot hold ``model``'s calls: it holds only other models', or None."""
        index = self._load()
        if self._models is None or self._models[0] != len(index):  # recounted when records are added
            self._models = (len(index), {r.get("model") for r in index.values()} - {None})
        if not self._models[1] or model in self._models[1]:
            return None
        models = sorted(self._models[1])
        return (f"{self.path} (stage {self.stage!r}) holds {len(self._index)} records, all of model(s) "
                f"{models}, none of {model!r}, the model asked for: the file is another model's "
                "records (copied or renamed?). Put the right file back (`git checkout -- "
                f"{self.path}` for a committed one) or point the records folder at this model's records")

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
        require_folder(store.path.parent, mode)
        self._backend = backend
        self.store = store
        self.mode = mode
        store.mode = mode
        store.load()  # every record checked before any work (RecordsError names file, line, field)
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
                mismatch = self.store.other_models_message(self.backend.model)
                if not known and mismatch:
                    raise RecordsOfAnotherModel(mismatch) from None
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
        request = self.backend.prepare(messages, schema, **options)
        identity = self.identity()
        key = request_key(request, identity)
        while True:
            with self._lock:
                record = self.store.get(key) if self.mode != "record" else None
                if record is not None:
                    self.hits += 1
                    return Completion(record["output"], record.get("prompt_tokens"),
                                      record.get("completion_tokens"), record.get("latency_s"),
                                      key=key, replayed=True)
                mismatch = self.store.other_models_message(identity["model"])
                if mismatch:  # every call would miss: not a partial run but the wrong file
                    raise RecordsOfAnotherModel(mismatch)
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
            mine.result = self._run_and_record(key, request, identity)
            return mine.result
        finally:
            with self._lock:
                self._in_flight.pop(key)
            mine.done.set()

    def _run_and_record(self, key: str, request: Request, identity: dict[str, str]) -> Completion:
        reply = self.backend.run(request)
        latency = round(reply.latency_s, 4)  # as stored, so replay returns the same
        self.store.append({
            "key": key, "backend": identity["backend"], "model": identity["model"],
            "identity": identity, "options": request.options,
            "attempt": request.key_only.get("attempt", 1),
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
