"""Chunking, embedding & index, reranking, augmentation, generation and end-to-end evaluators:
hand-computed fixtures, None propagation, and the scikit-learn / numpy / FAISS cross-checks."""

from __future__ import annotations

import faiss
import numpy as np
import pytest
from sklearn.metrics import f1_score

from chunklab_core.answers.metrics import exact_match
from chunklab_core.core.corpus import Chunk, Document
from chunklab_core.evaluators.augmentation import evaluate_augmentation
from chunklab_core.evaluators.chunking import (boundary_f1, evaluate_chunking, metadata_accuracy, metadata_completeness,
                                               vector_boundary_clarity, vector_cohesion, vector_stickiness)
from chunklab_core.evaluators.embedding import (ann_recall_at_k, duplicate_vector_rate, evaluate_embedding,
                                                exact_top_k, mean_vector_norm, zero_norm_rate)
from chunklab_core.evaluators.end_to_end import evaluate_end_to_end
from chunklab_core.evaluators.generation import (citation_scores, evaluate_generation, required_fact_coverage,
                                                 task_success)
from chunklab_core.evaluators.reranking import evaluate_reranking


# ------------------------------------------------------------------ augmentation

def test_augmentation_fixture():
    # q1: context a b a c (4 items, 3 distinct), gold {a, c, d}; q2: context x, gold {x}
    stage = evaluate_augmentation(["q1", "q2"], context_ids=[["a", "b", "a", "c"], ["x"]],
                                  gold_ids=[["a", "c", "d"], ["x"]], context_tokens=[900, 1200], budget_tokens=1000)
    v = stage.values
    assert v["context_precision"].tolist() == pytest.approx([2 / 3, 1.0])
    assert v["context_noise"].tolist() == pytest.approx([1 / 3, 0.0])
    assert v["context_recall"].tolist() == pytest.approx([2 / 3, 1.0])
    assert v["context_sufficiency"].tolist() == [0.0, 1.0]
    assert v["duplicate_ratio"].tolist() == pytest.approx([1 / 4, 0.0])
    assert v["budget_compliance"].tolist() == [1.0, 0.0]
    # q1: gold a at position 1 (edge), c at position 4 = last (edge): 2/2; q2: single item: 1/1
    assert v["evidence_edge_placement"].tolist() == [1.0, 1.0]
    middle = evaluate_augmentation(["q"], context_ids=[["x", "a", "y"]], gold_ids=[["a"]])
    assert middle.values["evidence_edge_placement"].tolist() == [0.0]


def test_augmentation_not_measured():
    stage = evaluate_augmentation(["q1", "q2"], context_ids=[["a"], None], gold_ids=[["a"], ["b"]])
    assert stage.per_query()["context_precision"].tolist() == [1.0, None]
    assert stage.means()["budget_compliance"] is None and "budget_tokens" in stage.not_measured["budget_compliance"]
    none = evaluate_augmentation(["q1"])
    assert all(v is None for v in none.means().values())


def test_answer_in_context_is_per_text():
    stage = evaluate_augmentation(["q1", "q2"], context_texts=[["the answer is 42", "b"], ["split in", "two"]],
                                  gold_snippets=[["ANSWER is  42"], ["in two"]])
    assert stage.values["answer_in_context"].tolist() == [1.0, 0.0]


# ------------------------------------------------------------------ reranking

def test_reranking_fixture():
    before, after = [["x", "y", "a", "b"]], [["a", "x", "y", "b"]]
    stage = evaluate_reranking(["q"], before, after, [["a"]], k=2)
    v = stage.values
    assert v["rr@2_before"][0] == 0.0 and v["rr@2_after"][0] == 1.0 and v["delta_rr@2"][0] == 1.0
    assert v["precision@2_after"][0] == 0.5 and v["delta_precision@2"][0] == 0.5
    assert v["same_set@2"][0] == 0.0 and v["rescued@2"][0] == 1.0 and v["pushed_out@2"][0] == 0.0
    assert v["first_relevant_rank_change"][0] == 2.0  # rank 3 -> rank 1
    same = evaluate_reranking(["q"], [["a", "b", "c"]], [["b", "a", "c"]], None, k=2)
    assert same.values["same_set@2"][0] == 1.0 and same.means()["delta_ndcg@2"] is None


# ------------------------------------------------------------------ generation and end to end

def test_required_facts_and_citations():
    assert required_fact_coverage("Returns within 30 days, signed by the manager.", ["30 days", "manager", "3"]) \
        == pytest.approx(2 / 3)
    assert required_fact_coverage("x", []) is None
    p, r, f = citation_scores(["c1", "c2", "c3"], ["c1", "c4"])
    assert (p, r) == (pytest.approx(1 / 3), 0.5) and f == pytest.approx(2 * (1 / 3) * 0.5 / (1 / 3 + 0.5))
    assert citation_scores([], ["c1"]) == (None, 0.0, 0.0)


def test_citation_f1_equals_scikit_learn():
    rng = np.random.default_rng(3)
    for _ in range(50):
        ids = [f"c{i}" for i in range(12)]
        cited = set(rng.choice(ids, size=int(rng.integers(1, 8)), replace=False))
        supporting = set(rng.choice(ids, size=int(rng.integers(1, 8)), replace=False))
        union = sorted(cited | supporting)
        expected = f1_score([i in supporting for i in union], [i in cited for i in union], zero_division=0.0)
        assert citation_scores(cited, supporting)[2] == pytest.approx(expected)


def test_task_success_and_abstention():
    assert task_success("Paris", ["paris"], True) == 1.0
    assert task_success("I don't know.", ["paris"], True) == 0.0
    assert task_success("I don't know.", None, False) == 1.0
    assert task_success("Lyon", None, False) == 0.0
    assert task_success(None, ["paris"], True) is None
    stage = evaluate_generation(["a", "b", "c"], answers=["I don't know.", "Paris", "Rome"],
                                references=[None, ["Paris"], ["Milan"]], answerable=[False, True, None])
    v = stage.per_query()
    assert v["abstention_accuracy"].tolist() == [1.0, 1.0, None]
    assert v["abstention_on_unanswerable"].tolist() == [1.0, None, None]
    assert v["exact_match"].tolist() == [None, 1.0, 0.0]  # no reference: not measured, not 0
    assert stage.means()["exact_match"] == 0.5
    assert stage.means()["claim_support"] is None and stage.not_measured["claim_support"] == "claims"


def test_generation_reuses_the_series_metrics():
    stage = evaluate_generation(["q"], answers=["The Eiffel Tower"], references=[["Eiffel Tower"]],
                                context_texts=[["the eiffel tower is 330 metres"]], claims=[[True, False, True]],
                                latency_ms=[100.0])
    assert stage.values["exact_match"][0] == exact_match("The Eiffel Tower", ["Eiffel Tower"]) == 1.0
    assert stage.values["claim_support"][0] == pytest.approx(2 / 3)
    assert stage.means()["latency_p95_ms"] == 100.0


def test_end_to_end_fixture():
    stage = evaluate_end_to_end(["a", "b"], answers=["Paris", "Lyon"], references=[["Paris"], ["Nice"]],
                                latency_ms=[100.0, 300.0], cost=[0.002, None], tokens=[1000, 500])
    m = stage.means()
    assert m["exact_match"] == 0.5 and m["task_success"] == 0.5
    assert m["latency_p50_ms"] == 200 and m["latency_p95_ms"] == pytest.approx(290)
    assert m["cost"] == 0.002 and m["tokens"] == 750  # the missing cost is left out, not 0


# ------------------------------------------------------------------ chunking

def test_boundary_f1_equals_scikit_learn_at_tolerance_0():
    rng = np.random.default_rng(5)
    for _ in range(30):
        n = 200
        expected = sorted(set(rng.integers(1, n, size=8).tolist()))
        predicted = sorted(set(rng.integers(1, n, size=10).tolist()))
        y_true = np.isin(np.arange(n), expected)
        y_pred = np.isin(np.arange(n), predicted)
        assert boundary_f1({"d": predicted}, {"d": expected}) == pytest.approx(f1_score(y_true, y_pred))


def test_boundary_f1_tolerance_is_one_to_one():
    # predicted 10 and 12 both within 2 of expected 11, but one expected point matches once
    assert boundary_f1({"d": [10, 12]}, {"d": [11]}, tolerance=2) == pytest.approx(2 * 1 / 3)
    assert boundary_f1({"d": [10, 30]}, {"d": [11, 29]}, tolerance=1) == 1.0
    assert boundary_f1({}, {"d": []}) is None


def test_metadata_metrics():
    meta = [{"title": "A", "page": 1}, {"title": "", "page": 2}, {"page": 3}]
    assert metadata_completeness(meta, ["title", "page"]) == pytest.approx((1 + 0.5 + 0.5) / 3)
    assert metadata_accuracy(meta, [{"page": 1}, {"page": 5}, None]) == 0.5
    assert metadata_accuracy(meta, [None, None, None]) is None


def test_vector_chunk_metrics():
    chunks = [Chunk(0, "d", 0, 5, 0, 5), Chunk(1, "d", 5, 9, 5, 9), Chunk(2, "d", 9, 12, 9, 12), Chunk(3, "e", 0, 3, 0, 3)]
    v = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [3.0, 4.0]])
    s = np.sqrt(0.5)
    assert vector_boundary_clarity(chunks, v) == pytest.approx(((1 - 0) + (1 - s)) / 2)
    assert vector_stickiness(chunks, v) == pytest.approx((0 + s + s) / 3)
    assert vector_cohesion(np.array([[1.0, 0], [1, 0], [0, 1], [5, 5]]), [0, 0, 1, 2]) == 1.0


def test_chunking_reuses_chunk_health_and_marks_the_rest():
    docs = [Document("d", "One sentence here. Another sentence there. A third one.")]
    chunks = [Chunk(0, "d", 0, 18, 0, 18), Chunk(1, "d", 18, 55, 18, 55)]
    stage = evaluate_chunking(chunks, documents=docs, expected_splits={"d": [18]}, max_chars=40)
    m = stage.means()
    assert m["coverage"] == 1.0 and m["n_chunks"] == 2 and m["boundary_f1"] == 1.0
    assert m["size_compliance"] == 1.0
    assert m["metadata_completeness"] is None and "metadata" in stage.not_measured["metadata_completeness"]
    no_docs = evaluate_chunking(chunks, chunk_texts=["a b", "c"])
    assert no_docs.means()["coverage"] is None and "documents" in no_docs.not_measured["coverage"]


# ------------------------------------------------------------------ embedding & index

def test_vector_health_fixture():
    v = np.array([[3.0, 4.0], [0.0, 0.0], [3.0, 4.0], [1.0, 0.0]])
    assert zero_norm_rate(v) == 0.25
    assert duplicate_vector_rate(v) == 0.25
    assert mean_vector_norm(v) == pytest.approx((5 + 0 + 5 + 1) / 4)


def test_embedding_fixture_and_margin():
    chunks = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    queries = np.array([[1.0, 0.1]])
    stage = evaluate_embedding(["q"], chunk_ids=["a", "b", "c"], chunk_vectors=chunks, query_vectors=queries,
                               gold_ids=[["a"]], indexed_ids=["a", "b"], ann_ids=[["a", "b"]], k=2)
    q = queries[0] / np.linalg.norm(queries[0])
    cos = chunks @ q / np.linalg.norm(chunks, axis=1)
    assert exact_top_k(queries, chunks, 2).tolist() == [[0, 2]]
    assert stage.values["exact_recall@2"][0] == 1.0
    assert stage.values["ann_recall@2"][0] == 0.5  # {a, b} vs exact {a, c}
    assert stage.values["positive_similarity"][0] == pytest.approx(cos[0])
    assert stage.values["negative_similarity"][0] == pytest.approx((cos[1] + cos[2]) / 2)
    assert stage.values["similarity_margin"][0] == pytest.approx(cos[0] - (cos[1] + cos[2]) / 2)
    assert stage.means()["index_coverage"] == pytest.approx(2 / 3)


def test_ann_recall_against_faiss():
    rng = np.random.default_rng(11)
    vectors = rng.normal(size=(3000, 24)).astype(np.float32)
    queries = rng.normal(size=(60, 24)).astype(np.float32)
    k = 10
    exact = exact_top_k(queries, vectors, k)
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    qunit = queries / np.linalg.norm(queries, axis=1, keepdims=True)
    flat = faiss.IndexFlatIP(24)
    flat.add(unit)
    _, flat_ids = flat.search(qunit, k)
    assert ann_recall_at_k(flat_ids.tolist(), exact.tolist(), k).tolist() == [1.0] * 60  # exact search: recall 1
    hnsw = faiss.IndexHNSWFlat(24, 4, faiss.METRIC_INNER_PRODUCT)
    hnsw.hnsw.efSearch = 10
    hnsw.add(unit)
    _, ann = hnsw.search(qunit, k)
    recall = ann_recall_at_k(ann.tolist(), exact.tolist(), k)
    expected = [len(set(a) & set(e)) / k for a, e in zip(ann.tolist(), exact.tolist())]
    assert recall.tolist() == pytest.approx(expected)
    assert recall.mean() < 1.0  # a small HNSW graph with a low ef misses true neighbours
