"""A sample named by what it is: its data set, its n, and the documents its questions come from.

Handles: :func:`sample_label` ("SQuAD v1.1, 200 questions from 10 articles") from the counts,
:func:`corpus_sample_label` from a :class:`chunklab_core.core.corpus.Corpus` (questions counted,
documents counted as the distinct documents those questions are about, or, when a question
names no document, the corpus's documents), and :func:`labels_for` (one label per corpus key
of a post). Every table and finding of the series labels its sample with these, so "SQuAD
v1.1 (sample)" never stands for samples of 800, 200 and 60 questions at once.

A corpus key is a name of :data:`chunklab_core.data.corpora.CORPUS_LABELS` (``squad``,
``nq``, ...); the data set's name and the word for its documents come from
:data:`DATASETS` and :data:`DOCUMENT_WORDS`. An unknown key is named as itself, with
"documents". Not handled: loading a corpus (:mod:`chunklab_core.data.corpora`).
"""

from __future__ import annotations

from typing import Mapping

from chunklab_core.core import numbers
from chunklab_core.core.corpus import Corpus

__all__ = ["DATASETS", "DOCUMENT_WORDS", "sample_label", "corpus_sample_label", "scope_label", "labels_for"]

DATASETS = {"squad": "SQuAD v1.1", "nq": "Natural Questions", "cuad": "CUAD",
            "qasper": "QASPER", "chroma": "Chroma's corpora", "own": "your documents"}
DOCUMENT_WORDS = {"squad": ("article", "articles"), "nq": ("page", "pages"),
                  "cuad": ("contract", "contracts"), "qasper": ("paper", "papers"),
                  "chroma": ("document", "documents"), "own": ("document", "documents")}


def sample_label(key: str, questions: int, documents: int) -> str:
    """``<data set>, <n> questions from <d> <documents>``, nouns in agreement with their numbers."""
    if questions < 0 or documents < 0:
        raise ValueError(f"counts must be >= 0, got {questions} questions and {documents} documents")
    singular, plural = DOCUMENT_WORDS.get(key, ("document", "documents"))
    return (f"{DATASETS.get(key, key)}, {numbers.count(questions, 'question')} from "
            f"{numbers.count(documents, singular, plural)}")


def corpus_sample_label(key: str, corpus: Corpus) -> str:
    """:func:`sample_label` of ``corpus``: its questions, and the documents they are about; a corpus
    whose questions are searched within their own document (``retrieval.scope``) says so."""
    named = [getattr(q, "doc_id", None) for q in corpus.questions]
    about = len(set(named)) if named and all(named) else len(corpus.documents)
    label = sample_label(key, len(corpus.questions), about)
    return scope_label(key, label, getattr(corpus, "scope", "corpus"))


def scope_label(key: str, label: str, scope: str) -> str:
    """``label``, followed by ``, each searched within its <document>`` for a document-scoped corpus."""
    if scope == "corpus":
        return label
    if scope != "document":
        raise ValueError(f"unknown retrieval scope {scope!r}")
    return f"{label}, each searched within its {DOCUMENT_WORDS.get(key, ('document', 'documents'))[0]}"


def labels_for(corpora: Mapping[str, Corpus]) -> dict[str, str]:
    """``key -> label`` for each ``key: corpus`` of a post (:func:`corpus_sample_label`)."""
    return {key: corpus_sample_label(key, corpus) for key, corpus in corpora.items()}
