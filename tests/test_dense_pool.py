"""Embeddings at scale: sentence-transformers' multi-process pool and device selection fill the
same cache, under the same keys, with the vectors a single process computes (real MiniLM)."""

from __future__ import annotations

import numpy as np
import pytest

from chunklab_core.retrieval.dense import DenseRetriever, pool_devices, resolve_device
from chunklab_core.retrieval.embedding_cache import text_sha256

# texts of very different lengths, so the two ways of batching pad them differently
TEXTS = [("word " * (1 + 7 * i)).strip() + f" number {i}: the tower, the river, the bank."
         for i in range(24)]


def stored_keys(retriever: DenseRetriever) -> set[tuple[str, str]]:
    return set(retriever.cache._db.execute("SELECT text_sha, prefix FROM emb").fetchall())


@pytest.mark.slow  # spawns two processes that each load torch and the model (~45 s on 2 busy cores)
def test_pool_of_two_processes_equals_one_process_and_fills_the_same_cache(tmp_path):
    single = DenseRetriever("all-MiniLM-L6-v2", cache_dir=tmp_path / "one", num_threads=2)
    pooled = DenseRetriever("all-MiniLM-L6-v2", cache_dir=tmp_path / "two", num_threads=2,
                            processes=2)
    try:
        expected = single.embed(TEXTS)
        got = pooled.embed(TEXTS)
        assert pooled._pool is not None and len(pooled._pool["processes"]) == 2
    finally:
        pooled.close()
    assert pooled._pool is None
    np.testing.assert_allclose(got, expected, atol=1e-6, rtol=0)
    # the same cache identity (folder) and the same keys, whatever encoded them
    assert pooled.identity == single.identity
    assert pooled.cache.folder.name == single.cache.folder.name
    assert stored_keys(pooled) == stored_keys(single) == {(text_sha256(t), "") for t in TEXTS}
    # a single-process retriever reading the pool's cache encodes nothing and reads its vectors
    reader = DenseRetriever("all-MiniLM-L6-v2", cache_dir=tmp_path / "two", num_threads=2)
    np.testing.assert_array_equal(reader.embed(TEXTS), got)
    assert reader.encoded_count == 0 and reader.cache_hits == len(TEXTS)


def test_device_and_pool_parameters():
    assert resolve_device("cpu") == "cpu"
    import torch

    assert resolve_device("auto") == ("cuda" if torch.cuda.is_available() else "cpu")
    assert pool_devices("cpu", 3) == ["cpu", "cpu", "cpu"]
    with pytest.raises(ValueError, match="processes"):
        DenseRetriever("all-MiniLM-L6-v2", processes=0)
    with pytest.raises(ValueError, match="processes"):
        DenseRetriever("all-MiniLM-L6-v2", processes=True)
