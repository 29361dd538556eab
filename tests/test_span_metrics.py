"""Span metrics: interval algebra by hand, against character sets, and per-question assembly."""

from __future__ import annotations

import numpy as np
import pytest

from chunklab_core.core.corpus import Corpus, Document, Question
from chunklab_core.retrieval.run import RetrievalRun
from chunklab_core.evaluation.span_metrics import (
    intersection_length,
    merge_intervals,
    span_overlap,
    span_scores,
    total_length,
)


def test_merge_intervals():
    assert merge_intervals([]) == []
    assert merge_intervals([(5, 8), (0, 5), (20, 20), (7, 12)]) == [(0, 12)]
    assert merge_intervals([(10, 20), (0, 3), (2, 4)]) == [(0, 4), (10, 20)]
    with pytest.raises(ValueError, match="ends before it starts"):
        merge_intervals([(5, 3)])


def test_intersection_length_by_hand():
    assert intersection_length([(90, 210)], [(100, 200)]) == 100
    assert intersection_length([(0, 10), (20, 30)], [(5, 25)]) == 10
    assert intersection_length([(0, 10)], [(10, 20)]) == 0
    assert intersection_length([(0, 50), (40, 60)], [(30, 45)]) == 15  # merged first: no double count
    assert intersection_length([], [(0, 5)]) == 0


def test_chunk_around_gold_fixture():
    scores = span_overlap([("d", 90, 210)], [("d", 100, 200)])
    assert scores.recall == 1.0
    assert scores.precision == pytest.approx(100 / 120)
    assert scores.iou == pytest.approx(100 / 120)
    assert scores.complete == 1.0


def test_overlapping_contexts_are_merged():
    # two overlapping contexts cover [90, 210) once: 120 retrieved characters, not 130
    scores = span_overlap([("d", 90, 150), ("d", 140, 210)], [("d", 100, 200)])
    assert scores.precision == pytest.approx(100 / 120) and scores.iou == pytest.approx(100 / 120)


def test_multi_span_evidence_and_documents():
    evidence = [("d", 0, 10), ("d", 20, 30)]
    scores = span_overlap([("d", 5, 25)], evidence)
    assert scores.recall == 0.5 and scores.precision == 0.5
    assert scores.iou == pytest.approx(10 / 30) and scores.complete == 0.0
    assert span_overlap([("d", 0, 30)], evidence).complete == 1.0
    # the same offsets in another document do not count
    assert span_overlap([("other", 0, 30)], evidence) == (0.0, 0.0, 0.0, 0.0)
    # nothing returned: precision 0 by convention; no evidence: NaN
    assert span_overlap([], evidence).precision == 0.0
    assert all(np.isnan(v) for v in span_overlap([("d", 0, 5)], []))


def test_equal_to_character_sets():
    rng = np.random.default_rng(3)
    for _ in range(300):
        def spans(n):
            starts = rng.integers(0, 200, size=n)
            return [(str(rng.integers(0, 2)), int(s), int(s + rng.integers(0, 60))) for s in starts]

        retrieved, evidence = spans(rng.integers(0, 5)), spans(rng.integers(1, 4))
        r = {(d, c) for d, s, e in retrieved for c in range(s, e)}
        g = {(d, c) for d, s, e in evidence for c in range(s, e)}
        scores = span_overlap(retrieved, evidence)
        if not g:
            assert np.isnan(scores.recall)
            continue
        assert scores.recall == pytest.approx(len(r & g) / len(g))
        assert scores.precision == pytest.approx(len(r & g) / len(r) if r else 0.0)
        assert scores.iou == pytest.approx(len(r & g) / len(r | g))
        complete = all({(d, c) for c in range(s, e)} <= r for d, s, e in evidence)
        assert scores.complete == float(complete)
        assert total_length([(s, e) for _, s, e in evidence if _ == "0"]) == len({c for d, c in g if d == "0"})


def test_span_scores_per_question():
    doc = Document("d", "x" * 400)
    questions = [
        Question("inside", "q", "d", (), evidence_spans=(("d", 100, 200),)),
        Question("split", "q", "d", (), evidence_spans=(("d", 0, 10), ("d", 300, 320))),
        Question("none", "q", "d", (("yes",),)),
    ]
    contexts = [("d", 90, 210), ("d", 0, 50), ("d", 290, 400)]
    run = RetrievalRun(corpus=Corpus("c", [doc], questions), strategy="s", retriever="bm25", chunks=[],
                       contexts=contexts, ranked=np.array([[0, 1], [1, 2], [2, -1]]))
    table = span_scores(run, ks=(1, 2)).set_index("qid")
    assert table.loc["inside", "span_recall@1"] == 1.0
    assert table.loc["inside", "span_precision@1"] == pytest.approx(100 / 120)
    assert table.loc["inside", "span_precision@2"] == pytest.approx(100 / 170)
    assert table.loc["split", "span_recall@1"] == pytest.approx(10 / 30)
    assert table.loc["split", "complete_evidence@1"] == 0.0
    assert table.loc["split", "complete_evidence@2"] == 1.0
    assert table.loc["split", "span_iou@2"] == pytest.approx(30 / 160)
    assert not table.loc["none", "has_evidence"]
    assert table.loc["none", [c for c in table.columns if "@" in c]].isna().all()
    with pytest.raises(ValueError, match="every k"):
        span_scores(run, ks=(3,))
