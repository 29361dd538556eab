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
from chunklab_core.retrieval.registry import RETRIEVERS, spec


def make_retriever(name: str, dense=None, **options):
    """A fresh retriever by name: ``bm25``, ``dense`` or ``hybrid`` (RRF of bm25 + dense).

    ``options`` go to the constructor of ``BM25Index`` (bm25) or ``DenseRetriever`` (dense, and
    the dense half of hybrid). ``dense``: an already built dense retriever to use instead of a new
    one (one model shared by many cells, its embeddings cached once): ``dense`` returns it and
    ``hybrid`` fuses a fresh BM25 with it; bm25 ignores it.
    """
    spec(name)  # an unknown name raises, listing the registry
    if dense is not None and options and name != "bm25":
        raise ValueError(f"give either a built dense retriever or options for a new one, not both: {sorted(options)}")
    from chunklab_core.retrieval.bm25 import BM25Index

    if name == "bm25":
        return BM25Index(**options)
    if dense is None:
        from chunklab_core.retrieval.dense import DenseRetriever

        dense = DenseRetriever(**options)
    if name == "dense":
        return dense
    from chunklab_core.retrieval.hybrid import HybridRetriever

    return HybridRetriever([BM25Index(), dense])


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
