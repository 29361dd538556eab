"""Post 05's study: answers written from retrieved chunks, graded by LLM judges and a reference grader.

Handles: building the items (a seeded sample of questions x strategies, each with its top-k
BM25 contexts), running the answerer and the judges on every item through recorded calls
(``llm.records``: a killed run loses no finished call and resumes where it stopped; a
re-run replays with no model at all), and the tidy per-item table the post reads. Items are
ordered question by question with every strategy of a question next to each other, so a
partial run still yields complete, paired comparisons.

CLI (``make llm-run``): ``python -m chunklab_core.answer_study [--questions 200] [--limit N]``.

Not handled: agreement statistics (``agreement``), the notebook's tables and figures.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd

from .answer_metrics import reference_grade
from .corpus import Corpus
from .evaluate import run_cell
from .text import normalize

DEFAULT_STRATEGIES = ("fixed_1000", "fixed_500", "parent_doc_250_1000")
JUDGES = ("qwen15_3way", "qwen15_yesno", "qwen05_3way")
STAGES = {"answers": "answers_qwen15", "qwen15": "judges_qwen15", "qwen05": "judges_qwen05"}


@dataclass(frozen=True)
class AnswerItem:
    item_id: str
    corpus: str
    qid: str
    strategy: str
    question: str
    golds: tuple[str, ...]
    contexts: tuple[str, ...]
    passage_retrieved: bool

    @property
    def reference(self) -> str:
        return " | ".join(dict.fromkeys(self.golds))


def build_items(corpus: Corpus, strategies: Sequence[str], n_questions: int, seed: int, k: int = 5) -> list[AnswerItem]:
    """A seeded sample of ``n_questions`` questions, each with its top-``k`` BM25 contexts per strategy.

    ``passage_retrieved``: some returned context contains a gold answer (post 01's rule).
    """
    if n_questions < 1 or n_questions > len(corpus.questions):
        raise ValueError(f"n_questions must lie in [1, {len(corpus.questions)}], got {n_questions}")
    order = np.sort(np.random.default_rng(seed).choice(len(corpus.questions), n_questions, replace=False))
    chosen = [corpus.questions[i] for i in order]
    sub = Corpus(corpus.name, corpus.documents, chosen)
    per_strategy = {}
    for strategy in strategies:
        run = run_cell(sub, strategy, "bm25", k_max=k)
        per_strategy[strategy] = run
    items = []
    for row, q in enumerate(chosen):
        golds = q.gold_slots[0] if q.gold_slots else tuple(q.answers)
        for strategy in strategies:
            run = per_strategy[strategy]
            ranked = [c for c in run.ranked[row] if c >= 0]
            contexts = tuple(run.context_text(c) for c in ranked)
            retrieved = bool(np.isin(ranked, run.relevant[row]).any())
            items.append(AnswerItem(f"{q.qid}|{strategy}", corpus.name, q.qid, strategy, q.text,
                                    tuple(golds), contexts, retrieved))
    return items


def make_models(mode: str = "replay_or_record", n_threads: int | None = None, root=None):
    """The recorded answerer (Qwen2.5-Coder-1.5B) and judges (1.5B and 0.5B), models loaded lazily."""
    from .llm.llamacpp_backend import LlamaCppBackend
    from .llm.records import CallStore, RecordedLLM

    big = LlamaCppBackend("qwen-1.5b", n_threads=n_threads)
    small = LlamaCppBackend("qwen-0.5b", n_threads=n_threads)
    store = {name: CallStore.for_stage(stage, root, make_target="llm-run") for name, stage in STAGES.items()}
    return {
        "answerer": RecordedLLM(big, store["answers"], mode),
        "qwen15": RecordedLLM(big, store["qwen15"], mode),
        "qwen05": RecordedLLM(small, store["qwen05"], mode),
    }


def process_item(item: AnswerItem, models: dict) -> dict:
    """Answer one item, then grade it with every judge and the reference grader."""
    from .llm.answering import answer_question
    from .llm.judges import judge_three_way, judge_yes_no

    answer = answer_question(models["answerer"], item.question, list(item.contexts))
    verdicts = {
        "qwen15_3way": judge_three_way(models["qwen15"], item.question, item.reference, answer.text),
        "qwen15_yesno": judge_yes_no(models["qwen15"], item.question, item.reference, answer.text),
        "qwen05_3way": judge_three_way(models["qwen05"], item.question, item.reference, answer.text),
    }
    reference = reference_grade(answer.text, list(item.golds), context="\n\n".join(item.contexts))
    return {
        "item_id": item.item_id, "corpus": item.corpus, "qid": item.qid, "strategy": item.strategy,
        "question": item.question, "reference": item.reference, "answer": answer.text,
        "abstained": answer.not_in_context,
        "passage_retrieved": item.passage_retrieved,
        "answer_prompt_tokens": answer.prompt_tokens, "answer_completion_tokens": answer.completion_tokens,
        "answer_latency_s": answer.latency_s,
        **{f"judge_{name}": result.label for name, result in verdicts.items()},
        **{f"judge_{name}_attempts": result.attempts for name, result in verdicts.items()},
        "reference_grader": reference["label"], "reference_reason": reference["reason"],
        "exact_match": reference["exact_match"], "f1": reference["f1"],
    }


def run_study(items: Sequence[AnswerItem], models: dict, progress: bool = True) -> pd.DataFrame:
    """Every item processed in order (resumable through the records), as one tidy table."""
    from .llm.answering import run_batch

    rows = run_batch(items, lambda item: process_item(item, models), models["answerer"].store,
                     desc="answer + judges") if progress else [process_item(i, models) for i in items]
    return pd.DataFrame(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Record post 05's answers and verdicts (resumable).")
    parser.add_argument("--questions", type=int, default=200)
    parser.add_argument("--articles", type=int, default=40)
    parser.add_argument("--seed", type=int, default=20260729)
    parser.add_argument("--strategies", nargs="+", default=list(DEFAULT_STRATEGIES))
    parser.add_argument("--limit", type=int, default=None, help="process only the first N items")
    parser.add_argument("--threads", type=int, default=None)
    args = parser.parse_args(argv)
    from .squad import load_squad_dev, sample_corpus

    corpus = sample_corpus(load_squad_dev(), args.articles, 800, args.seed)
    corpus.name = "squad"
    items = build_items(corpus, args.strategies, args.questions, args.seed)
    if args.limit is not None:
        items = items[: args.limit]
    table = run_study(items, make_models(n_threads=args.threads))
    print(table[["strategy", *[f"judge_{j}" for j in JUDGES], "reference_grader"]].describe(include="all").T)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
