"""An adapter for one real vector database, chromadb (embedded, no server): "your pipeline".

Handles: :class:`ChromaIndex` builds an in-memory chromadb collection (``chromadb.EphemeralClient``,
telemetry off, cosine space, your HNSW settings) from chunk ids and their vectors, and
:meth:`ChromaIndex.search` returns each query's top-k ids, best first, as chromadb ranks them.
:func:`evaluate_index` feeds them to the stage evaluators beside an exact search over the same
vectors (``embedding.exact_top_k``): ``ann_recall@k`` (chromadb's HNSW against exact search),
``index_coverage`` (ids chromadb holds), and the retrieval metrics of chromadb's lists.

HNSW graphs are built with random levels and, for batches, several threads, so chromadb's lists
(and hence ``ann_recall@k``) may differ between builds; the evaluators themselves are
deterministic on given lists. chromadb is an optional dependency (``pip install
chunklab_core[vectordb]``); importing this module without it raises an ImportError naming it.

Not handled: a chromadb server (``HttpClient``), persistence, metadata filters, other databases.
"""

from __future__ import annotations

from typing import Collection, Sequence

import numpy as np

from chunklab_core.evaluators.common import StageResult
from chunklab_core.evaluators.embedding import evaluate_embedding
from chunklab_core.evaluators.retrieval import evaluate_retrieval

try:
    import chromadb
    from chromadb.config import Settings
except ImportError as err:  # pragma: no cover - exercised only without the extra
    raise ImportError("evaluators.vector_db needs chromadb: pip install 'chunklab_core[vectordb]'") from err

BATCH = 5_000


class ChromaIndex:
    """One chromadb collection over ``ids`` and ``vectors`` (rows aligned)."""

    def __init__(self, ids: Sequence[str], vectors: np.ndarray, name: str = "chunklab-chunks",
                 ef_construction: int = 100, ef_search: int = 10, max_neighbors: int = 16):
        vectors = np.asarray(vectors, dtype=np.float32)
        if vectors.ndim != 2 or len(ids) != vectors.shape[0]:
            raise ValueError(f"need one vector row per id: {len(ids)} ids, vectors of shape {vectors.shape}")
        if len(set(ids)) != len(ids):
            raise ValueError("chunk ids must be unique")
        self.client = chromadb.EphemeralClient(settings=Settings(anonymized_telemetry=False, allow_reset=True))
        self.collection = self.client.create_collection(
            name, embedding_function=None,
            configuration={"hnsw": {"space": "cosine", "ef_construction": ef_construction,
                                    "ef_search": ef_search, "max_neighbors": max_neighbors}})
        for start in range(0, len(ids), BATCH):
            self.collection.add(ids=[str(i) for i in ids[start:start + BATCH]], embeddings=vectors[start:start + BATCH])

    def indexed_ids(self) -> list[str]:
        """Every id the collection holds (read back from chromadb, not from what was sent)."""
        return list(self.collection.get(include=[])["ids"])

    def search(self, queries: np.ndarray, k: int) -> list[list[str]]:
        """Top-k ids per query row, best first."""
        queries = np.asarray(queries, dtype=np.float32)
        result = self.collection.query(query_embeddings=queries, n_results=int(k), include=["distances"])
        return [list(ids) for ids in result["ids"]]

    def close(self) -> None:
        self.client.reset()


def evaluate_index(index: ChromaIndex, qids: Sequence[str], chunk_ids: Sequence[str], chunk_vectors: np.ndarray,
                   query_vectors: np.ndarray, gold_ids: Sequence[Collection[str] | None] | None = None,
                   k: int = 10) -> tuple[StageResult, StageResult]:
    """(embedding & index stage, retrieval stage) of chromadb's answers to ``query_vectors``."""
    ann = index.search(query_vectors, k)
    embedding = evaluate_embedding(qids, chunk_ids=list(chunk_ids), chunk_vectors=chunk_vectors,
                                   query_vectors=query_vectors, gold_ids=gold_ids,
                                   indexed_ids=index.indexed_ids(), ann_ids=ann, k=k)
    retrieval = evaluate_retrieval(qids, retrieved_ids=ann, gold_ids=gold_ids,
                                   ks=sorted({1, min(5, k), k}))
    return embedding, retrieval
