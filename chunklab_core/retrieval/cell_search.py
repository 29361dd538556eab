"""One cell's ranking through the run store: BM25 and dense searched (or replayed), hybrid fused.

Handles: :func:`search_cell`, the one place the posts' retrievals go through. BM25 and dense
cells are asked of the run store (``recorded_runs``: replayed, recorded or computed live by the
mode); a hybrid cell is fused from its two components exactly as ``hybrid.HybridRetriever``
fuses them (each component to ``max(HYBRID_DEPTH, depth)``, then ``hybrid.rrf_fuse`` to
``min(depth, n)``), so a fused replay equals a live hybrid search. Dense cells also carry the
model's truncation mask (which chunks exceed ``max_seq_length`` tokens).

Not handled: chunking, relevance, metrics (``evaluation.scoring``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from chunklab_core.retrieval.hybrid import rrf_fuse
from chunklab_core.retrieval.recorded_runs import Cell, RunStore, default_store
from chunklab_core.retrieval.registry import spec

HYBRID_DEPTH = 100  # HybridRetriever's default component depth


@dataclass
class CellResult:
    ids: np.ndarray  # (n_queries, <= depth) text indices, best first, -1 padding
    scores: np.ndarray  # the first columns' scores (all of them when computed live)
    truncated: np.ndarray | None  # per text, for dense and hybrid cells


def search_cell(corpus_label: str, strategy: str, retriever: str, texts: Sequence[str], queries: Sequence[str],
                depth: int, *, model: str | None = None, dense: Callable[[], object] | None = None,
                bm25: Callable[[], object] | None = None, store: RunStore | None = None,
                corpus_source: dict | None = None, strategy_options: dict | None = None) -> CellResult:
    """The top ``depth`` texts of every query for one cell.

    ``dense`` / ``bm25``: factories of the retrievers, called only when a ranking must be
    computed (a replay builds no model). ``model`` names the embedding model of dense and
    hybrid cells (its label, e.g. ``all-MiniLM-L6-v2``).
    """
    retriever_spec = spec(retriever)
    store = store if store is not None else default_store()
    if retriever_spec.needs_model and not model:
        raise ValueError(f"retriever {retriever!r} needs an embedding model name")
    texts, queries = list(texts), list(queries)

    def component(name: str, asked: int) -> CellResult:
        if name == "bm25":
            def compute(d: int):
                engine = bm25() if bm25 is not None else _default_bm25()
                engine.fit(texts)
                return engine.search(queries, d)

            ids, scores, _ = store.ranking(Cell(corpus_label, strategy, "bm25"), texts, queries, asked, compute,
                                           corpus_source=corpus_source, strategy_options=strategy_options)
            return CellResult(ids, scores, None)
        built: dict = {}

        def engine():
            if "engine" not in built:
                built["engine"] = dense() if dense is not None else _default_dense(model)
            return built["engine"]

        def compute(d: int):
            e = engine()
            e.fit(texts)
            return e.search(queries, d)

        def extra():
            return {"truncated": np.packbits(np.asarray(engine().truncated_mask(texts), dtype=bool))}

        ids, scores, arrays = store.ranking(Cell(corpus_label, strategy, "dense", model), texts, queries, asked,
                                            compute, corpus_source=corpus_source, strategy_options=strategy_options,
                                            model_identity=lambda: engine().identity, extra=extra)
        mask = np.unpackbits(arrays["truncated"], count=len(texts)).astype(bool) if "truncated" in arrays else None
        return CellResult(ids, scores, mask)

    if retriever_spec.stored:
        return component(retriever, depth)
    asked = max(HYBRID_DEPTH, int(depth))
    parts = [component(name, asked) for name in retriever_spec.fused_from]
    width = min(int(depth), len(texts))
    if len(queries) == 0:
        return CellResult(np.empty((0, width), np.int64), np.empty((0, width)), parts[-1].truncated)
    ids, scores = rrf_fuse([p.ids[:, :asked] for p in parts], k=width)
    truncated = next((p.truncated for p in parts if p.truncated is not None), None)
    return CellResult(ids, scores, truncated)


def _default_bm25():
    from chunklab_core.retrieval.bm25 import BM25Index

    return BM25Index()


def _default_dense(model: str):
    from chunklab_core.retrieval.dense import DenseRetriever

    return DenseRetriever(model)
