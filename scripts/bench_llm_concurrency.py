"""Benchmark: recording throughput with requests in flight, and multi-process embedding.

Part 1, LLM calls. The same prompts -- post 05's answer prompts (SQuAD, post 05's seed, top
``--k`` fixed_500 chunks) and the three-way judge prompt on each question's gold answer -- are
recorded (``mode="record"``, fresh temporary store, fsync per call) through:
  * llama-cpp-python's OpenAI-compatible server (``python -m llama_cpp.server``, started here on
    127.0.0.1 with the same GGUF) via ``OpenAIBackend``, at concurrency 1, 2 and 4
    (``llm.pool.map_bounded``);
  * the in-process ``LlamaCppBackend`` (same GGUF, same threads, same options), concurrency 1.
Printed: calls/s and the ratio to the server at concurrency 1. Note: llama-cpp-python's server
answers one request at a time (one model behind a lock), so requests in flight only overlap the
HTTP and recording work there; engines that batch requests (vLLM, llama.cpp's C++ server with
``--parallel``) are where concurrency pays, and none was available here.

Part 2, embeddings. ``--texts`` SQuAD chunks (fixed_500) encoded by all-MiniLM-L6-v2 without a
cache: ``DenseRetriever(processes=1)`` against ``processes=2`` (sentence-transformers'
multi-process pool), the model loaded in this process before timing. Printed: texts/s with
and without the pool's start-up (spawning the workers, each loading torch and the model), the
ratio of encoding rates, and the largest difference between the two sets of vectors.

Usage: python scripts/bench_llm_concurrency.py [--model qwen-0.5b] [--questions 4] [--k 2]
       [--threads N] [--texts 400] [--skip-llm] [--skip-embeddings]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np


def llm_prompts(questions: int, k: int) -> list[tuple[list[dict], dict | None, dict]]:
    """(messages, schema, options) of post 05's answer and three-way judge calls."""
    from chunklab_core.answers.study import build_items
    from chunklab_core.core.seeds import DEFAULT_SEED
    from chunklab_core.data.corpora import load_corpus
    from chunklab_core.llm.answering import ANSWER_MAX_TOKENS, answer_messages
    from chunklab_core.llm.judges import (JUDGE_MAX_TOKENS, THREE_WAY_SCHEMA, THREE_WAY_SYSTEM,
                                          judge_messages)

    items = build_items(load_corpus("squad", squad_articles=40), ["fixed_500"], questions, DEFAULT_SEED, k=k)
    prompts = []
    for item in items:
        prompts.append((answer_messages(item.question, list(item.contexts)), None,
                        {"max_tokens": ANSWER_MAX_TOKENS}))
        prompts.append((judge_messages(THREE_WAY_SYSTEM, item.question, item.reference,
                                       f"The answer is {item.golds[0]}."),
                        THREE_WAY_SCHEMA, {"max_tokens": JUDGE_MAX_TOKENS}))
    return prompts


def record_all(backend, prompts, concurrency: int) -> float:
    """Seconds to record every prompt through ``backend`` at ``concurrency``."""
    from chunklab_core.llm.pool import map_bounded
    from chunklab_core.llm.records import CallStore, RecordedLLM

    with tempfile.TemporaryDirectory() as tmp:
        llm = RecordedLLM(backend, CallStore(Path(tmp) / "bench.jsonl"), mode="record")
        llm.call(*prompts[0][:2], **{**prompts[0][2], "seed": 99})  # warm-up, not timed
        start = time.perf_counter()
        map_bounded(prompts, lambda p: llm.call(p[0], p[1], **p[2]), concurrency, progress=False)
        return time.perf_counter() - start


def bench_llm(args) -> None:
    from chunklab_core.llm.llamacpp_backend import LlamaCppBackend, available_cores
    from chunklab_core.llm.local_server import LlamaServer
    from chunklab_core.llm.models import model_path
    from chunklab_core.llm.openai_backend import OpenAIBackend

    threads = args.threads or available_cores()
    prompts = llm_prompts(args.questions, args.k)
    print(f"== LLM recording: {len(prompts)} calls ({args.questions} post-05 answer prompts with "
          f"top-{args.k} fixed_500 chunks + as many three-way judge prompts), {args.model}, "
          f"{threads} thread(s), {available_cores()} core(s) shared with other work")
    rows = []
    with LlamaServer(model_path(args.model), args.model, n_threads=threads) as server:
        for concurrency in (1, 2, 4):
            backend = OpenAIBackend(args.model, base_url=server.base_url, timeout_s=600)
            seconds = record_all(backend, prompts, concurrency)
            rows.append((f"llama_cpp.server, concurrency {concurrency}", seconds))
    embedded = LlamaCppBackend(args.model, n_ctx=4096, n_threads=threads)
    rows.append(("in-process LlamaCppBackend, concurrency 1", record_all(embedded, prompts, 1)))
    base = len(prompts) / rows[0][1]
    print(f"{'backend':45s} {'seconds':>8s} {'calls/s':>8s} {'ratio':>6s}")
    for name, seconds in rows:
        rate = len(prompts) / seconds
        print(f"{name:45s} {seconds:8.1f} {rate:8.3f} {rate / base:6.2f}")


def bench_embeddings(args) -> None:
    from chunklab_core.core.seeds import DEFAULT_SEED
    from chunklab_core.data.corpora import load_corpus
    from chunklab_core.chunking import chunk_corpus
    from chunklab_core.retrieval.dense import DenseRetriever

    corpus = load_corpus("squad", squad_articles=40)
    texts = [corpus.doc(c.doc_id).text[c.start:c.end]
             for c in chunk_corpus(corpus.documents, "fixed_500")][: args.texts]
    print(f"== embeddings: {len(texts)} SQuAD fixed_500 chunks, all-MiniLM-L6-v2, no cache")
    results = {}
    for processes in (1, 2):
        retriever = DenseRetriever("all-MiniLM-L6-v2", cache=False, processes=processes)
        retriever.model  # loaded before timing, for both: this process loads it either way
        start = time.perf_counter()
        if processes > 1:
            retriever.pool()
        ready = time.perf_counter()
        vectors = retriever.embed(texts)
        done = time.perf_counter()
        retriever.close()
        results[processes] = (ready - start, done - ready, vectors)
    print(f"{'encoder':24s} {'start s':>8s} {'encode s':>9s} {'texts/s':>8s} {'with start':>11s}")
    base = len(texts) / results[1][1]
    for processes, (startup, seconds, _) in results.items():
        rate = len(texts) / seconds
        print(f"{f'{processes} process(es)':24s} {startup:8.1f} {seconds:9.1f} {rate:8.1f} "
              f"{len(texts) / (startup + seconds):11.1f}   ratio {rate / base:.2f}")
    print(f"largest |difference| between the two: {np.abs(results[1][2] - results[2][2]).max():.2e}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="qwen-0.5b")
    parser.add_argument("--questions", type=int, default=4)
    parser.add_argument("--k", type=int, default=2)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--texts", type=int, default=400)
    parser.add_argument("--skip-llm", action="store_true")
    parser.add_argument("--skip-embeddings", action="store_true")
    args = parser.parse_args()
    if not args.skip_llm:
        bench_llm(args)
    if not args.skip_embeddings:
        bench_embeddings(args)


if __name__ == "__main__":
    main()
