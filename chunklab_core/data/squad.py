"""SQuAD v1.1 loader and the seeded sampler used by post 01.

Handles: turning the SQuAD JSON into ``Document`` objects (one per *article*: its paragraphs
joined by a blank line, so a chunker can cut across paragraph boundaries as it would on a
real page) and ``Question`` objects whose gold is one slot holding every distinct crowd
answer as an alternative, with evidence spans mapped from paragraph offsets to article
offsets. Every mapped span is checked to reproduce its answer text.

Sampling procedure (stated in notebook 01): with ``rng = numpy.random.default_rng(seed)``,
draw ``n_articles`` articles without replacement from the 48 dev articles; pool every
question of those articles; draw ``n_questions`` of them without replacement; keep both in
their original file order. The haystack is the sampled articles (questions of an article
are answered from the whole sample, not only their own article).

Not handled: SQuAD 2.0 unanswerable questions.
"""

from __future__ import annotations

import json

import numpy as np

from chunklab_core.core.seeds import DEFAULT_SEED
from chunklab_core.core.corpus import Corpus, Document, Question
from chunklab_core.data.registry import open_text

PARAGRAPH_SEPARATOR = "\n\n"


def parse_squad(raw: dict, name: str = "squad") -> Corpus:
    """Build the full corpus (all articles and questions) from parsed SQuAD JSON."""
    documents: list[Document] = []
    questions: list[Question] = []
    for article_index, article in enumerate(raw["data"]):
        doc_id = f"squad-{article_index:02d}"
        offset = 0
        parts: list[str] = []
        for paragraph in article["paragraphs"]:
            context = paragraph["context"]
            for qa in paragraph["qas"]:
                answers = tuple(a["text"] for a in qa["answers"])
                spans = []
                for a in qa["answers"]:
                    start = offset + a["answer_start"]
                    span = (doc_id, start, start + len(a["text"]))
                    if context[a["answer_start"] : a["answer_start"] + len(a["text"])] != a["text"]:
                        raise ValueError(f"SQuAD question {qa['id']}: answer_start does not reproduce {a['text']!r}")
                    if span not in spans:
                        spans.append(span)
                alternatives = tuple(dict.fromkeys(answers))
                questions.append(
                    Question(
                        qid=qa["id"],
                        text=qa["question"],
                        doc_id=doc_id,
                        gold_slots=(alternatives,),
                        answers=answers,
                        evidence_spans=tuple(spans),
                        source="crowd (written while reading the paragraph)",
                    )
                )
            parts.append(context)
            offset += len(context) + len(PARAGRAPH_SEPARATOR)
        text = PARAGRAPH_SEPARATOR.join(parts)
        documents.append(Document(doc_id=doc_id, text=text, title=article["title"]))
    corpus = Corpus(name, documents, questions)
    _check_spans(corpus)
    return corpus


def _check_spans(corpus: Corpus) -> None:
    """Every evidence span, mapped to article offsets, reproduces one of its answers."""
    for q in corpus.questions:
        text = corpus.doc(q.doc_id).text
        for _, start, end in q.evidence_spans:
            if text[start:end] not in q.answers:
                raise ValueError(f"SQuAD question {q.qid}: span [{start}, {end}) reproduces no answer")


def load_squad_dev() -> Corpus:
    """The whole SQuAD v1.1 dev set (48 articles, 10,570 questions), verified by checksum."""
    return parse_squad(json.loads(open_text("squad-dev")), name="squad-dev")


def sample_corpus(corpus: Corpus, n_articles: int, n_questions: int, seed: int = DEFAULT_SEED) -> Corpus:
    """Seeded sample: ``n_articles`` articles, then ``n_questions`` of their questions.

    Raises ``ValueError`` for an empty or impossible sample.
    """
    if n_articles < 1 or n_questions < 1:
        raise ValueError(f"sample must be non-empty: n_articles={n_articles}, n_questions={n_questions}")
    if n_articles > len(corpus.documents):
        raise ValueError(f"n_articles={n_articles} exceeds the {len(corpus.documents)} articles available")
    rng = np.random.default_rng(seed)
    article_idx = np.sort(rng.choice(len(corpus.documents), size=n_articles, replace=False))
    documents = [corpus.documents[i] for i in article_idx]
    keep = {d.doc_id for d in documents}
    pool = [q for q in corpus.questions if q.doc_id in keep]
    if n_questions > len(pool):
        raise ValueError(f"n_questions={n_questions} exceeds the {len(pool)} questions of the sampled articles")
    question_idx = np.sort(rng.choice(len(pool), size=n_questions, replace=False))
    questions = [pool[i] for i in question_idx]
    return Corpus(f"{corpus.name}-sample-{n_articles}a-{n_questions}q-seed{seed}", documents, questions)
