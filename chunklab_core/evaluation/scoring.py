"""The retrieval experiment: corpus x strategy x retriever -> one tidy per-question table.

Handles: chunking a corpus, fitting a retriever on the indexed spans, searching every
question (the ranked contexts of ``retrieval.run``), judging relevance, and computing every per-question metric
(``evaluation.ranking_metrics``) and token count (``tokens``). Output columns: corpus, strategy, retriever,
qid, doc_id, n_relevant, first_rank, hit@k, p@k, rr@k_max, ndcg@k_max, tokens@k (names from
``measures``; k_max is the largest k, 10 by default).

Relevance here is the post-01 rule: a returned context is relevant when, after lower-casing
and collapsing whitespace (``text.normalize``), it contains any alternative of the
question's gold slot (questions with several slots, or none, get no relevant context here;
post 02 scores them with ``slot_metrics``). It is decided for *every* context of the collection (so nDCG's
ideal ranking knows every relevant context), by searching each gold alternative once in a
single string holding all normalised contexts — exact, and fast enough for 800 questions x
thousands of contexts.

Not handled: fuzzy gold and multi-slot recall (post 02, ``textmatch``), intervals (``stats``).
"""

from __future__ import annotations

from collections import abc
from typing import Callable, Sequence

import numpy as np
import pandas as pd

from chunklab_core.evaluation import ranking_metrics as metrics
from chunklab_core.evaluation.measures import KS, column, metric_columns
from chunklab_core.chunking import chunk_corpus
from chunklab_core.core.corpus import Chunk, Corpus
from chunklab_core.core.text import normalize
from chunklab_core.retrieval.cell_search import search_cell
from chunklab_core.retrieval.recorded_runs import RECORD_DEPTH, corpus_sample_label
from chunklab_core.retrieval.registry import BASELINE, RetrieverSpec, spec
from chunklab_core.retrieval.run import RetrievalRun, collapse_to_contexts, make_retriever
from chunklab_core.retrieval.scope import CORPUS, DOCUMENT, DocumentScope, check_scope, scoped_search
from chunklab_core.core.tokens import count_tokens_many

SEPARATOR = "\x00"
DEFAULT_MODEL = "all-MiniLM-L6-v2"


class ContextGoldIndex:
    """Which contexts contain a gold string, after normalisation, by one search per string."""

    def __init__(self, context_texts: Sequence[str]):
        normalised = [normalize(t) for t in context_texts]
        self._haystack = SEPARATOR.join(normalised)
        lengths = np.fromiter((len(t) + 1 for t in normalised), dtype=np.int64, count=len(normalised))
        self._starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]) if len(normalised) else np.zeros(0, np.int64)

    def containing(self, alternatives: Sequence[str]) -> np.ndarray:
        """Sorted unique indices of contexts containing any alternative."""
        hits: list[int] = []
        for alt in alternatives:
            needle = normalize(alt)
            if not needle:
                continue
            pos = self._haystack.find(needle)
            while pos != -1:
                hits.append(pos)
                pos = self._haystack.find(needle, pos + 1)
        if not hits:
            return np.zeros(0, dtype=np.int64)
        return np.unique(np.searchsorted(self._starts, np.asarray(hits), side="right") - 1)


_RELEVANT: dict[tuple, list[np.ndarray]] = {}


def relevant_contexts(context_texts: Sequence[str], questions) -> list[np.ndarray]:
    """Per question, the contexts holding its one gold slot (``ContextGoldIndex``; none for
    other questions), computed once per process for the same context texts and gold: every
    retriever of a (corpus, strategy) cell has the same contexts. Returns fresh arrays."""
    import hashlib

    from chunklab_core.core.tokens import text_digest

    digest = hashlib.sha256(b"".join(text_digest(t) for t in context_texts)).digest()
    key = (digest, tuple(q.gold_slots for q in questions))
    found = _RELEVANT.get(key)
    if found is None:
        gold_index = ContextGoldIndex(context_texts)
        found = _RELEVANT[key] = [
            gold_index.containing(q.gold_slots[0]) if len(q.gold_slots) == 1 else np.zeros(0, np.int64)
            for q in questions
        ]
    return [array.copy() for array in found]


class LazyRelevance(abc.Sequence):
    """``relevant_contexts(context_texts, questions)``, computed on first read: the per-question
    post-01 relevance of a run, which the slot-metric posts (02, 08) never read."""

    def __init__(self, context_texts: Sequence[str], questions) -> None:
        self._args: tuple | None = (context_texts, questions)
        self._found: list[np.ndarray] | None = None

    def _value(self) -> list[np.ndarray]:
        if self._found is None:
            self._found = relevant_contexts(*self._args)
            self._args = None
        return self._found

    def __getitem__(self, index):
        return self._value()[index]

    def __len__(self) -> int:
        return len(self._value())

    def __iter__(self):
        return iter(self._value())

    def __repr__(self) -> str:
        return repr(self._value())


def run_cell(
    corpus: Corpus,
    strategy: str,
    retriever: str | RetrieverSpec = BASELINE,
    k_max: int = 10,
    retriever_options: dict | None = None,
    strategy_options: dict | None = None,
    chunks: list[Chunk] | None = None,
    engine=None,
    *,
    model: str | None = None,
    built: dict | None = None,
    store=None,
    deep: int = RECORD_DEPTH,
) -> RetrievalRun:
    """Chunk, index, search and judge one cell.

    Retrieval goes through the run store (``retrieval.cell_search.search_cell``): replayed,
    recorded or computed live by ``CHUNKLAB_RUNS``. ``model``: the embedding model of a cell
    whose retriever needs one (default the ``label`` of a built retriever, else
    all-MiniLM-L6-v2); ``built``: already built retrievers by registered name, shared between
    cells (used only when a ranking must be computed). ``retriever_options`` go to the
    retriever's factory (to the parts that need a model, for a fused one; ``run.make_retriever``).
    ``deep``: chunks ranked per question beyond the ``k_max`` contexts, kept in
    ``RetrievalRun.ranked_deep`` for token budgets (default the recorded depth, 100).
    A corpus whose questions name their document (``corpus.scope == "document"``,
    ``retrieval.scope``) is searched within each question's document, to its whole length.
    ``engine``: any object with ``fit``/``search`` to use instead (computed live, never
    recorded: for retrievers outside the registry); ``retriever`` is then only its name.
    ``retriever``: a registered name, or its spec (``run_matrix`` resolves names once and passes specs).
    """
    name = retriever.name if isinstance(retriever, RetrieverSpec) else retriever
    if k_max < 1:
        raise ValueError(f"k must be >= 1, got {k_max}")
    if not corpus.questions:
        raise ValueError(f"corpus {corpus.name!r} has no questions to evaluate")
    chunks = chunks if chunks is not None else chunk_corpus(corpus.documents, strategy, **(strategy_options or {}))
    if not chunks:
        raise ValueError(f"strategy {strategy!r} produced no chunks for corpus {corpus.name!r}")
    texts = [corpus.doc(c.doc_id).text[c.start : c.end] for c in chunks]
    context_keys = [(c.doc_id, c.ctx_start, c.ctx_end) for c in chunks]
    unique_contexts = list(dict.fromkeys(context_keys))
    context_position = {key: i for i, key in enumerate(unique_contexts)}
    chunk_context = np.array([context_position[key] for key in context_keys], dtype=np.int64)
    per_context = np.bincount(chunk_context).max()
    depth = int(min(len(chunks), k_max * per_context))
    scope = DocumentScope.of(corpus, chunks) if check_scope(getattr(corpus, "scope", CORPUS)) == DOCUMENT else None
    if scope is not None:  # the whole ranking of each question's document: every token budget fills
        deep = max(deep, scope.deepest())
    deep = int(min(len(chunks), max(depth, deep)))
    queries = [q.text for q in corpus.questions]

    truncated = None
    if engine is not None:
        engine.fit(texts)
        ids, _ = (engine.search(queries, deep) if scope is None else
                  scoped_search(lambda k: engine.search(queries, k), len(texts), scope, deep))
        model = model or getattr(engine, "label", None)
    else:
        built = built or {}
        retriever = spec(retriever)
        if retriever.needs_model:
            labels = (getattr(b, "label", None) for b in built.values())
            model = model or next((label for label in labels if label), None) or DEFAULT_MODEL
        else:
            model = None
        engines = _engines(retriever, model, built, retriever_options or {})
        result = search_cell(corpus_sample_label(corpus), strategy, retriever, texts, queries, deep, model=model,
                             engines=engines, store=store,
                             corpus_source=getattr(corpus, "source", None), strategy_options=strategy_options,
                             scope=scope)
        ids, truncated = result.ids, result.truncated
    ids = np.asarray(ids)
    ranked = collapse_to_contexts(ids[:, :depth], chunk_context, k_max)
    ranked_deep = collapse_to_contexts(ids, chunk_context, max(deep, 1))
    if ranked_deep.size:  # drop the columns no question reaches
        ranked_deep = ranked_deep[:, : max(int((ranked_deep >= 0).sum(axis=1).max()), 1)]

    context_texts = [corpus.doc(d).text[s:e] for d, s, e in unique_contexts]
    scope_contexts = None
    if scope is not None:  # per question, the contexts of its document: all a scoped ranking can return
        per_document = pd.Series([d for d, _, _ in unique_contexts]).value_counts()
        scope_contexts = np.array([int(per_document.get(q.doc_id, 0)) for q in corpus.questions], np.int64)
    relevant = LazyRelevance(context_texts, corpus.questions)
    from chunklab_core.evaluation.judgment_store import default_store as stored_judgments

    counts = stored_judgments().token_counts(corpus, strategy, texts, context_texts)
    chunk_tokens, context_tokens = counts if counts is not None else (count_tokens_many(texts),
                                                                      count_tokens_many(context_texts))
    return RetrievalRun(
        corpus=corpus,
        strategy=strategy,
        retriever=name,
        chunks=chunks,
        contexts=unique_contexts,
        ranked=ranked,
        relevant=relevant,
        chunk_tokens=chunk_tokens,
        context_tokens=context_tokens,
        model=model,
        ranked_deep=ranked_deep,
        truncated=truncated,
        scope_contexts=scope_contexts,
    )


def _engines(retriever: RetrieverSpec, model: str | None, built: dict, options: dict) -> dict:
    """Factories of the stored retrievers a cell searches: the built ones, or new ones with options.

    A stored retriever gets ``options``; a fused one passes them to its parts that need a model
    (as ``run.make_retriever``). A part neither built nor given options is left to the default.
    """
    wanted = retriever
    engines = {}
    for part in (wanted,) if wanted.stored else [spec(name) for name in wanted.fused_from]:
        part_options = options if wanted.stored or part.needs_model else {}
        if part.name in built:
            engines[part.name] = lambda b=built[part.name]: b
        elif part_options:
            extra = {"model": model} if part.needs_model else {}
            engines[part.name] = lambda p=part, o={**extra, **part_options}: make_retriever(p, **o)
    return engines


def score_run(run: RetrievalRun, ks: Sequence[int] = KS) -> pd.DataFrame:
    """Per-question metrics of one cell as a tidy DataFrame."""
    k_max = run.ranked.shape[1]
    if max(ks) > k_max:
        raise ValueError(f"k={max(ks)} exceeds the retrieved depth {k_max}")
    rel = np.zeros(run.ranked.shape, dtype=float)
    tokens = np.zeros(run.ranked.shape, dtype=float)
    for row, (ranked, relevant) in enumerate(zip(run.ranked, run.relevant)):
        valid = ranked >= 0
        rel[row, valid] = np.isin(ranked[valid], relevant)
        tokens[row, valid] = run.context_tokens[ranked[valid]]
    n_relevant = np.array([len(r) for r in run.relevant])
    first = np.where(rel.any(axis=1), rel.argmax(axis=1) + 1, np.nan)
    frame = {
        "corpus": run.corpus.name,
        "strategy": run.strategy,
        "retriever": run.retriever,
        "qid": [q.qid for q in run.corpus.questions],
        "doc_id": [q.doc_id for q in run.corpus.questions],
        "n_relevant": n_relevant,
        "first_rank": first,
    }
    for k in ks:
        frame[column("hit", k)] = metrics.hit_at_k(rel, k)
    for k in ks:
        frame[column("p", k)] = metrics.precision_at_k(rel, k)
    frame[column("rr", k_max)] = metrics.reciprocal_rank_at_k(rel, k_max)
    frame[column("ndcg", k_max)] = metrics.ndcg_at_k(rel, k_max, metrics.binary_ideal_gains(n_relevant, k_max))
    for k in ks:
        frame[column("tokens", k)] = metrics.tokens_at_k(tokens, k)
    return pd.DataFrame(frame)


def evaluate(
    corpus: Corpus,
    strategies: Sequence[str],
    retriever: str = BASELINE,
    ks: Sequence[int] = KS,
    progress: bool = True,
    on_run: Callable[[RetrievalRun], None] | None = None,
) -> pd.DataFrame:
    """Run every strategy under one retriever; per-question metrics stacked in one table."""
    if not strategies:
        raise ValueError("no strategies given")
    if any(k < 1 for k in ks):
        raise ValueError(f"every k must be >= 1, got {list(ks)}")
    from tqdm import tqdm

    frames = []
    for strategy in tqdm(strategies, desc=f"{corpus.name} / {retriever}", disable=not progress):
        run = run_cell(corpus, strategy, retriever, k_max=max(ks))
        if on_run is not None:
            on_run(run)
        frames.append(score_run(run, ks))
    return pd.concat(frames, ignore_index=True)


def chunk_statistics(run: RetrievalRun) -> dict:
    """Size statistics of one cell's chunks (indexed spans) and returned contexts."""
    return {
        "strategy": run.strategy,
        "chunks": len(run.chunks),
        "mean_chunk_tokens": float(np.mean(run.chunk_tokens)),
        "median_chunk_tokens": float(np.median(run.chunk_tokens)),
        "mean_context_tokens": float(np.mean(run.context_tokens)),
        "mean_chunk_chars": float(np.mean([c.end - c.start for c in run.chunks])),
    }


def summarize(per_question: pd.DataFrame, ks: Sequence[int] = KS, target: float = 0.90) -> pd.DataFrame:
    """Mean of every metric per (corpus, strategy, retriever), plus the context cost.

    Means skip unmeasured (NaN) values, so ``questions`` counts the questions whose
    ``hit@k`` (smallest k) was measured -- a slot-metric table leaves questions without gold
    unmeasured -- and ``unmeasured`` counts the rest, so no question disappears silently.
    """
    metric_cols = metric_columns(per_question.columns)
    keys = ["corpus", "strategy", "retriever"]
    grouped = per_question.groupby(keys, sort=False)
    table = grouped[metric_cols].mean().reset_index()
    measured = grouped[column("hit", min(ks))].count().values
    table.insert(len(keys), "questions", measured)
    table.insert(len(keys) + 1, "unmeasured", grouped.size().values - measured)
    costs = []
    for _, row in table.iterrows():
        k, tokens = metrics.context_cost({k: row[column("hit", k)] for k in ks},
                                        {k: row[column("tokens", k)] for k in ks}, target)
        costs.append((k, tokens))
    table["cost_k"] = [c[0] for c in costs]
    table["context_cost_tokens"] = [c[1] for c in costs]
    return table
