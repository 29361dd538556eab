"""Chroma's token-level metrics on hand-computed fixtures, against the series' span metrics
(they agree without overlap; recall always) and against scikit-learn on character masks;
precision_Ω (the union of the chunks meeting an excerpt, as Chroma's ``_full_precision_score``)
against pandas' closed ``Interval.overlaps`` for "meets" and numpy character masks for unions."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import jaccard_score, precision_score, recall_score

from chunklab_core.evaluation.chroma_metrics import (chroma_iou, chroma_precision, chroma_precision_omega,
                                                     chroma_recall, mean_and_sd, omega_chunks)
from chunklab_core.evaluation.span_metrics import span_overlap


def test_hand_fixture_with_overlapping_chunks():
    excerpts = [("d", 10, 20)]
    retrieved = [("d", 0, 15), ("d", 12, 30)]  # overlap [12, 15) counted twice in |t_r|
    # |t_e ∩ t_r| = 10 (all of [10, 20)), |t_e| = 10, |t_r| = 15 + 18 = 33
    assert chroma_recall(retrieved, excerpts) == 1.0
    assert chroma_precision(retrieved, excerpts) == pytest.approx(10 / 33)
    assert chroma_iou(retrieved, excerpts) == pytest.approx(10 / (10 + 33 - 10))
    # the series' span metrics count the union (30 characters): they differ here
    series = span_overlap(retrieved, excerpts)
    assert series.recall == 1.0 and series.precision == pytest.approx(10 / 30)


def test_hand_fixture_two_documents_and_a_miss():
    excerpts = [("a", 0, 4), ("b", 5, 9), ("b", 7, 11)]  # |t_e| = 4 + 6 = 10
    retrieved = [("a", 2, 6), ("c", 0, 100)]  # 2 relevant characters; |t_r| = 4 + 100
    assert chroma_recall(retrieved, excerpts) == pytest.approx(2 / 10)
    assert chroma_precision(retrieved, excerpts) == pytest.approx(2 / 104)
    assert chroma_iou(retrieved, excerpts) == pytest.approx(2 / (10 + 104 - 2))
    assert chroma_precision([], excerpts) == 0.0 and chroma_recall([], excerpts) == 0.0
    assert np.isnan(chroma_recall(retrieved, []))


def test_precision_omega_hand_fixture():
    chunks = [("d", 0, 15), ("d", 15, 30), ("d", 30, 40), ("e", 0, 50)]
    excerpts = [("d", 10, 20)]
    assert omega_chunks(chunks, excerpts) == [("d", 0, 15), ("d", 15, 30)]
    assert chroma_precision_omega(chunks, excerpts) == pytest.approx(10 / 30)
    # one chunk exactly the excerpt, its neighbours only touching it: Chroma's closed test
    # (max(starts) <= min(ends)) puts the touching chunks in C_Ω too: 10 / 30, not 1
    tiles = [("d", 0, 10), ("d", 10, 20), ("d", 20, 30), ("d", 31, 40)]
    assert omega_chunks(tiles, excerpts) == tiles[:3]
    assert chroma_precision_omega(tiles, excerpts) == pytest.approx(10 / 30)
    assert chroma_precision_omega([("d", 10, 20)], excerpts) == 1.0
    assert chroma_precision_omega([("d", 30, 40)], excerpts) == 0.0
    assert np.isnan(chroma_precision_omega(tiles, []))


def test_precision_omega_unions_overlapping_chunks_where_the_sum_would_not():
    # 50% overlap, as TokenText 800/400: chunks [0, 20) [10, 30) [20, 40), excerpt [12, 18)
    chunks = [("d", 0, 20), ("d", 10, 30), ("d", 20, 40)]
    excerpts = [("d", 12, 18)]
    # C_Ω = the first two; union [0, 30) = 30 characters, their sum 40
    assert chroma_precision_omega(chunks, excerpts) == pytest.approx(6 / 30)
    assert chroma_precision(omega_chunks(chunks, excerpts), excerpts) == pytest.approx(6 / 40)  # summed
    # two excerpts, one partly outside every chunk (stripped whitespace): its uncovered part
    # joins the denominator, as Chroma's unused highlights do: |[0, 30) ∪ [45, 50)| = 35
    gapped = [("d", 0, 20), ("d", 10, 30), ("d", 20, 44)]
    two = [("d", 12, 18), ("d", 42, 50)]
    # C_Ω = all three (the third meets [42, 50)); numerator 6 + 2; union [0, 44) ∪ [44, 50) = 50
    assert chroma_precision_omega(gapped, two) == pytest.approx(8 / 50)


def _omega_by_masks(chunks, excerpts, n):
    """Independent: pandas' closed intervals decide "meets", numpy masks count the unions."""
    closed = lambda s, e: pd.Interval(s, e, closed="both")  # noqa: E731
    meets = [c for c in chunks if any(closed(c[1], c[2]).overlaps(closed(s, e)) for _, s, e in excerpts)]
    truth, held = np.zeros(n, bool), np.zeros(n, bool)
    for _, s, e in excerpts:
        truth[s:e] = True
    for _, s, e in meets:
        held[s:e] = True
    common = int((truth & held).sum())
    return common / int((truth | held).sum()) if common else 0.0


@pytest.mark.parametrize("overlap", [False, True])
@pytest.mark.parametrize("seed", range(8))
def test_precision_omega_agrees_with_masks(seed, overlap):
    rng = np.random.default_rng(300 + seed)
    chunks, _, excerpts, n = _random_case(rng, overlap=overlap)
    if seed % 2:  # gaps between chunks, as stripped library chunks leave
        chunks = [(d, a, max(a + 1, b - 3)) for d, a, b in chunks]
    assert chroma_precision_omega(chunks, excerpts) == pytest.approx(_omega_by_masks(chunks, excerpts, n))


def _random_case(rng, overlap: bool):
    n = 200
    cuts = np.sort(rng.choice(np.arange(1, n), size=12, replace=False))
    bounds = [0, *cuts.tolist(), n]
    chunks = [("d", a, b) for a, b in zip(bounds, bounds[1:])]
    if overlap:
        chunks = [("d", max(0, a - 7), b) for _, a, b in chunks]
    picked = [chunks[i] for i in rng.choice(len(chunks), size=4, replace=False)]
    start = int(rng.integers(0, n - 30))
    excerpts = [("d", start, start + int(rng.integers(5, 30)))]
    return chunks, picked, excerpts, n


@pytest.mark.parametrize("seed", range(8))
def test_agrees_with_span_metrics_and_sklearn_without_overlap(seed):
    rng = np.random.default_rng(seed)
    _, picked, excerpts, n = _random_case(rng, overlap=False)
    series = span_overlap(picked, excerpts)
    assert chroma_recall(picked, excerpts) == pytest.approx(series.recall)
    assert chroma_precision(picked, excerpts) == pytest.approx(series.precision)
    assert chroma_iou(picked, excerpts) == pytest.approx(series.iou)
    truth, returned = np.zeros(n, dtype=int), np.zeros(n, dtype=int)
    for _, a, b in excerpts:
        truth[a:b] = 1
    for _, a, b in picked:
        returned[a:b] = 1
    assert chroma_recall(picked, excerpts) == pytest.approx(recall_score(truth, returned, zero_division=0))
    assert chroma_precision(picked, excerpts) == pytest.approx(precision_score(truth, returned, zero_division=0))
    assert chroma_iou(picked, excerpts) == pytest.approx(jaccard_score(truth, returned, zero_division=0))


@pytest.mark.parametrize("seed", range(8))
def test_recall_agrees_with_overlap_and_precision_is_lower(seed):
    rng = np.random.default_rng(100 + seed)
    _, picked, excerpts, _ = _random_case(rng, overlap=True)
    series = span_overlap(picked, excerpts)
    assert chroma_recall(picked, excerpts) == pytest.approx(series.recall)
    assert chroma_precision(picked, excerpts) <= series.precision + 1e-12
    assert chroma_iou(picked, excerpts) <= series.iou + 1e-12


def test_mean_and_sd():
    assert mean_and_sd([1.0, 0.0, np.nan, 0.5]) == pytest.approx((0.5, np.std([1.0, 0.0, 0.5])))
    assert all(np.isnan(mean_and_sd([np.nan])))


def test_bad_span_is_an_error():
    with pytest.raises(ValueError, match="ends before it starts"):
        chroma_recall([("d", 5, 2)], [("d", 0, 3)])
