"""Reciprocal Rank Fusion: hand-computed fixtures, order independence, a dictionary reference."""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest

from chunklab_core.retrieval.hybrid import HybridRetriever, rrf_fuse


def reference_rrf(rankings, k, rrf_k=60):
    """Plain-Python RRF, one query row at a time, with the documented tie rule."""
    out = []
    for row in range(rankings[0].shape[0]):
        score, best = {}, {}
        for ranking in rankings:
            for position, doc in enumerate(ranking[row], start=1):
                if doc < 0:
                    continue
                score[int(doc)] = score.get(int(doc), Fraction(0)) + Fraction(1, rrf_k + position)
                best[int(doc)] = min(best.get(int(doc), position), position)
        out.append(sorted(score, key=lambda d: (-score[d], best[d], d))[:k])
    return out


def test_second_in_both_beats_first_in_one():
    a = np.array([[5, 7, 1]])
    b = np.array([[9, 7, 2]])
    ids, scores = rrf_fuse([a, b], k=3)
    assert ids[0, 0] == 7  # 2/62 = 0.03226 > 1/61 = 0.01639
    assert scores[0, 0] == pytest.approx(2 / 62, rel=1e-15)


def test_hand_computed_fused_scores():
    a = np.array([[10, 20, 30]])
    b = np.array([[30, 10]])
    ids, scores = rrf_fuse([a, b], k=5)
    # 10: 1/61 + 1/62 = 0.032522..., 30: 1/63 + 1/61 = 0.032266..., 20: 1/62 = 0.016129...
    assert ids.tolist() == [[10, 30, 20]]
    expected = [Fraction(1, 61) + Fraction(1, 62), Fraction(1, 63) + Fraction(1, 61), Fraction(1, 62)]
    assert scores[0].tolist() == pytest.approx([float(x) for x in expected], rel=1e-15)


def test_rrf_k_parameter_changes_the_terms():
    ids, scores = rrf_fuse([np.array([[4, 8]])], k=2, rrf_k=0)
    assert ids.tolist() == [[4, 8]] and scores.tolist() == [[1.0, 0.5]]


def test_equal_scores_break_by_best_rank_then_by_id():
    # Doc 1 sits at rank 62 in both rankings: 2/(60+62) = 1/61, exactly doc 900's single rank-1 term.
    filler_a = list(range(100, 160))  # 60 other docs
    filler_b = list(range(200, 261))  # 61 other docs
    a = np.array([[900] + filler_a + [1]])  # 900 at rank 1, 1 at rank 62
    b = np.array([filler_b + [1]])  # 1 at rank 62
    ids, scores = rrf_fuse([a, b], k=200)
    row, s = ids[0].tolist(), dict(zip(ids[0].tolist(), scores[0].tolist()))
    assert s[1] == s[900]  # the fixture really ties
    assert row.index(900) < row.index(1)  # best rank 1 beats best rank 62, despite the larger id
    # Same score and same best rank: lower id first.
    ids, _ = rrf_fuse([np.array([[3, 1]]), np.array([[1, 3]])], k=2)
    assert ids.tolist() == [[1, 3]]


def test_listing_order_does_not_matter():
    rng = np.random.default_rng(7)
    rankings = [np.stack([rng.permutation(40)[:15] for _ in range(6)]) for _ in range(3)]
    results = [rrf_fuse(list(p), k=20) for p in itertools.permutations(rankings)]
    for ids, scores in results[1:]:
        assert np.array_equal(ids, results[0][0])
        assert np.array_equal(scores, results[0][1])  # bit-for-bit


def test_float_sum_does_not_depend_on_listing_order():
    # Ranks (1, 1, 2): summed in listing order, 1/61 + 1/61 + 1/62 != 1/62 + 1/61 + 1/61 in floats.
    assert 1 / 61 + 1 / 61 + 1 / 62 != 1 / 62 + 1 / 61 + 1 / 61
    rankings = [np.array([[7, 1]]), np.array([[7, 2]]), np.array([[3, 7]])]
    scores = {rrf_fuse(list(p), k=1)[1][0, 0] for p in itertools.permutations(rankings)}
    assert len(scores) == 1


def test_matches_dictionary_reference_with_padding_and_uneven_depths():
    rng = np.random.default_rng(11)
    # Small id range so documents recur across rankings and ties are frequent; -1 pads.
    rankings = []
    for depth in (5, 9, 3):
        rows = np.stack([rng.permutation(12)[:depth] for _ in range(30)])
        rows[rng.random(rows.shape) < 0.15] = -1
        rankings.append(rows)
    ids, scores = rrf_fuse(rankings, k=8)
    expected = reference_rrf(rankings, k=8)
    for row, want in enumerate(expected):
        got = [int(x) for x in ids[row] if x >= 0]
        assert got == want
        assert (ids[row, len(want):] == -1).all() and (scores[row, len(want):] == 0).all()


def test_width_is_min_of_k_and_candidates():
    ids, scores = rrf_fuse([np.array([[0, 1]]), np.array([[1, 2]])], k=10)
    assert ids.shape == (1, 3) and scores.shape == (1, 3)


@pytest.mark.parametrize("k", [0, -1, 1.5])
def test_bad_k_raises(k):
    with pytest.raises(ValueError, match="k must be"):
        rrf_fuse([np.array([[0, 1]])], k=k)


def test_bad_inputs_raise():
    with pytest.raises(ValueError, match="twice"):
        rrf_fuse([np.array([[0, 1, 0]])], k=2)
    with pytest.raises(ValueError, match="number of queries"):
        rrf_fuse([np.array([[0, 1]]), np.array([[0], [1]])], k=2)
    with pytest.raises(ValueError, match="at least one"):
        rrf_fuse([], k=2)


class FixedRetriever:
    """A stub retriever returning a fixed ranking of 6 texts; records the depth asked for."""

    def __init__(self, order):
        self.order, self.asked = np.array(order), []

    def fit(self, texts):
        assert len(texts) == len(self.order)
        return self

    def search(self, queries, k):
        self.asked.append(k)
        width = min(k, len(self.order))
        ids = np.tile(self.order[:width], (len(queries), 1))
        return ids, np.zeros(ids.shape)


def test_hybrid_retriever_fuses_components_to_depth():
    a, b = FixedRetriever([0, 1, 2, 3, 4, 5]), FixedRetriever([5, 4, 3, 2, 1, 0])
    hybrid = HybridRetriever([a, b], depth=2).fit(["t"] * 6)
    ids, scores = hybrid.search(["q1", "q2"], k=3)
    assert a.asked == [3] and b.asked == [3]  # max(depth, k)
    want_ids, want_scores = rrf_fuse([np.tile([0, 1, 2], (2, 1)), np.tile([5, 4, 3], (2, 1))], k=3)
    assert np.array_equal(ids, want_ids) and np.array_equal(scores, want_scores)
    assert ids.tolist()[0] == [0, 5, 1]  # 0 and 5 tie at 1/61; lower id first
    ids, _ = hybrid.search(["q"], k=50)
    assert ids.shape == (1, 6)  # min(k, n)
    with pytest.raises(ValueError, match="k must be"):
        hybrid.search(["q"], k=0)
    with pytest.raises(ValueError, match="fit"):
        HybridRetriever([a]).search(["q"], k=1)
