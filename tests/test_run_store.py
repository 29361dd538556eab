"""The run store (issue 24): round trip, provenance checks, torn files, hybrid fusion from stored runs."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from chunklab_core.core.corpus import Corpus, Document, Question
from chunklab_core.evaluation.scoring import run_cell, score_run
from chunklab_core.retrieval import recorded_runs
from chunklab_core.retrieval.bm25 import BM25Index
from chunklab_core.retrieval.cell_search import search_cell
from chunklab_core.retrieval.hybrid import HybridRetriever
from chunklab_core.retrieval.recorded_runs import (Cell, RunStore, RunStoreError, pack_ids, texts_sha256,
                                                   unpack_ids)
from chunklab_core.retrieval.registry import RETRIEVER_SPECS, Retriever, needs_model, spec
from chunklab_core.retrieval.run import make_retriever

WORDS = ("river bank money loan water fish boat city bridge tower market bread apple tree stone "
         "road car train music song dance light dark cold warm").split()


def texts_and_queries(n_texts=40, n_queries=7, seed=3):
    rng = np.random.default_rng(seed)
    texts = [" ".join(rng.choice(WORDS, size=12)) for _ in range(n_texts)]
    queries = [" ".join(rng.choice(WORDS, size=3)) for _ in range(n_queries)]
    return texts, queries


class HashDense:
    """A deterministic stand-in for a dense model: bag-of-words vectors, cosine, exact top-k."""

    label = "hash-dense"
    identity = "hash-dense-0123456789abcdef"

    def __init__(self):
        self.fits = 0

    def _vectors(self, texts):
        out = np.zeros((len(texts), len(WORDS)), np.float32)
        for row, text in enumerate(texts):
            for word in text.split():
                if word in WORDS:
                    out[row, WORDS.index(word)] += 1
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1, norms)

    def fit(self, texts):
        self.fits += 1
        self.passages = self._vectors(texts)
        return self

    def search(self, queries, k):
        from chunklab_core.retrieval.topk import top_k_rows

        return top_k_rows(self._vectors(queries) @ self.passages.T, min(k, len(self.passages)))

    def truncated_mask(self, texts):
        return np.array([len(t) > 60 for t in texts])


def test_pack_ids_round_trip_with_padding_and_both_widths():
    ids = np.array([[3, 0, -1], [2, 1, -1]])
    packed = pack_ids(ids, 4)
    assert packed.dtype == np.uint16
    assert np.array_equal(unpack_ids(packed), ids)
    wide = pack_ids(np.array([[70000, -1]]), 70001)
    assert wide.dtype == np.uint32 and np.array_equal(unpack_ids(wide), [[70000, -1]])
    with pytest.raises(ValueError):
        pack_ids(np.array([[4]]), 4)


def test_texts_digest_separates_texts():
    assert texts_sha256(["ab", "c"]) != texts_sha256(["a", "bc"])
    assert texts_sha256([]) == texts_sha256([])


@pytest.mark.parametrize("retriever", ["bm25", "dense"])
def test_record_then_replay_equals_live_and_writes_one_file(tmp_path, retriever):
    texts, queries = texts_and_queries()
    dense = HashDense()
    live = search_cell("c-1", "s", retriever, texts, queries, 20, model="hash-dense", engines={"dense": lambda: dense},
                       store=RunStore(tmp_path, "live"))
    assert not list(tmp_path.rglob("*.npz")), "live mode writes nothing"
    recorded = search_cell("c-1", "s", retriever, texts, queries, 20, model="hash-dense", engines={"dense": lambda: dense},
                           store=RunStore(tmp_path, "record"))
    files = list(tmp_path.rglob("*.npz"))
    assert len(files) == 1
    fits = dense.fits
    replayed = search_cell("c-1", "s", retriever, texts, queries, 20, model="hash-dense",
                           engines={"dense": lambda: pytest.fail("a replay must not build a model")},
                           store=RunStore(tmp_path, "replay"))
    assert dense.fits == fits
    for result in (recorded, replayed):
        assert np.array_equal(result.ids, live.ids)
        np.testing.assert_allclose(result.scores, np.asarray(live.scores)[:, :result.scores.shape[1]], atol=1e-6)
    if retriever == "dense":
        assert np.array_equal(replayed.truncated, dense.truncated_mask(texts))


def test_a_shallower_depth_is_a_prefix_of_the_recorded_one(tmp_path):
    texts, queries = texts_and_queries()
    search_cell("c-1", "s", "bm25", texts, queries, 30, store=RunStore(tmp_path, "record"))
    shallow = search_cell("c-1", "s", "bm25", texts, queries, 5, store=RunStore(tmp_path, "replay"))
    ids, _ = BM25Index().fit(texts).search(queries, 5)
    assert np.array_equal(shallow.ids, ids)


def test_provenance_is_recorded(tmp_path):
    texts, queries = texts_and_queries()
    search_cell("c-1", "s", "bm25", texts, queries, 10, store=RunStore(tmp_path, "record"),
                corpus_source={"name": "squad", "seed": 1}, strategy_options={"size": 5})
    record = RunStore(tmp_path, "replay").load(RunStore(tmp_path).path(Cell("c-1", "s", "bm25")))
    meta = record.meta
    assert meta["cell"] == {"corpus": "c-1", "strategy": "s", "retriever": "bm25", "model": None}
    assert meta["texts"] == {"n": len(texts), "sha256": texts_sha256(texts)}
    assert meta["queries"]["sha256"] == texts_sha256(queries)
    assert meta["corpus_source"] == {"name": "squad", "seed": 1} and meta["strategy_options"] == {"size": 5}
    assert meta["depth"] == len(texts)  # fewer texts than the recorded depth: all of them
    assert {"numpy", "torch", "sentence-transformers"} <= set(meta["libraries"]) and meta["code"]


def test_missing_run_in_replay_names_the_cell_and_the_command(tmp_path):
    texts, queries = texts_and_queries()
    with pytest.raises(RunStoreError, match=r"strategy s, retriever bm25.*not recorded.*make runs"):
        search_cell("c-1", "s", "bm25", texts, queries, 10, store=RunStore(tmp_path, "replay"))


@pytest.mark.parametrize("change", ["texts", "queries", "version", "depth"])
def test_stale_run_is_an_error_in_replay_and_recomputed_in_record(tmp_path, monkeypatch, request, change):
    texts, queries = texts_and_queries()
    search_cell("c-1", "s", "bm25", texts, queries, 10, store=RunStore(tmp_path, "record"))
    depth = 10
    if change == "texts":
        texts = texts[:-1] + ["river bank"]
    elif change == "queries":
        queries = queries[:-1] + ["cold bread"]
    elif change == "version":
        scope = RETRIEVER_SPECS.scoped()
        scope.__enter__()
        request.addfinalizer(lambda: scope.__exit__(None, None, None))
        RETRIEVER_SPECS.add("bm25", dataclasses.replace(RETRIEVER_SPECS["bm25"], version=99), replace=True)
    else:
        texts, queries = texts_and_queries(n_texts=300)
        search_cell("c-2", "s", "bm25", texts, queries, 10, store=RunStore(tmp_path, "record"))
        depth = 150
    label = "c-2" if change == "depth" else "c-1"
    words = {"texts": "chunk texts changed", "queries": "questions changed", "version": "scoring version",
             "depth": "depth 150 asked, 100 recorded"}[change]
    with pytest.raises(RunStoreError, match=words):
        search_cell(label, "s", "bm25", texts, queries, depth, store=RunStore(tmp_path, "replay"))
    again = search_cell(label, "s", "bm25", texts, queries, depth, store=RunStore(tmp_path, "record"))
    assert np.array_equal(again.ids, BM25Index().fit(texts).search(queries, depth)[0])


@pytest.mark.parametrize("damage", ["truncate", "flip", "garbage"])
def test_a_torn_or_damaged_file_is_reported_with_its_path(tmp_path, damage):
    texts, queries = texts_and_queries()
    search_cell("c-1", "s", "bm25", texts, queries, 10, store=RunStore(tmp_path, "record"))
    path = next(tmp_path.rglob("*.npz"))
    data = bytearray(path.read_bytes())
    if damage == "truncate":
        data = data[: len(data) // 2]
    elif damage == "flip":  # every 40th byte: some land in the compressed arrays, not only in zip headers
        for position in range(30, len(data) - 30, 40):
            data[position] ^= 0xFF
    else:
        data = bytearray(b"not a zip file at all")
    path.write_bytes(bytes(data))
    with pytest.raises(RunStoreError, match=r"torn or damaged.*delete it and run `make runs`") as caught:
        search_cell("c-1", "s", "bm25", texts, queries, 10, store=RunStore(tmp_path, "replay"))
    assert str(path) in str(caught.value)


def test_hybrid_fused_from_stored_runs_equals_a_live_hybrid_search(tmp_path):
    texts, queries = texts_and_queries(n_texts=150, n_queries=9)
    for depth in (10, 40, 120):
        search_cell("c-1", "s", "hybrid", texts, queries, depth, model="hash-dense", engines={"dense": HashDense},
                    store=RunStore(tmp_path, "record"))
        replayed = search_cell("c-1", "s", "hybrid", texts, queries, depth, model="hash-dense",
                               engines={"dense": lambda: pytest.fail("no model in a replay")}, store=RunStore(tmp_path, "replay"))
        live_ids, live_scores = HybridRetriever([BM25Index(), HashDense()]).fit(texts).search(queries, depth)
        assert np.array_equal(replayed.ids, live_ids)
        np.testing.assert_array_equal(replayed.scores, live_scores)
    stored = sorted(p.name for p in tmp_path.rglob("*.npz"))
    assert stored == ["bm25.npz", "dense@hash-dense.npz"], "hybrid is fused, never stored"


def tiny_corpus(name="tiny"):
    texts, queries = texts_and_queries(n_texts=6, n_queries=4)
    documents = [Document(f"d{i}", "\n\n".join(texts[i * 6:(i + 1) * 6]) or texts[i]) for i in range(1)]
    documents = [Document("d0", "\n\n".join(texts))]
    questions = [Question(f"q{i}", q, "d0", ((q.split()[0],),)) for i, q in enumerate(queries)]
    return Corpus(name, documents, questions)


def test_run_cell_replays_the_same_scores_and_keeps_a_deep_ranking(tmp_path):
    corpus = tiny_corpus()
    live = score_run(run_cell(corpus, "fixed_500", "bm25", store=RunStore(tmp_path, "live")))
    run_cell(corpus, "fixed_500", "bm25", store=RunStore(tmp_path, "record"))
    replay_run = run_cell(corpus, "fixed_500", "bm25", store=RunStore(tmp_path, "replay"))
    assert live.equals(score_run(replay_run))
    assert replay_run.ranked_deep.shape[1] >= replay_run.ranked.shape[1] or len(replay_run.contexts) < 10
    assert np.array_equal(replay_run.ranked_deep[:, :1], replay_run.ranked[:, :1])


def test_your_own_documents_are_never_recorded(tmp_path):
    corpus = tiny_corpus("own")
    run_cell(corpus, "fixed_500", "bm25", store=RunStore(tmp_path, "record"))
    run_cell(corpus, "fixed_500", "bm25", store=RunStore(tmp_path, "replay"))
    assert not list(tmp_path.rglob("*.npz"))


def test_unknown_mode_is_refused(monkeypatch):
    monkeypatch.setenv("CHUNKLAB_RUNS", "sometimes")
    with pytest.raises(RunStoreError, match="live, record, replay"):
        recorded_runs.current_mode()


# ---- the retriever registry -----------------------------------------------------------
def test_registry_specs_and_factory_agree():
    assert {"bm25", "dense", "hybrid"} <= set(RETRIEVER_SPECS)
    assert not needs_model("bm25") and needs_model("dense") and needs_model("hybrid")
    assert spec("hybrid").fused_from == ("bm25", "dense") and not spec("hybrid").stored
    with pytest.raises(ValueError, match="known: bm25, dense, hybrid"):
        spec("tfidf")
    assert isinstance(make_retriever("bm25"), Retriever)
    assert isinstance(HybridRetriever([BM25Index()]), Retriever)


def test_every_stored_retriever_has_a_version_and_a_fused_one_none():
    assert all(isinstance(s.version, int) for s in RETRIEVER_SPECS.values() if s.stored)
    assert all(s.version is None for s in RETRIEVER_SPECS.values() if not s.stored)


def test_meta_is_plain_json(tmp_path):
    texts, queries = texts_and_queries()
    search_cell("c-1", "s", "bm25", texts, queries, 10, store=RunStore(tmp_path, "record"))
    with np.load(next(tmp_path.rglob("*.npz"))) as data:
        assert set(data.files) == {"ids", "scores", "meta", "sha256"}
        json.loads(bytes(data["meta"]).decode())


def test_run_matrix_replays_every_cell_and_model_cut_chunk_without_building_a_model(tmp_path, monkeypatch):
    import chunklab_core.evaluation.matrix as matrix_module

    class EmbeddingHashDense(HashDense):
        def embed(self, texts, prefix=None):
            return self._vectors(texts)

    texts, _ = texts_and_queries(n_texts=30)
    document = Document("d0", ". ".join(texts) + ".")
    questions = [Question(f"q{i}", f"{w} water", "d0", ((w,),)) for i, w in enumerate(WORDS[:6])]
    corpora = {"tiny": Corpus("tiny", [document], questions)}
    strategies = ["fixed_500", "semantic_embedding"]
    monkeypatch.setattr(matrix_module, "make_retriever", lambda name, **options: EmbeddingHashDense())
    recorded = matrix_module.run_matrix(corpora, strategies, ["bm25", "dense", "hybrid"], ["hash-dense"],
                                        progress=False, store=RunStore(tmp_path, "record"))
    assert sorted(p.name for p in tmp_path.rglob("*.npz")) == [
        "bm25.npz", "bm25.npz", "dense@hash-dense.chunks.npz", "dense@hash-dense.npz", "dense@hash-dense.npz"]

    def no_model(name, **options):
        raise AssertionError("a replay must not build an embedding model")

    monkeypatch.setattr(matrix_module, "make_retriever", no_model)
    replayed = matrix_module.run_matrix(corpora, strategies, ["bm25", "dense", "hybrid"], ["hash-dense"],
                                        progress=False, store=RunStore(tmp_path, "replay"))
    assert replayed.per_question.equals(recorded.per_question)
    assert replayed.truncated.equals(recorded.truncated)
    assert replayed.chunks == recorded.chunks


def test_verify_recomputes_a_recorded_cell_and_catches_a_changed_ranking(tmp_path, monkeypatch, capsys):
    from chunklab_core.data.corpora import load_corpus
    from chunklab_core.reports import run_recording

    corpus = load_corpus("squad", squad_articles=2, squad_questions=12)
    run_cell(corpus, "fixed_500", "bm25", store=RunStore(tmp_path, "record"))
    assert run_recording.verify(sample=1, root=tmp_path) == 0
    assert "ids identical" in capsys.readouterr().out
    store = RunStore(tmp_path, "replay")
    path = store.cells()[0]
    record = store.load(path)
    ids = record.ids.copy()
    ids[0, [0, 1]] = ids[0, [1, 0]]  # swap the first two ranks of one question
    store.write(path, record.meta, ids=pack_ids(ids, record.meta["texts"]["n"]), scores=record.scores)
    assert run_recording.verify(sample=1, root=tmp_path) == 1
    out = capsys.readouterr().out
    assert "FAIL" in out and "1 queries differ" in out


def test_keyed_records_round_trip_every_array(tmp_path):
    arrays = {"scores": np.array([0.5, 0.25], np.float32), "lengths": np.array([2]), "seconds": np.array([1.5])}
    key = {"model": "m", "texts": "abc"}
    got = RunStore(tmp_path, "record").keyed("rescores", key, lambda: arrays, "a test")
    again = RunStore(tmp_path, "replay").keyed("rescores", key, lambda: pytest.fail("replayed"), "a test")
    for name, value in arrays.items():
        assert np.array_equal(got[name], value) and np.array_equal(again[name], value)
    with pytest.raises(RunStoreError, match="no recorded rescores for another test"):
        RunStore(tmp_path, "replay").keyed("rescores", {"model": "other"}, lambda: arrays, "another test")


def test_recorded_scorer_replays_exact_scores(tmp_path):
    from chunklab_core.rerank.scorers import RecordedScorer

    class Fake:
        def score_many(self, questions, candidates):
            return [np.arange(len(c), dtype=np.float32).astype(np.float64) / 3 for c in candidates]

    scorer = RecordedScorer("all-MiniLM-L6-v2", store=RunStore(tmp_path, "record"))
    scorer._scorer = Fake()
    live = scorer.score_many(["q1", "q2"], [["a", "b", "c"], ["d"]])
    replay = RecordedScorer("all-MiniLM-L6-v2", store=RunStore(tmp_path, "replay"))
    replay._live = lambda: pytest.fail("a replay must not build a model")
    again = replay.score_many(["q1", "q2"], [["a", "b", "c"], ["d"]])
    assert [a.tolist() for a in again] == [b.tolist() for b in live]
