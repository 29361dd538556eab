"""The reranking stage: prefix-only reordering and its metrics on hand-made rankings."""

import numpy as np
import pytest
import pytrec_eval

from chunklab_core.rerank.stage import rerank_prefix, relevance_matrix, same_top_set, stage_metrics


def test_only_the_prefix_is_reordered_and_the_rest_keeps_first_stage_order():
    ranked = np.array([[10, 11, 12, 13, 14, 15]])
    scores = np.array([[0.1, 0.9, 0.5]])
    after = rerank_prefix(ranked, scores, depth=3)
    assert after.tolist() == [[11, 12, 10, 13, 14, 15]]
    assert ranked.tolist() == [[10, 11, 12, 13, 14, 15]]  # input untouched


def test_nothing_outside_the_candidates_enters_the_top_k():
    rng = np.random.default_rng(0)
    ranked = np.array([rng.permutation(50) for _ in range(20)])
    for depth in (5, 10, 20):
        after = rerank_prefix(ranked, rng.random((20, depth)), depth)
        for row in range(20):
            assert set(after[row, :depth]) == set(ranked[row, :depth])
            assert after[row, depth:].tolist() == ranked[row, depth:].tolist()
            assert set(after[row, :5]) <= set(ranked[row, :depth])


def test_ties_keep_first_stage_order_and_padding_stays_last():
    ranked = np.array([[4, 3, 2, -1, -1]])
    assert rerank_prefix(ranked, np.zeros((1, 5)), 5).tolist() == ranked.tolist()
    scores = np.array([[0.0, 1.0, 1.0, 5.0, 9.0]])  # padded positions' scores are ignored
    assert rerank_prefix(ranked, scores, 5).tolist() == [[3, 2, 4, -1, -1]]


def test_bad_inputs_are_refused():
    ranked = np.array([[1, 2, 3]])
    with pytest.raises(ValueError, match="depth"):
        rerank_prefix(ranked, np.zeros((1, 3)), 0)
    with pytest.raises(ValueError, match="shape"):
        rerank_prefix(ranked, np.zeros((1, 2)), 3)
    with pytest.raises(ValueError, match="NaN"):
        rerank_prefix(ranked, np.array([[np.nan, 1.0, 2.0]]), 3)


def test_stage_metrics_on_a_hand_made_ranking():
    # relevant: 7 (rank 4 before) and 9 (not retrieved). k = 3, depth = 5.
    before = np.array([[1, 2, 3, 7, 5, 6]])
    after = rerank_prefix(before, np.array([[0.5, 0.1, 0.4, 0.9, 0.2]]), 5)
    assert after.tolist() == [[7, 1, 3, 5, 2, 6]]
    row = stage_metrics(before, after, [np.array([7, 9])], k=3, depth=5).iloc[0]
    assert row["ndcg_before"] == 0.0 and row["rr_before"] == 0.0 and row["p_before"] == 0.0
    idcg = 1 + 1 / np.log2(3)
    assert row["ndcg_after"] == pytest.approx(1 / idcg)
    assert row["rr_after"] == 1.0
    assert row["p_after"] == pytest.approx(1 / 3)
    assert row["ceiling"] == 1.0 and row["hit_before"] == 0.0 and row["hit_after"] == 1.0
    assert row["same_set"] == 0.0 and row["rescued"] == 1.0 and row["pushed_out"] == 0.0


def test_pushed_out_and_same_set():
    before = np.array([[7, 1, 2, 3], [1, 2, 3, 4]])
    after = np.array([[1, 2, 7, 3], [2, 1, 3, 4]])
    rel = [np.array([7]), np.array([3])]
    frame = stage_metrics(before, after, rel, k=2, depth=4)
    assert frame["pushed_out"].tolist() == [1.0, 0.0]
    assert frame["same_set"].tolist() == [0.0, 1.0]
    assert same_top_set(before, after, 3).tolist() == [1.0, 1.0]


def test_ndcg_and_mrr_match_pytrec_eval():
    rng = np.random.default_rng(3)
    k, n_docs = 5, 30
    qrels, run, ranked, relevant = {}, {}, [], []
    for q in range(25):
        ids = rng.permutation(n_docs)[:12]
        rel = rng.choice(n_docs, size=int(rng.integers(1, 5)), replace=False)
        ranked.append(ids)
        relevant.append(rel)
        qrels[f"q{q}"] = {f"d{d}": 1 for d in rel}
        run[f"q{q}"] = {f"d{d}": float(12 - r) for r, d in enumerate(ids[:k])}  # top k only: RR@k
    ranked = np.array(ranked)
    frame = stage_metrics(ranked, ranked, relevant, k=k, depth=10)
    reference = pytrec_eval.RelevanceEvaluator(qrels, {f"ndcg_cut_{k}", "recip_rank", f"P_{k}"}).evaluate(run)
    for q in range(25):
        assert frame["ndcg_before"][q] == pytest.approx(reference[f"q{q}"][f"ndcg_cut_{k}"], abs=1e-9)
        assert frame["rr_before"][q] == pytest.approx(reference[f"q{q}"]["recip_rank"], abs=1e-9)
        assert frame["p_before"][q] == pytest.approx(reference[f"q{q}"][f"P_{k}"], abs=1e-9)


def test_relevance_matrix_counts_padding_as_not_relevant():
    assert relevance_matrix(np.array([[3, -1]]), [np.array([3, -1])]).tolist() == [[1.0, 0.0]]
