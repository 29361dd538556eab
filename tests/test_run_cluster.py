"""``make runs RUNS_CLUSTER=...`` (reports.run_cluster, retrieval.run_plan): the same arrays whichever
way a cell is recorded, the planning pass, resuming, and two drivers that never write one cell.

Three small cells of a 3-article SQuAD sample (BM25 on two strategies, all-MiniLM-L6-v2 on one)
are recorded in-process through ``search_cell`` (the path of ``make runs`` today), then again
through the cluster's driver, in the driver (fast) and on a local 2-CPU Ray cluster (slow:
needs ``make cluster-env``); every array of every file must be byte-identical.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from chunklab_core.core import paths
from chunklab_core.reports import run_cluster
from chunklab_core.retrieval import run_plan
from chunklab_core.retrieval.cell_search import search_cell
from chunklab_core.retrieval.recorded_runs import Cell, RunStore, corpus_sample_label

pytestmark = pytest.mark.heavy  # minutes of recording on 2 cores: .ci/run runs it (-m heavy)

CELLS = [("fixed_500", "bm25", None), ("recursive_500", "bm25", None), ("fixed_500", "dense", "all-MiniLM-L6-v2")]
CORPUS = {"squad_articles": 3, "squad_questions": 20}


@pytest.fixture
def fresh_cache(tmp_path, monkeypatch):
    """An empty embedding cache, here and in Ray's workers: every vector computed again."""
    cache = tmp_path / "cache"
    monkeypatch.setattr(paths, "CACHE_DIR", cache)
    monkeypatch.setenv("CHUNKLAB_CACHE", str(cache))
    monkeypatch.delenv(run_plan.PLAN_ENV, raising=False)
    return cache


def _record_in_process(root: Path) -> RunStore:
    from chunklab_core.chunking import chunk_corpus
    from chunklab_core.data.corpora import load_corpus

    corpus = load_corpus("squad", **CORPUS)
    store = RunStore(root, mode="record", log=lambda line: None)
    for strategy, retriever, model in CELLS:
        chunks = chunk_corpus(corpus.documents, strategy)
        texts = [corpus.doc(c.doc_id).text[c.start:c.end] for c in chunks]
        search_cell(corpus_sample_label(corpus), strategy, retriever, texts, [q.text for q in corpus.questions],
                    10, model=model, store=store, corpus_source=corpus.source)
    return store


def _specs(store: RunStore) -> list[dict]:
    return [run_cluster.spec_from_record(store.load(p).meta) for p in store.cells()]


@pytest.fixture
def local_records(tmp_path, fresh_cache, monkeypatch):
    store = _record_in_process(tmp_path / "local")
    assert len(store.cells()) == len(CELLS)
    # a second, empty embedding cache for the other recording
    monkeypatch.setattr(paths, "CACHE_DIR", fresh_cache.parent / "cache2")
    monkeypatch.setenv("CHUNKLAB_CACHE", str(paths.CACHE_DIR))
    return store


def _compare(a: RunStore, b: RunStore) -> None:
    assert [p.relative_to(a.root) for p in a.cells()] == [p.relative_to(b.root) for p in b.cells()]
    volatile = {"recorded_at", "seconds", "code"}  # code: the git state when written (an edit between the two differs)
    for path in a.cells():
        other = b.root / path.relative_to(a.root)
        assert run_cluster.same_arrays(path, other) == [], path
        meta_a, meta_b = a.load(path).meta, b.load(other).meta
        assert {k: v for k, v in meta_a.items() if k not in volatile} == \
               {k: v for k, v in meta_b.items() if k not in volatile}


def test_driver_records_the_same_arrays_as_make_runs_in_process(local_records, tmp_path):
    cluster = RunStore(tmp_path / "driver", mode="record", log=lambda line: None)
    counts = run_cluster.run_cells(_specs(local_records), cluster, run_cluster.InProcess(), progress=False)
    assert counts == {"recorded": 3, "current": 0, "failed": 0, "claimed elsewhere": 0}
    _compare(local_records, cluster)
    assert not list((cluster.root / ".claims").rglob("*.claim"))  # every claim released


def test_a_changed_array_is_reported(local_records, tmp_path):
    cluster = RunStore(tmp_path / "driver", mode="record", log=lambda line: None)
    spec = _specs(local_records)[0]
    run_cluster.run_cells([spec], cluster, run_cluster.InProcess(), progress=False)
    path = cluster.path(Cell(**spec["cell"]))
    record = cluster.load(path)
    cluster.write(path, record.meta, ids=(record.ids[:, ::-1]).astype(np.uint16), scores=record.scores)
    assert run_cluster.same_arrays(local_records.path(Cell(**spec["cell"])), path) == ["ids"]


def test_planning_pass_lists_cells_and_computes_none(tmp_path, fresh_cache, monkeypatch):
    plan = tmp_path / "plan.jsonl"
    monkeypatch.setenv(run_plan.PLAN_ENV, str(plan))
    planned = _record_in_process(tmp_path / "store")
    assert planned.cells() == [] and not (fresh_cache / "embeddings").exists()  # nothing encoded or written
    specs = run_plan.read_plan(plan)
    assert sorted((s["cell"]["strategy"], s["cell"]["retriever"]) for s in specs) == \
           sorted((s, r) for s, r, _ in CELLS)
    monkeypatch.delenv(run_plan.PLAN_ENV)
    counts = run_cluster.run_cells(specs, planned, run_cluster.InProcess(), progress=False)
    assert counts["recorded"] == 3
    # the usual in-process pass now replays every cell the driver wrote: its digests are the planned ones
    again = _record_in_process(tmp_path / "store")
    assert again.replayed == 3 and again.recorded == []
    monkeypatch.setattr(paths, "CACHE_DIR", tmp_path / "cache3")
    _compare(_record_in_process(tmp_path / "reference"), again)


def test_keyed_records_stop_the_planning_pass(tmp_path, monkeypatch):
    monkeypatch.setenv(run_plan.PLAN_ENV, str(tmp_path / "plan.jsonl"))
    store = RunStore(tmp_path / "store", mode="record")
    with pytest.raises(run_plan.PlanStop):
        store.keyed("rescores", {"a": 1}, lambda: {"x": np.zeros(2)}, "a re-scorer's scores")
    assert store.cells() == [] and not (tmp_path / "store" / "rescores").exists()


def test_resume_records_only_the_missing_cells(local_records, tmp_path):
    cluster = RunStore(tmp_path / "driver", mode="record", log=lambda line: None)
    specs = _specs(local_records)
    run_cluster.run_cells(specs[:1], cluster, run_cluster.InProcess(), progress=False)
    counts = run_cluster.run_cells(specs, cluster, run_cluster.InProcess(), progress=False)
    assert counts == {"recorded": 2, "current": 1, "failed": 0, "claimed elsewhere": 0}


def test_a_failing_cell_is_retried_then_reported(tmp_path, monkeypatch):
    calls = []

    def flaky(spec, spans=None, device="cpu", threads=None):
        calls.append(spec["cell"]["strategy"])
        raise OSError("worker lost")

    monkeypatch.setattr(run_cluster, "compute_cell", flaky)
    store = RunStore(tmp_path / "s", mode="record", log=lambda line: None)
    spec = {"cell": {"corpus": "c", "strategy": "fixed_500", "retriever": "bm25", "model": None}, "depth": 5,
            "texts": {"n": 5, "sha256": "x"}, "queries": {"n": 1, "sha256": "y"}}
    counts = run_cluster.run_cells([spec], store, run_cluster.InProcess(max_retries=2), progress=False)
    assert counts["failed"] == 1 and len(calls) == 3 and store.cells() == []


# ---- two processes ---------------------------------------------------------------------------
DRIVER = textwrap.dedent("""
    import json, sys, time
    from chunklab_core.reports import run_cluster
    from chunklab_core.retrieval.recorded_runs import RunStore
    store_root, specs_file, delay = sys.argv[1], sys.argv[2], float(sys.argv[3])
    compute = run_cluster.compute_cell
    def slow(spec, spans=None, device="cpu", threads=None):
        time.sleep(delay)
        return compute(spec, spans, device, threads)
    run_cluster.compute_cell = slow
    lines = []
    store = RunStore(store_root, mode="record", log=lambda line: (lines.append(line), print(line, flush=True)))
    specs = json.load(open(specs_file))
    counts = run_cluster.run_cells(specs, store, run_cluster.InProcess(max_retries=0), progress=False, wait_poll=0.2)
    print("COUNTS " + json.dumps(counts), flush=True)
""")


def _driver(tmp_path: Path, store: Path, specs: list[dict], delay: float) -> subprocess.Popen:
    script, spec_file = tmp_path / "driver.py", tmp_path / "specs.json"
    script.write_text(DRIVER)
    spec_file.write_text(json.dumps(specs))
    env = dict(os.environ, PYTHONPATH=str(paths.PROJ_ROOT))
    return subprocess.Popen([sys.executable, str(script), str(store), str(spec_file), str(delay)],
                            stdout=subprocess.PIPE, text=True, env=env)


def test_two_drivers_never_write_the_same_cell(local_records, tmp_path):
    store = tmp_path / "shared"
    specs = _specs(local_records)
    first, second = _driver(tmp_path, store, specs, 2.0), _driver(tmp_path, store, specs, 2.0)
    outputs = [p.communicate(timeout=300)[0] for p in (first, second)]
    assert [p.returncode for p in (first, second)] == [0, 0], outputs
    written = [line for out in outputs for line in out.splitlines() if line.startswith("recorded ")]
    assert len(written) == 3 and len(set(written)) == 3, outputs  # each cell written once, by one driver
    counts = [json.loads(out.split("COUNTS ")[1]) for out in outputs]
    assert sum(c["recorded"] for c in counts) == 3 and sum(c["current"] for c in counts) == 3
    _compare(local_records, RunStore(store, mode="replay"))


def test_claims_between_processes(tmp_path):
    store = RunStore(tmp_path / "s", mode="record")
    cell = Cell("c", "s", "bm25")
    holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import time
        from chunklab_core.reports.run_cluster import Claims
        from chunklab_core.retrieval.recorded_runs import Cell, RunStore
        assert Claims(RunStore({str(store.root)!r}, mode="record")).claim(Cell("c", "s", "bm25"))
        print("held", flush=True)
        time.sleep(600)
    """)], stdout=subprocess.PIPE, text=True, env=dict(os.environ, PYTHONPATH=str(paths.PROJ_ROOT)))
    try:
        assert holder.stdout.readline().strip() == "held"
        mine = run_cluster.Claims(store)
        assert not mine.claim(cell) and mine.claimed_by_other(cell)  # a live driver holds it
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=30)
        assert mine.claim(cell) and mine.holds(cell)  # its holder died: taken over
        assert not run_cluster.Claims(store).claim(cell)  # and now refused to a third driver
        mine.release(cell)
        assert not mine.path(cell).exists()
    finally:
        holder.kill()
        holder.wait()


def test_another_hosts_claim_expires_after_its_ttl(tmp_path):
    store = RunStore(tmp_path / "s", mode="record")
    cell = Cell("c", "s", "bm25")
    path = run_cluster.Claims(store).path(cell)
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"host": "elsewhere", "pid": 1, "driver": "d"}))
    assert not run_cluster.Claims(store, ttl=3600).claim(cell)
    old = time.time() - 7200
    os.utime(path, (old, old))
    assert run_cluster.Claims(store, ttl=3600).claim(cell)


def test_killed_driver_resumes_with_the_missing_cells(local_records, tmp_path):
    store = tmp_path / "killed"
    specs = _specs(local_records)
    driver = _driver(tmp_path, store, specs, 1.0)
    first = driver.stdout.readline()  # the first cell is written
    assert first.startswith("recorded "), first
    driver.send_signal(signal.SIGKILL)
    driver.wait(timeout=30)
    resumed = run_cluster.run_cells(specs, RunStore(store, mode="record", log=lambda line: None),
                                    run_cluster.InProcess(), progress=False)
    assert resumed["current"] >= 1 and resumed["recorded"] == 3 - resumed["current"]
    _compare(local_records, RunStore(store, mode="replay"))


# ---- on a local Ray cluster (make cluster-env) ---------------------------------------------------
@pytest.mark.slow
def test_local_ray_cluster_records_byte_identical_arrays(local_records, tmp_path):
    import ray

    cluster = RunStore(tmp_path / "ray", mode="record", log=lambda line: None)
    executor = run_cluster.RayCluster("local", num_cpus=2)
    try:
        hints = [executor.hints(s) for s in _specs(local_records)]
        assert {"num_cpus": 1} in hints and all("num_gpus" not in h for h in hints)  # no GPU here
        counts = run_cluster.run_cells(_specs(local_records), cluster, executor, progress=False)
    finally:
        ray.shutdown()
    assert counts["recorded"] == 3
    _compare(local_records, cluster)
