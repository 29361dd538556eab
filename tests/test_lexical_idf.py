"""``chunking.lexical.fit_idf`` against a hand-computed fixture and scikit-learn's ``TfidfVectorizer``.

scikit-learn is imported directly: the reference library's absence fails the tests.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from sklearn.feature_extraction.text import TfidfVectorizer

from chunklab_core.chunking.lexical import fit_idf
from chunklab_core.core.text import sentence_spans

ROOT = Path(__file__).resolve().parents[1]


def test_hand_computed_vocabulary_and_idf():
    # 3 sentences; "the" in all 3, "cat" in 2, "sat"/"dog" in 1; "a" is one character (no term)
    vocabulary, idf = fit_idf(["The cat sat.", "the dog", "A cat, THE end"])
    assert vocabulary == {"cat": 0, "dog": 1, "end": 2, "sat": 3, "the": 4}
    expected = {"cat": math.log(4 / 3) + 1, "dog": math.log(4 / 2) + 1, "end": math.log(4 / 2) + 1,
                "sat": math.log(4 / 2) + 1, "the": math.log(4 / 4) + 1}
    np.testing.assert_allclose(idf, [expected[t] for t in sorted(expected)], rtol=0, atol=1e-15)


def test_no_term_is_none_where_scikit_learn_raises():
    for sentences in ([], ["a b c", "? !"]):
        assert fit_idf(sentences) is None
        with pytest.raises(ValueError):
            TfidfVectorizer().fit(sentences)


@pytest.mark.parametrize("sentences", [
    ["The cat sat.", "the dog", "A cat, THE end"],
    ["Überprüfung der Lampe", "ÜBERPRÜFUNG 1891", "灯塔的透镜于1891年安装。", "x_y_z under_score", "naïve café Café"],
])
def test_equals_scikit_learn_on_fixtures(sentences):
    vocabulary, idf = fit_idf(sentences)
    reference = TfidfVectorizer().fit(sentences)
    assert vocabulary == reference.vocabulary_
    np.testing.assert_allclose(idf, reference.idf_, rtol=1e-12, atol=0)


def test_equals_scikit_learn_on_every_example_document():
    from chunklab_core.data.loaders import load_user_corpus

    corpus = load_user_corpus(ROOT / "examples" / "own_docs", ROOT / "examples" / "own_docs" / "questions.yaml")
    assert len(corpus.documents) >= 4
    for doc in corpus.documents:
        text = doc.text
        sentences = [text[s:e] for s, e in sentence_spans(text) if text[s:e].strip()]
        vocabulary, idf = fit_idf(sentences)
        reference = TfidfVectorizer().fit(sentences)
        assert vocabulary == reference.vocabulary_, doc.doc_id
        np.testing.assert_allclose(idf, reference.idf_, rtol=1e-12, atol=0)
