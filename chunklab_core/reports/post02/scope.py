"""Post 02's section on well-posed questions: retrieval within the question's document, and
questions that some measure can score.

Handles: :func:`well_posed` (the corpora as loaded -> the corpora the post scores: questions no
measure can score dropped, ``evaluation.scoreability``), :func:`cross_document_facts` (what the
cross-document setting measured on the corpora now searched within each question's document:
distinct question texts, the most documents one question text is asked about, i.e. the most
golds one cross-document ranking was scored against, and, from the recorded cross-document runs
where they exist, the share of the top k contexts that came from another document),
:func:`scoreability_view` and :func:`retrieved_view` (the tables), and :func:`scope_text` (the
prose, from ``scope.md``). Every number is computed here from the corpora and the recorded runs.

Not handled: the scoped retrieval itself (``retrieval.scope``), the matrix (``evaluation.matrix``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from chunklab_core.core import numbers
from chunklab_core.core.corpus import Corpus
from chunklab_core.evaluation import scoreability
from chunklab_core.reports.samples import DATASETS
from chunklab_core.reports.templates import Templates
from chunklab_core.retrieval.scope import CORPUS, DOCUMENT, SCOPE_WORDS

PROSE = Templates(__file__, "scope.md")
MEASURE_WORDS = {"recall": "slot recall (containment, exact or fuzzy)", "ndcg": "graded nDCG (partial credit)",
                 "span_recall": "span recall (evidence offsets)",
                 "token_recall": "token span recall (offsets or gold located once)"}

__all__ = ["WellPosed", "well_posed", "cross_document_facts", "scoreability_view", "retrieved_view", "retrieved_text", "scope_text"]


@dataclass
class WellPosed:
    """The corpora as loaded, the corpora scored, and the per-measure counts on the loaded ones."""

    loaded: dict[str, Corpus]
    corpora: dict[str, Corpus]
    counts: pd.DataFrame  # scoreability.document_counts of ``loaded``


def well_posed(loaded: Mapping[str, Corpus], threshold: float = 0.90) -> WellPosed:
    """Drop, in every corpus, the questions no measure can score (their whole document earns no credit)."""
    loaded = dict(loaded)
    corpora = {key: scoreability.keep_scoreable(corpus, threshold) for key, corpus in loaded.items()}
    return WellPosed(loaded, corpora, scoreability.document_counts(loaded, threshold))


def _top_k_elsewhere(corpus: Corpus, strategies: Sequence[str], retrievers: Sequence[str], model: str,
                     k: int) -> list[float]:
    """Per recorded cross-document cell of ``corpus``: the share of its top ``k`` contexts from
    another document than the question's (cells not recorded are skipped)."""
    from chunklab_core.chunking import STRATEGIES, StrategySpec
    from chunklab_core.evaluation.matrix import _chunks
    from chunklab_core.evaluation.scoring import run_cell
    from chunklab_core.retrieval.recorded_runs import RunStoreError, default_store
    from chunklab_core.retrieval.registry import needs_model

    across = replace(corpus)
    across.source, across.scope = corpus.source, CORPUS
    shares = []
    for strategy in strategies:
        for retriever in retrievers:
            try:  # chunks as the matrix cuts them (a model-cut strategy's recorded spans)
                found = strategy if isinstance(strategy, StrategySpec) else STRATEGIES[strategy]  # a name or a spec
                chunks = _chunks(across, found, model, None, default_store())
                run = run_cell(across, strategy, retriever, k_max=k, chunks=chunks,
                               model=model if needs_model(retriever) else None)
            except RunStoreError:
                continue
            ranked = run.ranked[:, :k]
            own = np.array([q.doc_id for q in corpus.questions])[:, None]
            docs = np.array([d for d, _, _ in run.contexts] + [""])[np.where(ranked >= 0, ranked, len(run.contexts))]
            filled = ranked >= 0
            shares.append(float(((docs != own) & filled).sum() / max(int(filled.sum()), 1)))
    return shares


def cross_document_facts(state: WellPosed, strategies: Sequence[str] = (), retrievers: Sequence[str] = (),
                         model: str = "all-MiniLM-L6-v2", k: int = 5) -> pd.DataFrame:
    """Per corpus searched within each question's document: what searching every document measured.

    Columns: questions, documents, distinct question texts, most documents one text is asked
    about (the golds one cross-document ranking is scored against), questions whose text is
    asked about another document too, and, over the recorded cross-document cells of
    ``strategies`` x ``retrievers``, the least and largest share of the top ``k`` contexts
    taken from another document than the question's (NaN when none is recorded).
    """
    rows = []
    for key, corpus in state.loaded.items():
        if corpus.scope != DOCUMENT:
            continue
        texts = pd.DataFrame({"text": [q.text for q in corpus.questions], "doc": [q.doc_id for q in corpus.questions]})
        per_text = texts.groupby("text")["doc"].nunique()
        shared = texts["text"].map(per_text) > 1
        shares = _top_k_elsewhere(corpus, strategies, retrievers, model, k) if strategies and retrievers else []
        rows.append({"corpus": key, "questions": len(texts), "documents": len(corpus.documents),
                     "distinct question texts": int(per_text.size),
                     "most documents one text asks about": int(per_text.max()) if len(per_text) else 0,
                     "questions asked of several documents": int(shared.sum()),
                     "cells": len(shares),
                     f"top {k} from another document, least": min(shares) if shares else np.nan,
                     f"top {k} from another document, largest": max(shares) if shares else np.nan})
    return pd.DataFrame(rows)


def scoreability_view(state: WellPosed) -> pd.DataFrame:
    """Per corpus as loaded (named by its data set: the sample labels count the questions kept):
    questions, questions each measure can score, and those none can (dropped)."""
    view = state.counts.copy()
    view["corpus"] = view["corpus"].map(lambda key: DATASETS.get(key, key))  # counts of the corpora as loaded
    return view.rename(columns={name: f"{words}: can score" for name, words in MEASURE_WORDS.items()}
                       | {"no measure": "no measure can score (dropped)", "questions": "questions loaded"})


def retrieved_view(per_question: pd.DataFrame, k: int, labels: Mapping[str, str]) -> pd.DataFrame:
    """Per corpus and measure: questions scored, and those credited in the top ``k`` of some cell."""
    table = scoreability.retrieved_counts(per_question, k)
    wide = table.pivot(index="corpus", columns="measure", values="credited in a retrieved context")
    wide = wide.reindex(columns=[m for m in MEASURE_WORDS if m in wide.columns])
    wide.columns = [f"{MEASURE_WORDS[m]}: credited in some top {k}" for m in wide.columns]
    questions = table.groupby("corpus", sort=False)["questions"].first()
    wide.insert(0, "questions", questions)
    order = list(dict.fromkeys(table["corpus"]))
    wide = wide.loc[order].reset_index()
    wide["corpus"] = wide["corpus"].map(lambda key: labels.get(key, key))
    return wide


def retrieved_text(k: int) -> str:
    """The sentence above :func:`retrieved_view`."""
    return PROSE.fill("retrieved", k=k)


def scope_text(state: WellPosed, facts: pd.DataFrame, labels: Mapping[str, str], k: int = 5) -> str:
    """The section's prose: which corpora are scoped, what the cross-document setting measured,
    why it is gone, and how many questions no measure can score."""
    scoped = [key for key, corpus in state.corpora.items() if corpus.scope == DOCUMENT]
    if not scoped:
        return PROSE.fill("none")
    parts = [PROSE.fill("scoped", corpora="; ".join(labels.get(key, key) for key in scoped), across=SCOPE_WORDS[CORPUS])]
    for _, row in facts.iterrows():
        key = row["corpus"]
        most = int(row["most documents one text asks about"])
        said = dict(corpus=DATASETS.get(key, key), questions=numbers.count(int(row["questions"]), "question"),
                    texts=f"{int(row['distinct question texts']):,}", documents=f"{int(row['documents']):,}")
        if most > 1:  # a text asked of several documents: how many, and how many questions share one
            said.update(most=f"{most:,}", shared=f"{int(row['questions asked of several documents']):,}")
        parts.append(PROSE.fill("facts" if most > 1 else "facts_unique", **said))
        low, high = row[f"top {k} from another document, least"], row[f"top {k} from another document, largest"]
        if not np.isnan(low):
            parts.append(PROSE.fill("elsewhere", cells=f"{int(row['cells']):,}", k=k,
                                    low=numbers.number(low, 0, scale="percent"),
                                    high=numbers.number(high, 0, scale="percent")))
    parts.append(PROSE.fill("why"))
    dropped = state.counts[state.counts["no measure"] > 0]
    if dropped.empty:
        parts.append(PROSE.fill("none_dropped"))
    for _, row in dropped.iterrows():
        key = row["corpus"]
        parts.append(PROSE.fill("dropped", corpus=DATASETS.get(key, key), dropped=f"{int(row['no measure']):,}",
                                questions=f"{int(row['questions']):,}",
                                kept=f"{int(row['questions'] - row['no measure']):,}"))
    return "\n\n".join(parts)
