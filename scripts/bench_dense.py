"""Benchmark: dense retrieval over overlapping chunk sets, cold versus warm embedding cache.

SQuAD v1.1 dev articles (each article's paragraphs joined by blank lines) are cut four ways:
fixed 500-character chunks, fixed 1000-character chunks, and 250-character children of the
1000-character and of the 500-character parents (as a parent-document strategy indexes them).
The two child sets are the same texts, so the chunk texts requested exceed the distinct ones.
Each strategy gets a fresh ``DenseRetriever`` that fits its texts and answers a seeded sample
of the articles' questions (top 10).

Cold: an empty cache in a fresh temporary folder (the model is loaded beforehand and its load
time printed separately, so the cold time is encoding plus search). Warm: the same run again
with new retriever objects on the now-filled cache. The alternative named in the ratio is the
cold run itself, i.e. no cache. Expected: warm encodes nothing, cold encodes exactly the
distinct texts, warm is >= 20x faster, rankings identical.

Usage: python scripts/bench_dense.py [--articles 40] [--questions 1000] [--model minilm]
Data: $CHUNKLAB_DATA_MIRROR/squad-v1.1-dev.json.gz (default ../shared/data next to the repo).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np

from chunklab_core.retrieval.dense import DenseRetriever, load_sentence_transformer
from chunklab_core.core.paths import PROJ_ROOT


def load_articles(n_articles: int) -> tuple[list[str], list[tuple[int, str, list[str]]]]:
    mirror = Path(os.environ.get("CHUNKLAB_DATA_MIRROR", PROJ_ROOT.parent / "shared" / "data"))
    with gzip.open(mirror / "squad-v1.1-dev.json.gz", "rt", encoding="utf-8") as handle:
        articles = json.load(handle)["data"][:n_articles]
    docs, questions = [], []
    for doc_index, article in enumerate(articles):
        docs.append("\n\n".join(p["context"] for p in article["paragraphs"]))
        for paragraph in article["paragraphs"]:
            for qa in paragraph["qas"]:
                questions.append((doc_index, qa["question"], [a["text"] for a in qa["answers"]]))
    return docs, questions


def fixed_chunks(text: str, size: int) -> list[tuple[int, int]]:
    return [(start, min(start + size, len(text))) for start in range(0, len(text), size)]


def strategies(docs: list[str]) -> dict[str, list[tuple[int, int, int]]]:
    """name -> list of (doc, start, end) spans."""
    out: dict[str, list[tuple[int, int, int]]] = {}
    for size in (500, 1000):
        out[f"fixed-{size}"] = [(d, s, e) for d, text in enumerate(docs) for s, e in fixed_chunks(text, size)]
    for parent in (1000, 500):
        out[f"parent-{parent}/child-250"] = [
            (d, ps + s, ps + e) for d, text in enumerate(docs) for ps, pe in fixed_chunks(text, parent)
            for s, e in fixed_chunks(text[ps:pe], 250)]
    return out


def run(cache_dir: Path, texts_by_strategy: dict[str, list[str]], queries: list[str], args) -> dict:
    started = time.perf_counter()
    encoded = hits = 0
    rankings = {}
    for name, texts in texts_by_strategy.items():
        retriever = DenseRetriever(args.model, batch_size=args.batch_size, cache_dir=cache_dir,
                                   num_threads=args.threads).fit(texts)
        rankings[name] = retriever.search(queries, k=10)[0]
        encoded += retriever.encoded_count
        hits += retriever.cache_hits
    return {"seconds": time.perf_counter() - started, "encoded": encoded, "hits": hits, "rankings": rankings}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--articles", type=int, default=40)
    parser.add_argument("--questions", type=int, default=1000)
    parser.add_argument("--model", default="all-MiniLM-L6-v2")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    docs, all_questions = load_articles(args.articles)
    rng = np.random.default_rng(args.seed)
    picked = sorted(rng.choice(len(all_questions), size=min(args.questions, len(all_questions)), replace=False))
    questions = [all_questions[i] for i in picked]
    queries = [q for _, q, _ in questions]
    spans = strategies(docs)
    texts_by_strategy = {name: [docs[d][s:e] for d, s, e in rows] for name, rows in spans.items()}

    requested = sum(len(t) for t in texts_by_strategy.values())
    distinct = len({t for texts in texts_by_strategy.values() for t in texts})
    distinct_queries = len(set(queries))
    print(f"SQuAD v1.1 dev: {len(docs)} articles, {sum(map(len, docs)):,} characters, "
          f"{len(queries)} questions sampled (seed {args.seed})")
    for name, texts in texts_by_strategy.items():
        print(f"  {name:<22} {len(texts):>6} chunks")
    print(f"chunk texts requested (over {len(spans)} strategies): {requested:,}")
    print(f"distinct chunk texts:                          {distinct:,}")
    print(f"query texts requested: {len(queries) * len(spans):,}; distinct: {distinct_queries:,}")

    started = time.perf_counter()
    load_sentence_transformer(str(DenseRetriever(args.model, cache=False).model_folder), "cpu")
    print(f"model {args.model}: loaded in {time.perf_counter() - started:.1f} s (not counted below)")

    cache_dir = Path(tempfile.mkdtemp(prefix="bench_dense_"))
    try:
        cold = run(cache_dir, texts_by_strategy, queries, args)
        warm = run(cache_dir, texts_by_strategy, queries, args)
        size = sum(p.stat().st_size for p in cache_dir.rglob("*") if p.is_file())
    finally:
        shutil.rmtree(cache_dir, ignore_errors=True)

    same = all(np.array_equal(cold["rankings"][n], warm["rankings"][n]) for n in spans)
    print(f"\n{'run':<6}{'seconds':>10}{'texts encoded':>15}{'cache hits':>12}")
    for name, result in (("cold", cold), ("warm", warm)):
        print(f"{name:<6}{result['seconds']:>10.2f}{result['encoded']:>15,}{result['hits']:>12,}")
    print(f"cold encodes = distinct chunk texts + distinct queries: "
          f"{cold['encoded']:,} = {distinct:,} + {distinct_queries:,} -> {cold['encoded'] == distinct + distinct_queries}")
    print(f"warm/cold speed: warm is {cold['seconds'] / warm['seconds']:.0f}x faster than cold (no cache); "
          f"target >= 20x")
    print(f"rankings identical cold vs warm: {same}; cache size on disk: {size / 1e6:.1f} MB")

    # Sanity check that the retrieval is meaningful: an answer string inside a top-5 fixed-500 chunk.
    chunk_rows = spans["fixed-500"]
    found = [any(any(a in docs[chunk_rows[c][0]][chunk_rows[c][1]:chunk_rows[c][2]] for a in answers)
                 for c in cold["rankings"]["fixed-500"][i, :5]) for i, (_, _, answers) in enumerate(questions)]
    print(f"sanity: answer string in a top-5 fixed-500 chunk for {np.mean(found):.1%} of questions")


if __name__ == "__main__":
    main()
