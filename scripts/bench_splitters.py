"""Benchmark: chunking throughput of every post-08 splitter against the series' ``recursive_500``.

1. Every library splitter and Chroma chunker that needs no model (``chunking.LIBRARY_STRATEGIES``
   without the embedding and LLM ones) chunks the same corpus; printed: characters per second
   (the corpus's characters / the best of ``--repeats`` runs) and the ratio to ``recursive_500``
   on the same text (> 1: faster than the series' own recursive splitter). Each time includes the
   span recovery, as a run of the series pays it.
2. The cluster chunker (``cluster_200``) with all-MiniLM-L6-v2 (no embedding cache, so every
   piece is really encoded): its total time split into the time inside ``embed`` and the rest
   (piece splitting, token counts, the dynamic programme), and the embedding's share.

The corpus is one of Chroma's (``--corpus``, default state_of_the_union, about 49,000
characters). A first untimed run of each splitter pays its import and warm-up; each timed run chunks a fresh
variant of the text (a numbered first line) and semchunk gets a new chunker each run (it memoizes
token counts of pieces, which would otherwise serve every repeat of the same paragraphs). Numbers are
one run's on this machine (shared cores), to compare, not to quote as absolute speeds. Usage:
``python scripts/bench_splitters.py [--corpus state_of_the_union] [--repeats 3] [--no-model]``.
"""

from __future__ import annotations

import argparse
import time


def best_of(runs: int, fn, text: str) -> float:
    """The fastest of ``runs`` calls, each on a fresh variant of ``text`` (a numbered first line),
    so no cache keyed by the text (semchunk memoizes token counts by default) serves a repeat."""
    from chunklab_core.chunking import library_splitters

    times = []
    for i in range(runs):
        variant = f"Run {i}.\n\n{text}"
        library_splitters._semchunker.cache_clear()  # a new chunker: semchunk memoizes counts per chunker
        start = time.perf_counter()
        fn(variant)
        times.append(time.perf_counter() - start)
    return min(times)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default="state_of_the_union")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-model", action="store_true", help="skip the cluster chunker's embedding benchmark")
    args = parser.parse_args(argv)

    from chunklab_core.chunking import LIBRARY_STRATEGIES, STRATEGIES, document_spans
    from chunklab_core.data.longdocs import load_chroma

    text = load_chroma([args.corpus]).documents[0].text
    n = len(text)
    needs_model = {name for name in LIBRARY_STRATEGIES
                   if "embed" in STRATEGIES[name].params and STRATEGIES[name].params.get("kind", "semantic") == "semantic"
                   or "complete" in STRATEGIES[name].params}
    names = ["recursive_500"] + [name for name in LIBRARY_STRATEGIES if name not in needs_model]
    print(f"corpus {args.corpus}: {n:,} characters; best of {args.repeats} runs")
    baseline = None
    print(f"{'strategy':32s} {'chunks':>7s} {'chars/s':>12s} {'ratio to recursive_500':>24s}")
    for name in names:
        spans = document_spans(text, name)  # warm-up (imports, tokenizer, NLTK data)
        seconds = best_of(args.repeats, lambda variant: document_spans(variant, name), text)
        rate = n / seconds
        baseline = rate if baseline is None else baseline
        print(f"{name:32s} {len(spans):7d} {rate:12,.0f} {rate / baseline:24.2f}")

    if not args.no_model:
        from chunklab_core.retrieval.dense import DenseRetriever

        dense = DenseRetriever("all-MiniLM-L6-v2", cache=False, show_progress=False)
        spent = {"embed": 0.0, "texts": 0, "chars": 0}

        def timed_embed(texts):
            start = time.perf_counter()
            vectors = dense.embed(texts)
            spent["embed"] += time.perf_counter() - start
            spent["texts"] += len(texts)
            spent["chars"] += sum(len(t) for t in texts)
            return vectors

        dense.embed(["warm-up"])
        start = time.perf_counter()
        spans = document_spans(text, "cluster_200", embed=timed_embed)
        total = time.perf_counter() - start
        rest = total - spent["embed"]
        print(f"\ncluster_200 with all-MiniLM-L6-v2: {len(spans)} chunks in {total:.2f} s; "
              f"embedding {spent['embed']:.2f} s ({spent['texts']} pieces, {spent['chars']:,} characters, "
              f"{spent['chars'] / spent['embed']:,.0f} chars/s) = {spent['embed'] / total:.0%} of the time; "
              f"the rest (pieces, token counts, dynamic programme) {rest:.2f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
