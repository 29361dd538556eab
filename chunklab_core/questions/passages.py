"""Post 04's passages: paragraphs that already have a human question, sampled with a seed.

Handles: cutting a document into paragraphs (SQuAD articles: the paragraphs joined by
``squad.PARAGRAPH_SEPARATOR``; Natural Questions pages: the top-level ``<P>`` blocks of
``chunking.structure_blocks``, tags excluded), and two seeded samplers that pair each sampled
paragraph with one of its human questions:

* **SQuAD** (``sample_squad_passages``): the paragraphs of post 01's sample that hold the
  evidence of at least one of its sampled crowd questions (written while looking at that
  paragraph). The answer spans are the crowd answers' ``evidence_spans``.
* **Natural Questions** (``sample_nq_passages``): real search queries whose gold answer occurs
  (``longdocs.locate``: exact, else case/whitespace-insensitive) in exactly **one** paragraph
  of its page; that paragraph is the passage. Answers that occur in several paragraphs ("10",
  a year) or only in tables and lists are left out on purpose: choosing among paragraphs
  would either be a guess or, if made by similarity to the query, would bias the very word
  overlap post 04 measures. The answer spans are its occurrences in that paragraph.

Sampling procedure (both corpora): ``rng = numpy.random.default_rng(seed)``; the eligible
paragraphs in document order; ``rng.permutation`` of them, first ``n`` kept (all when ``n`` is
None), in that random order, so any prefix of the list is itself a uniform sample; then, in the
same order, ``rng.integers(len(questions))`` picks one of the paragraph's human questions
(listed in corpus order).

Not handled: generating questions (``questions.generation``), paragraphs of other corpora.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import numpy as np

from chunklab_core.chunking import structure_blocks
from chunklab_core.core.corpus import Corpus, Document, Question
from chunklab_core.data.longdocs import locate
from chunklab_core.data.squad import PARAGRAPH_SEPARATOR

HUMAN_SOURCES = {"squad": "crowd (written looking at the paragraph)",
                 "nq": "real search query (not written from the passage)"}


@dataclass(frozen=True)
class Passage:
    """A paragraph ``doc.text[start:end]`` and the human question paired with it.

    ``human_spans``: the human answer's ``(start, end)`` document offsets inside the passage.
    """

    passage_id: str
    corpus: str
    doc_id: str
    start: int
    end: int
    text: str
    human_qid: str
    human_question: str
    human_answers: tuple[str, ...]
    human_spans: tuple[tuple[int, int], ...]

    @property
    def human_source(self) -> str:
        return HUMAN_SOURCES[self.corpus]


def squad_paragraph_spans(doc: Document) -> list[tuple[int, int]]:
    """``(start, end)`` of each paragraph of a SQuAD article (split at the blank-line joins)."""
    spans, cursor = [], 0
    for part in doc.text.split(PARAGRAPH_SEPARATOR):
        spans.append((cursor, cursor + len(part)))
        cursor += len(part) + len(PARAGRAPH_SEPARATOR)
    return spans


def html_paragraph_spans(doc: Document) -> list[tuple[int, int]]:
    """``(start, end)`` of the text inside each top-level ``<P>`` block, tags and edge spaces
    excluded; empty paragraphs (``<P> </P>``) are skipped."""
    spans = []
    for block in structure_blocks(doc.text):
        if block.kind != "paragraph":
            continue
        inner_start = doc.text.index(">", block.start) + 1
        inner_end = doc.text.rindex("<", block.start, block.end)
        text = doc.text[inner_start:inner_end]
        if text.strip():
            lead = len(text) - len(text.lstrip())
            inner_start, inner_end = inner_start + lead, inner_start + len(text.rstrip())
            spans.append((inner_start, inner_end))
    return spans


def _containing(spans: list[tuple[int, int]], start: int, end: int) -> int | None:
    for index, (s, e) in enumerate(spans):
        if s <= start and end <= e:
            return index
    return None


def _draw(eligible: list[tuple[Document, int, tuple[int, int], list[tuple[Question, tuple]]]],
          corpus_name: str, n: int | None, seed: int) -> list[Passage]:
    """The seeded permutation of the eligible paragraphs, then one question each."""
    if n is not None and not 1 <= n <= len(eligible):
        raise ValueError(f"cannot sample {n} {corpus_name} passages: {len(eligible)} paragraphs are "
                         "eligible (see the docstring of chunklab_core.questions.passages for the rule)")
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(eligible))[: len(eligible) if n is None else n]
    passages = []
    for index in order:
        doc, paragraph, (start, end), questions = eligible[index]
        question, spans = questions[int(rng.integers(len(questions)))]
        passages.append(Passage(f"{doc.doc_id}-p{paragraph:03d}", corpus_name, doc.doc_id, start, end,
                                doc.text[start:end], question.qid, question.text, tuple(question.answers),
                                tuple(spans)))
    return passages


def sample_squad_passages(corpus: Corpus, n: int | None, seed: int) -> list[Passage]:
    """``n`` SQuAD paragraphs holding the evidence of a sampled crowd question, one question each."""
    by_paragraph: dict[tuple[str, int], list] = defaultdict(list)
    for question in corpus.questions:
        if not question.evidence_spans:
            continue
        doc = corpus.doc(question.doc_id)
        spans = squad_paragraph_spans(doc)
        _, first_start, first_end = question.evidence_spans[0]
        paragraph = _containing(spans, first_start, first_end)
        if paragraph is None:
            raise ValueError(f"SQuAD question {question.qid}: its evidence span crosses a paragraph join")
        by_paragraph[(doc.doc_id, paragraph)].append(
            (question, tuple(dict.fromkeys((s, e) for _, s, e in question.evidence_spans))))
    eligible = []
    for doc in corpus.documents:
        for paragraph, span in enumerate(squad_paragraph_spans(doc)):
            if (doc.doc_id, paragraph) in by_paragraph:
                eligible.append((doc, paragraph, span, by_paragraph[(doc.doc_id, paragraph)]))
    return _draw(eligible, "squad", n, seed)


def nq_answer_paragraph(doc: Document, answer: str) -> tuple[int, tuple[int, int], list[tuple[int, int]]] | None:
    """(paragraph index, paragraph span, answer spans) when ``answer`` occurs in exactly one
    ``<P>`` paragraph of ``doc``; None when it occurs in none or in several."""
    found = []
    for index, (start, end) in enumerate(html_paragraph_spans(doc)):
        occurrences = locate(doc.text[start:end], answer) if answer.strip() else []
        if occurrences:
            found.append((index, (start, end), [(start + s, start + e) for s, e in occurrences]))
    return found[0] if len(found) == 1 else None


def sample_nq_passages(corpus: Corpus, n: int | None, seed: int) -> list[Passage]:
    """``n`` NQ paragraphs that uniquely hold a search query's answer, one query each."""
    by_paragraph: dict[tuple[str, int], list] = defaultdict(list)
    spans_of: dict[tuple[str, int], tuple[int, int]] = {}
    for question in corpus.questions:
        if len(question.answers) != 1:
            continue
        found = nq_answer_paragraph(corpus.doc(question.doc_id), question.answers[0])
        if found is None:
            continue
        paragraph, span, answer_spans = found
        by_paragraph[(question.doc_id, paragraph)].append((question, tuple(answer_spans)))
        spans_of[(question.doc_id, paragraph)] = span
    eligible = [(corpus.doc(doc_id), paragraph, spans_of[(doc_id, paragraph)], questions)
                for (doc_id, paragraph), questions in by_paragraph.items()]
    order = {d.doc_id: i for i, d in enumerate(corpus.documents)}
    eligible.sort(key=lambda item: (order[item[0].doc_id], item[1]))
    return _draw(eligible, "nq", n, seed)
