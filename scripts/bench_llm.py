"""Benchmark: judge throughput through chunklab's LLM layer vs raw llama-cpp-python.

Part 1 (always): the same GGUF model (default Qwen2.5-Coder-0.5B), the same ten three-way
judge prompts, the same sampling (greedy, seed 0, max 24 tokens, the same JSON-schema
constraint), run in one process by two separately loaded ``llama_cpp.Llama`` instances
with identical settings:
  raw   = ``Llama.create_chat_completion(..., response_format={"type": "json_object", "schema"})``
  layer = ``judge_three_way(RecordedLLM(LlamaCppBackend(...), CallStore(tmp), "record"), ...)``
          (grammar cache, option handling, parsing, JSONL record with fsync).
Prompts alternate raw/layer so background load hits both alike; each side gets one warm-up
call first. Printed: verdicts/s, completion tokens/s, the ratio layer/raw (target >= 0.8)
and whether both produced the same verdicts.

Part 2 (``--per-call``): seconds per call of answering (five 1000-character SQuAD contexts)
and of both judges, for each model given in ``--models``.

Usage: python scripts/bench_llm.py [--model qwen-0.5b] [--rounds 2] [--per-call]
       [--models qwen-0.5b qwen-1.5b] [--threads N]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

from chunklab_core.llm.answering import answer_question
from chunklab_core.llm.judges import (JUDGE_MAX_TOKENS, THREE_WAY_SCHEMA, THREE_WAY_SYSTEM,
                                      judge_messages, judge_three_way, judge_yes_no,
                                      parse_verdict, THREE_WAY_LABELS)
from chunklab_core.llm.llamacpp_backend import LlamaCppBackend, available_cores, import_llama_cpp
from chunklab_core.llm.models import model_path
from chunklab_core.llm.records import CallStore, RecordedLLM
from chunklab_core.core.paths import PROJ_ROOT

JUDGE_CASES = [  # (question, reference, answer): correct, partial and wrong answers
    ("Which city hosted the 1900 Summer Olympics?", "Paris", "Paris, France"),
    ("Which city hosted the 1900 Summer Olympics?", "Paris", "St. Louis"),
    ("Who wrote Pride and Prejudice?", "Jane Austen", "Austen"),
    ("Who wrote Pride and Prejudice?", "Jane Austen", "Charlotte Bronte"),
    ("What are the primary colours of light?", "red, green and blue", "red and green"),
    ("When did the Berlin Wall fall?", "9 November 1989", "in November 1989"),
    ("When did the Berlin Wall fall?", "9 November 1989", "1961"),
    ("What is the boiling point of water at sea level?", "100 degrees Celsius", "100 °C"),
    ("Which gas do plants absorb for photosynthesis?", "carbon dioxide", "oxygen"),
    ("Who painted the Mona Lisa?", "Leonardo da Vinci", "not in the context"),
]
N_CTX = 4096


class CountingRecordedLLM(RecordedLLM):
    """``RecordedLLM`` that also sums the token counts of the calls it serves."""

    prompt_tokens = completion_tokens = 0

    def call(self, *args, **kwargs):
        reply = super().call(*args, **kwargs)
        self.prompt_tokens += reply.prompt_tokens or 0
        self.completion_tokens += reply.completion_tokens or 0
        return reply


def raw_judge(llama, case) -> tuple[str, int, int]:
    out = llama.create_chat_completion(
        messages=judge_messages(THREE_WAY_SYSTEM, *case), temperature=0.0, seed=0,
        max_tokens=JUDGE_MAX_TOKENS,
        response_format={"type": "json_object", "schema": THREE_WAY_SCHEMA})
    usage = out["usage"]
    return out["choices"][0]["message"]["content"], usage["prompt_tokens"], usage["completion_tokens"]


def throughput(alias: str, rounds: int, threads: int) -> None:
    llama_cpp = import_llama_cpp()
    path = model_path(alias)
    raw = llama_cpp.Llama(model_path=str(path), n_ctx=N_CTX, n_threads=threads,
                          n_threads_batch=threads, seed=0, verbose=False)
    backend = LlamaCppBackend(alias, n_ctx=N_CTX, n_threads=threads)
    with tempfile.TemporaryDirectory() as tmp:
        store = CallStore(Path(tmp) / "bench.jsonl")
        layer = CountingRecordedLLM(backend, store, mode="record")
        raw_judge(raw, JUDGE_CASES[0])  # warm-up (first-call setup) on both sides
        judge_three_way(layer, *JUDGE_CASES[0])
        layer.prompt_tokens = layer.completion_tokens = 0
        raw_s = layer_s = 0.0
        raw_prompt = raw_completion = 0
        raw_labels, layer_labels = [], []
        for _ in range(rounds):
            for case in JUDGE_CASES:
                start = time.perf_counter()
                text, n_prompt, n_completion = raw_judge(raw, case)
                raw_s += time.perf_counter() - start
                raw_prompt += n_prompt
                raw_completion += n_completion
                raw_labels.append(parse_verdict(text, THREE_WAY_LABELS))
                start = time.perf_counter()
                result = judge_three_way(layer, *case)
                layer_s += time.perf_counter() - start
                layer_labels.append(result.label)
    n = rounds * len(JUDGE_CASES)
    print(f"model {path.name}, {threads} threads, {n} verdicts per side "
          f"({len(JUDGE_CASES)} prompts x {rounds} rounds), llama-cpp-python {llama_cpp.__version__}")
    print(f"{'':8}{'verdicts/s':>12}{'prompt tok/s':>14}{'output tok/s':>14}{'s/verdict':>11}")
    for name, secs, n_prompt, n_out in (
            ("raw", raw_s, raw_prompt, raw_completion),
            ("layer", layer_s, layer.prompt_tokens, layer.completion_tokens)):
        print(f"{name:8}{n / secs:12.3f}{n_prompt / secs:14.1f}{n_out / secs:14.2f}{secs / n:11.3f}")
    print(f"ratio layer/raw (verdicts/s): {raw_s / layer_s:.3f}  (target >= 0.8)")
    print(f"same verdicts: {raw_labels == layer_labels}; labels: {layer_labels[:len(JUDGE_CASES)]}")


def squad_cases(n: int) -> list[tuple[str, str, list[str]]]:
    """``n`` SQuAD dev questions with five 1000-character contexts from their article."""
    mirror = Path(os.environ.get("CHUNKLAB_DATA_MIRROR", PROJ_ROOT.parent / "shared" / "data"))
    data = json.loads(gzip.open(mirror / "squad-v1.1-dev.json.gz").read())["data"]
    cases = []
    for article in data:
        paragraphs = [p for p in article["paragraphs"] if len(p["context"]) >= 1000]
        if len(paragraphs) < 5:
            continue
        qa = next((q for q in paragraphs[0]["qas"]
                   if q["answers"][0]["answer_start"] + len(q["answers"][0]["text"]) < 1000), None)
        if qa:
            contexts = [p["context"][:1000] for p in paragraphs[:5]]
            cases.append((qa["question"], qa["answers"][0]["text"], contexts))
        if len(cases) == n:
            return cases
    raise SystemExit(f"found only {len(cases)} suitable SQuAD questions in {mirror}")


def per_call(aliases: list[str], threads: int, n_questions: int = 3) -> None:
    cases = squad_cases(n_questions)
    print(f"\nseconds per call ({n_questions} SQuAD questions, 5 contexts x 1000 chars, "
          f"{threads} threads; mean and max)")
    for alias in aliases:
        backend = LlamaCppBackend(alias, n_ctx=N_CTX, n_threads=threads)
        start = time.perf_counter()
        backend.llama()
        load_s = time.perf_counter() - start
        answer_s, three_s, yes_s, lines = [], [], [], []
        for question, reference, contexts in cases:
            answer = answer_question(backend, question, contexts)
            answer_s.append(answer.latency_s)
            labels = []
            for judge, times in ((judge_three_way, three_s), (judge_yes_no, yes_s)):
                start = time.perf_counter()
                labels.append(judge(backend, question, reference, answer.text).label)
                times.append(time.perf_counter() - start)
            lines.append(f"  Q: {question} | reference: {reference} | answer "
                         f"({answer.prompt_tokens} prompt tokens): {answer.text!r} | "
                         f"three-way: {labels[0]}, yes/no: {labels[1]}")
        print(f"{alias}: load {load_s:.1f} s | answer {statistics.mean(answer_s):.2f} s "
              f"(max {max(answer_s):.2f}) | three-way judge {statistics.mean(three_s):.2f} s "
              f"(max {max(three_s):.2f}) | yes/no judge {statistics.mean(yes_s):.2f} s "
              f"(max {max(yes_s):.2f})")
        print("\n".join(lines))
        del backend


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="qwen-0.5b")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--threads", type=int, default=available_cores())
    parser.add_argument("--per-call", action="store_true")
    parser.add_argument("--models", nargs="+", default=["qwen-0.5b", "qwen-1.5b"])
    args = parser.parse_args()
    throughput(args.model, args.rounds, args.threads)
    if args.per_call:
        per_call(args.models, args.threads)


if __name__ == "__main__":
    main()
