"""Post 07's experiment: first-stage runs, a second scorer over their top N, and the stage metrics.

Handles: the corpora (:func:`rerank_corpus`: post 01's SQuAD sample -- its 40-article haystack
and the first ``n`` of its questions in a seeded order -- and the Natural Questions long pages,
a seeded subset of whole pages, questions whose gold is not verbatim left out), the first
stages (:func:`first_stage_runs`: BM25 or a MiniLM dense retriever over each strategy's chunks,
``evaluation.scoring.run_cell`` to the deepest depth), the depth sweep (:func:`depth_sweep`: one
pointwise score per candidate at the deepest depth, re-used for every shallower depth, since a
pointwise score does not depend on the depth), the recorded LLM subset (:func:`llm_sweep`,
questions in the corpus's seeded order, stopping at the first question not recorded so a
partial recording is a seeded random subset), and the recording command (``chunklab-record-rerank``,
``make llm-rerank``; resumable, a progress bar).

Output: one tidy per-question table, columns corpus, strategy, first_stage, scorer, depth, k,
qid and the ``rerank.stage_metrics`` columns, plus ``tokens_read`` (cl100k_base tokens of the
N candidates the scorer read).

Not handled: the tables, intervals and wording of the post (``post07``), the footprint
(``footprint``), the scorers (``rerank.scorers``).
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd

from chunklab_core.core import bounds
from chunklab_core.core.cli_errors import user_errors
from chunklab_core.data.registry import DataError
from chunklab_core.llm.records import user_error_types
from chunklab_core.core.seeds import DEFAULT_SEED
from chunklab_core.data.corpora import load_corpus
from chunklab_core.core.corpus import Corpus
from chunklab_core.evaluation.scoring import run_cell
from chunklab_core.retrieval.registry import BASELINE, EMBEDDER
from chunklab_core.retrieval.run import RetrievalRun, make_retriever
from chunklab_core.rerank.stage import rerank_prefix, stage_metrics

SEED = DEFAULT_SEED
FIRST_STAGE_MODELS = {BASELINE: None, "minilm": "all-MiniLM-L6-v2"}  # first stage -> its embedding model


def rerank_corpus(name: str, n_questions: int | None = None, seed: int = SEED, n_documents: int | None = 6,
                  articles: int = 40, squad_questions: int = 800) -> Corpus:
    """``squad``: a SQuAD sample (``articles`` articles, ``squad_questions`` questions; by default
    post 01's 40 and 800, post 02's full evidence is 48 and 2,000), the first ``n_questions`` of
    ``default_rng(seed).permutation`` kept in that order; ``nq``: NQ long pages, ``n_documents``
    whole pages (``data.corpora.subsample_documents``; None: every page), questions whose gold
    occurs verbatim, in a seeded order, the first ``n_questions`` (None: all)."""
    if name == "squad":
        corpus = load_corpus("squad", squad_articles=articles, squad_questions=squad_questions, seed=seed)
    elif name == "nq":
        corpus = load_corpus("nq", n_documents=n_documents, seed=seed)
        corpus.questions = [q for q in corpus.questions if "gold-not-verbatim" not in q.tags and q.gold_slots]
    else:
        raise ValueError(f"unknown corpus {name!r}: use 'squad' or 'nq'")
    order = np.random.default_rng(seed).permutation(len(corpus.questions))
    n = len(order) if n_questions is None else int(n_questions)
    if not 1 <= n <= len(order):
        raise ValueError(f"{name}: asked for {n_questions} questions, {len(order)} available")
    source = {**(corpus.source or {}), "rerank_corpus": {"n_questions": n_questions, "seed": seed,
                                                        "n_documents": n_documents, "articles": articles,
                                                        "squad_questions": squad_questions}}
    return Corpus(name, corpus.documents, [corpus.questions[i] for i in order[:n]], source=source)


def first_stage_engine(first_stage: str):
    """A fresh first-stage retriever: ``bm25`` or ``minilm`` (dense, all-MiniLM-L6-v2, cached)."""
    if first_stage not in FIRST_STAGE_MODELS:
        raise ValueError(f"unknown first stage {first_stage!r}; known: {', '.join(FIRST_STAGE_MODELS)}")
    model = FIRST_STAGE_MODELS[first_stage]
    return make_retriever(BASELINE) if model is None else make_retriever(EMBEDDER, model=model)


def first_stage_runs(corpus: Corpus, strategies: Sequence[str], first_stages: Sequence[str],
                     depth: int) -> dict[tuple[str, str], RetrievalRun]:
    """``{(strategy, first_stage): run}`` with ``depth`` ranked contexts per question."""
    from chunklab_core.chunking import chunk_corpus

    runs = {}
    for strategy in strategies:
        chunks = chunk_corpus(corpus.documents, strategy)
        for stage in first_stages:
            if stage not in FIRST_STAGE_MODELS:
                raise ValueError(f"unknown first stage {stage!r}; known: {', '.join(FIRST_STAGE_MODELS)}")
            model = FIRST_STAGE_MODELS[stage]
            run = run_cell(corpus, strategy, BASELINE if model is None else EMBEDDER, k_max=depth, chunks=chunks,
                           model=model)
            run.retriever = stage  # the first stage's name in post 07's tables
            runs[(strategy, stage)] = run
    return runs


def candidate_texts(run: RetrievalRun, depth: int, rows: Sequence[int] | None = None) -> list[list[str]]:
    """Text of the first ``depth`` returned contexts of each question (padding left out)."""
    rows = range(run.ranked.shape[0]) if rows is None else rows
    return [[run.context_text(int(i)) for i in run.ranked[r, :depth] if i >= 0] for r in rows]


def _scores_matrix(scores: list[np.ndarray], depth: int) -> np.ndarray:
    out = np.full((len(scores), depth), np.nan)
    for row, values in enumerate(scores):
        out[row, : len(values)] = values
    return out


def sweep_rows(run: RetrievalRun, scores: np.ndarray, depths: Sequence[int], k: int, scorer: str,
               rows: Sequence[int] | None = None) -> pd.DataFrame:
    """Per-question stage metrics at every depth, from scores of the first max(depths) candidates."""
    rows = np.arange(run.ranked.shape[0]) if rows is None else np.asarray(rows)
    ranked = run.ranked[rows]
    relevant = [run.relevant[r] for r in rows]
    frames = []
    for depth in depths:
        if depth < k:
            raise ValueError(f"depth {depth} is below k={k}: the reranker would not fill the top k")
        after = rerank_prefix(ranked, scores, depth)
        frame = stage_metrics(ranked, after, relevant, k, depth)
        tokens = np.where(ranked[:, :depth] >= 0, run.context_tokens[np.maximum(ranked[:, :depth], 0)], 0)
        frame.insert(0, "doc_id", [run.corpus.questions[r].doc_id for r in rows])
        frame.insert(0, "qid", [run.corpus.questions[r].qid for r in rows])
        frame.insert(0, "depth", depth)
        frame.insert(0, "scorer", scorer)
        frame.insert(0, "first_stage", run.retriever)
        frame.insert(0, "strategy", run.strategy)
        frame.insert(0, "corpus", run.corpus.name)
        frame.insert(6, "k", k)
        frame["tokens_read"] = tokens.sum(axis=1)
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


def depth_sweep(runs: dict[tuple, RetrievalRun], scorer, depths: Sequence[int], k: int,
                progress: bool = False, n_questions: int | None = None) -> pd.DataFrame:
    """Every run re-scored by ``scorer`` at max(depths); stage metrics at each depth.

    ``n_questions``: only the first n questions of each run (the corpus's seeded order).
    """
    from tqdm import tqdm

    deepest = max(depths)
    frames = []
    for run in tqdm(runs.values(), desc=f"rerank / {scorer.name}", disable=not progress):
        rows = list(range(run.ranked.shape[0] if n_questions is None else min(n_questions, run.ranked.shape[0])))
        questions = [run.corpus.questions[r].text for r in rows]
        scores = scorer.score_many(questions, candidate_texts(run, deepest, rows))
        frames.append(sweep_rows(run, _scores_matrix(scores, deepest), depths, k, scorer.name, rows=rows))
    return pd.concat(frames, ignore_index=True)


def sweep_corpora(corpora: dict[str, Corpus], strategies: Sequence[str], first_stages: dict[str, Sequence[str]],
                  depths: Sequence[int], k: int, scorer, progress: bool = False):
    """First-stage runs of every corpus (``first_stages[corpus]``) and their depth sweep under ``scorer``.

    Returns ``(per_question, runs)`` with runs keyed ``(corpus, strategy, first_stage)``.
    """
    frames, all_runs = [], {}
    for name, corpus in corpora.items():
        runs = first_stage_runs(corpus, strategies, first_stages[name], max(depths))
        frames.append(depth_sweep(runs, scorer, depths, k, progress))
        all_runs.update({(name, *key): run for key, run in runs.items()})
    return pd.concat(frames, ignore_index=True), all_runs


@dataclass
class LLMSweep:
    """The LLM reranker's per-question metrics, its calls, and how many questions were recorded."""

    per_question: pd.DataFrame
    calls: pd.DataFrame
    coverage: pd.DataFrame
    scorer_name: str


def llm_sweep(runs: dict[tuple[str, str], RetrievalRun], scorer, n_questions: int, depth: int, k: int,
              progress: bool = False) -> LLMSweep:
    """The LLM scorer over the first ``n_questions`` questions (corpus order = the seeded order),
    question by question with every run together; in replay mode it stops at the first question
    whose calls are not all recorded, so the questions scored are a prefix of the seeded order."""
    from tqdm import tqdm

    from chunklab_core.llm.records import ReplayMiss

    keys = list(runs)
    n_available = min(run.ranked.shape[0] for run in runs.values())
    planned = min(n_questions, n_available)
    scores = {key: [] for key in keys}
    done = 0
    for row in tqdm(range(planned), desc=f"rerank / {scorer.name}", disable=not progress):
        calls_before = len(scorer.calls)
        try:
            for key in keys:
                run = runs[key]
                scores[key].append(scorer.score(run.corpus.questions[row].text, candidate_texts(run, depth, [row])[0]))
        except ReplayMiss:
            for key in keys:
                del scores[key][done:]
            del scorer.calls[calls_before:]
            break
        done += 1
    calls = pd.DataFrame(scorer.calls)
    frames, coverage = [], []
    for key in keys:
        coverage.append({"corpus": runs[key].corpus.name, "strategy": runs[key].strategy,
                         "first_stage": runs[key].retriever,
                         "questions_planned": planned, "questions_recorded": done})
        if done:
            matrix = _scores_matrix(scores[key], depth)
            frames.append(sweep_rows(runs[key], matrix, [depth], k, scorer.name, rows=range(done)))
    per_question = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    return LLMSweep(per_question, calls, pd.DataFrame(coverage), scorer.name)


@user_errors(DataError, *user_error_types())
def main(argv: list[str] | None = None) -> int:
    """Record the LLM reranking of post 07 (resumable: recorded calls are skipped)."""
    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--corpus", default="squad", choices=["squad", "nq"])
    parser.add_argument("--strategies", nargs="+", default=["fixed_500", "recursive_500"])
    parser.add_argument("--first-stage", default=BASELINE, choices=sorted(FIRST_STAGE_MODELS))
    parser.add_argument("--questions", type=bounds.int_in("questions"), default=24)
    parser.add_argument("--depth", type=bounds.int_in("k"), default=10)
    parser.add_argument("--k", type=bounds.int_in("k"), default=5)
    parser.add_argument("--threads", type=bounds.int_in("threads"), default=None, help="llama.cpp threads (default: every core)")
    parser.add_argument("--seed", type=bounds.int_in("seed"), default=SEED)
    args = parser.parse_args(argv)
    from chunklab_core.rerank.scorers import make_llm_scorer

    corpus = rerank_corpus(args.corpus, args.questions, args.seed)
    runs = first_stage_runs(corpus, args.strategies, [args.first_stage], args.depth)
    scorer = make_llm_scorer("replay_or_record", n_threads=args.threads)
    start = time.perf_counter()
    result = llm_sweep(runs, scorer, args.questions, args.depth, args.k, progress=True)
    new = int((~result.calls["replayed"]).sum()) if len(result.calls) else 0
    print(f"{len(result.calls)} calls ({new} new) for {result.coverage['questions_recorded'].min()} questions "
          f"in {time.perf_counter() - start:.0f} s; records: {scorer.llm.store.path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
