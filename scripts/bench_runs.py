"""Benchmark: what recording the retrieval runs costs, and the encoding path against sentence-transformers' default.

Part 1 (no model, reads data/runs): the cold recording time of ``make runs`` per corpus sample
x model, summed from the seconds each cell's record holds (measured when it was recorded:
fitting, encoding every chunk and query with an empty embedding cache, and searching), with the
number of cells and the size of the files. Recordings that shared the machine with other work
are slower than an idle machine; the records say when each was made.

Part 2 (``--encode N``): the throughput of encoding N SQuAD chunks (fixed 500 characters, all
48 dev articles, the first N) on this machine, 2 threads, with

* sentence-transformers' default CPU path: ``SentenceTransformer.encode(texts)`` (batch 32);
* the series' torch path: ``DenseRetriever(backend="torch", cache=False)`` (batch 64, unit vectors);
* the series' ONNX path: ``DenseRetriever(backend="onnx", cache=False)`` (the same weights exported);

each timed after one warm-up call, as chunks per second and the ratio to the default path, and
whether each path's top-10 rankings of 200 SQuAD questions over those chunks equal the default
path's (ids and order) and how far their vectors are apart.

Part 3 (``--cluster N``, issue 40; needs ``make cluster-env``): cells per hour of ``make runs``
in-process against a local Ray cluster of ``--workers`` CPUs, on the same N small cells (a seeded
sample of data/runs' BM25 and all-MiniLM-L6-v2 cells of at most 2,000 chunks: ``run_cluster.recorded_specs``),
each recorded into a temporary store with an empty embedding cache through the same driver
(``run_cluster.run_cells``; Ray's start-up counted), their ratio, whether the arrays are
byte-identical, and the full-recompute estimate: the seconds data/runs' records say their cells
took (in-process), divided by the measured ratio.

Usage: python scripts/bench_runs.py [--encode 600] [--model all-MiniLM-L6-v2] [--cluster 4 --workers 2]
"""

from __future__ import annotations

import argparse
import os
import time
from collections import defaultdict

import numpy as np


def recording_costs() -> None:
    from chunklab_core.retrieval.recorded_runs import RunStore

    store = RunStore(mode="replay")
    cells = defaultdict(lambda: {"cells": 0, "seconds": 0.0, "bytes": 0, "chunks": 0})
    for path in store.cells():
        meta = store.load(path).meta
        if "kind" in meta:  # a keyed record: post 07's re-scorer scores or timings
            row = cells[(f"({meta['kind']})", str(meta.get("key", {}).get("model", "")))]
        else:
            cell = meta.get("cell", {})
            model = cell.get("model") if cell.get("retriever") != "bm25" else "— (BM25)"
            row = cells[(cell.get("corpus", path.parts[-3]), model or "— (BM25)")]
        row["cells"] += 1
        row["seconds"] += float(meta.get("seconds") or 0.0)
        row["bytes"] += path.stat().st_size
        row["chunks"] += int(meta.get("texts", {}).get("n", meta.get("n_chunks", 0)) or 0)
    if not cells:
        print(f"no recorded runs under {store.root}")
        return
    print(f"{'corpus sample':44s} {'model':22s} {'files':>5s} {'chunks':>8s} {'seconds':>9s} {'MB':>6s}")
    for (corpus, model), row in sorted(cells.items()):
        print(f"{corpus:44s} {model:22s} {row['cells']:5d} {row['chunks']:8d} {row['seconds']:9.1f} "
              f"{row['bytes'] / 1e6:6.2f}")
    total = sum(r["seconds"] for r in cells.values())
    size = sum(r["bytes"] for r in cells.values())
    print(f"total: {sum(r['cells'] for r in cells.values())} files, {total / 60:.1f} min recorded, {size / 1e6:.1f} MB")


def encoding(n: int, model: str) -> None:
    import torch

    from chunklab_core.chunking import chunk_corpus
    from chunklab_core.data.corpora import load_corpus
    from chunklab_core.retrieval.dense import DenseRetriever, load_sentence_transformer
    from chunklab_core.retrieval.topk import top_k_rows

    torch.set_num_threads(2)
    corpus = load_corpus("squad", squad_articles=48, squad_questions=200)
    chunks = chunk_corpus(corpus.documents, "fixed_500")[:n]
    texts = [corpus.doc(c.doc_id).text[c.start:c.end] for c in chunks]
    queries = [q.text for q in corpus.questions]
    reference = DenseRetriever(model, cache=False)
    st_model = load_sentence_transformer(str(reference.model_folder), "cpu")

    def default_path(items):
        return np.asarray(st_model.encode(items, convert_to_numpy=True, normalize_embeddings=True), np.float32)

    paths = {"sentence-transformers default": default_path,
             "DenseRetriever torch": DenseRetriever(model, cache=False, num_threads=2).embed}
    try:
        paths["DenseRetriever onnx"] = DenseRetriever(model, cache=False, num_threads=2, backend="onnx").embed
    except Exception as error:  # onnxruntime missing: say so, keep the others
        print(f"onnx path unavailable: {error}")
    results = {}
    for name, encode in paths.items():
        encode(texts[:16])  # warm-up: loads the model / session
        start = time.perf_counter()
        vectors = encode(texts)
        seconds = time.perf_counter() - start
        query_vectors = encode(queries)
        ids, _ = top_k_rows(query_vectors @ vectors.T, 10)
        results[name] = (seconds, vectors, ids)
    base_seconds, base_vectors, base_ids = results["sentence-transformers default"]
    print(f"{n} SQuAD chunks (fixed 500), {model}, 2 threads, {os.cpu_count()} cores on the machine")
    for name, (seconds, vectors, ids) in results.items():
        print(f"{name:32s} {n / seconds:8.1f} chunks/s  ratio {base_seconds / seconds:5.2f}x  "
              f"rankings equal: {np.array_equal(ids, base_ids)}  max |Δvector| {np.abs(vectors - base_vectors).max():.2e}")


def _timed_cells(specs, make_executor, root) -> float:
    from chunklab_core.core import paths
    from chunklab_core.reports import run_cluster
    from chunklab_core.retrieval.recorded_runs import RunStore

    paths.CACHE_DIR = root / "cache"  # an empty embedding cache: every vector computed (also in Ray's workers)
    os.environ["CHUNKLAB_CACHE"] = str(paths.CACHE_DIR)
    started = time.perf_counter()
    executor = make_executor()
    counts = run_cluster.run_cells(specs, RunStore(root / "runs", mode="record", log=lambda line: None),
                                   executor, progress=False)
    seconds = time.perf_counter() - started
    if hasattr(executor, "shutdown"):
        executor.shutdown()
    if counts["recorded"] != len(specs):
        raise SystemExit(f"only {counts} of {len(specs)} cells recorded")
    return seconds


def cluster_throughput(n_cells: int, workers: int, max_texts: int = 2000, seed: int = 20260729) -> None:
    import tempfile
    from pathlib import Path

    from chunklab_core.core import paths
    from chunklab_core.reports import run_cluster
    from chunklab_core.retrieval.recorded_runs import Cell, RunStore

    specs = run_cluster.recorded_specs(paths.RUNS_DIR, n_cells, max_texts, "all-MiniLM-L6-v2", seed)
    print(f"\n{len(specs)} cells ({os.cpu_count()} CPUs here): " + "; ".join(
        f"{s['cell']['retriever']} {s['cell']['strategy']} {s['cell']['corpus']} ({s['texts']['n']} chunks, "
        f"{s['queries']['n']} questions)" for s in specs))
    with tempfile.TemporaryDirectory(prefix="bench-runs-") as tmp:
        local = _timed_cells(specs, run_cluster.InProcess, Path(tmp) / "local")
        ray = _timed_cells(specs, lambda: run_cluster.RayCluster("local", num_cpus=workers), Path(tmp) / "ray")
        same = sum(not run_cluster.same_arrays(*(Path(tmp) / kind / "runs" / Cell(**s["cell"]).relative_path()
                                                  for kind in ("local", "ray"))) for s in specs)
    ratio = local / ray
    print(f"in-process: {local:.1f} s, {len(specs) * 3600 / local:.0f} cells/hour")
    print(f"local Ray cluster, {workers} workers: {ray:.1f} s (start-up included), {len(specs) * 3600 / ray:.0f} cells/hour")
    print(f"ratio (Ray / in-process cells per hour): {ratio:.2f}; arrays byte-identical in {same} of {len(specs)} cells")
    store = RunStore(mode="replay")
    seconds = [store.load(p).meta.get("seconds") or 0.0 for p in store.cells() if not p.name.endswith(".chunks.npz")]
    print(f"full recompute of data/runs ({len(seconds)} records, their recorded in-process seconds): "
          f"{sum(seconds) / 3600:.1f} h in-process, about {sum(seconds) / 3600 / ratio:.1f} h on the "
          f"{workers}-worker local cluster at this ratio")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--encode", type=int, default=0, help="also time encoding N chunks (0: skip)")
    parser.add_argument("--model", default="all-MiniLM-L6-v2")
    parser.add_argument("--cluster", type=int, default=0, help="also time N cells in-process and on local Ray (0: skip)")
    parser.add_argument("--workers", type=int, default=2, help="the local Ray cluster's CPUs (with --cluster)")
    parser.add_argument("--cluster-max-texts", type=int, default=2000, help="with --cluster: cells of at most this many chunks")
    args = parser.parse_args()
    recording_costs()
    if args.encode:
        encoding(args.encode, args.model)
    if args.cluster:
        cluster_throughput(args.cluster, args.workers, args.cluster_max_texts)


if __name__ == "__main__":
    main()
