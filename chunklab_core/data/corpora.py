"""The one corpus loader: every corpus of the series by name, with one default seed.

Handles: the post-01 SQuAD sample (40 articles, 800 questions by default), the long-document
sets (NQ pages, CUAD contracts, QASPER papers), Chroma's corpora, and your own folder
(``own``, with a questions file), plus a seeded subsample by whole documents. Every seeded
draw defaults to ``core.seeds.DEFAULT_SEED``. Not handled: reading the raw files
(``squad``, ``longdocs``, ``loaders``), chunking.
"""

from __future__ import annotations

from typing import Sequence

from chunklab_core.core.corpus import Corpus
from chunklab_core.core.seeds import DEFAULT_SEED

CORPUS_LABELS = {
    "squad": "SQuAD v1.1 (sample)",
    "nq": "Natural Questions pages",
    "cuad": "CUAD contracts",
    "qasper": "QASPER papers",
    "chroma": "Chroma corpora",
    "own": "your documents",
}

# Corpora whose questions name their document ("this contract", "they" in a paper): each question
# is searched within its own document (``retrieval.scope``); every other corpus across all documents.
QUESTION_SCOPE = {"cuad": "document", "qasper": "document"}


def subsample_documents(corpus: Corpus, n_documents: int | None, seed: int) -> Corpus:
    """Seeded subsample of whole documents with all their questions (``None`` or too many: unchanged).

    Procedure: ``numpy.random.default_rng(seed).choice(len(documents), n, replace=False)``,
    kept in corpus order. Dense encoding on this 2-core machine runs at about 3,000 tokens
    per second, so the post reads a few whole long documents rather than all of them.
    """
    if n_documents is None or n_documents >= len(corpus.documents):
        return corpus
    if n_documents < 1:
        raise ValueError(f"n_documents must be >= 1, got {n_documents}")
    import numpy as np

    keep = np.sort(np.random.default_rng(seed).choice(len(corpus.documents), size=n_documents, replace=False))
    documents = [corpus.documents[i] for i in keep]
    ids = {d.doc_id for d in documents}
    return Corpus(corpus.name, documents, [q for q in corpus.questions if q.doc_id in ids])


def load_corpus(name: str, *, squad_articles: int = 40, squad_questions: int = 800, seed: int = DEFAULT_SEED,
                docs: str = "", questions: str = "", n_documents: int | None = None,
                chroma_corpora: Sequence[str] | None = None, descriptive_name: bool = False) -> Corpus:
    """One corpus of the post by name: squad, nq, cuad, qasper, chroma, or own (needs docs+questions).

    ``n_documents`` subsamples the long-document sets (nq, cuad, qasper) by whole documents;
    ``chroma_corpora`` picks Chroma corpus ids. The corpus is named by ``name`` (the tables'
    corpus column), or with ``descriptive_name`` by what was drawn (e.g.
    ``squad-dev-sample-40a-800q-seed20260729``, post 01's name for its sample).
    """
    corpus = _load(name, squad_articles=squad_articles, squad_questions=squad_questions, seed=seed, docs=docs,
                   questions=questions, n_documents=n_documents, chroma_corpora=chroma_corpora,
                   descriptive_name=descriptive_name)
    if name != "own":  # your documents' paths are not provenance of the series
        corpus.source = {"name": name, "squad_articles": squad_articles, "squad_questions": squad_questions,
                         "seed": seed, "n_documents": n_documents,
                         "chroma_corpora": list(chroma_corpora) if chroma_corpora else None,
                         "descriptive_name": descriptive_name}
    corpus.scope = QUESTION_SCOPE.get(name, "corpus")
    return corpus


def _load(name: str, *, squad_articles: int, squad_questions: int, seed: int, docs: str, questions: str,
          n_documents: int | None, chroma_corpora: Sequence[str] | None, descriptive_name: bool) -> Corpus:
    if name == "squad":
        from chunklab_core.data.squad import load_squad_dev, sample_corpus

        corpus = sample_corpus(load_squad_dev(), squad_articles, squad_questions, seed)
        if not descriptive_name:
            corpus.name = "squad"
        return corpus
    if name in {"nq", "cuad", "qasper", "chroma"}:
        from chunklab_core.data import longdocs

        if name == "chroma":
            corpus = longdocs.load_chroma(chroma_corpora)
        else:
            loader = {"nq": longdocs.load_nq_longdocs, "cuad": longdocs.load_cuad_contracts,
                      "qasper": longdocs.load_qasper_papers}[name]
            corpus = subsample_documents(loader(), n_documents, seed)
        corpus.name = name
        return corpus
    if name == "own":
        if not docs or not questions:
            raise ValueError("the 'own' corpus needs DOCS (a folder) and QUESTIONS (a YAML or JSONL file)")
        from chunklab_core.data.loaders import load_user_corpus

        return load_user_corpus(docs, questions, name="own")
    raise ValueError(f"unknown corpus {name!r}; known: {', '.join(CORPUS_LABELS)}")
