"""int8 dynamic quantisation of the ONNX MiniLM: its speed, and what it changes in the rankings.

Builds ``onnxruntime.quantization.quantize_dynamic`` (int8 weights) of the local fp32 ONNX
export (``onnx_embedding.quantized_path``: from the shipped model, in the user's model cache,
written atomically; nothing downloaded), then prints:

* speed: chunks per second of the fp32 and int8 ONNX paths (``scripts/bench_onnx.best_times``:
  same texts, batch size and threads, no embedding cache, one warm-up, best of ``--repeats``,
  the paths interleaved) and their ratio;
* vectors: the cosine distance between each text's int8 and fp32 vectors (median and largest);
* rankings on post 02's SQuAD sample (``load_corpus("squad", 48 articles, 2,000 questions,
  seed 20260729)``, one strategy, dense retrieval, MiniLM, ``evaluation.matrix.run_matrix``
  live, never recorded): the share of questions whose top-10 returned contexts are the same
  list (order included) and the same set, mean recall@5 of each path, and the paired bootstrap
  interval on recall@5 int8 - fp32 (``stats.bootstrap.paired_difference_ci``, 10,000 resamples,
  percentile, 95%) -- the adoption rule: int8 is offered for your own documents
  (``quantize: int8``) only when that interval contains 0.

    .venv/bin/python scripts/bench_int8.py [--strategy fixed_500] [--articles 48] [--questions 2000]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_onnx import best_times, sample_texts  # noqa: E402

from chunklab_core.core.seeds import DEFAULT_SEED  # noqa: E402
from chunklab_core.retrieval.dense import DenseRetriever  # noqa: E402

BACKENDS = ("onnx", "onnx-int8")


def speed(model: str, n_chunks: int, strategy: str, batch_size: int, repeats: int, seed: int) -> None:
    texts, source = sample_texts(n_chunks, strategy, seed)
    paths = {b: DenseRetriever(model, batch_size=batch_size, cache=False, backend=b) for b in BACKENDS}
    for retriever in paths.values():  # the int8 file is built here when missing, outside the timings
        retriever.onnx_encoder()
    seconds, vectors = best_times({b: r._encode for b, r in paths.items()}, texts, repeats)
    rate = {b: len(texts) / s for b, s in seconds.items()}
    a, b = vectors["onnx"].astype(np.float64), vectors["onnx-int8"].astype(np.float64)
    distance = 1 - (a * b).sum(axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
    print(f"speed: {len(texts)} chunks ({strategy}) of {source}; model {paths['onnx'].label}; batch {batch_size}; "
          f"{paths['onnx'].num_threads} threads; best of {repeats}")
    print(f"  onnx fp32 : {rate['onnx']:8.1f} chunks/s   ({paths['onnx'].onnx_encoder().path})")
    print(f"  onnx int8 : {rate['onnx-int8']:8.1f} chunks/s   ({paths['onnx-int8'].onnx_encoder().path})")
    print(f"  ratio int8 / fp32: {rate['onnx-int8'] / rate['onnx']:.2f}x")
    print(f"  cosine distance int8 vs fp32 per text: median {np.median(distance):.2e}, largest {distance.max():.2e}")


def rankings(model: str, strategy: str, articles: int, questions: int, seed: int, resamples: int) -> bool:
    from chunklab_core.data.corpora import load_corpus
    from chunklab_core.evaluation.matrix import run_matrix
    from chunklab_core.evaluation.measures import column
    from chunklab_core.retrieval.recorded_runs import RunStore
    from chunklab_core.stats.bootstrap import paired_difference_ci

    corpus = load_corpus("squad", squad_articles=articles, squad_questions=questions, seed=seed)
    recall, tops = {}, {}
    with tempfile.TemporaryDirectory(prefix="bench_int8_") as tmp:
        for backend in BACKENDS:
            matrix = run_matrix({"squad": corpus}, [strategy], ["dense"], [model], ks=(1, 3, 5, 10), progress=False,
                                backend=backend, store=RunStore(tmp, "live"))
            (run,) = matrix.runs.values()
            frame = matrix.per_question
            recall[backend] = frame[column("recall", 5)].to_numpy(dtype=float)
            tops[backend] = [tuple(run.contexts[i] for i in row[:10] if i >= 0) for row in run.ranked]
    n = len(tops["onnx"])
    same_list = np.mean([a == b for a, b in zip(tops["onnx"], tops["onnx-int8"])])
    same_set = np.mean([set(a) == set(b) for a, b in zip(tops["onnx"], tops["onnx-int8"])])
    interval = paired_difference_ci(recall["onnx-int8"], recall["onnx"], resamples=resamples, seed=seed)
    contains_zero = bool(interval.low <= 0 <= interval.high)
    print(f"rankings: SQuAD v1.1 dev sample ({len(corpus.documents)} articles, {n} questions, seed {seed}), "
          f"{strategy}, dense, {model}")
    print(f"  identical top-10 lists (order included): {same_list:.1%} of {n} questions; identical top-10 sets: "
          f"{same_set:.1%}")
    print(f"  recall@5: fp32 {recall['onnx'].mean():.4f}, int8 {recall['onnx-int8'].mean():.4f}; "
          f"int8 - fp32 {interval.mean:+.4f}, paired bootstrap 95% interval [{interval.low:+.4f}, "
          f"{interval.high:+.4f}] ({resamples:,} resamples)")
    print(f"  the interval {'contains' if contains_zero else 'excludes'} 0: int8 "
          f"{'is offered behind quantize: int8 (off by default)' if contains_zero else 'is not adopted'}")
    return contains_zero


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="all-MiniLM-L6-v2")
    parser.add_argument("--strategy", default="fixed_500")
    parser.add_argument("--articles", type=int, default=48)
    parser.add_argument("--questions", type=int, default=2000)
    parser.add_argument("--chunks", type=int, default=600, help="texts for the speed comparison")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--skip-speed", action="store_true")
    args = parser.parse_args()
    if not args.skip_speed:
        speed(args.model, args.chunks, args.strategy, args.batch_size, args.repeats, args.seed)
    rankings(args.model, args.strategy, args.articles, args.questions, args.seed, args.resamples)


if __name__ == "__main__":
    main()
