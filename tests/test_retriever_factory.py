"""The one retriever factory (``retrieval.run.make_retriever``) and the stages that call it."""

from __future__ import annotations

import pytest

from chunklab_core.retrieval.bm25 import BM25Index
from chunklab_core.retrieval.hybrid import HybridRetriever
from chunklab_core.retrieval.registry import registered
from chunklab_core.retrieval.run import make_retriever


class FakeDense:
    """Stands in for a built DenseRetriever (no model is loaded)."""

    def fit(self, texts):
        return self

    def search(self, queries, k):  # pragma: no cover - never searched here
        raise AssertionError("not searched")


def test_bm25_is_fresh_with_its_options():
    a, b = make_retriever("bm25"), make_retriever("bm25", k1=1.2, b=0.5)
    assert isinstance(a, BM25Index) and isinstance(b, BM25Index) and a is not b
    assert make_retriever("bm25", built={"dense": FakeDense()}).__class__ is BM25Index  # a shared dense model is ignored


def test_a_built_dense_model_is_shared():
    dense = FakeDense()
    assert make_retriever("dense", built={"dense": dense}) is dense
    hybrid = make_retriever("hybrid", built={"dense": dense})
    assert isinstance(hybrid, HybridRetriever)
    assert isinstance(hybrid.retrievers[0], BM25Index) and hybrid.retrievers[1] is dense
    assert make_retriever("hybrid", built={"dense": dense}).retrievers[0] is not hybrid.retrievers[0]  # fresh BM25 each time


def test_bad_names_and_mixed_arguments():
    assert {"bm25", "dense", "hybrid"} <= set(registered())
    with pytest.raises(ValueError, match="unknown retriever 'splade'; known: bm25, dense, hybrid"):
        make_retriever("splade")
    with pytest.raises(ValueError, match="not both"):
        make_retriever("dense", built={"dense": FakeDense()}, model="all-MiniLM-L6-v2")


def test_rerank_first_stage_goes_through_the_factory():
    from chunklab_core.rerank.study import first_stage_engine

    assert isinstance(first_stage_engine("bm25"), BM25Index)
    with pytest.raises(ValueError, match="unknown first stage"):
        first_stage_engine("splade")
