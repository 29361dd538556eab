"""Fault injection, embedding cache: truncated, altered and missing shards, the cache key, and
kill -9 at random points of an encode (fake encoder; the real MiniLM in the slow tier) (issue 15)."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

from chunklab_core.retrieval import embedding_cache
from chunklab_core.retrieval.dense import DenseRetriever
from chunklab_core.retrieval.embedding_cache import EmbeddingCache
from chunklab_core.core.paths import PROJ_ROOT

ENV = {**os.environ, "PYTHONPATH": str(PROJ_ROOT)}
TEXTS = [f"text number {i}" for i in range(6)]


def fake_encode(texts):
    """A deterministic stand-in model: the vector of a text depends on the text only."""
    return np.array([[len(t), sum(map(ord, t)) % 97, 1.0] for t in texts], dtype=np.float32)


def filled_cache(root):
    cache = EmbeddingCache(root, "fake", flush_rows=2)
    expected = cache.get_or_compute(TEXTS, fake_encode)
    cache.close()
    return expected, sorted((root / "fake").glob("shard-*.npy"))


@pytest.mark.parametrize("damage, reason", [
    (lambda p: p.write_bytes(p.read_bytes()[:-7]), r"bytes long, \d+ were written"),
    (lambda p: p.write_bytes(p.read_bytes()[:-1] + bytes([p.read_bytes()[-1] ^ 1])), "its sha256 is"),
    (lambda p: p.unlink(), "the file is missing"),
])
def test_a_bad_shard_is_named_set_aside_and_encoded_again(tmp_path, damage, reason):
    expected, shards = filled_cache(tmp_path)
    assert len(shards) == 3
    damage(shards[1])
    cache = EmbeddingCache(tmp_path, "fake", flush_rows=2)
    with pytest.warns(RuntimeWarning, match=rf"shard {shards[1]} is bad \(.*{reason}.*encoded again"):
        again = cache.get_or_compute(TEXTS, fake_encode)
    np.testing.assert_array_equal(again, expected)
    assert cache.encoded_count == 2 and cache.cache_hits == 4  # only the bad shard's texts
    if reason != "the file is missing":
        assert len(list((tmp_path / "fake").glob(f"{shards[1].name}.bad-*"))) == 1  # kept, not deleted
    cache.close()
    clean = EmbeddingCache(tmp_path, "fake", flush_rows=2)  # the re-encoded rows serve next time
    np.testing.assert_array_equal(clean.get_or_compute(TEXTS, fake_encode), expected)
    assert clean.encoded_count == 0


def test_a_truncated_shard_of_an_old_cache_without_checksums_is_caught_too(tmp_path):
    expected, shards = filled_cache(tmp_path)
    with sqlite3.connect(tmp_path / "fake" / "index.sqlite3") as db:
        db.execute("UPDATE shards SET n_bytes = NULL, sha256 = NULL")
    shards[0].write_bytes(shards[0].read_bytes()[:100])  # numpy: "mmap length is greater than file size"
    cache = EmbeddingCache(tmp_path, "fake", flush_rows=2)
    with pytest.warns(RuntimeWarning, match=rf"{shards[0]} is bad \(numpy cannot read it"):
        np.testing.assert_array_equal(cache.get_or_compute(TEXTS, fake_encode), expected)


def test_the_cache_key_changes_with_torch_or_sentence_transformers(tmp_path, monkeypatch):
    base = DenseRetriever("all-MiniLM-L6-v2", cache_dir=tmp_path).identity  # the model is not loaded
    real = embedding_cache.library_versions
    for library in ("torch", "sentence-transformers"):
        monkeypatch.setattr(embedding_cache, "library_versions",
                            lambda names, library=library: {**real(names), library: "9.9.9"})
        assert DenseRetriever("all-MiniLM-L6-v2", cache_dir=tmp_path).identity != base
    monkeypatch.setattr(embedding_cache, "library_versions", real)
    assert DenseRetriever("all-MiniLM-L6-v2", cache_dir=tmp_path).identity == base
    assert (tmp_path / "file-sha256.json").is_file()  # whole-file hashes remembered


# ---- kill -9 at random points of an encode -------------------------------------------------
_FAKE_ENCODER = textwrap.dedent("""
    import sys, time
    import numpy as np
    from chunklab_core.retrieval.embedding_cache import EmbeddingCache
    def encode(texts):
        time.sleep(0.01)
        return np.array([[len(t), sum(map(ord, t)) % 97, 1.0] for t in texts], dtype=np.float32)
    cache = EmbeddingCache(sys.argv[1], "fake", flush_rows=3)
    print("READY", flush=True)
    cache.get_or_compute([f"passage {i}" for i in range(300)], encode)
""")


def test_kill_9_at_random_points_of_an_encode_leaves_a_sound_cache(tmp_path):
    rng = np.random.default_rng(1515)
    texts = [f"passage {i}" for i in range(300)]
    for _ in range(6):
        child = subprocess.Popen([sys.executable, "-c", _FAKE_ENCODER, str(tmp_path)], env=ENV,
                                 stdout=subprocess.PIPE, text=True)
        assert child.stdout.readline().strip() == "READY"
        time.sleep(rng.uniform(0.0, 0.3))
        child.send_signal(signal.SIGKILL)
        child.wait()
        child.stdout.close()
    cache = EmbeddingCache(tmp_path, "fake", flush_rows=3)
    stored = len(cache)
    assert 0 < stored < 300  # the kills landed mid-encode
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no shard may be bad after a kill
        vectors = cache.get_or_compute(texts, fake_encode)
    np.testing.assert_array_equal(vectors, fake_encode(texts))
    assert cache.cache_hits == stored and cache.encoded_count == 300 - stored


_MINILM_ENCODER = textwrap.dedent("""
    import sys
    from chunklab_core.retrieval.dense import DenseRetriever
    retriever = DenseRetriever("all-MiniLM-L6-v2", cache_dir=sys.argv[1], num_threads=1,
                               batch_size=8, flush_rows=8)
    retriever.model  # loaded
    print("READY", flush=True)
    retriever.embed([f"Sentence {i} about lighthouses, tides and the keeper's log." for i in range(300)])
""")


@pytest.mark.slow
def test_kill_9_at_random_points_of_a_minilm_encode(tmp_path):
    rng = np.random.default_rng(2026)
    texts = [f"Sentence {i} about lighthouses, tides and the keeper's log." for i in range(300)]
    for _ in range(2):
        child = subprocess.Popen([sys.executable, "-c", _MINILM_ENCODER, str(tmp_path)], env=ENV,
                                 stdout=subprocess.PIPE, text=True)
        assert child.stdout.readline().strip() == "READY"
        before = len(list(tmp_path.glob("*/shard-*.npy")))
        deadline = time.monotonic() + 120
        while len(list(tmp_path.glob("*/shard-*.npy"))) == before and child.poll() is None:
            assert time.monotonic() < deadline
            time.sleep(0.01)  # encoding has started: one more block stored
        time.sleep(rng.uniform(0.0, 0.4))
        child.send_signal(signal.SIGKILL)
        child.wait()
        child.stdout.close()
    import warnings

    resumed = DenseRetriever("all-MiniLM-L6-v2", cache_dir=tmp_path, num_threads=1, batch_size=8)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        vectors = resumed.embed(texts)
    assert resumed.cache_hits > 0 and resumed.cache_hits + resumed.encoded_count == 300
    fresh = DenseRetriever("all-MiniLM-L6-v2", cache=False, num_threads=1, batch_size=8).embed(texts)
    np.testing.assert_allclose(vectors, fresh, atol=1e-5)


# ---- a cache that cannot be used (issue 30) -------------------------------------------------
def test_a_garbage_index_names_the_cache_folder_and_the_fix(tmp_path):
    from chunklab_core.retrieval.embedding_cache import CacheUnusable, EmbeddingCache

    folder = tmp_path / "model-abc"
    folder.mkdir()
    (folder / "index.sqlite3").write_bytes(b"this is not a database, " * 100)
    with pytest.raises(CacheUnusable) as err:
        EmbeddingCache(tmp_path, "model-abc")
    message = str(err.value)
    assert str(folder) in message and "Delete that folder" in message and "CHUNKLAB_CACHE" in message


def test_a_read_only_cache_names_the_folder_and_the_fix(tmp_path, monkeypatch):
    import sqlite3

    from chunklab_core.retrieval import embedding_cache
    from chunklab_core.retrieval.embedding_cache import CacheUnusable, EmbeddingCache

    cache = EmbeddingCache(tmp_path, "model-abc")
    cache.get_or_compute(["one"], lambda texts: np.ones((len(texts), 3)))
    cache.close()
    if os.geteuid() == 0:  # root opens any file: refuse as sqlite does for a read-only folder
        def connect(*args, **kwargs):
            raise sqlite3.OperationalError("unable to open database file")
        monkeypatch.setattr(embedding_cache.sqlite3, "connect", connect)
    os.chmod(tmp_path / "model-abc", 0o555)
    try:
        with pytest.raises(CacheUnusable, match="unable to open database file") as err:
            EmbeddingCache(tmp_path, "model-abc")
    finally:
        os.chmod(tmp_path / "model-abc", 0o755)
    assert str(tmp_path / "model-abc") in str(err.value)


def test_a_full_disk_while_storing_is_named_with_the_cache_folder(tmp_path, monkeypatch):
    import errno

    from chunklab_core.retrieval import embedding_cache
    from chunklab_core.retrieval.embedding_cache import CacheUnusable, EmbeddingCache

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    cache = EmbeddingCache(tmp_path, "model-abc")
    monkeypatch.setattr(embedding_cache, "atomic_write", full)
    with pytest.raises(CacheUnusable, match="No space left on device"):
        cache.get_or_compute(["one"], lambda texts: np.ones((len(texts), 3)))
