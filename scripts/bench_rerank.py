"""Benchmark: reranking throughput (candidates per second) against the plain library calls.

1. The embedding re-scorer (``rerank.scorers.EmbeddingScorer``, in-memory cache so every text
   is really encoded) against a plain ``SentenceTransformer.encode`` of the same question and
   candidate texts, same model, same batch size.
2. The LLM scorer (``rerank.scorers.LLMRelevanceScorer`` over ``llm.relevance.LlamaCppYesNoBackend``,
   recording into a temporary store: the full recorded-call path) against raw llama-cpp-python
   on the same prompts: ``Llama.create_chat_completion`` with a ``"YES" | "NO"`` grammar and
   ``max_tokens=1`` (the plain way to get a constrained label), same model file, same threads.

The candidates are BM25's top ``--depth`` contexts (fixed_500) for the first questions of post
07's SQuAD sample. Each side runs twice in alternation and the faster run counts, to damp noise
from other work on the machine. Target: ratio >= 0.9 (ours / plain). Usage:
``python scripts/bench_rerank.py [--questions 2] [--depth 10] [--model qwen-0.5b]``.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path


def candidates(n_questions: int, depth: int):
    from chunklab_core.rerank.study import candidate_texts, first_stage_runs, rerank_corpus

    corpus = rerank_corpus("squad", n_questions)
    run = first_stage_runs(corpus, ["fixed_500"], ["bm25"], depth)[("fixed_500", "bm25")]
    return [q.text for q in corpus.questions], candidate_texts(run, depth)


def best_of(runs: int, fn) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def bench_embedding(questions, texts, model: str) -> None:
    from chunklab_core.retrieval.dense import load_sentence_transformer
    from chunklab_core.retrieval.model_assembly import resolve_model
    from chunklab_core.rerank.scorers import EmbeddingScorer

    n = sum(len(t) for t in texts)
    _, folder = resolve_model(model)
    plain_model = load_sentence_transformer(str(folder))

    def plain():
        flat = [t for row in texts for t in row]
        passages = plain_model.encode(flat, batch_size=64, normalize_embeddings=True, convert_to_numpy=True)
        queries = plain_model.encode(questions, batch_size=64, normalize_embeddings=True, convert_to_numpy=True)
        start = 0
        for q, row in zip(queries, texts):
            passages[start:start + len(row)] @ q
            start += len(row)

    def ours():
        EmbeddingScorer(model, cache=False).score_many(questions, texts)

    plain_s, ours_s = best_of(2, plain), best_of(2, ours)
    print(f"embedding re-scorer ({model}), {n} candidates: ours {n / ours_s:.1f} cand/s, "
          f"plain SentenceTransformer.encode {n / plain_s:.1f} cand/s, ratio {plain_s / ours_s:.2f}x")


def bench_llm(questions, texts, model: str, threads: int | None) -> None:
    from chunklab_core.llm.records import CallStore, RecordedLLM
    from chunklab_core.llm.relevance import LlamaCppYesNoBackend, relevance_messages
    from chunklab_core.rerank.scorers import LLMRelevanceScorer
    from llama_cpp import LlamaGrammar

    backend = LlamaCppYesNoBackend(model, n_threads=threads)
    llama = backend.llama()
    grammar = LlamaGrammar.from_string('root ::= "YES" | "NO"', verbose=False)
    n = sum(len(t) for t in texts)

    def plain():
        for q, row in zip(questions, texts):
            for text in row:
                llama.create_chat_completion(messages=relevance_messages(q, text), grammar=grammar, max_tokens=1,
                                             temperature=0.0, seed=0)

    def ours():
        with tempfile.TemporaryDirectory() as tmp:
            scorer = LLMRelevanceScorer(RecordedLLM(backend, CallStore(Path(tmp) / "bench.jsonl"), "record"))
            scorer.score_many(questions, texts)

    plain_s = ours_s = float("inf")
    for _ in range(2):
        plain_s = min(plain_s, best_of(1, plain))
        ours_s = min(ours_s, best_of(1, ours))
    print(f"LLM YES/NO scorer ({model}), {n} candidates: ours {n / ours_s:.2f} cand/s, "
          f"raw llama-cpp-python create_chat_completion {n / plain_s:.2f} cand/s, ratio {plain_s / ours_s:.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=2)
    parser.add_argument("--depth", type=int, default=10)
    parser.add_argument("--embedding-model", default="all-mpnet-base-v2")
    parser.add_argument("--model", default="qwen-1.5b", help="GGUF alias or path for the LLM part")
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--skip-llm", action="store_true")
    args = parser.parse_args()
    questions, texts = candidates(args.questions, args.depth)
    bench_embedding(questions, texts, args.embedding_model)
    if args.skip_llm:
        return
    from chunklab_core.llm.base import BackendUnavailable

    try:
        bench_llm(questions, texts, args.model, args.threads)
    except BackendUnavailable as err:
        print(f"LLM part not run: {err}")


if __name__ == "__main__":
    main()
