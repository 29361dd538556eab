"""Samples named by what they are (chunklab_core.reports.samples)."""

from __future__ import annotations

import pytest

from chunklab_core.core.corpus import Corpus, Document, Question
from chunklab_core.reports.samples import corpus_sample_label, labels_for, sample_label


def _corpus(doc_ids_of_questions, n_documents=4):
    documents = [Document(f"d{i}", f"text {i}", f"title {i}", {}) for i in range(n_documents)]
    questions = [Question(f"q{i}", "Why?", doc or "", (("x",),))
                 for i, doc in enumerate(doc_ids_of_questions)]
    return Corpus("c", documents, questions)


def test_label_from_counts():
    assert sample_label("squad", 200, 10) == "SQuAD v1.1, 200 questions from 10 articles"
    assert sample_label("nq", 31, 1) == "Natural Questions, 31 questions from 1 page"
    assert sample_label("cuad", 1, 2) == "CUAD, 1 question from 2 contracts"
    assert sample_label("mine", 3, 3) == "mine, 3 questions from 3 documents"
    assert sample_label("squad", 2000, 48) == "SQuAD v1.1, 2,000 questions from 48 articles"
    with pytest.raises(ValueError, match=">= 0"):
        sample_label("squad", -1, 3)


def test_label_from_a_corpus_counts_the_documents_asked_about():
    # 5 questions about 2 of the 4 documents: "from 2"; a question without a document: all 4
    assert corpus_sample_label("squad", _corpus(["d0", "d1", "d1", "d0", "d1"])) == \
        "SQuAD v1.1, 5 questions from 2 articles"
    assert corpus_sample_label("nq", _corpus(["d0", None, "d1"])) == \
        "Natural Questions, 3 questions from 4 pages"
    assert labels_for({"squad": _corpus(["d2"])}) == {"squad": "SQuAD v1.1, 1 question from 1 article"}


def test_post04_labels_count_passages_and_their_documents():
    from types import SimpleNamespace

    from chunklab_core.reports.post04.tables import sample_labels

    passages = [SimpleNamespace(corpus="squad", doc_id=d) for d in ("a", "a", "b")] + \
        [SimpleNamespace(corpus="nq", doc_id="p")]
    assert sample_labels(passages) == {"squad": "SQuAD v1.1, 3 questions from 2 articles",
                                       "nq": "Natural Questions, 1 question from 1 page"}
