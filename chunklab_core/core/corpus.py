"""The corpus model: documents, questions with gold answers, and chunks.

Handles: the plain data objects every stage passes along. A ``Question`` carries its gold as
*slots*: a list of slots, each a tuple of alternative strings; a slot is filled when any one
alternative is found. Evidence spans are character offsets ``(doc_id, start, end)`` into a
document's text, given only where the data set has them.

Not handled: reading files (``data.registry``, ``loaders``), chunking (``chunking``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Document:
    """One source document. ``text`` is never modified after loading."""

    doc_id: str
    text: str
    title: str = ""
    meta: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)


@dataclass(frozen=True)
class Question:
    """One test question.

    ``gold_slots``: tuple of slots; each slot is a tuple of alternative snippets.
    ``answers``: the data set's reference answers as given (for answer grading).
    ``evidence_spans``: tuple of ``(doc_id, start, end)`` character offsets, possibly empty.
    ``source``: who wrote the question (e.g. "crowd", "search-query", "generated").
    """

    qid: str
    text: str
    doc_id: str
    gold_slots: tuple[tuple[str, ...], ...]
    answers: tuple[str, ...] = ()
    evidence_spans: tuple[tuple[str, int, int], ...] = ()
    source: str = ""
    tags: tuple[str, ...] = ()


@dataclass(frozen=True)
class Chunk:
    """A chunk of one document, by character offsets only.

    ``[start, end)`` is the indexed span (what the retriever sees); ``[ctx_start, ctx_end)``
    is the returned context (what the reader or LLM sees). They differ for sentence-window
    and parent-document strategies. The text is always ``doc.text[start:end]``; no modified
    copy is ever stored.
    """

    chunk_id: int
    doc_id: str
    start: int
    end: int
    ctx_start: int
    ctx_end: int

    def text(self, doc_text: str) -> str:
        return doc_text[self.start : self.end]

    def context(self, doc_text: str) -> str:
        return doc_text[self.ctx_start : self.ctx_end]


@dataclass
class Corpus:
    """Documents and questions of one data set (or one sample of it)."""

    name: str
    documents: list[Document]
    questions: list[Question]
    # how the corpus was loaded (``data.corpora.load_corpus``'s arguments), for provenance
    source: dict[str, Any] | None = field(default=None, compare=False)
    # where a question is searched: "corpus" (every document) or "document" (its own; ``retrieval.scope``)
    scope: str = field(default="corpus", compare=False)

    def __post_init__(self) -> None:
        self._by_id = {d.doc_id: d for d in self.documents}
        if len(self._by_id) != len(self.documents):
            raise ValueError(f"corpus {self.name!r}: duplicate document ids")

    def doc(self, doc_id: str) -> Document:
        return self._by_id[doc_id]

    @property
    def n_chars(self) -> int:
        return sum(len(d.text) for d in self.documents)

    def summary(self) -> dict[str, Any]:
        return {
            "corpus": self.name,
            "documents": len(self.documents),
            "questions": len(self.questions),
            "characters": self.n_chars,
        }
