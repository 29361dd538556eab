"""The retrieval run: which retriever, and what one (corpus, strategy, retriever) cell returned.

Handles: building a retriever by name (the one retriever factory, :func:`make_retriever`; every
stage that needs a retriever calls it), the ``RetrievalRun`` record every later stage reads
(chunks, unique returned contexts, the ranked context ids, and the relevance and token counts
that ``evaluation.scoring`` fills in), and collapsing ranked chunks into ranked *returned
contexts* (identical contexts, e.g. the shared parent of several children, are collapsed to
their best rank, as a parent-document retriever does).

Not handled: deciding relevance and computing metrics (``evaluation.scoring``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from chunklab_core.core.corpus import Chunk, Corpus
from chunklab_core.retrieval.hybrid import HybridRetriever
from chunklab_core.retrieval.registry import RECORD_DEPTH, RetrieverSpec, spec


def make_retriever(name: "str | RetrieverSpec", built: dict | None = None, **options):
    """A fresh retriever by registered name, built by its spec's factory (``registry``).

    ``options`` go to the factory of a stored retriever (``BM25Index`` for bm25,
    ``DenseRetriever`` for dense); a fused retriever (hybrid) passes them to its parts that need
    a model and builds the others with their defaults, and fuses them with its spec's ``fuse``. ``built``: already built retrievers by
    name (one model shared by many cells, its embeddings cached once), used instead of new
    ones: ``built={"dense": d}`` makes ``dense`` return ``d`` and ``hybrid`` fuse a fresh BM25
    with it. An unknown name is a ``ValueError`` listing the registered ones.
    """
    wanted = spec(name)
    built = built or {}
    if wanted.stored:
        if wanted.name in built:
            if options:
                raise ValueError(f"give either a built {wanted.name} retriever or options for a new one, not both: "
                                 f"{sorted(options)}")
            return built[wanted.name]
        return wanted.factory(**options)
    parts = [make_retriever(part, built, **(options if spec(part).needs_model else {})) for part in wanted.fused_from]
    return HybridRetriever(parts, depth=RECORD_DEPTH, fuse=wanted.fuse)  # searched as cell_search fuses it


class LazyDense:
    """A dense retriever built on first use by ``build()`` (a replay never builds one).

    ``label`` (the model's name) is known at once; every other attribute builds the retriever.
    """

    def __init__(self, build, label: str) -> None:
        self._build, self.label = build, label

    def __getattr__(self, name):
        return getattr(self._build(), name)


@dataclass
class RetrievalRun:
    """Everything one (corpus, strategy, retriever) cell produced, kept for inspection."""

    corpus: Corpus
    strategy: str
    retriever: str
    chunks: list[Chunk]
    contexts: list[tuple[str, int, int]]  # unique returned contexts (doc_id, start, end)
    ranked: np.ndarray  # (n_questions, k_max) indices into ``contexts``, -1 = nothing
    relevant: list[np.ndarray] = field(repr=False, default_factory=list)  # per question
    chunk_tokens: np.ndarray = field(repr=False, default=None)
    context_tokens: np.ndarray = field(repr=False, default=None)
    model: str | None = None  # the embedding model of a dense or hybrid cell
    ranked_deep: np.ndarray = field(repr=False, default=None)  # every context of the recorded depth
    truncated: np.ndarray = field(repr=False, default=None)  # per chunk: cut by the dense model's length limit
    # per question: the contexts its retrieval scope holds (``retrieval.scope``; None: every context)
    scope_contexts: np.ndarray = field(repr=False, default=None)

    def context_text(self, index: int) -> str:
        doc_id, start, end = self.contexts[index]
        return self.corpus.doc(doc_id).text[start:end]


def collapse_to_contexts(chunk_ids: np.ndarray, chunk_context: np.ndarray, k_max: int) -> np.ndarray:
    """Ranked chunk ids -> ranked unique context ids (first occurrence wins), padded with -1."""
    out = np.full((chunk_ids.shape[0], k_max), -1, dtype=np.int64)
    for row, ids in enumerate(chunk_ids):
        ctx = chunk_context[ids[ids >= 0]]
        _, first = np.unique(ctx, return_index=True)
        ordered = ctx[np.sort(first)][:k_max]
        out[row, : len(ordered)] = ordered
    return out
