"""BM25 (``retrieval.bm25.BM25Index``): the model-free baseline every other retriever is compared with."""

from chunklab_core.retrieval.registry import Retriever, RetrieverSpec, register_retriever


def build(**options) -> Retriever:
    from chunklab_core.retrieval.bm25 import BM25Index

    return BM25Index(**options)


SPEC = register_retriever(RetrieverSpec("bm25", "BM25", needs_model=False, factory=build, version=1))
