"""Retrieval scope: search the whole corpus, or only the document a question names.

Handles: the two scopes of a retrieval (:data:`SCOPES`): ``corpus`` (every chunk of every
document competes, the series' setting for questions that do not name a document) and
``document`` (a question that names its document, "this contract", "they" in a paper, is
searched among that document's chunks only, as a RAG system with a selected document filters
its index by metadata). :class:`DocumentScope` holds which document each text (chunk) and each
question belongs to; :func:`restrict` keeps, per question, the texts of its own document from a
full ranking; :func:`scoped_search` ranks every text with the corpus-wide retriever (BM25's
statistics and the dense vectors are those of the whole index, as a metadata filter leaves
them) and restricts the candidate set before the top ``k`` is taken.

Why a full ranking and not a post-filtered shallow list: a top-100 list of the whole corpus
may hold few or none of a document's chunks, so filtering it would leave budgets unfilled.
Restricting a full ranking is exactly "top-k among the document's chunks": every retriever of
the series ranks by one total order (score, then lower index: ``topk.top_k_rows``), so keeping
a subset of a total order keeps its order. A scoped record holds the document's whole ranking
(:meth:`DocumentScope.deepest` texts), so every token budget fills up to the document's length.
Fused retrievers (hybrid) fuse the scoped rankings of their parts (``cell_search``), whose union
stays inside the document.

The scope of a corpus is declared once, by the corpus loader (``data.corpora.QUESTION_SCOPE``),
and travels as ``Corpus.scope``; the run store keys and labels every cell by it
(``recorded_runs.Cell.scope``), so a cross-document record is never replayed as a scoped one.

Not handled: scopes wider than one document (a question naming several), approximate search.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

CORPUS, DOCUMENT = "corpus", "document"
SCOPES = (CORPUS, DOCUMENT)
SCOPE_WORDS = {CORPUS: "across all documents", DOCUMENT: "within the question's document"}


def check_scope(scope: str) -> str:
    """``scope`` when it is one of :data:`SCOPES`, else a ``ValueError`` naming them."""
    if scope not in SCOPES:
        raise ValueError(f"retrieval scope {scope!r} is not one of {', '.join(SCOPES)}")
    return scope


@dataclass(frozen=True)
class DocumentScope:
    """Which document each text and each question belongs to (indices into one document list)."""

    text_docs: np.ndarray  # (n_texts,) int64
    query_docs: np.ndarray  # (n_queries,) int64; -1: a document without texts

    @classmethod
    def from_ids(cls, documents: Sequence[str], text_doc_ids: Sequence[str],
                 query_doc_ids: Sequence[str]) -> "DocumentScope":
        """From document ids: ``documents`` (the corpus's order), each text's and each query's."""
        position = {doc_id: i for i, doc_id in enumerate(documents)}
        missing = sorted({d for d in query_doc_ids if d not in position})
        if missing:
            raise ValueError(f"questions name documents that are not in the corpus: {missing[:5]}; "
                             "a question searched within its document needs that document loaded")
        texts = np.fromiter((position[d] for d in text_doc_ids), np.int64, count=len(text_doc_ids))
        queries = np.fromiter((position[d] for d in query_doc_ids), np.int64, count=len(query_doc_ids))
        return cls(texts, queries)

    @classmethod
    def of(cls, corpus, chunks) -> "DocumentScope":
        """The scope of a corpus's questions over its chunks (``Chunk.doc_id``, ``Question.doc_id``)."""
        return cls.from_ids([d.doc_id for d in corpus.documents], [c.doc_id for c in chunks],
                            [q.doc_id for q in corpus.questions])

    def deepest(self) -> int:
        """The most texts any question's document has: the depth of a whole-document ranking."""
        if not len(self.query_docs):
            return 0
        counts = np.bincount(self.text_docs, minlength=int(self.query_docs.max()) + 1)
        return int(counts[self.query_docs].max())

    def digest(self) -> str:
        """sha256 of the assignment (texts' and questions' documents): a changed one is a stale record."""
        digest = hashlib.sha256(b"scope:document\x00")
        digest.update(np.ascontiguousarray(self.text_docs, np.int64).tobytes())
        digest.update(b"\x00")
        digest.update(np.ascontiguousarray(self.query_docs, np.int64).tobytes())
        return digest.hexdigest()

    def provenance(self) -> dict:
        """What a scoped record stores about its scope (checked on every load)."""
        return {"name": DOCUMENT, "assignment_sha256": self.digest(), "deepest": self.deepest()}


def restrict(ids: np.ndarray, scores: np.ndarray, scope: DocumentScope, depth: int) -> tuple[np.ndarray, np.ndarray]:
    """Per query, the ranked texts of its own document (order kept), the first ``depth`` of them.

    ``ids``/``scores``: ``(n_queries, w)`` rankings best first, -1 padding. Returns ``(ids,
    scores)`` of width ``min(depth, w)``, padded with -1 and score 0.0 where a document has
    fewer texts.
    """
    ids = np.asarray(ids, np.int64)
    scores = np.asarray(scores, np.float64)
    width = min(int(depth), ids.shape[1]) if ids.ndim == 2 else 0
    out_ids = np.full((ids.shape[0], width), -1, np.int64)
    out_scores = np.zeros((ids.shape[0], width), np.float64)
    if width == 0:
        return out_ids, out_scores
    safe = np.where(ids >= 0, ids, 0)
    inside = (ids >= 0) & (scope.text_docs[safe] == scope.query_docs[:, None])
    position = np.cumsum(inside, axis=1) - 1  # rank within the document
    keep = inside & (position < width)
    rows, cols = np.nonzero(keep)
    out_ids[rows, position[rows, cols]] = ids[rows, cols]
    out_scores[rows, position[rows, cols]] = scores[rows, cols]
    return out_ids, out_scores


def scoped_search(search: Callable[[int], tuple[np.ndarray, np.ndarray]], n_texts: int, scope: DocumentScope,
                  depth: int) -> tuple[np.ndarray, np.ndarray]:
    """Top ``depth`` texts of each query among its document's texts.

    ``search(k)`` is a fitted corpus-wide retriever's search of every query to depth ``k``; it is
    asked for every text (a full ranking), then :func:`restrict`-ed: the candidate set is the
    document's texts before the top ``depth`` is taken, never a filtered shallow list.
    """
    if len(scope.text_docs) != n_texts:
        raise ValueError(f"the scope assigns {len(scope.text_docs)} texts to documents, the cell has {n_texts}")
    ids, scores = search(max(int(n_texts), 1))
    return restrict(ids, scores, scope, min(int(depth), max(scope.deepest(), 1)))
