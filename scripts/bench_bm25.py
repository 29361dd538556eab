"""Benchmark: chunklab's BM25Index against bm25s on SQuAD v1.1 dev, same tokens, same k.

Loads SQuAD v1.1 dev (``$CHUNKLAB_DATA_MIRROR/squad-v1.1-dev.json.gz``, else
``/work/shared/data/``), cuts every paragraph into fixed 500-character chunks by slicing,
indexes the chunks with ours and with ``bm25s.BM25(method="lucene", k1=1.2, b=0.75)`` fed
with our tokeniser's tokens, and times fit and top-k search of the questions. Both sides take
raw text: the bm25s side's times include our tokeniser (the same work ours does inside
``fit``/``search``); tokenisation alone is also printed. Reports the best of ``--repeats``
runs, throughput in queries/s and the ratio ours/bm25s (> 1 means ours is faster).

The timing helpers (``time_fit``, ``time_search``) take any object with ``fit(texts)`` /
``search(queries, k)``, so other retrievers and chunking strategies can reuse them.

Usage: python scripts/bench_bm25.py [--questions 1000] [--k 10] [--repeats 3] [--chunk-chars 500]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import platform
import time
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from chunklab_core.retrieval.bm25 import B, K1, BM25Index, tokenize

SQUAD_FILE = "squad-v1.1-dev.json.gz"
DEFAULT_DATA_DIR = Path("/work/shared/data")


def squad_path() -> Path:
    """The SQuAD dev file in ``$CHUNKLAB_DATA_MIRROR`` if set, else the default data folder."""
    folder = Path(os.environ.get("CHUNKLAB_DATA_MIRROR", DEFAULT_DATA_DIR))
    path = folder / SQUAD_FILE
    if not path.is_file():
        raise SystemExit(f"{path} not found; set CHUNKLAB_DATA_MIRROR to a folder holding {SQUAD_FILE}")
    return path


def load_squad(path: Path) -> tuple[list[str], list[str]]:
    """All paragraph contexts and all questions, in file order."""
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        data = json.load(handle)["data"]
    paragraphs = [p["context"] for article in data for p in article["paragraphs"]]
    questions = [qa["question"] for a in data for p in a["paragraphs"] for qa in p["qas"]]
    return paragraphs, questions


def fixed_chunks(texts: Sequence[str], size: int) -> list[str]:
    """Each text sliced into consecutive ``size``-character pieces (the last may be shorter)."""
    return [text[i : i + size] for text in texts for i in range(0, len(text), size)]


def best_time(fn: Callable[[], object], repeats: int) -> float:
    """Smallest wall time of ``repeats`` calls of ``fn`` (seconds)."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def time_fit(make_index: Callable[[], object], texts: Sequence[str], repeats: int) -> float:
    """Best wall time of ``make_index().fit(texts)`` over ``repeats`` runs."""
    return best_time(lambda: make_index().fit(texts), repeats)


def time_search(index, queries: Sequence[str], k: int, repeats: int) -> float:
    """Best wall time of ``index.search(queries, k)`` over ``repeats`` runs (after one warm-up)."""
    index.search(queries[: min(len(queries), 8)], k)
    return best_time(lambda: index.search(queries, k), repeats)


class Bm25sIndex:
    """bm25s behind the same ``fit``/``search`` interface, tokenised with our tokeniser."""

    def __init__(self, k1: float = K1, b: float = B, dtype: str = "float32") -> None:
        import bm25s

        self._model = bm25s.BM25(method="lucene", k1=k1, b=b, dtype=dtype)

    def fit(self, texts: Sequence[str]) -> "Bm25sIndex":
        self._model.index([tokenize(t) for t in texts], show_progress=False)
        self.n_docs = len(texts)
        return self

    def search(self, queries: Sequence[str], k: int):
        tokens = [tokenize(q) for q in queries]
        result = self._model.retrieve(tokens, k=min(k, self.n_docs), show_progress=False)
        return result.documents, result.scores


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--questions", type=int, default=1000, help="number of questions")
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--chunk-chars", type=int, default=500)
    args = parser.parse_args()

    import bm25s
    import scipy

    paragraphs, questions = load_squad(squad_path())
    chunks = fixed_chunks(paragraphs, args.chunk_chars)
    queries = questions[: args.questions]
    print(
        f"python {platform.python_version()}, numpy {np.__version__}, scipy {scipy.__version__}, "
        f"bm25s {bm25s.__version__}, cpus {os.cpu_count()}"
    )
    print(
        f"SQuAD v1.1 dev: {len(paragraphs)} paragraphs -> {len(chunks)} chunks of "
        f"<= {args.chunk_chars} chars; {len(queries)} questions, top-{args.k}, best of {args.repeats}"
    )

    tok_corpus = best_time(lambda: [tokenize(c) for c in chunks], args.repeats)
    tok_queries = best_time(lambda: [tokenize(q) for q in queries], args.repeats)
    print(f"our tokeniser alone: corpus {tok_corpus:.3f} s, queries {tok_queries * 1e3:.1f} ms")

    ours, theirs = BM25Index().fit(chunks), Bm25sIndex().fit(chunks)
    fit_ours = time_fit(BM25Index, chunks, args.repeats)
    fit_theirs = time_fit(Bm25sIndex, chunks, args.repeats)
    search_ours = time_search(ours, queries, args.k, args.repeats)
    search_theirs = time_search(theirs, queries, args.k, args.repeats)

    ids_ours, scores_ours = ours.search(queries, args.k)
    ids_theirs, scores_theirs = theirs.search(queries, args.k)
    max_diff = float(np.abs(scores_ours - scores_theirs).max())
    same_ids = float((ids_ours == ids_theirs).mean())

    print(f"{'':8} {'fit (s)':>9} {'search (s)':>11} {'queries/s':>10}")
    for name, fit_s, search_s in (("ours", fit_ours, search_ours), ("bm25s", fit_theirs, search_theirs)):
        print(f"{name:8} {fit_s:9.3f} {search_s:11.4f} {len(queries) / search_s:10.0f}")
    print(f"speed ratio ours/bm25s (bm25s time / our time): fit {fit_theirs / fit_ours:.2f}x, "
          f"search {search_theirs / search_ours:.2f}x")
    print(f"top-{args.k} agreement: max |score diff| {max_diff:.2e} (bm25s float32), "
          f"same id at same rank {same_ids:.2%} (differences are ties or float32 rounding)")


if __name__ == "__main__":
    main()
