"""Post 05's study: answers written from retrieved chunks, graded by LLM judges and a reference grader.

Handles: building the items (a seeded sample of questions x strategies, each with its top-k
BM25 contexts), running the answerer and the judges on every item through recorded calls
(``llm.records``: a killed run loses no finished call and resumes where it stopped; a
re-run replays with no model at all), and the tidy per-item table the post reads. Items are
ordered question by question with every strategy of a question next to each other, so a
partial run still yields complete, paired comparisons.

Requests in flight: with ``concurrency`` > 1 the items are first recorded by a bounded pool
(``llm.pool``: items finish in any order, each call is one fsynced record), then the table is
built by replaying those records in plan order (``llm.wiring.replaying``), so it is the table a
later replay gives whatever the concurrency was.

CLI (``make llm-run``): ``chunklab-record-answers [--corpus squad|nq] [--questions 200]
[--limit N] [--concurrency N] [--backend llamacpp|ollama|openai --base-url URL --answerer NAME MODEL
--judge NAME=MODEL ...]``, and ``--probes N`` for the judge reliability probes (``answers.probes``).

Not handled: which backend and model a role uses (``llm.wiring``), agreement statistics
(``agreement``), the notebook's tables and figures.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd

from chunklab_core.core import bounds
from chunklab_core.core.cli_errors import user_errors
from chunklab_core.data.registry import DataError
from chunklab_core.llm.records import user_error_types
from chunklab_core.answers.reference_grader import reference_grade
from chunklab_core.core.corpus import Corpus
from chunklab_core.core.seeds import DEFAULT_SEED
from chunklab_core.data.corpora import load_corpus
from chunklab_core.evaluation.scoring import run_cell
from chunklab_core.retrieval.registry import BASELINE
from chunklab_core.llm.wiring import BACKENDS, DEFAULT_ANSWERER, make_models

DEFAULT_STRATEGIES = ("fixed_1000", "fixed_500", "parent_doc_250_1000")


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
    doc_id: str = ""  # the question's source document (SQuAD article, NQ page): the bootstrap's cluster

    @property
    def reference(self) -> str:
        return " | ".join(dict.fromkeys(self.golds))


def build_items(corpus: Corpus, strategies: Sequence[str], n_questions: int, seed: int, k: int = 5) -> list[AnswerItem]:
    """A seeded sample of ``n_questions`` questions, each with its top-``k`` BM25 contexts per strategy.

    The questions come in the sampler's random order (``numpy.random.default_rng(seed).choice``
    without replacement), not corpus order, so any prefix of the item list -- what a partial,
    resumed run has finished -- is itself a uniform random sample of the corpus's questions.
    ``passage_retrieved``: some returned context contains a gold answer (post 01's rule).
    """
    if n_questions < 1 or n_questions > len(corpus.questions):
        raise ValueError(f"n_questions must lie in [1, {len(corpus.questions)}], got {n_questions}")
    order = np.random.default_rng(seed).choice(len(corpus.questions), n_questions, replace=False)
    chosen = [corpus.questions[i] for i in order]
    sub = Corpus(corpus.name, corpus.documents, chosen)
    per_strategy = {}
    for strategy in strategies:
        run = run_cell(sub, strategy, BASELINE, k_max=k)
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
                                    tuple(golds), contexts, retrieved, q.doc_id))
    return items


DEFAULT_YES_NO_JUDGES = ("qwen15",)


def judge_columns(models: dict, yes_no_judges=DEFAULT_YES_NO_JUDGES) -> list[str]:
    """The verdict columns :func:`process_item` writes for these models."""
    columns = []
    for name in models:
        if name == "answerer":
            continue
        columns.append(f"judge_{name}_3way")
        if name in yes_no_judges:
            columns.append(f"judge_{name}_yesno")
    return columns


def _cost_columns(calls: list[tuple]) -> dict:
    """Per-stage call count, tokens in/out and seconds, flattened into columns."""
    out: dict[str, float] = {}
    for stage, prompt, completion, seconds, _replayed in calls:
        out[f"cost_{stage}_calls"] = out.get(f"cost_{stage}_calls", 0) + 1
        for label, value in (("tokens_in", prompt), ("tokens_out", completion), ("seconds", seconds)):
            column = f"cost_{stage}_{label}"
            out[column] = out.get(column, 0) + (value or 0)
    return out


def process_item(item: AnswerItem, models: dict, yes_no_judges=DEFAULT_YES_NO_JUDGES) -> dict:
    """Answer one item, then grade it with every judge and the reference grader.

    Returns one flat row: the item, the answer, each judge's label and attempts (two means
    the first reply was unparseable), the reference grader's label, SQuAD EM and F1, and
    per-stage cost columns (``cost_<stage>_{calls,tokens_in,tokens_out,seconds}``).
    """
    from chunklab_core.llm.answering import answer_question
    from chunklab_core.llm.judges import judge_three_way, judge_yes_no

    for llm in models.values():
        if hasattr(llm, "take"):
            llm.take()
    answer = answer_question(models["answerer"], item.question, list(item.contexts))
    verdicts = {}
    for name, llm in models.items():
        if name == "answerer":
            continue
        verdicts[f"{name}_3way"] = judge_three_way(llm, item.question, item.reference, answer.text)
        if name in yes_no_judges:
            verdicts[f"{name}_yesno"] = judge_yes_no(llm, item.question, item.reference, answer.text)
    reference = reference_grade(answer.text, list(item.golds), context="\n\n".join(item.contexts))
    costs = {}
    for llm in models.values():
        if hasattr(llm, "take"):
            costs.update(_cost_columns(llm.take()))
    return {
        "item_id": item.item_id, "corpus": item.corpus, "qid": item.qid, "doc_id": item.doc_id,
        "strategy": item.strategy,
        "question": item.question, "reference": item.reference, "answer": answer.text,
        "abstained": answer.not_in_context,
        "passage_retrieved": item.passage_retrieved,
        "answer_prompt_tokens": answer.prompt_tokens, "answer_completion_tokens": answer.completion_tokens,
        "answer_latency_s": answer.latency_s,
        **{f"judge_{name}": result.label for name, result in verdicts.items()},
        **{f"judge_{name}_attempts": result.attempts for name, result in verdicts.items()},
        "reference_grader": reference["label"], "reference_reason": reference["reason"],
        "exact_match": reference["exact_match"], "f1": reference["f1"],
        **costs,
    }


def run_study(items: Sequence[AnswerItem], models: dict, progress: bool = True,
              concurrency: int = 1, yes_no_judges=DEFAULT_YES_NO_JUDGES) -> pd.DataFrame:
    """Every item processed (resumable through the records), as one tidy table in item order;
    ``concurrency`` items in flight at once (``llm.pool``)."""
    from chunklab_core.llm.pool import map_bounded

    rows = map_bounded(items, lambda item: process_item(item, models, yes_no_judges), concurrency,
                       store=models["answerer"].store, desc="answer + judges", progress=progress)
    return pd.DataFrame(rows)


@dataclass
class StudyTable:
    """What a (partial) run has recorded: the item table and how much of the plan it covers.

    ``table``: one row per item (:func:`process_item`) plus ``contexts`` and ``golds``;
    ``coverage``: per corpus, questions planned and questions complete (every strategy
    answered and judged) -- only complete questions enter ``table``, in run order, so the
    table is a uniform random sample of the planned questions, paired across strategies.
    """

    table: pd.DataFrame
    coverage: pd.DataFrame
    calls: pd.DataFrame  # distinct calls: stage, tokens_in, tokens_out, seconds


def load_study(corpora: dict, strategies: Sequence[str], seed: int, models: dict,
               yes_no_judges=DEFAULT_YES_NO_JUDGES, k: int = 5, progress: bool = False,
               concurrency: int = 1) -> StudyTable:
    """Process every planned item question by question; stop a corpus at its first missing record.

    ``corpora`` maps a corpus name to ``(Corpus, n_questions)``. In ``replay`` mode a
    question whose calls are not all recorded ends that corpus (a partial run); in the
    recording modes every item runs. With ``concurrency`` > 1 and a recording mode, a bounded
    pool records every item first, then the table is built from the records alone.
    """
    from chunklab_core.llm.pool import check_concurrency
    from chunklab_core.llm.wiring import replaying

    planned = {name: build_items(corpus, strategies, n_questions, seed, k=k)
               for name, (corpus, n_questions) in corpora.items()}
    recording = any(getattr(getattr(llm, "recorded", llm), "mode", "replay") != "replay"
                    for llm in models.values())
    if check_concurrency(concurrency) > 1 and recording:
        everything = [item for items in planned.values() for item in items]
        run_study(everything, models, progress, concurrency, yes_no_judges)
        with replaying(models):
            return _study_from(planned, strategies, models, yes_no_judges, progress=False)
    return _study_from(planned, strategies, models, yes_no_judges, progress)


def _study_from(planned: dict, strategies: Sequence[str], models: dict, yes_no_judges,
                progress: bool) -> StudyTable:
    """The study table of the planned items, question by question (see :func:`load_study`)."""
    from chunklab_core.llm.records import ReplayMiss

    rows, coverage = [], []
    for name, items in planned.items():
        by_question: dict[str, list[AnswerItem]] = {}
        for item in items:
            by_question.setdefault(item.qid, []).append(item)
        complete = 0
        groups = by_question.values()
        if progress:  # imported only when shown: tqdm.auto warns in a notebook without ipywidgets
            from tqdm.auto import tqdm

            groups = tqdm(groups, desc=f"{name} questions")
        for group in groups:
            logged = {role: set(getattr(llm, "log", {})) for role, llm in models.items()}
            try:
                done = [process_item(item, models, yes_no_judges) for item in group]
            except ReplayMiss:  # forget the calls of this incomplete question
                for role, llm in models.items():
                    for key in set(getattr(llm, "log", {})) - logged[role]:
                        del llm.log[key]
                break
            for item, row in zip(group, done):
                row["contexts"] = list(item.contexts)
                row["golds"] = list(item.golds)
            rows.extend(done)
            complete += 1
        coverage.append({"corpus": name, "questions_planned": len(by_question),
                         "questions_recorded": complete, "items": complete * len(strategies)})
    calls = {}
    for llm in models.values():
        calls.update(getattr(llm, "log", {}))
    return StudyTable(pd.DataFrame(rows), pd.DataFrame(coverage),
                      pd.DataFrame(list(calls.values()), columns=["stage", "tokens_in", "tokens_out", "seconds"]))


@user_errors(DataError, *user_error_types())
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Record post 05's answers and verdicts (resumable).")
    parser.add_argument("--corpus", choices=("squad", "nq"), default="squad")
    parser.add_argument("--questions", type=bounds.int_in("questions"), default=200)
    parser.add_argument("--probes", type=bounds.int_in("questions"), default=None,
                        help="instead of answers: judge N probe questions (answers.probes)")
    parser.add_argument("--articles", type=bounds.int_in("questions"), default=40)
    parser.add_argument("--seed", type=bounds.int_in("seed"), default=DEFAULT_SEED)
    parser.add_argument("--strategies", nargs="+", default=list(DEFAULT_STRATEGIES))
    parser.add_argument("--limit", type=bounds.int_in("questions"), default=None, help="process only the first N items")
    parser.add_argument("--threads", type=bounds.int_in("threads"), default=None)
    parser.add_argument("--concurrency", type=bounds.int_in("concurrency"), default=1,
                        help="items in flight at once (useful with a server backend)")
    parser.add_argument("--backend", choices=BACKENDS, default="llamacpp")
    parser.add_argument("--host", default=None, help="Ollama host (default $OLLAMA_HOST)")
    parser.add_argument("--base-url", action="append", default=None, metavar="[MODEL=]URL",
                        help="OpenAI-compatible base URL, e.g. http://gpu-host:8000/v1 (default "
                             "$OPENAI_BASE_URL); repeat as MODEL=URL for one server per model")
    parser.add_argument("--answerer", nargs=2, metavar=("NAME", "MODEL"), default=list(DEFAULT_ANSWERER))
    parser.add_argument("--judge", action="append", metavar="NAME=MODEL", default=None,
                        help="a judge (repeatable); default: qwen15=qwen-1.5b qwen05=qwen-0.5b")
    parser.add_argument("--yes-no-judges", nargs="*", default=list(DEFAULT_YES_NO_JUDGES))
    parser.add_argument("--records", default=None, help="folder of the call records (default data/records)")
    args = parser.parse_args(argv)
    judges = None
    if args.judge:
        pairs = [j.split("=", 1) for j in args.judge]
        if any(len(p) != 2 or not all(p) for p in pairs):
            parser.error(f"--judge takes NAME=MODEL, got {args.judge}")
        judges = dict(pairs)
    base_url = None
    if args.base_url:
        named = [u.split("=", 1) for u in args.base_url if "=" in u.split("://", 1)[0]]
        plain = [u for u in args.base_url if "=" not in u.split("://", 1)[0]]
        if plain and (named or len(plain) > 1):
            parser.error("give one --base-url URL, or one --base-url MODEL=URL per model")
        base_url = plain[0] if plain else dict(named)
    corpus = load_corpus(args.corpus, squad_articles=args.articles, seed=args.seed)
    models = make_models(n_threads=args.threads, root=args.records, backend=args.backend,
                         answerer=tuple(args.answerer), judges=judges, host=args.host,
                         base_url=base_url)
    if args.probes is not None:
        from chunklab_core.answers.probes import probe_inputs, probe_summary, run_probes

        verdicts = run_probes(probe_inputs(corpus, args.probes, args.seed), models, args.yes_no_judges,
                              concurrency=args.concurrency)
        print(probe_summary(verdicts).to_string(index=False))
        return 0
    items = build_items(corpus, args.strategies, args.questions, args.seed)
    if args.limit is not None:
        items = items[: args.limit]
    table = run_study(items, models, concurrency=args.concurrency, yes_no_judges=args.yes_no_judges)
    print(table[["strategy", *judge_columns(models, args.yes_no_judges), "reference_grader"]].describe(include="all").T)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
