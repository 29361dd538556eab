"""Shared text utilities: normalisation and sentence spans that tile their range."""

from __future__ import annotations

import pytest

from chunklab_core.core.text import normalize, sentence_spans


def test_normalize():
    assert normalize("  The\tDenver \n\n Broncos ") == "the denver broncos"
    assert normalize("") == ""


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Hello there. How are you? Fine!  Ok", ["Hello there. ", "How are you? ", "Fine!  ", "Ok"]),
        ('He said "stop." Then left.', ['He said "stop." ', "Then left."]),
        ("One para\n\nTwo para", ["One para\n\n", "Two para"]),
        ("我住在东京。你呢？好的！", ["我住在东京。", "你呢？", "好的！"]),
        ("no end punctuation", ["no end punctuation"]),
        ("3.5 million people", ["3.5 million people"]),
    ],
)
def test_sentence_spans(text, expected):
    spans = sentence_spans(text)
    assert [text[s:e] for s, e in spans] == expected
    assert spans[0][0] == 0 and spans[-1][1] == len(text)
    assert all(a[1] == b[0] for a, b in zip(spans, spans[1:]))


def test_sentence_spans_range_and_empty():
    text = "A. B. C."
    assert sentence_spans(text, 3, 3) == []
    assert [text[s:e] for s, e in sentence_spans(text, 3)] == ["B. ", "C."]
