"""Post 01's benchmark: the seeded SQuAD sample, every strategy under one retriever, and what the runs say.

Handles: loading the seeded SQuAD sample, running every strategy under one retriever (each
run kept for the later sections), the recall@k leader's paired verdicts, answers cut by
chunk boundaries, the same design on a larger sample (articles resampled), and the numbers
quoted from the published ChunkLab SQuAD benchmark (:data:`REFERENCE_RUN`). Not handled: the
computations themselves (``evaluation.scoring``, ``evaluation.ranking_metrics``, ``stats``),
which this module only sequences; the tables (``post01.tables``), figures (``post01.figures``)
and sentences (``post01.prose``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd

from chunklab_core.chunking import STRATEGIES, strategy_label
from chunklab_core.core.corpus import Corpus
from chunklab_core.data.corpora import load_corpus
from chunklab_core.evaluation.measures import KS, column
from chunklab_core.evaluation.scoring import evaluate
from chunklab_core.reports.verdict_tables import leader_verdicts
from chunklab_core.retrieval.registry import BASELINE
from chunklab_core.retrieval.run import RetrievalRun

# Quoted from the published ChunkLab SQuAD benchmark, its README's results table (SQuAD v1.1
# dev, 800 questions from 40 articles, seed 20260729; reference_results.REFERENCE_SOURCE).
# Shown beside our numbers; never used in any computation.
REFERENCE_RUN = {
    "fixed_1000": {column("hit", 10): 0.931, column("rr", 10): 0.792, column("ndcg", 10): 0.615},
    "fixed_500": {column("hit", 10): 0.885},
    "semantic_tfidf": {column("hit", 10): 0.8725},
}


def load_squad_sample(n_articles: int, n_questions: int, seed: int) -> Corpus:
    """The seeded SQuAD v1.1 dev sample, through the one corpus loader (``data.corpora``), under
    the sample's descriptive name (e.g. ``squad-dev-sample-40a-800q-seed20260729``, the corpus
    column of post 01's tables); procedure in ``data.squad.sample_corpus``."""
    return load_corpus("squad", squad_articles=n_articles, squad_questions=n_questions, seed=seed,
                       descriptive_name=True)


def check_strategies(strategies: Sequence[str]) -> None:
    """An error naming every strategy that is not registered (and the registered ones)."""
    unknown = [s for s in strategies if s not in STRATEGIES]
    if unknown:
        raise ValueError(f"unknown strategies {unknown}; known: {sorted(STRATEGIES)}")


@dataclass
class BenchmarkResult:
    per_question: pd.DataFrame
    runs: dict[str, RetrievalRun]
    ks: tuple[int, ...]


def run_benchmark(corpus: Corpus, strategies: Sequence[str], retriever: str = BASELINE,
                  ks: Sequence[int] = KS, progress: bool = True) -> BenchmarkResult:
    """Every strategy under one retriever; keeps each run for the later sections."""
    if not strategies:
        raise ValueError("STRATEGIES is empty: name at least one strategy")
    check_strategies(strategies)  # validates names before any work
    if any((not isinstance(k, int)) or k < 1 for k in ks):
        raise ValueError(f"every k must be an integer >= 1, got {list(ks)}")
    runs: dict[str, RetrievalRun] = {}
    per_question = evaluate(corpus, strategies, retriever, ks, progress=progress, on_run=lambda r: runs.__setitem__(r.strategy, r))
    return BenchmarkResult(per_question, runs, tuple(ks))


def recall_verdicts(result: BenchmarkResult, k: int, resamples: int, seed: int) -> pd.DataFrame:
    """The recall@k leader's paired intervals against every other strategy, with verdict words
    (:func:`chunklab_core.reports.verdict_tables.leader_verdicts` on the questions x strategies hits)."""
    metric = column("hit", k)
    wide = result.per_question.pivot(index="qid", columns="strategy", values=metric)
    return leader_verdicts(wide, metric, resamples, seed)


def chunk_starts(run: RetrievalRun) -> dict[str, np.ndarray]:
    """Sorted distinct start offsets of the indexed chunks, per document."""
    starts: dict[str, list[int]] = {}
    for c in run.chunks:
        starts.setdefault(c.doc_id, []).append(c.start)
    return {d: np.unique(np.asarray(s)) for d, s in starts.items()}


def cut_answers(run: RetrievalRun, k: int = 10, max_examples: int = 3, width: int = 160) -> pd.DataFrame:
    """Missed questions whose every gold answer span is cut by an indexed-chunk boundary.

    Returns one row per example with an excerpt of the article around the answer, the
    boundary marked with ``⟂`` and the answer in «guillemets».
    """
    corpus = run.corpus
    boundaries = chunk_starts(run)
    rows = []
    for index, q in enumerate(corpus.questions):
        hit = np.isin(run.ranked[index, :k], run.relevant[index]).any()
        if hit or not q.evidence_spans:
            continue
        cuts = []
        for _, start, end in q.evidence_spans:
            inside = boundaries.get(q.doc_id, np.zeros(0))
            cut = inside[(inside > start) & (inside < end)]
            if len(cut) == 0:
                break
            cuts.append((start, end, int(cut[0])))
        else:
            if not cuts:
                continue
            start, end, cut = cuts[0]
            text = corpus.doc(q.doc_id).text
            lo, hi = max(0, start - width // 2), min(len(text), end + width // 2)
            excerpt = (text[lo:start] + "«" + text[start:cut] + "⟂" + text[cut:end] + "»" + text[end:hi])
            rows.append({"qid": q.qid, "question": q.text, "answer": text[start:end],
                         "excerpt": " ".join(excerpt.split())})
        if len(rows) >= max_examples:
            break
    return pd.DataFrame(rows)


def count_cut_misses(run: RetrievalRun, k: int = 10) -> dict:
    """How many misses at k have every gold span cut by an indexed-chunk boundary."""
    starts = chunk_starts(run)
    misses = cut = 0
    for index, q in enumerate(run.corpus.questions):
        if np.isin(run.ranked[index, :k], run.relevant[index]).any():
            continue
        misses += 1
        b = starts.get(q.doc_id, np.zeros(0))
        if q.evidence_spans and all(((b > s) & (b < e)).any() for _, s, e in q.evidence_spans):
            cut += 1
    return {"strategy": run.strategy, "misses": misses, "misses with every answer cut": cut}


def full_set_verdicts(strategies: Sequence[str], n_articles: int, n_questions: int, seed: int, k: int,
                      resamples: int, retriever: str = BASELINE) -> pd.DataFrame:
    """Post 01's design on a larger SQuAD sample: the hit@k leader against every strategy.

    The same strategies and retriever on ``n_articles`` articles and a seeded sample of
    ``n_questions`` of their questions (every dev article and 2,000 questions in the post:
    post 02's SQuAD evidence, its rankings read from the recorded runs). The paired intervals
    resample articles (``verdict_tables.leader_verdicts`` with the questions' documents), since
    questions come from the same articles; the question-level verdict is kept beside it.
    """
    corpus = load_squad_sample(n_articles, n_questions, seed)
    result = run_benchmark(corpus, strategies, retriever, KS, progress=False)
    metric = column("hit", k)
    frame = result.per_question.assign(label=result.per_question["strategy"].map(strategy_label))
    wide = frame.pivot(index="qid", columns="label", values=metric)[[strategy_label(s) for s in strategies]]
    documents = frame.drop_duplicates("qid").set_index("qid")["doc_id"]
    table = leader_verdicts(wide, metric, resamples, seed, documents)
    return table.assign(sample=f"SQuAD v1.1 dev, {corpus.summary()['questions']:,} questions from "
                               f"{len(corpus.documents)} articles")
