"""Post 04: retrieval scored on human and generated questions about the same passages.

Handles: the two question sets as one table (``question_sets``: a human and, when it was
parsed, a generated question per passage), their relevance spans, running every (corpus,
strategy, retriever) cell once for both sets (``retrieval_scores``: same chunks, same index,
so the comparison is paired by passage), the paired comparison generated − human
(``set_comparison``) and BM25's advantage over dense retrieval per question
(``bm25_advantage``).

Relevance (the same rule for both sets, so that only the questions differ): a returned
context ``[c_s, c_e)`` is relevant to a question when it holds at least half of the
characters of one occurrence ``[a_s, a_e)`` of the question's answer *inside its source
passage*: ``|[c_s, c_e) ∩ [a_s, a_e)| >= ANSWER_SHARE · (a_e - a_s)``. Occurrences: SQuAD's
crowd evidence spans; the NQ answer's occurrences in its paragraph; the generated answer's
occurrences in the passage (``questions.checks.locate_ignoring_spacing``: exact, else
case/whitespace-insensitive, else ignoring spacing altogether -- the same rule as the
"answer not in passage" check, so a question the check passes never falls back).
When a generated answer does not occur in its passage, a context is relevant when it overlaps
the passage at all (``relevance = "passage overlap"``; counted and reported). Half the answer
rather than all of it keeps long answers from being penalised for being cut by a chunk
boundary more often than short ones; post 01's text containment is not used because it would
also credit unrelated chunks that happen to contain a short answer ("10", a year).

Not handled: hybrid retrieval, graded relevance, intervals of the advantage trend (``trend``).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from chunklab_core.stats import bootstrap as stats
from chunklab_core.stats.claims import excludes_zero
from chunklab_core.core.corpus import Corpus, Question
from chunklab_core.evaluation.scoring import run_cell, score_run
from chunklab_core.evaluation.measures import KS
from chunklab_core.retrieval.registry import BASELINE, EMBEDDER, needs_model
from chunklab_core.retrieval.run import LazyDense, make_retriever
from chunklab_core.questions.checks import locate_ignoring_spacing
from chunklab_core.questions.passages import Passage

ANSWER_SHARE = 0.5
SETS = ("human", "generated")


def question_sets(passages: Sequence[Passage], generations: pd.DataFrame) -> pd.DataFrame:
    """One row per question: qid, passage_id, corpus, doc_id, set, question, spans, relevance.

    ``generations`` is ``questions.generation.generate_all``'s table; unparsed generations get no row
    here (they are counted in the generation table).
    """
    by_passage = generations.set_index("passage_id")
    rows = []
    for p in passages:
        base = {"passage_id": p.passage_id, "corpus": p.corpus, "doc_id": p.doc_id,
                "passage_start": p.start, "passage_end": p.end}
        rows.append({**base, "qid": f"human:{p.passage_id}", "set": "human", "question": p.human_question,
                     "spans": tuple(p.human_spans), "relevance": "answer span"})
        if p.passage_id not in by_passage.index or by_passage.at[p.passage_id, "status"] != "ok":
            continue
        answer = by_passage.at[p.passage_id, "generated_answer"]
        spans = tuple((p.start + s, p.start + e) for s, e in locate_ignoring_spacing(p.text, answer))
        rows.append({**base, "qid": f"generated:{p.passage_id}", "set": "generated",
                     "question": by_passage.at[p.passage_id, "generated_question"],
                     "spans": spans if spans else ((p.start, p.end),),
                     "relevance": "answer span" if spans else "passage overlap"})
    return pd.DataFrame(rows)


def relevant_contexts(contexts: Sequence[tuple[str, int, int]], doc_id: str,
                      spans: Sequence[tuple[int, int]], rule: str) -> np.ndarray:
    """Indices of the relevant contexts (module docstring): ``rule`` is ``"answer span"`` (hold
    >= ANSWER_SHARE of a span) or ``"passage overlap"`` (share at least one character)."""
    if rule not in ("answer span", "passage overlap"):
        raise ValueError(f"unknown relevance rule {rule!r}")
    docs = np.array([c[0] for c in contexts])
    starts = np.array([c[1] for c in contexts])
    ends = np.array([c[2] for c in contexts])
    relevant = np.zeros(len(contexts), dtype=bool)
    for a, b in spans:
        held = np.clip(np.minimum(ends, b) - np.maximum(starts, a), 0, None)
        needed = ANSWER_SHARE * (b - a) if rule == "answer span" else 0
        relevant |= (docs == doc_id) & (held > 0) & (held >= needed)
    return np.flatnonzero(relevant)


def retrieval_scores(corpora: dict[str, Corpus], questions: pd.DataFrame, strategies: Sequence[str],
                     retrievers: Sequence[str], ks: Sequence[int] = KS,
                     dense_model: str = "all-MiniLM-L6-v2", progress: bool = True) -> pd.DataFrame:
    """Per-question metrics (``evaluation.scoring.score_run``) for every corpus x strategy x retriever,
    both question sets searched in one run per cell; relevance by the module's rule."""
    from tqdm import tqdm

    shared: dict = {}

    def dense():  # one model for every cell, built only when a ranking must be computed
        if "model" not in shared:
            shared["model"] = make_retriever(EMBEDDER, model=dense_model)
        return shared["model"]

    cells = [(c, s, r) for c in dict.fromkeys(questions["corpus"]) for s in strategies for r in retrievers]
    frames = []
    for corpus_name, strategy, retriever in tqdm(cells, desc="retrieval", disable=not progress):
        subset = questions[questions["corpus"] == corpus_name].reset_index(drop=True)
        base = corpora[corpus_name]
        corpus = Corpus(corpus_name, base.documents,
                        [Question(r.qid, r.question, r.doc_id, ()) for r in subset.itertuples()])
        run = run_cell(corpus, strategy, retriever, k_max=max(ks), model=dense_model if needs_model(retriever) else None,
                       built={EMBEDDER: LazyDense(dense, dense_model)})
        run.relevant = [relevant_contexts(run.contexts, r.doc_id, r.spans, r.relevance)
                        for r in subset.itertuples()]
        scored = score_run(run, ks)
        frames.append(scored.merge(subset[["qid", "passage_id", "set", "relevance"]], on="qid"))
    return pd.concat(frames, ignore_index=True)


def paired_matrix(scores: pd.DataFrame, metric: str) -> pd.DataFrame:
    """Passages x sets matrix of one metric for one cell; passages lacking either set dropped."""
    wide = scores.pivot(index="passage_id", columns="set", values=metric)
    return wide.reindex(columns=list(SETS)).dropna()


def set_comparison(scores: pd.DataFrame, metric: str, resamples: int, seed: int) -> pd.DataFrame:
    """Per corpus x strategy x retriever: each set's mean with its interval, and the paired
    difference generated − human with its interval (same resamples throughout)."""
    rows = []
    for (corpus, strategy, retriever), cell in scores.groupby(["corpus", "strategy", "retriever"], sort=False):
        wide = paired_matrix(cell, metric)
        ci = stats.bootstrap_ci(wide.to_numpy(), resamples, seed)
        diff = stats.paired_difference_ci(wide["generated"].to_numpy(), wide["human"].to_numpy(), resamples, seed)
        rows.append({"corpus": corpus, "strategy": strategy, "retriever": retriever, "passages": len(wide),
                     "human": ci.mean[0], "human low": ci.low[0], "human high": ci.high[0],
                     "generated": ci.mean[1], "generated low": ci.low[1], "generated high": ci.high[1],
                     "generated − human": diff.mean, "low": diff.low, "high": diff.high,
                     "excludes 0": excludes_zero(diff.low, diff.high)})
    return pd.DataFrame(rows)


def bm25_advantage(scores: pd.DataFrame, metric: str, baseline: str = BASELINE, other: str = EMBEDDER) -> pd.DataFrame:
    """Per question: ``metric(baseline) − metric(other)`` (BM25 − dense by default), averaged
    over the strategies run; the column is named ``"{baseline} − {other}"``."""
    wide = scores.pivot_table(index=["corpus", "set", "passage_id", "qid", "strategy"], columns="retriever",
                              values=metric, aggfunc="first")
    missing = {baseline, other} - set(wide.columns)
    if missing:
        raise ValueError(f"bm25_advantage needs both retrievers; missing {sorted(missing)}")
    advantage = (wide[baseline] - wide[other]).groupby(level=["corpus", "set", "passage_id", "qid"]).mean()
    position = {name: i for i, name in enumerate(dict.fromkeys(scores["corpus"]))}  # keep the input's corpus order
    table = advantage.rename(f"{baseline} − {other}").reset_index()
    return table.sort_values("corpus", key=lambda c: c.map(position), kind="stable", ignore_index=True)
