"""A fused retriever with its own fusion, dropped into ``retrieval/retrievers/``: the TF-IDF ranking
with BM25's candidates appended after it (no RRF), so a test can tell its fuse from RRF's."""

import numpy as np

from chunklab_core.retrieval.registry import RetrieverSpec, register_retriever
from chunklab_core.retrieval.retrievers import bm25, tfidf  # its parts, registered first


def tfidf_then_bm25(rankings, k):
    """Per query: the TF-IDF ids in order, then BM25's not yet listed; the top ``k``, -1 padded."""
    first, second = rankings[1], rankings[0]
    ids = np.full((first.shape[0], k), -1, dtype=np.int64)
    for row in range(first.shape[0]):
        merged = list(dict.fromkeys(int(i) for i in (*first[row], *second[row]) if i >= 0))[:k]
        ids[row, :len(merged)] = merged
    return ids, np.where(ids >= 0, 1.0 / (1.0 + np.arange(k)), 0.0)


SPEC = register_retriever(RetrieverSpec("bm25_tfidf_first", "TF-IDF, then BM25", needs_model=False, version=None,
                                        fused_from=(bm25.SPEC.name, tfidf.SPEC.name), fuse=tfidf_then_bm25))
