"""Recorded retrieval runs: every ranking computed once, stored with its provenance, replayed.

Handles: the run store (:class:`RunStore`) behind every retrieval of the series' posts. A
*cell* is one (corpus sample, strategy, retriever, embedding model); its record holds, per
question, the ids of the top ``depth`` fitted texts (chunks) and the scores of the first
:data:`SCORE_DEPTH` of them, plus what produced them (see :func:`provenance`). Chunk spans of
strategies that need an embedding model to cut (semantic chunking) and the dense model's
truncation mask are recorded the same way, so a replay needs no embedding model at all.

Modes, read from the environment variable ``CHUNKLAB_RUNS`` (:func:`current_mode`):

* ``live`` (default, and always for your own documents, corpus ``own``): compute, store nothing;
* ``record`` (``make runs``): replay what is recorded and current, compute and store the rest;
  each cell is written atomically when it finishes, so a killed recording loses at most the
  cell it was computing and the next run continues from there;
* ``replay`` (``make all``): read every ranking; a missing or stale cell is a
  :class:`RunStoreError` that names the cell and the command that records it.

Stale means the inputs changed: the fitted texts (sha256 of every chunk text, so a change in a
strategy's code shows), the queries, the retriever's scoring version
(its spec's ``version`` in ``registry``) or the depth asked. The model file hash, library versions and code
version are recorded as provenance and checked by ``make verify-runs``, which recomputes a
seeded sample of cells from scratch and requires identical ids and order and scores within
1e-6 (:func:`chunklab_core.reports.run_recording.verify`).

Depth: :data:`RECORD_DEPTH` chunks per question (declared once in ``registry``: 100, also the
component depth of a fused retriever), or more when a caller asks for more. A top-k list is a prefix of
any deeper top-k list under the series' total tie rule (``topk.top_k_rows``), so one deep
record serves every shallower k exactly. Fused cells (hybrid) are never stored: they are fused
(by the spec's own ``fuse``, exactly as its built retriever fuses) from the stored records of
their parts.

Layout: ``data/runs/<corpus sample>/<strategy>/<retriever>[@<model>].npz`` (``numpy.savez_compressed``:
``ids`` as uint16 when the cell has fewer than 65,535 texts, else uint32, padding = the dtype's
maximum; ``scores`` float32; ``meta`` the provenance as JSON; ``sha256`` over the provenance and
every array, checked on every load). A torn or damaged file (truncated, a flipped byte, not a
zip) is reported with its path and the fix; so is a file whose structure is not what its path
says (another kind of file, another cell, arrays of other lengths than its provenance counts:
``store_checks``, on every load).

Not handled: approximate search, rankings of texts that are not a cell's chunks, sharing
records between different corpus samples (a new sample is a new folder).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import time
import zipfile
import zlib
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from chunklab_core.core import paths
from chunklab_core.core.atomic_files import atomic_write
from chunklab_core.core.hashing import texts_sha256  # noqa: F401  (re-exported: the run store names its inputs by it)
from chunklab_core.retrieval.registry import RECORD_DEPTH, spec  # noqa: F401  (RECORD_DEPTH: re-exported)

MODE_ENV = "CHUNKLAB_RUNS"
MODES = ("live", "record", "replay")
SCORE_DEPTH = 10
RECORD_COMMAND = "make runs"
LIVE_CORPORA = {"own"}  # your documents are never recorded into the repository
FORMAT_VERSION = 1


class RunStoreError(RuntimeError):
    """A recorded run is missing, stale or damaged; the message names the cell and the fix."""


def current_mode() -> str:
    """``CHUNKLAB_RUNS`` (live, record or replay; default live)."""
    mode = os.environ.get(MODE_ENV, "live").strip().lower() or "live"
    if mode not in MODES:
        raise RunStoreError(f"{MODE_ENV}={mode!r} is not a mode; use one of {', '.join(MODES)}")
    return mode


def corpus_sample_label(corpus) -> str:
    """``<name>-<documents>d-<questions>q-<8 hex>``: the folder of one corpus sample's cells.

    The hex digits are a sha256 over the document ids and texts and the question ids and
    texts, so two samples of one data set never share a folder.
    """
    digest = hashlib.sha256()
    for doc in corpus.documents:
        digest.update(f"{doc.doc_id}\x00{len(doc.text)}\x00".encode("utf-8"))
        digest.update(hashlib.sha256(doc.text.encode("utf-8")).digest())
    for question in corpus.questions:
        digest.update(f"{question.qid}\x00{question.text}\x00".encode("utf-8"))
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", corpus.name)
    return f"{name}-{len(corpus.documents)}d-{len(corpus.questions)}q-{digest.hexdigest()[:8]}"


@dataclass(frozen=True)
class Cell:
    """One recorded ranking: corpus sample, strategy, stored retriever, model (retrievers that need one)."""

    corpus: str
    strategy: str
    retriever: str
    model: str | None = None
    scope: str = "corpus"  # ``retrieval.scope``: "corpus", or "document" (within each question's document)

    def relative_path(self) -> Path:
        leaf = self.retriever if self.model is None else f"{self.retriever}@{self.model}"
        scoped = () if self.scope == "corpus" else (f"{_safe(self.scope)}-scope",)
        return Path(self.corpus, _safe(self.strategy), *scoped, f"{_safe(leaf)}.npz")

    def describe(self) -> str:
        model = f", model {self.model}" if self.model else ""
        from chunklab_core.retrieval.scope import SCOPE_WORDS

        return (f"corpus sample {self.corpus}, strategy {self.strategy}, retriever {self.retriever}{model}, "
                f"{SCOPE_WORDS.get(self.scope, self.scope)}")


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._@-]+", "-", name)


def _code_version() -> str:
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=paths.PROJ_ROOT, capture_output=True,
                                text=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "chunklab_core"], cwd=paths.PROJ_ROOT,
                               capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return (commit or "unknown") + ("+modified" if dirty else "")


def library_versions() -> dict[str, str]:
    """Versions of the libraries that compute rankings (no import; ``absent`` when missing)."""
    from chunklab_core.retrieval.embedding_cache import library_versions as versions

    return versions(("numpy", "scipy", "torch", "sentence-transformers", "transformers", "tokenizers"))


def provenance_cell(cell: Cell) -> dict:
    """The cell as its provenance records it (checked against the cell asked for on every load).

    A cell scoped to the question's document records its scope; a corpus-wide cell records none
    (the records made before scopes existed), so neither is ever read as the other."""
    cell_dict = {"corpus": cell.corpus, "strategy": cell.strategy, "retriever": cell.retriever, "model": cell.model}
    if cell.scope != "corpus":
        cell_dict["scope"] = cell.scope
    return cell_dict


def provenance(cell: Cell, texts: Sequence[str], queries: Sequence[str], depth: int, *,
               corpus_source: dict | None = None, strategy_options: dict | None = None,
               model_identity: str | None = None, seconds: float | None = None, scope: dict | None = None,
               retriever_version: int | None = None) -> dict:
    """What produced a record: the cell, its inputs' digests, model, libraries, code, time
    (and, for a scoped cell, its scope: ``retrieval.scope.DocumentScope.provenance``).
    ``retriever_version``: the stored retriever's spec's (``None``: looked up by the cell's name)."""
    return {**({"scope": scope} if scope else {}),
        "format": FORMAT_VERSION,
        "cell": provenance_cell(cell),
        "corpus_source": corpus_source or {},
        "strategy_options": strategy_options or {},
        "texts": {"n": len(texts), "sha256": texts_sha256(texts)},
        "queries": {"n": len(queries), "sha256": texts_sha256(queries)},
        "depth": int(depth),
        "score_depth": SCORE_DEPTH,
        "retriever_version": spec(cell.retriever).version if retriever_version is None else retriever_version,
        "model_identity": model_identity,
        "libraries": library_versions(),
        "code": _code_version(),
        "python": sys.version.split()[0],
        "recorded_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "seconds": None if seconds is None else round(float(seconds), 3),
    }


def pack_ids(ids: np.ndarray, n_texts: int) -> np.ndarray:
    """int ids (-1 = padding) as uint16 when ``n_texts`` < 65,535, else uint32; padding = dtype max."""
    dtype = np.uint16 if n_texts < np.iinfo(np.uint16).max else np.uint32
    ids = np.asarray(ids, dtype=np.int64)
    if ids.size and (ids.max() >= n_texts or ids.min() < -1):
        raise ValueError(f"ids outside [0, {n_texts}) in a ranking")
    return np.where(ids < 0, np.iinfo(dtype).max, ids).astype(dtype)


def unpack_ids(packed: np.ndarray) -> np.ndarray:
    """Inverse of :func:`pack_ids`: int64 ids with -1 for padding."""
    ids = packed.astype(np.int64)
    ids[packed == np.iinfo(packed.dtype).max] = -1
    return ids


def arrays_sha256(arrays: dict[str, np.ndarray], meta: dict) -> str:
    """sha256 over the provenance (canonical JSON) and every array's name, dtype, shape and bytes."""
    digest = hashlib.sha256(json.dumps(meta, sort_keys=True).encode("utf-8"))
    for name in sorted(arrays):
        array = np.ascontiguousarray(arrays[name])
        digest.update(f"{name}\x00{array.dtype.str}\x00{array.shape}\x00".encode("ascii"))
        digest.update(array.tobytes())
    return digest.hexdigest()


@dataclass
class Record:
    """A loaded record: ids ``(n_queries, depth)`` int64 (-1 padding), top scores, provenance."""

    ids: np.ndarray
    scores: np.ndarray
    meta: dict
    extra: dict


class RunStore:
    """The folder of recorded runs (default ``data/runs``) and the mode it is used in."""

    def __init__(self, root: str | os.PathLike | None = None, mode: str | None = None,
                 log: Callable[[str], None] | None = None) -> None:
        self.root = Path(root) if root is not None else paths.RUNS_DIR
        self.mode = current_mode() if mode is None else mode
        if self.mode not in MODES:
            raise RunStoreError(f"unknown run-store mode {self.mode!r}; use one of {', '.join(MODES)}")
        self.log = log or (lambda line: print(line, file=sys.stderr, flush=True))
        self.recorded: list[tuple[Cell, float]] = []  # cells this store computed and wrote
        self.replayed = 0

    # ---- files -------------------------------------------------------------------------
    def path(self, cell: Cell, kind: str = "") -> Path:
        rel = cell.relative_path()
        if kind:
            rel = rel.with_name(rel.stem + f".{kind}.npz")
        return self.root / rel

    def load(self, path: Path) -> Record | None:
        """The record at ``path`` (``None`` when absent); a damaged file is a :class:`RunStoreError`."""
        if not path.exists():
            return None
        try:
            with np.load(path, allow_pickle=False) as data:
                arrays = {name: data[name] for name in data.files}
            meta = json.loads(bytes(arrays.pop("meta")).decode("utf-8"))
        except (zipfile.BadZipFile, zlib.error, ValueError, OSError, EOFError, KeyError, json.JSONDecodeError,
                RuntimeError, NotImplementedError) as error:  # RuntimeError: zipfile's "encrypted, password required"
            raise RunStoreError(f"the recorded run {path} is torn or damaged ({type(error).__name__}: {error}); "
                                f"delete it and run `{RECORD_COMMAND}` to record it again") from error
        stored_digest = bytes(arrays.pop("sha256", np.zeros(0, np.uint8))).decode("ascii", "replace")
        if stored_digest != arrays_sha256(arrays, meta):
            raise RunStoreError(f"the recorded run {path} is torn or damaged (its sha256 does not match its "
                                f"content); delete it and run `{RECORD_COMMAND}` to record it again")
        from chunklab_core.retrieval.store_checks import structure_problems

        problems = structure_problems(path, self.root, meta, arrays, sys.modules[__name__])
        if problems:  # a checksum re-computed after an edit does not hide these
            raise RunStoreError(f"the recorded file {path} is not what its path says: {'; '.join(problems)}; "
                                f"delete it and run `{RECORD_COMMAND}` to record it again")
        ids = unpack_ids(arrays.pop("ids")) if "ids" in arrays else np.zeros((0, 0), np.int64)
        scores = arrays.pop("scores") if "scores" in arrays else np.zeros((0, 0), np.float32)
        return Record(ids, scores, meta, arrays)

    def write(self, path: Path, meta: dict, **arrays: np.ndarray) -> None:
        payload = dict(arrays)
        payload["sha256"] = np.frombuffer(arrays_sha256(arrays, meta).encode("ascii"), dtype=np.uint8)
        payload["meta"] = np.frombuffer(json.dumps(meta, sort_keys=True).encode("utf-8"), dtype=np.uint8)

        def write(tmp: Path) -> None:
            with open(tmp, "wb") as handle:
                np.savez_compressed(handle, **payload)

        atomic_write(path, write, suffix=".npz.tmp")

    def cells(self) -> list[Path]:
        """Every ranking record under the store's root, sorted."""
        if not self.root.exists():
            return []
        return sorted(p for p in self.root.rglob("*.npz") if p.name.count(".") == 1)

    # ---- rankings ----------------------------------------------------------------------
    def _stale_reason(self, meta: dict, texts_digest: str, queries_digest: str, depth: int, retriever: str,
                      n_texts: int, scope: dict | None = None, version: int | None = None) -> str | None:
        if meta.get("format") != FORMAT_VERSION:
            return f"record format {meta.get('format')} is not {FORMAT_VERSION}"
        if meta.get("scope") != scope:
            return "the texts' or questions' documents changed (the retrieval scope's assignment)"
        if meta["texts"]["sha256"] != texts_digest:
            return (f"the chunk texts changed ({meta['texts']['n']} recorded, {n_texts} now; "
                    f"sha256 {meta['texts']['sha256'][:12]} recorded, {texts_digest[:12]} now)")
        if meta["queries"]["sha256"] != queries_digest:
            return f"the questions changed (sha256 {meta['queries']['sha256'][:12]} recorded, {queries_digest[:12]} now)"
        version = spec(retriever).version if version is None else version  # the caller's spec's, when it has one
        if meta.get("retriever_version") != version:
            return f"the {retriever} scoring version changed ({meta.get('retriever_version')} -> {version})"
        if meta["depth"] < min(depth, n_texts):
            return f"depth {depth} asked, {meta['depth']} recorded"
        return None

    def ranking(self, cell: Cell, texts: Sequence[str], queries: Sequence[str], depth: int,
                compute: Callable[[int], tuple[np.ndarray, np.ndarray]], *, corpus_source: dict | None = None,
                strategy_options: dict | None = None, model_identity: Callable[[], str] | None = None,
                extra: Callable[[], dict] | None = None, scope: dict | None = None,
                version: int | None = None) -> tuple[np.ndarray, np.ndarray, dict]:
        """Top-``depth`` ids and scores of one bm25 or dense cell, replayed or computed.

        ``scope``: a cell scoped to the question's document gives its scope's provenance
        (``retrieval.scope.DocumentScope.provenance``; ``compute`` then ranks within documents).

        ``compute(depth)`` returns ``(ids, scores)`` from a live retriever; ``extra()`` returns
        arrays recorded beside the ranking (the dense truncation mask). ``version``: the stored
        retriever's scoring version, from the spec the caller holds (``None``: looked up by the
        cell's retriever name). Returns ``(ids, scores,
        extra arrays)``; ``scores`` holds the first :data:`SCORE_DEPTH` columns only when
        replayed (all columns when computed live).
        """
        if self.mode == "live" or cell.corpus.split("-")[0] in LIVE_CORPORA:
            ids, scores = compute(depth)
            return np.asarray(ids, np.int64), np.asarray(scores), extra() if extra else {}
        texts_digest, queries_digest = texts_sha256(texts), texts_sha256(queries)
        path = self.path(cell)
        record = self.load(path)
        if record is not None and record.meta.get("cell") != provenance_cell(cell):
            raise RunStoreError(f"the recorded run {path} holds another cell ({record.meta.get('cell')}), not "
                                f"{cell.describe()}: a file copied over another; delete it and run `{RECORD_COMMAND}` "
                                "to record it again")
        reason = "not recorded" if record is None else self._stale_reason(
            record.meta, texts_digest, queries_digest, depth, cell.retriever, len(texts), scope, version)
        if reason is None:
            self.replayed += 1
            width = min(depth, record.ids.shape[1])
            return record.ids[:, :width], record.scores[:, :min(width, SCORE_DEPTH)], record.extra
        if self.mode == "replay":
            raise RunStoreError(f"no current recorded run for {cell.describe()} ({path}): {reason}. "
                                f"Record it with `{RECORD_COMMAND}` (CHUNKLAB_RUNS=record), or set CHUNKLAB_RUNS=live "
                                "to compute it without recording")
        deep = max(int(depth), RECORD_DEPTH)
        from chunklab_core.retrieval import run_plan  # make runs RUNS_CLUSTER=...: list the cell, compute none

        if run_plan.plan_file() is not None:
            return run_plan.plan_ranking(cell, texts, queries, min(deep, len(texts)), corpus_source,
                                         strategy_options, depth, scope)
        started = time.perf_counter()
        ids, scores = compute(deep)
        arrays = extra() if extra else {}
        seconds = time.perf_counter() - started
        ids = np.asarray(ids, np.int64)
        meta = provenance(cell, texts, queries, min(deep, len(texts)), corpus_source=corpus_source,
                          strategy_options=strategy_options,
                          model_identity=model_identity() if model_identity else None, seconds=seconds,
                          scope=scope, retriever_version=version)
        self.write(path, meta, ids=pack_ids(ids, len(texts)),
                   scores=np.asarray(scores, np.float32)[:, :SCORE_DEPTH], **arrays)
        self.recorded.append((cell, seconds))
        self.log(f"recorded {cell.describe()}: {len(texts)} texts, {len(queries)} queries, "
                 f"depth {ids.shape[1]}, {seconds:.1f} s -> {path.relative_to(self.root)}")
        width = min(depth, ids.shape[1])
        return ids[:, :width], np.asarray(scores)[:, :width], arrays

    # ---- chunk spans of strategies that need a model to cut -----------------------------
    def chunk_spans(self, cell: Cell, documents_digest: str, compute: Callable[[], np.ndarray],
                    *, corpus_source: dict | None = None, strategy_options: dict | None = None,
                    model_identity: Callable[[], str] | None = None) -> np.ndarray:
        """``(n, 5)`` int64 spans (document index, start, end, ctx_start, ctx_end), replayed or cut."""
        if self.mode == "live" or cell.corpus.split("-")[0] in LIVE_CORPORA:
            return compute()
        path = self.path(cell, "chunks")
        record = self.load(path)
        if record is not None and record.meta.get("documents_sha256") == documents_digest:
            return record.extra["spans"].astype(np.int64)
        reason = "not recorded" if record is None else "the documents changed"
        if self.mode == "replay":
            raise RunStoreError(f"no current recorded chunks for {cell.describe()} ({path}): {reason}. "
                                f"Record them with `{RECORD_COMMAND}`")
        started = time.perf_counter()
        spans = np.asarray(compute(), dtype=np.int64).reshape(-1, 5)
        meta = {"format": FORMAT_VERSION, "cell": {"corpus": cell.corpus, "strategy": cell.strategy,
                                                   "model": cell.model},
                "documents_sha256": documents_digest, "corpus_source": corpus_source or {},
                "strategy_options": strategy_options or {}, "n_chunks": int(len(spans)),
                "model_identity": model_identity() if model_identity else None,
                "libraries": library_versions(), "code": _code_version(),
                "recorded_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                "seconds": round(time.perf_counter() - started, 3)}
        self.write(path, meta, spans=spans.astype(np.int32 if spans.size == 0 or spans.max() < 2**31 else np.int64))
        self.log(f"recorded chunks of {cell.describe()}: {len(spans)} chunks -> {path.relative_to(self.root)}")
        return spans


    # ---- content-addressed records: re-scorer scores, measured timings ----------------------
    def keyed(self, kind: str, key: dict, compute: Callable[[], dict[str, np.ndarray]],
              describe: str) -> dict[str, np.ndarray]:
        """Arrays computed once for ``key`` (any JSON-able dict), under ``<root>/<kind>/<sha16>.npz``.

        For what is not a ranking of a cell: the embedding re-scorer's scores of post 07's
        candidates (``rerank.scorers.RecordedScorer``) and the seconds it took
        (``reports.post07.cost.time_embedding_scorer``). The key holds the digests of every input, so
        a changed input is a missing record; ``describe`` names it in the error.
        """
        if self.mode == "live":
            return compute()
        canonical = json.dumps(key, sort_keys=True)
        path = self.root / kind / f"{hashlib.sha256(canonical.encode('utf-8')).hexdigest()[:16]}.npz"
        record = self.load(path)
        if record is not None:
            self.replayed += 1
            arrays = dict(record.extra)
            if record.ids.shape != (0, 0):  # ``load`` lifts these two names into the record
                arrays["ids"] = record.ids
            if record.scores.shape != (0, 0):
                arrays["scores"] = record.scores
            return arrays
        if self.mode == "replay":
            raise RunStoreError(f"no recorded {kind} for {describe} ({path}). Record it with `{RECORD_COMMAND}` "
                                "(CHUNKLAB_RUNS=record), or set CHUNKLAB_RUNS=live to compute it without recording")
        from chunklab_core.retrieval import run_plan

        if run_plan.plan_file() is not None:  # its key would hold placeholder rankings' digests
            run_plan.stop_keyed(describe)
        started = time.perf_counter()
        arrays = {name: np.asarray(value) for name, value in compute().items()}
        meta = {"format": FORMAT_VERSION, "kind": kind, "key": key, "describe": describe,
                "libraries": library_versions(), "code": _code_version(), "python": sys.version.split()[0],
                "machine": {"cpus": os.cpu_count(), "platform": sys.platform},
                "recorded_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                "seconds": round(time.perf_counter() - started, 3)}
        self.write(path, meta, **arrays)
        self.log(f"recorded {kind} for {describe} -> {path.relative_to(self.root)}")
        return arrays


_DEFAULT: dict[tuple[str, str], RunStore] = {}


def default_store() -> RunStore:
    """One store per (root, mode) for this process, so counters accumulate across calls."""
    key = (str(paths.RUNS_DIR), current_mode())
    if key not in _DEFAULT:
        _DEFAULT[key] = RunStore(paths.RUNS_DIR, key[1])
    return _DEFAULT[key]
