"""Benchmark for post 01: chunking, indexing and searching time for all eight strategies.

For every default strategy on the post-01 SQuAD sample (40 articles, 800 questions) it times
chunking, BM25 fitting and top-10 search, and times bm25s (Lucene variant, same tokens, same
chunks, same queries) in the same run, printing our search throughput as a ratio against
bm25s. Usage: ``python scripts/bench_post01.py [--repeats 3]``. Needs the data (mirror or
cache). Timings are best-of-``repeats``; the ratio is what to read, not the seconds.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_bm25 import Bm25sIndex, time_fit, time_search  # noqa: E402

from chunklab_core.retrieval.bm25 import BM25Index  # noqa: E402
from chunklab_core.chunking import chunk_corpus, strategy_names  # noqa: E402
from chunklab_core.data.squad import DEFAULT_SEED, load_squad_dev, sample_corpus  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    corpus = sample_corpus(load_squad_dev(), 40, 800, DEFAULT_SEED)
    queries = [q.text for q in corpus.questions]
    print(f"cpus {os.cpu_count()}; corpus {corpus.name}: {len(corpus.documents)} documents, {len(queries)} queries, top-10")
    print(f"{'strategy':22s} {'chunks':>7s} {'chunk s':>8s} {'fit s':>7s} {'search s':>9s} {'q/s':>7s} "
          f"{'bm25s q/s':>10s} {'ours/bm25s':>10s}")
    total_start = time.perf_counter()
    for name in strategy_names():
        start = time.perf_counter()
        chunks = chunk_corpus(corpus.documents, name)
        chunk_seconds = time.perf_counter() - start
        texts = [corpus.doc(c.doc_id).text[c.start : c.end] for c in chunks]
        fit_seconds = time_fit(BM25Index, texts, args.repeats)
        ours = BM25Index().fit(texts)
        search_seconds = time_search(ours, queries, 10, args.repeats)
        theirs = Bm25sIndex().fit(texts)
        theirs_seconds = time_search(theirs, queries, 10, args.repeats)
        print(f"{name:22s} {len(chunks):7d} {chunk_seconds:8.2f} {fit_seconds:7.2f} {search_seconds:9.3f} "
              f"{len(queries) / search_seconds:7.0f} {len(queries) / theirs_seconds:10.0f} "
              f"{theirs_seconds / search_seconds:9.2f}x")
    print(f"total wall time {time.perf_counter() - total_start:.1f} s (including bm25s and repeats)")


if __name__ == "__main__":
    main()
