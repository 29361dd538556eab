"""One cell's ranking through the run store: stored retrievers searched (or replayed), fused ones fused.

Handles: :func:`search_cell`, the one place the posts' retrievals go through. Cells of stored
retrievers (BM25, dense, any registered one) are asked of the run store (``recorded_runs``:
replayed, recorded or computed live by the mode), each under its registered name; a fused cell
(hybrid) is fused from its registered parts (``fused_from``) by its spec's own ``fuse``, exactly
as its built retriever fuses them (each part to ``max(RECORD_DEPTH, depth)``, then ``fuse`` to
``min(depth, n)``), so a fused replay equals a live search. Cells
of a retriever that needs a model also carry the model's truncation mask (which chunks exceed
``max_seq_length`` tokens). A cell scoped to the question's document (``scope``, a
``retrieval.scope.DocumentScope``) is recorded under its scope, ranks each question's document
whole (``scope.scoped_search``) and fuses the scoped parts.

Not handled: chunking, relevance, metrics (``evaluation.scoring``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

import numpy as np

from chunklab_core.retrieval.recorded_runs import Cell, RunStore, default_store
from chunklab_core.retrieval.registry import RECORD_DEPTH, Retriever, RetrieverSpec, spec
from chunklab_core.retrieval.run import make_retriever
from chunklab_core.retrieval.scope import CORPUS, DOCUMENT, DocumentScope, scoped_search

@dataclass
class CellResult:
    ids: np.ndarray  # (n_queries, <= depth) text indices, best first, -1 padding
    scores: np.ndarray  # the first columns' scores (all of them when computed live)
    truncated: np.ndarray | None  # per text, for dense and hybrid cells


def search_cell(corpus_label: str, strategy: str, retriever: str | RetrieverSpec, texts: Sequence[str], queries: Sequence[str],
                depth: int, *, model: str | None = None,
                engines: Mapping[str, Callable[[], Retriever]] | None = None, store: RunStore | None = None,
                corpus_source: dict | None = None, strategy_options: dict | None = None,
                scope: DocumentScope | None = None) -> CellResult:
    """The top ``depth`` texts of every query for one cell.

    ``engines``: factories of stored retrievers by registered name, called only when a ranking
    must be computed (a replay builds no model); a stored retriever without one is built by
    ``run.make_retriever`` (with ``model=`` when it needs a model). ``model`` names the
    embedding model of the cells that need one (its label, e.g. ``all-MiniLM-L6-v2``). Every
    stored ranking is recorded under its retriever's registered name. ``scope``: rank each query
    within its own document (``None``: across the corpus); ``depth`` then grows to the largest
    document's text count, so a scoped cell holds every document's whole ranking.
    """
    retriever_spec = spec(retriever)  # a spec object passes through: resolved once, by the caller
    store = store if store is not None else default_store()
    if retriever_spec.needs_model and not model:
        raise ValueError(f"retriever {retriever_spec.name!r} needs an embedding model name")
    texts, queries = list(texts), list(queries)
    engines = engines or {}
    scope_name, scope_meta = (CORPUS, None) if scope is None else (DOCUMENT, scope.provenance())
    if scope is not None:
        depth = max(int(depth), scope.deepest())

    def component(part: RetrieverSpec, asked: int) -> CellResult:
        name = part.name
        built: dict = {}

        def engine():
            if "engine" not in built:
                factory = engines.get(name)
                built["engine"] = factory() if factory is not None else make_retriever(
                    part, **({"model": model} if part.needs_model else {}))
            return built["engine"]

        def compute(d: int):
            e = engine()
            e.fit(texts)
            if scope is not None:
                return scoped_search(lambda k: e.search(queries, k), len(texts), scope, d)
            return e.search(queries, d)

        if not part.needs_model:
            ids, scores, _ = store.ranking(Cell(corpus_label, strategy, name, scope=scope_name), texts, queries,
                                           asked, compute, corpus_source=corpus_source,
                                           strategy_options=strategy_options, scope=scope_meta, version=part.version)
            return CellResult(ids, scores, None)

        def extra():  # the model's truncation mask, when it has a length limit
            if not hasattr(engine(), "truncated_mask"):
                return {}
            return {"truncated": np.packbits(np.asarray(engine().truncated_mask(texts), dtype=bool))}

        ids, scores, arrays = store.ranking(Cell(corpus_label, strategy, name, model, scope_name), texts, queries,
                                            asked, compute, corpus_source=corpus_source,
                                            strategy_options=strategy_options,
                                            model_identity=lambda: getattr(engine(), "identity", None), extra=extra,
                                            scope=scope_meta, version=part.version)
        mask = np.unpackbits(arrays["truncated"], count=len(texts)).astype(bool) if "truncated" in arrays else None
        return CellResult(ids, scores, mask)

    if retriever_spec.stored:
        return component(retriever_spec, depth)
    asked = max(RECORD_DEPTH, int(depth))
    parts = [component(spec(name), asked) for name in retriever_spec.fused_from]
    width = min(int(depth), len(texts))
    if len(queries) == 0:
        return CellResult(np.empty((0, width), np.int64), np.empty((0, width)), parts[-1].truncated)
    ids, scores = retriever_spec.fuse([p.ids[:, :asked] for p in parts], width)
    truncated = next((p.truncated for p in parts if p.truncated is not None), None)
    return CellResult(ids, scores, truncated)

