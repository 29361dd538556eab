"""``make runs RUNS_CLUSTER=auto|ray://host:port``: the cells of ``make runs`` as Ray tasks.

Handles:

* :func:`record_on_cluster`: three passes. (1) A planning pass executes the posts as ``make
  runs`` does, with ``CHUNKLAB_RUNS_PLAN`` set (``retrieval.run_plan``): every missing or
  stale cell is listed, none is computed. (2) :func:`run_cells` sends the listed cells to the
  cluster, one task per cell (:func:`compute_cell`: rebuild the texts and questions from the
  cell's corpus source, chunk, encode, search; it returns arrays and provenance), and the
  driver writes each returned cell atomically into the store (``RunStore.write``): workers
  never write. (3) The usual in-process ``make runs`` pass, which now replays every cell the
  cluster recorded and computes what could not be planned (cells whose questions no corpus
  loader rebuilds, records keyed by rankings). The arrays of a cell were byte-identical
  whichever way it was recorded on the tested cells (``tests/test_run_cluster.py``); one cell of
  ``scripts/bench_runs.py --cluster`` differed in float32 scores' last bits (ids identical).
* Resource hints: a cell that encodes (``dense``) asks one GPU when the cluster has one,
  else ``ENCODING_CPUS`` CPUs; a BM25 cell one CPU. Failed tasks are retried
  (``max_retries``, exceptions included); a cell that still fails is reported and left for
  the in-process pass.
* Resuming and two drivers: a cell already current in the store is skipped, so a killed run
  resumes with the missing cells only. Before sending a cell the driver claims it
  (:class:`Claims`: ``<store>/.claims/<cell>.claim``, written whole and linked into place so it
  exists only complete, naming host, boot id, pid, the pid's start time and the time); a cell
  claimed by another live driver is left to it and waited for -- at most ``CLAIM_WAIT`` seconds,
  saying every minute who holds which cell since when; a claim that cannot be read, of a process
  that is gone (or a reused pid, or before a reboot) on this host, or older than ``ttl`` on another
  host is taken over; the driver checks its claim is still its own before writing.
* A bad ``RUNS_CLUSTER`` address (:func:`check_address`, :func:`_bounded_init`) is named with the
  fix before the planning pass: malformed at once, unreachable within ``CONNECT_TIMEOUT`` seconds,
  a Ray that does not connect within ``INIT_TIMEOUT`` seconds.
* :class:`InProcess`: the same tasks run one after another in the driver (no Ray; tests, and
  the reference of ``scripts/bench_runs.py``).

Not handled: installing the package on remote workers (each worker needs this repository,
``make cluster-env``, the data mirror ``CHUNKLAB_DATA_MIRROR`` and the models under
``.cache/models``: the driver sends its ``PYTHONPATH`` and ``CHUNKLAB_*`` variables only),
LLM calls (``llm.records``), byte-identity between a GPU and a CPU encoding (floating-point
sums differ by device; ``make verify-runs`` checks ids and scores within 1e-6).
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable, Iterable, Iterator

import numpy as np

from chunklab_core.core import bounds
from chunklab_core.core import paths
from chunklab_core.reports.cluster_claims import CLAIM_TTL, CLAIM_WAIT, Claims, wait_for_claims  # noqa: F401
from chunklab_core.retrieval.recorded_runs import (SCORE_DEPTH, Cell, RunStore, RunStoreError,
                                                   pack_ids, provenance, texts_sha256)
from chunklab_core.retrieval.registry import EMBEDDER
from chunklab_core.retrieval.run_plan import PLAN_ENV, read_plan
from chunklab_core.core.cli_errors import command_edge

ENCODING_CPUS = 1  # CPUs a dense cell asks when the cluster has no GPU
MAX_RETRIES = 2
CONNECT_TIMEOUT = 5.0  # seconds to reach a Ray cluster's address before ray.init is tried
INIT_TIMEOUT = 30.0  # seconds ray.init may take to connect before the address is reported as not answering


# ---- one cell: what a worker computes -----------------------------------------------------
class _Spans:
    """A stand-in chunk store for a worker: the recorded spans of an embedding strategy, sent by the driver."""

    def __init__(self, spans: np.ndarray | None) -> None:
        self.spans = spans

    def chunk_spans(self, cell, documents_digest, compute, **_):
        if self.spans is None:
            raise RunStoreError(f"no recorded chunks for {cell.describe()}: the planning pass records them")
        return self.spans


def compute_cell(spec: dict, spans: np.ndarray | None = None, device: str = "cpu",
                 threads: int | None = None) -> dict:
    """Rebuild one cell's inputs from its spec, rank, and return ``{"meta", "arrays"}``.

    The arrays are those ``RunStore.ranking`` writes (``ids`` packed, ``scores`` float32 of the
    first :data:`SCORE_DEPTH` columns, the dense truncation mask); ``meta`` is its provenance.
    """
    if threads:
        import torch

        torch.set_num_threads(int(threads))
    from chunklab_core.reports.run_recording import _inputs
    from chunklab_core.retrieval.registry import needs_model

    texts, queries, scope = _inputs(spec, _Spans(spans), with_scope=True)
    for name, values in (("texts", texts), ("queries", queries)):
        if name in spec and texts_sha256(values) != spec[name]["sha256"]:
            raise RunStoreError(f"the {name} rebuilt for {Cell(**spec['cell']).describe()} differ from the planned ones")
    cell = Cell(**spec["cell"])
    depth = int(spec["depth"])  # the record's depth, min(asked, texts): search's width is min(k, n) too
    started = time.perf_counter()
    arrays: dict[str, np.ndarray] = {}
    if needs_model(cell.retriever):
        from chunklab_core.retrieval.dense import DenseRetriever

        engine = DenseRetriever(cell.model, device=device)
    else:
        from chunklab_core.retrieval.bm25 import BM25Index

        engine = BM25Index()
    engine.fit(texts)
    if scope is not None:  # a cell scoped to each question's document (retrieval.scope)
        from chunklab_core.retrieval.scope import scoped_search

        ids, scores = scoped_search(lambda k: engine.search(queries, k), len(texts), scope, depth)
    else:
        ids, scores = engine.search(queries, depth)
    if needs_model(cell.retriever):
        arrays["truncated"] = np.packbits(np.asarray(engine.truncated_mask(texts), dtype=bool))
    seconds = time.perf_counter() - started
    ids = np.asarray(ids, np.int64)
    meta = provenance(cell, texts, queries, min(depth, len(texts)),
                      corpus_source=spec.get("corpus_source"), strategy_options=spec.get("strategy_options"),
                      model_identity=engine.identity if needs_model(cell.retriever) else None, seconds=seconds,
                      scope=None if scope is None else scope.provenance())
    arrays = {"ids": pack_ids(ids, len(texts)), "scores": np.asarray(scores, np.float32)[:, :SCORE_DEPTH], **arrays}
    return {"meta": meta, "arrays": arrays}


def spec_from_record(meta: dict) -> dict:
    """The spec that records a cell again, from a record's provenance."""
    return {"cell": dict(meta["cell"]), "corpus_source": dict(meta.get("corpus_source") or {}),
            "strategy_options": dict(meta.get("strategy_options") or {}), "depth": int(meta["depth"]),
            "texts": dict(meta["texts"]), "queries": dict(meta["queries"]),
            **({"scope": dict(meta["scope"])} if meta.get("scope") else {})}


def _stale(store: RunStore, spec: dict) -> str | None:
    """Why the spec's cell must be recorded (``None``: current in the store)."""
    cell = Cell(**spec["cell"])
    record = store.load(store.path(cell))
    if record is None:
        return "not recorded"
    return store._stale_reason(record.meta, spec["texts"]["sha256"], spec["queries"]["sha256"], spec["depth"],
                               cell.retriever, spec["texts"]["n"], spec.get("scope"))


def _spans_for(store: RunStore, spec: dict) -> np.ndarray | None:
    from chunklab_core.evaluation.matrix import needs_embedding

    strategy = spec["cell"]["strategy"]
    if not needs_embedding(strategy):
        return None
    cut_with = spec["cell"]["model"] or "all-MiniLM-L6-v2"  # as run_recording._inputs rebuilds them
    record = store.load(store.path(Cell(spec["cell"]["corpus"], strategy, EMBEDDER, cut_with), "chunks"))
    return None if record is None else record.extra["spans"].astype(np.int64)


# ---- executors -------------------------------------------------------------------------------
class InProcess:
    """Every task in the driver, one after another (retried like Ray's)."""

    name = "in-process"

    def __init__(self, max_retries: int = MAX_RETRIES, threads: int | None = None) -> None:
        self.max_retries = max_retries
        self.threads = threads

    def run(self, jobs: list[tuple[dict, np.ndarray | None]]) -> Iterator[tuple[int, dict | BaseException]]:
        for index, (spec, spans) in enumerate(jobs):
            for attempt in range(self.max_retries + 1):
                try:
                    yield index, compute_cell(spec, spans, threads=self.threads)
                    break
                except Exception as error:  # noqa: BLE001 - reported per cell, like a failed Ray task
                    if attempt == self.max_retries:
                        yield index, error


ADDRESS_FIX = ("start the cluster (`ray start --head` prints its address), give its address as "
               "RUNS_CLUSTER=ray://host:10001 (or host:6379 on the head node), use RUNS_CLUSTER=local for a "
               "cluster on this machine, or leave RUNS_CLUSTER unset to record in-process")


def check_address(address: str, timeout: float = CONNECT_TIMEOUT) -> None:
    """``RunStoreError`` naming ``address`` and the fix unless it is ``auto``, ``local`` or a
    ``[ray://]host:port`` that accepts a TCP connection within ``timeout`` seconds."""
    import re

    if address == "auto" and os.environ.get("RAY_ADDRESS") not in (None, "", "auto", "local"):
        address = os.environ["RAY_ADDRESS"]  # what ray.init("auto") connects to
    if address in ("auto", "local"):
        return
    found = re.fullmatch(r"(?:ray://)?(\[[0-9a-fA-F:]+\]|[A-Za-z0-9_.-]+):([0-9]{1,5})", address or "")
    if not found or not 0 < int(found.group(2)) < 65536:
        raise RunStoreError(f"RUNS_CLUSTER={address!r} is not a Ray address (auto, local, ray://host:port or "
                            f"host:port); {ADDRESS_FIX}")
    host, port = found.group(1).strip("[]"), int(found.group(2))
    try:
        with socket.create_connection((host, port), timeout=timeout):
            pass
    except OSError as error:
        reason = "no answer within {:.0f} s".format(timeout) if isinstance(error, TimeoutError) else \
            (error.strerror or str(error))
        raise RunStoreError(f"cannot reach the Ray cluster at RUNS_CLUSTER={address} ({host} port {port}: "
                            f"{reason}); {ADDRESS_FIX}") from None


def _bounded_init(ray, address: str, options: dict, timeout: float) -> None:
    """``ray.init(address=address, **options)``, or ``RunStoreError`` naming the address and the fix
    when it fails or has not connected within ``timeout`` seconds (Ray itself retries for about a
    minute before its ``ConnectionError``). ``ray.init`` runs in the calling thread (Ray needs the main
    thread: started from another one, its local cluster loses its GCS connection); the bound is a
    ``SIGALRM`` timer, set only in the main thread and never for ``local``, which starts its own cluster."""
    import signal
    import threading

    class _NoAnswer(Exception):
        pass

    def alarm(signum, frame):
        raise _NoAnswer()

    timed = (address != "local" and hasattr(signal, "SIGALRM")
             and threading.current_thread() is threading.main_thread())
    previous = signal.signal(signal.SIGALRM, alarm) if timed else None
    try:
        if timed:
            signal.setitimer(signal.ITIMER_REAL, timeout)
        ray.init(address=address, **options)
    except _NoAnswer:
        raise RunStoreError(f"no Ray cluster answered at RUNS_CLUSTER={address} within {timeout:.0f} s; "
                            f"{ADDRESS_FIX}") from None
    except Exception as error:  # noqa: BLE001 - reported with the address and the fix
        raise RunStoreError(f"cannot connect to the Ray cluster at RUNS_CLUSTER={address} ({type(error).__name__}: "
                            f"{' '.join(str(error).split())[:300]}); {ADDRESS_FIX}") from None
    finally:
        if timed:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)


class RayCluster:
    """One Ray task per cell on the cluster at ``address`` (``auto``, ``ray://host:port``, or ``local``)."""

    name = "ray"

    def __init__(self, address: str = "auto", max_retries: int = MAX_RETRIES, num_cpus: int | None = None,
                 encoding_cpus: int = ENCODING_CPUS, temp_dir: str | None = None,
                 init_timeout: float = INIT_TIMEOUT) -> None:
        check_address(address)  # a bad address is named in seconds, not a raw ConnectionError after a minute
        try:
            import ray
        except ImportError as error:
            raise RunStoreError("RUNS_CLUSTER needs Ray: run `make cluster-env` (requirements/cluster-lock.txt)") from error
        self.ray = ray
        env = {k: v for k, v in os.environ.items() if k.startswith("CHUNKLAB_") and k != PLAN_ENV}
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(paths.PROJ_ROOT), os.environ.get("PYTHONPATH", "")) if p)
        if not ray.is_initialized():
            options = {"runtime_env": {"env_vars": env}, "log_to_driver": False}
            if address == "local":
                options.update(num_cpus=num_cpus, include_dashboard=False, _temp_dir=temp_dir)
            _bounded_init(ray, address, options, init_timeout)
        resources = ray.cluster_resources()
        self.gpus = float(resources.get("GPU", 0))
        self.cpus = float(resources.get("CPU", 0))
        self.max_retries = max_retries
        self.encoding_cpus = encoding_cpus
        self.remote = ray.remote(compute_cell)

    def hints(self, spec: dict) -> dict:
        """Per-cell resources: a GPU for an encoding cell when the cluster has one, CPUs otherwise."""
        if spec["cell"]["retriever"] == EMBEDDER:
            if self.gpus >= 1:
                return {"num_gpus": 1, "num_cpus": 1}
            return {"num_cpus": self.encoding_cpus}
        return {"num_cpus": 1}

    def run(self, jobs: list[tuple[dict, np.ndarray | None]]) -> Iterator[tuple[int, dict | BaseException]]:
        ray = self.ray
        pending = {}
        for index, (spec, spans) in enumerate(jobs):
            hints = self.hints(spec)
            device = "cuda" if hints.get("num_gpus") else "cpu"
            ref = self.remote.options(max_retries=self.max_retries, retry_exceptions=True, **hints).remote(
                spec, spans, device, int(hints["num_cpus"]))
            pending[ref] = index
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1)
            for ref in done:
                index = pending.pop(ref)
                try:
                    yield index, ray.get(ref)
                except Exception as error:  # noqa: BLE001 - a task that failed after its retries
                    yield index, error

    def shutdown(self) -> None:
        self.ray.shutdown()


# ---- the driver ------------------------------------------------------------------------------
def run_cells(specs: Iterable[dict], store: RunStore, executor, *, progress: bool = True,
              claims: Claims | None = None, wait_poll: float = 2.0, wait_limit: float = CLAIM_WAIT,
              report_every: float = 60.0, log: Callable[[str], None] | None = None) -> dict:
    """Record the specs' cells through ``executor``; the driver writes each one. Counts by outcome.

    A cell another live driver has claimed is waited for, at most ``wait_limit`` seconds in all
    (who holds which claim, and since when, printed every ``report_every`` seconds), then left to it."""
    from tqdm import tqdm

    log = log or store.log
    claims = claims or Claims(store)
    todo = list(specs)
    counts = {"recorded": 0, "current": 0, "failed": 0, "claimed elsewhere": 0}
    deadline = None  # set when this driver first waits for another's claims: the wait is bounded
    bar = tqdm(total=len(todo), desc="cells", disable=not progress, file=sys.stderr)
    try:
        while todo:
            jobs, waiting = [], []
            for spec in todo:
                cell = Cell(**spec["cell"])
                if _stale(store, spec) is None:
                    counts["current"] += 1
                    bar.update(1)
                elif claims.claim(cell):
                    if _stale(store, spec) is None:  # written by another driver since we looked
                        claims.release(cell)
                        counts["current"] += 1
                        bar.update(1)
                    else:
                        jobs.append((spec, _spans_for(store, spec)))
                else:
                    waiting.append(spec)
            for index, result in executor.run(jobs):
                spec = jobs[index][0]
                cell = Cell(**spec["cell"])
                try:
                    if isinstance(result, BaseException):
                        counts["failed"] += 1
                        log(f"FAILED {cell.describe()} after retries: {type(result).__name__}: {result}")
                    elif not claims.holds(cell):
                        counts["claimed elsewhere"] += 1
                        log(f"not written: {cell.describe()} is now claimed by another driver")
                    else:
                        meta = result["meta"]
                        if meta["cell"] != spec["cell"]:
                            raise RunStoreError(f"a task returned {meta['cell']} for {spec['cell']}")
                        path = store.path(cell)
                        store.write(path, meta, **result["arrays"])
                        store.recorded.append((cell, meta["seconds"]))
                        counts["recorded"] += 1
                        log(f"recorded {cell.describe()} on {executor.name}: {meta['texts']['n']} texts, "
                            f"{meta['queries']['n']} queries, {meta['seconds']:.1f} s -> {path.relative_to(store.root)}")
                finally:
                    claims.release(cell)
                    bar.update(1)
            todo = []
            if waiting:  # cells another driver records: wait (bounded) for its claim to go, then look again
                deadline = deadline or time.monotonic() + wait_limit
                todo = wait_for_claims(waiting, claims, deadline, wait_poll, report_every, log, counts, bar)
                if todo and not jobs:  # a round that recorded nothing: never a busy loop, and bounded
                    if time.monotonic() >= deadline:
                        for spec in todo:
                            log(f"not recorded here: {Cell(**spec['cell']).describe()} could not be claimed "
                                f"before the wait's bound ({wait_limit:.0f} s)")
                            counts["claimed elsewhere"] += 1
                            bar.update(1)
                        todo = []
                    else:
                        time.sleep(wait_poll)
    finally:
        bar.close()
    return counts


def record_on_cluster(posts, address: str, yaml_parameters: str | None = None, executor=None) -> int:
    """``make runs RUNS_CLUSTER=address``: plan the posts' cells, record them on Ray, then the usual pass."""
    from chunklab_core.reports.run_recording import POSTS, record

    posts = list(posts) or list(POSTS)
    if executor is None:  # connected before the planning pass's minutes: a bad address is named at once
        executor = InProcess() if address == "in-process" else RayCluster(address)
    store = RunStore(mode="record")
    with tempfile.TemporaryDirectory(prefix="chunklab-plan-") as tmp:
        plan = Path(tmp) / "plan.jsonl"
        plan.touch()
        previous = os.environ.get(PLAN_ENV)
        os.environ[PLAN_ENV] = str(plan)
        try:
            print("== make runs on a cluster: planning pass (lists the missing cells, computes none)", file=sys.stderr)
            record(posts, yaml_parameters=yaml_parameters)  # a post stops early where planning must (run_plan)
        finally:
            if previous is None:
                os.environ.pop(PLAN_ENV, None)
            else:
                os.environ[PLAN_ENV] = previous
        specs = read_plan(plan)
    print(f"== {len(specs)} cells to record on the cluster at {address}", file=sys.stderr, flush=True)
    if specs:
        counts = run_cells(specs, store, executor)
        print(f"== cluster: {json.dumps(counts)}", file=sys.stderr, flush=True)
    print("== in-process pass (replays the cluster's cells, records what could not be planned)", file=sys.stderr)
    return record(posts, yaml_parameters=yaml_parameters)


def recorded_specs(root: Path, sample: int, max_texts: int | None, model: str | None, seed: int) -> list[dict]:
    """A seeded sample of recorded cells' specs (no embedding-cut strategy): CI's and the benchmark's cells."""
    from chunklab_core.evaluation.matrix import needs_embedding
    from chunklab_core.reports.run_recording import recorded_cells

    source = RunStore(root, mode="replay")
    metas = [source.load(p).meta for p in recorded_cells(source)]
    eligible = [m for m in metas if m.get("corpus_source") and not needs_embedding(m["cell"]["strategy"])
                and (max_texts is None or m["texts"]["n"] <= max_texts)
                and (model is None or m["cell"]["model"] in (None, model))]
    rng = np.random.default_rng(seed)
    chosen = sorted(rng.choice(len(eligible), size=min(sample, len(eligible)), replace=False))
    return [spec_from_record(eligible[i]) for i in chosen]


def second_model_specs(root: Path, corpus: str, strategies, model: str, like: str = "all-MiniLM-L6-v2") -> list[dict]:
    """Specs of ``model``'s dense cells on the recorded ``like`` cells of a corpus sample (its folder
    name or prefix, e.g. ``qasper``) and strategies: the same texts, questions and depth, in the
    scope the corpus is searched in (``data.corpora.QUESTION_SCOPE``; CUAD and QASPER: within the
    question's document)."""
    from chunklab_core.data.corpora import QUESTION_SCOPE
    from chunklab_core.reports.run_recording import recorded_cells

    source = RunStore(root, mode="replay")
    specs = []
    for path in recorded_cells(source):
        meta = source.load(path).meta
        cell = meta.get("cell") or {}
        if (cell.get("retriever") == EMBEDDER and cell.get("model") == like and cell["strategy"] in strategies
                and cell["corpus"].startswith(corpus)
                and cell.get("scope", "corpus") == QUESTION_SCOPE.get((meta.get("corpus_source") or {}).get("name"),
                                                                      "corpus")):
            spec = spec_from_record(meta)
            spec["cell"]["model"] = model
            specs.append(spec)
    return specs


def same_arrays(a: Path, b: Path) -> list[str]:
    """Names of the arrays (ids, scores, truncation mask) that differ between two record files."""
    with np.load(a, allow_pickle=False) as x, np.load(b, allow_pickle=False) as y:
        names = sorted((set(x.files) | set(y.files)) - {"meta", "sha256"})
        return [n for n in names if n not in x.files or n not in y.files or x[n].dtype != y[n].dtype
                or x[n].shape != y[n].shape or x[n].tobytes() != y[n].tobytes()]


@command_edge
def main(argv: list[str] | None = None) -> int:
    from chunklab_core.core.seeds import DEFAULT_SEED

    parser = argparse.ArgumentParser(prog="python -m chunklab_core.reports.run_cluster",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=("record", "replicate", "second-model"),
                        help="record: make runs RUNS_CLUSTER=ADDRESS (plan --posts' cells, record them on Ray, then the usual pass); replicate: record a seeded sample of data/runs' cells again into --store (then "
                             "verify it: CHUNKLAB_RUNS_DIR=STORE make verify-runs); second-model: record --model's "
                             "dense cells beside the recorded all-MiniLM-L6-v2 ones of --corpus and --strategies")
    parser.add_argument("--address", default="auto", help="Ray address (auto, ray://host:port, local) or in-process")
    parser.add_argument("--store", default=None, help="the run store to write (replicate: required, never "
                        "data/runs; second-model: default data/runs)")
    parser.add_argument("--corpus", default=None, help="second-model: the corpus sample (folder name or prefix)")
    parser.add_argument("--strategies", nargs="*", default=[], help="second-model: the strategies")
    parser.add_argument("--posts", nargs="*", default=[], help="record: the posts (default: every post that records runs)")
    parser.add_argument("--sample", type=bounds.int_in("sample"), default=2)
    parser.add_argument("--max-texts", type=bounds.int_in("chars"), default=None)
    parser.add_argument("--model", default=None)
    parser.add_argument("--seed", type=bounds.int_in("seed"), default=DEFAULT_SEED)
    parser.add_argument("--workers", type=bounds.int_in("workers"), default=None, help="--address local: the local cluster's CPUs")
    parser.add_argument("--ray-temp", default=None, help="--address local: Ray's temporary folder")
    args = parser.parse_args(argv)
    try:
        return _command(args, parser)
    except RunStoreError as error:  # a bad address, a damaged record: the message names it and the fix
        print(f"run_cluster: {error}", file=sys.stderr)
        return 1


def _command(args, parser) -> int:
    if args.command == "record":
        return record_on_cluster(args.posts, args.address)

    def executor_for():
        if args.address == "in-process":
            return InProcess()
        return RayCluster(args.address, num_cpus=args.workers, temp_dir=args.ray_temp)

    if args.command == "second-model":
        specs = second_model_specs(paths.RUNS_DIR, args.corpus, set(args.strategies), args.model)
        print(f"{len(specs)} cells of {args.model} on {args.corpus}", file=sys.stderr)
        counts = run_cells(specs, RunStore(args.store, mode="record"), executor_for())
        print(json.dumps(counts))
        return 1 if counts["failed"] else 0
    if not args.store:
        parser.error("replicate needs --store")
    store = RunStore(args.store, mode="record")
    if store.root.resolve() == paths.RUNS_DIR.resolve():
        print("--store must not be the tracked data/runs", file=sys.stderr)
        return 2
    specs = recorded_specs(paths.RUNS_DIR, args.sample, args.max_texts, args.model, args.seed)
    executor = executor_for()
    counts = run_cells(specs, store, executor)
    if isinstance(executor, RayCluster):
        executor.shutdown()  # a local cluster stops with its driver
    print(json.dumps(counts))
    # Byte-identity holds for the same inputs and an empty embedding cache on both sides (the tests);
    # a record of data/runs may hold vectors cached from another cell's batch, so here it is reported
    # only, and `make verify-runs` on --store is the check (ids identical, scores within 1e-6).
    for spec in specs:
        rel = Cell(**spec["cell"]).relative_path()
        names = same_arrays(paths.RUNS_DIR / rel, store.root / rel)
        print(f"{rel}: {'arrays differ from data/runs: ' + ', '.join(names) if names else 'arrays byte-identical to data/runs'}")
    return 1 if counts["failed"] or counts["recorded"] + counts["current"] < len(specs) else 0


if __name__ == "__main__":
    raise SystemExit(main())
