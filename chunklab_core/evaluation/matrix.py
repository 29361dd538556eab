"""Post 02: the strategy x retriever (x embedding model) matrix on several corpora.

Handles: chunking each corpus once per strategy,
running BM25, dense and hybrid (RRF) retrieval over the same chunks with one shared dense
model per embedding model (so every distinct text is embedded once, through the on-disk
cache), and scoring every question with every measure the registry says the matrix scores
(``measures.matrix_functions``: the slot metrics, fuzzy gold and pooled graded nDCG, and, where
the data has character offsets, the span metrics; a measure registered later too). Output: one tidy
per-question table with columns corpus, model, strategy, retriever, qid, metric columns.

Not handled: the metric formulas (``slot_metrics``, ``span_metrics``, ``budget``), the
statistics (``stats``), the chunkers (``chunking``), the retrievers (``bm25``, ``dense``,
``hybrid``).
"""

from __future__ import annotations

import hashlib
import os
import sys
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
import pandas as pd

from chunklab_core.chunking import STRATEGIES, StrategySpec, chunk_corpus, strategy_label
from chunklab_core.core.corpus import Chunk, Corpus
from chunklab_core.data.corpora import CORPUS_LABELS
from chunklab_core.evaluation.scoring import run_cell
from chunklab_core.evaluation.measures import KS, matrix_functions, metric_columns, parse
from chunklab_core.retrieval.recorded_runs import Cell, corpus_sample_label, default_store
from chunklab_core.retrieval.registry import EMBEDDER, RetrieverSpec, model_column, registered, spec
from chunklab_core.retrieval.run import LazyDense, RetrievalRun, make_retriever


def corpus_table(corpora: dict[str, Corpus]) -> pd.DataFrame:
    """Documents, questions, characters and what the gold looks like, per corpus."""
    rows = []
    for name, corpus in corpora.items():
        questions = corpus.questions
        rows.append({
            "corpus": CORPUS_LABELS.get(name, name),
            "documents": len(corpus.documents),
            "questions": len(questions),
            "characters": corpus.n_chars,
            "with gold snippets": sum(1 for q in questions if q.gold_slots),
            "multi-slot": sum(1 for q in questions if len(q.gold_slots) > 1),
            "with character offsets": sum(1 for q in questions if q.evidence_spans),
            "question source": ", ".join(sorted({q.source for q in questions if q.source})) or "—",
        })
    return pd.DataFrame(rows)


@dataclass
class MatrixResult:
    """Per-question scores of every cell, and the runs (for examples and budgets)."""

    per_question: pd.DataFrame
    runs: dict[tuple[str, str, str, str], RetrievalRun] = field(repr=False)
    chunks: dict[tuple[str, str], list] = field(repr=False)
    truncated: pd.DataFrame = field(default=None)


def run_matrix(corpora: dict[str, Corpus], strategies: Sequence[str | StrategySpec],
               retrievers: Sequence[str | RetrieverSpec] | None = None,
               models: Sequence[str] = ("all-MiniLM-L6-v2",), model_corpora: dict[str, Sequence[str]] | None = None,
               ks: Sequence[int] = KS, threshold: float = 0.90, progress: bool = True,
               model_strategies: dict[str, Sequence[str]] | None = None, backend: str = "torch",
               store=None, processes: int = 1, device: str | None = None,
               chunk_options: dict[str, dict] | None = None) -> MatrixResult:
    """Score every (corpus, model, strategy, retriever) cell.

    ``model_corpora`` / ``model_strategies`` restrict a model to some corpora / strategies
    (e.g. the slower second model on SQuAD and four strategies only); BM25 does not depend on the model and is run once per (corpus, strategy), under
    the first model's name. Strategies that need embeddings (semantic_embedding,
    semantic_no_floor) chunk with the first model. ``backend``: "torch" or "onnx" (``dense``).
    Rankings and model-cut chunks go through the run store (``retrieval.recorded_runs``; by
    ``CHUNKLAB_RUNS``: replayed, recorded or live), so a replay loads no model; a dense model is
    built only when something must be encoded (``processes``/``device`` as ``DenseRetriever``).
    ``chunk_options``: per strategy, options its chunker needs that are not data (the recorded
    model's ``complete`` of ``llm_semantic``); a strategy that needs one and lacks it fails.
    ``strategies`` / ``retrievers``: registered names or their specs (default every registered
    retriever), resolved once here: below, the specs are passed on (the retrievers' to ``run_cell``,
    ``cell_search``; the strategies' to ``chunk_corpus``, which cuts every document with the spec);
    the strategies' names key the chunks, the run store and the judgments. The
    embedding model is built once per model and injected into every retriever that needs one
    (the registry's ``EMBEDDER``).
    """
    from tqdm import tqdm

    from chunklab_core.evaluation.slot_metrics import pool_judgments

    found = [s if isinstance(s, StrategySpec) else STRATEGIES.get(s) for s in strategies]  # each name looked up once
    unknown = [s for s, f in zip(strategies, found) if f is None]
    if unknown:
        raise ValueError(f"unknown strategies {unknown}; known: {sorted(STRATEGIES)}")
    strategy_specs = found
    strategies = [s.name for s in strategy_specs]
    stray = sorted(set(chunk_options or {}) - set(strategies))
    if stray:
        raise ValueError(f"chunk_options name strategies that are not run: {stray}")
    retrievers = registered() if retrievers is None else retrievers
    bad = [r for r in retrievers if not isinstance(r, RetrieverSpec) and r not in registered()]
    if bad:
        raise ValueError(f"unknown retrievers {bad}; known: {', '.join(registered())}")
    retrievers = [spec(r) for r in retrievers]  # resolved once: the specs travel below
    if not corpora or not strategies or not retrievers or not models:
        raise ValueError("corpora, strategies, retrievers and models must all be non-empty")
    k_max = max(ks)
    if not progress and "transformers" in sys.modules:  # else DenseRetriever.model disables them when it loads
        from transformers.utils import logging as transformers_logging

        transformers_logging.disable_progress_bar()
    store = store if store is not None else default_store()
    bar = progress or store.mode == "record"  # `make runs` shows the cells' bar and ETA
    built: dict[str, object] = {}

    def dense_model(model: str):
        if model not in built:
            built[model] = make_retriever(EMBEDDER, model=model, backend=backend, show_progress=progress,
                                          processes=processes, device=device or os.environ.get("CHUNKLAB_DEVICE", "cpu"))
        return built[model]

    functions = matrix_functions()
    first_model = models[0]
    runs: dict[tuple[str, str, str, str], RetrievalRun] = {}
    chunk_sets: dict[tuple[str, str], list] = {}
    frames, truncation = [], []
    counted: set[tuple[str, str, str]] = set()
    cells = [(c, s) for c in corpora for s in strategy_specs]
    for corpus_name, strategy_spec in tqdm(cells, desc="corpus x strategy", disable=not bar):
        corpus, strategy = corpora[corpus_name], strategy_spec.name
        chunks = _chunks(corpus, strategy_spec, first_model, dense_model, store, (chunk_options or {}).get(strategy))
        chunk_sets[(corpus_name, strategy)] = chunks
        cell_runs = []
        for model in models:
            if model_corpora and model in model_corpora and corpus_name not in model_corpora[model]:
                continue
            if model_strategies and model in model_strategies and strategy not in model_strategies[model]:
                continue
            for retriever in retrievers:
                if not retriever.needs_model and model != first_model:
                    continue
                run = run_cell(corpus, strategy, retriever, k_max=k_max, chunks=chunks,
                               model=model if retriever.needs_model else None,
                               built={EMBEDDER: LazyDense(lambda m=model: dense_model(m), model)}, store=store)
                runs[(corpus_name, model, strategy, retriever.name)] = run
                cell_runs.append((model, retriever, run))
                if retriever.needs_model and run.truncated is not None and (corpus_name, model, strategy) not in counted:
                    counted.add((corpus_name, model, strategy))  # one row per (corpus, model, strategy)
                    mask = run.truncated
                    truncation.append({"corpus": corpus_name, "model": model, "strategy": strategy,
                                       "chunks": len(chunks), "truncated": int(mask.sum()),
                                       "share truncated": float(mask.mean()) if len(chunks) else 0.0})
        pool = pool_judgments([run for _, _, run in cell_runs], threshold=threshold)
        for model, retriever, run in cell_runs:
            scored = None  # the first function's table (the slot metrics, with the id columns), then the others' columns
            for compute, names in functions:  # every measure the registry says the matrix scores
                extra = compute(run, ks, threshold=threshold, pool_grades=pool)
                if scored is None:
                    scored = extra
                    continue
                extra_cols = [c for c in metric_columns(extra.columns) if parse(c)[0] in names]
                scored = pd.concat([scored.reset_index(drop=True), extra[extra_cols].reset_index(drop=True)], axis=1)
            scored.insert(1, "model", model_column(retriever, model))
            scored["corpus"] = corpus_name
            frames.append(scored)
    per_question = pd.concat(frames, ignore_index=True)
    return MatrixResult(per_question, runs, chunk_sets, pd.DataFrame(truncation))


def needs_embedding(strategy: str | StrategySpec) -> bool:
    """True for a strategy that cuts with an embedding model (its chunks are recorded)."""
    found = strategy if isinstance(strategy, StrategySpec) else STRATEGIES[strategy]
    return found.needs_embedding  # declared by its spec (variants inherit it)


def _chunks(corpus: Corpus, strategy_spec: StrategySpec, model: str, dense_model, store,
            options: dict | None = None) -> list:
    strategy = strategy_spec.name  # the run store's key; the spec cuts
    if not strategy_spec.needs_embedding:
        return chunk_corpus(corpus.documents, strategy_spec, **(options or {}))
    index = {doc.doc_id: i for i, doc in enumerate(corpus.documents)}

    def cut():
        chunks = chunk_corpus(corpus.documents, strategy_spec, embed=dense_model(model).embed)
        return np.array([(index[c.doc_id], c.start, c.end, c.ctx_start, c.ctx_end) for c in chunks],
                        dtype=np.int64).reshape(-1, 5)

    spans = store.chunk_spans(Cell(corpus_sample_label(corpus), strategy, EMBEDDER, model),
                              documents_sha256(corpus.documents), cut, corpus_source=corpus.source,
                              model_identity=lambda: dense_model(model).identity)
    return [Chunk(i, corpus.documents[d].doc_id, int(a), int(b), int(c), int(e))
            for i, (d, a, b, c, e) in enumerate(spans.tolist())]


def documents_sha256(documents) -> str:
    """sha256 over every document's id and text, in order."""
    digest = hashlib.sha256()
    for doc in documents:
        digest.update(f"{doc.doc_id}\x00".encode("utf-8"))
        digest.update(hashlib.sha256(doc.text.encode("utf-8")).digest())
    return digest.hexdigest()


def cell_summary(per_question: pd.DataFrame, metrics: Sequence[str]) -> pd.DataFrame:
    """Mean of each metric per (corpus, model, strategy, retriever), NaN-aware, with the question count."""
    keys = ["corpus", "model", "strategy", "retriever"]
    grouped = per_question.groupby(keys, sort=False)
    table = grouped[list(metrics)].mean().reset_index()
    table.insert(4, "questions", grouped.size().values)
    table.insert(3, "label", [strategy_label(s) for s in table["strategy"]])
    return table
