"""Dense retrieval (``retrieval.dense.DenseRetriever``): cosine over an embedding model's vectors.

Its ``model=`` option names the model; ``run_matrix`` injects one shared built retriever per model.
"""

from chunklab_core.retrieval.registry import Retriever, RetrieverSpec, register_retriever


def build(**options) -> Retriever:
    from chunklab_core.retrieval.dense import DenseRetriever

    return DenseRetriever(**options)


SPEC = register_retriever(RetrieverSpec("dense", "Dense", needs_model=True, factory=build, version=1))
