"""Lexical chunk-quality proxies: cohesion, boundary clarity and stickiness from TF-IDF.

Handles: TF-IDF vectors of arbitrary character spans of a corpus, with the vocabulary and idf
of scikit-learn's ``TfidfVectorizer`` (defaults) fitted per document on that document's
sentences (computed by :func:`fit_idf`, which equals ``TfidfVectorizer().fit``'s
``vocabulary_`` and ``idf_`` -- pinned against scikit-learn in ``tests/test_lexical_idf.py`` --
without importing scikit-learn, whose import was the largest single cost of a warm run on
your own documents), and the three
lexical metrics that ``chunking.health`` reports. The chunk-quality literature measures these
with language models: MoC (Zhao et al., ACL 2025, "MoC: Mixtures of Text Chunking Learners
for Retrieval-Augmented Generation System", arXiv:2503.09600) defines *Boundary Clarity* and
*Chunk Stickiness* from LLM perplexities, and HOPE (Brådland et al., SIGIR 2025, "A New
HOPE: Domain-agnostic Automatic Evaluation of Text Chunking", arXiv:2505.02171) scores a
passage's *concept unity* and the *semantic independence* of passages with an LLM. We use no
language model: every similarity below is the cosine of TF-IDF vectors, so these are
*lexical proxies* in the spirit of those metrics (cohesion ~ concept unity, clarity ~
boundary clarity, stickiness ~ chunk stickiness / lack of independence), not
re-implementations. They reward shared vocabulary, not shared meaning, and
``semantic_tfidf`` cuts where adjacent-sentence TF-IDF similarity is low, so it scores well
on clarity partly by construction.

Definitions (``cos`` of L2-normalised TF-IDF rows; a vector without any term has cosine 0
with everything, as in ``chunking.semantic``):

- sentence: a non-blank span of ``text.sentence_spans`` (spans tile the document; blank
  ones hold no term);
- ``lexical_cohesion``: mean over chunks with >= 2 sentences of the mean ``cos`` of
  adjacent sentences inside the chunk; a chunk's sentences are the *whole* document
  sentences that its visible text touches (a sentence cut by the chunk edge counts whole);
- ``lexical_boundary_clarity``: mean over boundaries of ``1 - cos(last sentence before,
  first sentence after)``; a boundary that falls inside a sentence has the same sentence on
  both sides and scores 0 by definition (a mid-sentence cut is the least clear boundary);
- ``lexical_stickiness``: mean over adjacent segments of ``cos(segment_a, segment_b)``,
  each segment's vector built from its own text.

Span vectors are built from token positions, not by re-tokenising strings: the document is
tokenised once with scikit-learn's default pattern ``(?u)\\b\\w\\w+\\b`` (tokens lower-cased
afterwards), and a span's counts are those of the tokens lying wholly inside it. This equals
``vectorizer.transform([text[start:end]])`` except that a word cut by the span edge is left
out (``transform`` would count its fragments) and except for the rare characters whose
lower-case form has a different length. It is written by hand so that the ~14 strategies of
a post reuse one tokenisation per document (a sparse row-gather per strategy instead of a
full re-tokenisation).

Not handled: sentences, whitespace and chunk spans themselves (``chunking.health``'s
``CorpusProfile`` and ``ChunkLayout``, which ``lexical_metrics`` reads), semantic (embedding)
similarity, perplexity.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Sequence

import numpy as np
import scipy.sparse as sp

TOKEN_PATTERN = re.compile(r"(?u)\b\w\w+\b")  # scikit-learn's default token_pattern


def fit_idf(sentences: Sequence[str]) -> tuple[dict[str, int], np.ndarray] | None:
    """Vocabulary (term -> column, terms in sorted order) and smoothed idf of ``sentences``,
    ``idf(t) = ln((1 + n) / (1 + df(t))) + 1`` with ``n`` sentences and ``df(t)`` the sentences
    holding ``t`` (terms: :data:`TOKEN_PATTERN` on the lower-cased text), as scikit-learn's
    ``TfidfVectorizer()`` defaults fit them (its user guide, "Tf-idf term weighting",
    ``smooth_idf=True``); ``None`` when there is no term (where scikit-learn raises).
    """
    df: Counter = Counter()
    for sentence in sentences:
        df.update(set(TOKEN_PATTERN.findall(sentence.lower())))
    if not df:
        return None
    terms = sorted(df)
    counts = np.array([df[t] for t in terms], dtype=np.float64)
    idf = np.log((1.0 + len(sentences)) / (1.0 + counts)) + 1.0
    return {term: column for column, term in enumerate(terms)}, idf


class LexicalIndex:
    """Token positions, per-document vocabularies and idf for a whole corpus.

    Coordinates are global: document ``i`` occupies ``[offsets[i], offsets[i + 1])``. Each
    document gets its own block of term columns (its own fitted vocabulary), so vectors of
    different documents never share a term and are never compared.
    """

    def __init__(self, texts: Sequence[str], offsets: np.ndarray, sentence_starts: np.ndarray,
                 sentence_ends: np.ndarray, sentence_doc: np.ndarray) -> None:
        tok_starts, tok_ends, terms, idf_blocks = [], [], [], []
        n_terms = 0
        bounds = np.searchsorted(sentence_doc, np.arange(len(texts) + 1))
        for i, text in enumerate(texts):
            rows = slice(bounds[i], bounds[i + 1])
            sentences = [text[s - offsets[i] : e - offsets[i]] for s, e in
                         zip(sentence_starts[rows], sentence_ends[rows])]
            fitted = fit_idf(sentences)
            if fitted is None:  # no sentence (or no two-character word): no term
                continue
            vocabulary, idf = fitted
            found = [(m.start(), m.end(), vocabulary.get(m.group().lower(), -1))
                     for m in TOKEN_PATTERN.finditer(text)]
            found = np.array([f for f in found if f[2] >= 0], dtype=np.int64).reshape(-1, 3)
            tok_starts.append(found[:, 0] + offsets[i])
            tok_ends.append(found[:, 1] + offsets[i])
            terms.append(found[:, 2] + n_terms)
            idf_blocks.append(idf)
            n_terms += len(idf)
        empty = np.zeros(0, dtype=np.int64)
        self.token_starts = np.concatenate(tok_starts) if tok_starts else empty
        self.token_ends = np.concatenate(tok_ends) if tok_ends else empty
        self.terms = np.concatenate(terms) if terms else empty
        self.idf = np.concatenate(idf_blocks) if idf_blocks else np.zeros(0)
        self.n_terms = n_terms
        self.sentence_vectors = self.span_vectors(sentence_starts, sentence_ends)
        self.next_sentence_cosine = adjacent_row_cosines(self.sentence_vectors)
        self.next_sentence_cosine[np.diff(sentence_doc) != 0] = np.nan  # never compared

    def span_vectors(self, starts: np.ndarray, ends: np.ndarray) -> sp.csr_matrix:
        """L2-normalised TF-IDF rows (``count x idf``) of global spans ``[starts, ends)``,
        counting the tokens wholly inside each span."""
        starts, ends = np.asarray(starts, dtype=np.int64), np.asarray(ends, dtype=np.int64)
        lo = np.searchsorted(self.token_starts, starts, side="left")
        hi = np.searchsorted(self.token_ends, ends, side="right")
        counts = np.maximum(hi - lo, 0)
        indptr = np.concatenate([[0], np.cumsum(counts)])
        token_index = np.arange(indptr[-1]) - np.repeat(indptr[:-1] - lo, counts)
        columns = self.terms[token_index]
        matrix = sp.csr_matrix((self.idf[columns], columns, indptr), shape=(len(starts), self.n_terms))
        matrix.sum_duplicates()
        norms = np.sqrt(np.asarray(matrix.multiply(matrix).sum(axis=1)).ravel())
        scale = np.divide(1.0, norms, out=np.zeros_like(norms), where=norms > 0)
        return sp.csr_matrix(sp.diags(scale) @ matrix)


def adjacent_row_cosines(vectors: sp.csr_matrix) -> np.ndarray:
    """``cos(v_k, v_{k+1})`` for L2-normalised rows ``k = 0 .. n - 2`` (0 for a zero row)."""
    if vectors.shape[0] < 2:
        return np.zeros(0)
    return np.asarray(vectors[:-1].multiply(vectors[1:]).sum(axis=1), dtype=np.float64).ravel()


def lexical_cohesion(next_sentence_cosine: np.ndarray, first_sentence: np.ndarray,
                     last_sentence: np.ndarray) -> float | None:
    """``mean_c [ mean_{k = f_c .. l_c - 1} cos(s_k, s_{k+1}) ]`` over chunks ``c`` whose
    sentences ``f_c .. l_c`` number at least 2; ``None`` when no chunk has 2 sentences."""
    first, last = np.asarray(first_sentence), np.asarray(last_sentence)
    many = last > first
    if not many.any():
        return None
    cumulative = np.concatenate([[0.0], np.cumsum(np.nan_to_num(next_sentence_cosine))])
    first, last = first[many], last[many]
    return float(np.mean((cumulative[last] - cumulative[first]) / (last - first)))


def lexical_boundary_clarity(next_sentence_cosine: np.ndarray, sentence_before: np.ndarray,
                             sentence_after: np.ndarray) -> float | None:
    """``mean_b [1 - cos(s_before(b), s_after(b))]`` over boundaries ``b``; 0 where both are
    the same sentence (a cut inside it). Sentences either side are adjacent by construction.
    ``None`` without boundaries."""
    before, after = np.asarray(sentence_before), np.asarray(sentence_after)
    if before.size == 0:
        return None
    if np.any((after != before) & (after != before + 1)):
        raise ValueError("sentence_after must equal sentence_before or sentence_before + 1")
    clarity = np.zeros(before.size)
    cut = after == before + 1
    clarity[cut] = 1.0 - next_sentence_cosine[before[cut]]
    return float(np.mean(clarity))


def lexical_stickiness(segment_vectors: sp.csr_matrix, same_document: np.ndarray) -> float | None:
    """``mean_k cos(seg_k, seg_{k+1})`` over adjacent segments of the same document
    (``same_document[k]`` is True when segments ``k`` and ``k + 1`` share a document);
    ``None`` without such a pair."""
    same = np.asarray(same_document, dtype=bool)
    if not same.any():
        return None
    return float(np.mean(adjacent_row_cosines(segment_vectors)[same]))


def lexical_metrics(profile, layout) -> dict[str, float | None]:
    """Cohesion, boundary clarity and stickiness of one strategy's chunks.

    ``profile`` and ``layout`` are ``chunking.health.CorpusProfile`` / ``ChunkLayout``. Chunks
    are their visible text; boundaries are the distinct visible chunk starts other than a
    document's first; segment ``k`` runs from boundary ``k`` to the next one in its document
    (the last to the document's furthest chunk end), so overlap does not inflate stickiness.
    """
    lexical = profile.lexical
    v = layout.visible
    first_visible = profile.first_visible(layout.starts[v])
    last_visible = profile.last_visible(layout.ends[v])
    cohesion = lexical_cohesion(lexical.next_sentence_cosine, profile.sentence_containing(first_visible),
                                profile.sentence_containing(last_visible))
    cuts = np.unique(first_visible)  # distinct chunk starts (visible), in order
    if len(cuts) == 0:
        return {"lexical_cohesion": None, "lexical_boundary_clarity": None, "lexical_stickiness": None}
    cut_doc = profile.document_at(cuts)
    inner = profile.visible_prefix[cuts] > profile.visible_prefix[profile.offsets[cut_doc]]
    before = profile.sentence_containing(profile.last_visible(cuts[inner]))
    clarity = lexical_boundary_clarity(lexical.next_sentence_cosine, before, profile.sentence_containing(cuts[inner]))
    doc_reach = np.zeros(len(profile.documents), dtype=np.int64)
    np.maximum.at(doc_reach, layout.doc[v], layout.ends[v])
    same = cut_doc[:-1] == cut_doc[1:]
    segment_ends = np.where(np.concatenate([same, [False]]), np.roll(cuts, -1), doc_reach[cut_doc])
    stickiness = lexical_stickiness(lexical.span_vectors(cuts, segment_ends), same)
    return {"lexical_cohesion": cohesion, "lexical_boundary_clarity": clarity, "lexical_stickiness": stickiness}
