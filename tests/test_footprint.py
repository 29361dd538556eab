"""Footprint formulas on hand-computed fixtures."""

import pytest

from chunklab_core.chunking import chunk_corpus
from chunklab_core.core.corpus import Chunk, Corpus, Document, Question
from chunklab_core.retrieval.footprint import (bm25_index_bytes, bm25_postings, duplication_factor, footprint_table,
                                     mean_stride, union_length, vector_index_bytes)


def chunk(i, doc, start, end):
    return Chunk(i, doc, start, end, start, end)


def test_stride_is_the_mean_gap_between_consecutive_starts_within_a_document():
    chunks = [chunk(0, "a", 0, 10), chunk(1, "a", 6, 16), chunk(2, "a", 12, 20), chunk(3, "b", 0, 5)]
    assert mean_stride(chunks) == 6.0  # (6 + 6) / 2; document b has one chunk, no gap
    assert mean_stride([chunk(0, "a", 0, 3)]) != mean_stride([chunk(0, "a", 0, 3)])  # NaN


def test_union_and_duplication_by_hand():
    assert union_length([(0, 10), (6, 16), (12, 20)]) == 20
    assert union_length([(0, 5), (10, 15), (2, 4)]) == 10
    chunks = [chunk(0, "a", 0, 10), chunk(1, "a", 6, 16), chunk(2, "a", 12, 20)]
    assert duplication_factor(chunks) == pytest.approx(28 / 20)
    assert duplication_factor([chunk(0, "a", 0, 4), chunk(1, "a", 4, 9)]) == 1.0


def test_postings_count_distinct_terms_per_text():
    # "the cat the" -> {the, cat}: 2; "Cat, dog!" -> {cat, dog}: 2; "" -> 0
    assert bm25_postings(["the cat the", "Cat, dog!", ""]) == 4
    assert bm25_index_bytes(4) == 32
    assert vector_index_bytes(10, 384) == 15360


def test_a_fixed_window_with_overlap_has_the_stride_and_duplication_it_should():
    text = "x" * 2000
    corpus = Corpus("t", [Document("d", text)], [Question("q", "x?", "d", (("x",),))])
    plain = chunk_corpus(corpus.documents, "fixed_500")
    overlapping = chunk_corpus(corpus.documents, "fixed_500_o125")
    assert mean_stride(plain) == 500 and duplication_factor(plain) == 1.0
    assert mean_stride(overlapping) == pytest.approx(375, abs=1)
    assert duplication_factor(overlapping) > 1.2
    table = footprint_table({"t": corpus}, ["fixed_500", "fixed_500_o125"])
    assert table["chunks"].tolist() == [len(plain), len(overlapping)]
    assert table.loc[1, "vectors_MB_all-MiniLM-L6-v2"] == pytest.approx(len(overlapping) * 384 * 4 / 1e6)
