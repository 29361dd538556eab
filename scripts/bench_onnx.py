"""Chunks per second: the ONNX Runtime embedding path against the default PyTorch path, one run.

Same model (all-MiniLM-L6-v2 by default), same texts (the chunks of a strategy over a seeded
SQuAD sample, or of examples/own_docs when the data is missing), same batch size and
threads, no embedding cache (both paths encode every text). Each path encodes the texts once
to warm up (the ONNX export, if not yet cached, happens there), then ``--repeats`` times
timed, the two paths interleaved; the best time of each counts. Prints chunks/s of each path, their ratio, and the largest
cosine distance between the two paths' vectors.

    .venv/bin/python scripts/bench_onnx.py [--model minilm] [--chunks 600] [--strategy fixed_500]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from chunklab_core.chunking import chunk_corpus
from chunklab_core.core.seeds import DEFAULT_SEED
from chunklab_core.retrieval.dense import DenseRetriever


def sample_texts(n_chunks: int, strategy: str, seed: int) -> tuple[list[str], str]:
    try:
        from chunklab_core.data.squad import load_squad_dev, sample_corpus

        corpus, source = sample_corpus(load_squad_dev(), 20, 100, seed), "SQuAD v1.1 dev (20 articles)"
    except (FileNotFoundError, OSError, RuntimeError, ValueError):
        from chunklab_core.data.loaders import load_user_corpus

        corpus = load_user_corpus("examples/own_docs", "examples/own_docs/questions.yaml")
        source = "examples/own_docs"
    chunks = chunk_corpus(corpus.documents, strategy)
    texts = list(dict.fromkeys(corpus.doc(c.doc_id).text[c.start:c.end] for c in chunks))
    while len(texts) < n_chunks:  # a small corpus: reuse texts, made distinct
        texts += [f"{t} ({len(texts)})" for t in texts[: n_chunks - len(texts)]]
    return texts[:n_chunks], source


def best_times(encoders: dict, texts: list[str], repeats: int) -> tuple[dict[str, float], dict[str, np.ndarray]]:
    """Best wall time of each encoder; one warm-up each, then the timed runs interleaved
    (torch, onnx, torch, onnx, ...) so a change of load on a shared machine hits both."""
    vectors = {name: encode(texts) for name, encode in encoders.items()}  # warm-up (and ONNX export)
    times: dict[str, list[float]] = {name: [] for name in encoders}
    for _ in range(repeats):
        for name, encode in encoders.items():
            start = time.perf_counter()
            vectors[name] = encode(texts)
            times[name].append(time.perf_counter() - start)
    return {name: min(t) for name, t in times.items()}, vectors


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="all-MiniLM-L6-v2")
    parser.add_argument("--chunks", type=int, default=600)
    parser.add_argument("--strategy", default="fixed_500")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    args = parser.parse_args()

    texts, source = sample_texts(args.chunks, args.strategy, args.seed)
    paths = {b: DenseRetriever(args.model, batch_size=args.batch_size, cache=False, backend=b)
             for b in ("torch", "onnx")}
    seconds, vectors = best_times({b: r._encode for b, r in paths.items()}, texts, args.repeats)
    rate = {b: len(texts) / s for b, s in seconds.items()}
    a, b = vectors["torch"], vectors["onnx"]
    cosine = (a * b).sum(axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
    print(f"{len(texts)} chunks ({args.strategy}) of {source}; model {paths['torch'].label}; "
          f"batch {args.batch_size}; {paths['torch'].num_threads} threads; best of {args.repeats}")
    print(f"pytorch : {rate['torch']:8.1f} chunks/s")
    print(f"onnx    : {rate['onnx']:8.1f} chunks/s")
    print(f"ratio onnx / pytorch: {rate['onnx'] / rate['torch']:.2f}x")
    print(f"largest cosine distance between the paths' vectors: {float(np.max(1 - cosine)):.2e}")


if __name__ == "__main__":
    main()
