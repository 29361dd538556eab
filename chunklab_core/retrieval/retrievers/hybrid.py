"""Hybrid: BM25 and dense fused by reciprocal-rank fusion (``retrieval.hybrid.rrf_fuse``, rrf_k = 60).

Its ``fuse`` is what ``cell_search`` applies to the parts' recorded rankings and what its built
retriever (``RetrieverSpec.build``) applies live, so a replay equals a live search.
"""

from chunklab_core.retrieval.hybrid import rrf_fuse
from chunklab_core.retrieval.registry import RetrieverSpec, register_retriever
from chunklab_core.retrieval.retrievers import bm25, dense  # noqa: F401  (its parts, registered first)


def fuse(rankings, k: int):
    """Reciprocal-rank fusion of the parts' rankings, top ``k`` (Cormack et al. 2009, rrf_k = 60)."""
    return rrf_fuse(rankings, k=k)


SPEC = register_retriever(RetrieverSpec("hybrid", "Hybrid (RRF)", needs_model=True, version=None,
                                        fused_from=(bm25.SPEC.name, dense.SPEC.name), fuse=fuse))
