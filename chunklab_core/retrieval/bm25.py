"""Okapi BM25 retrieval: a Unicode-aware tokeniser and a batched, vectorised index.

Handles: tokenising text for lexical retrieval (``tokenize``), the two BM25 formulas as small
pure functions (``idf``, ``term_frequency_saturation``), an index that is fitted once on a
list of texts and answers batches of queries with top-k ids and scores (``BM25Index``), and
deterministic top-k selection with ties broken by index (``retrieval.topk.top_k_rows``).
Not handled: stemming, stop words, other BM25 variants (BM25L, BM25+, ATIRE), adding documents
to a fitted index, query-term weights other than counts, persistence.

Scoring (Robertson & Zaragoza 2009, "The Probabilistic Relevance Framework: BM25 and Beyond",
Foundations and Trends in IR 3(4), section 3; with the Lucene IDF)::

    score(q, d) = sum over query tokens t (repeats included) of  idf(t) * tf_part(t, d)
    tf_part     = tf(t, d) / (tf(t, d) + k1 * (1 - b + b * |d| / avgdl))
    idf(t)      = log(1 + (N - df(t) + 0.5) / (df(t) + 0.5))

with k1 = 1.2, b = 0.75. Classic Okapi multiplies each term by (k1 + 1); that constant factor
changes no ranking, and Lucene >= 8 (``BM25Similarity``, LUCENE-8563) and bm25s
(``method="lucene"``) drop it, so our scores equal bm25s's. Details, checked against the
bm25s 0.3.16 source (``bm25s/__init__.py``, ``bm25s/scoring.py``) and matched here:

* |d| is the number of tokens of d (repeats included); avgdl and N count every fitted text,
  including texts with no tokens at all. (Lucene itself differs slightly: it stores |d|
  lossily in one byte and counts only documents that have the field; bm25s and we do not.)
* A token repeated in the query contributes once per occurrence (bm25s adds a token's column
  once per query occurrence; Lucene's BooleanQuery sums duplicate clauses the same way).
* Query tokens absent from the fitted vocabulary are dropped; a query with no known token
  scores 0 on every text.

Deliberate differences from bm25s, none of which changes a score: we compute in float64
(bm25s defaults to float32); ties in the ranking break by text index, lower first (bm25s
leaves them to ``argpartition``/``argsort``); ``k`` larger than the corpus returns every text
(bm25s raises).

Why by hand rather than through bm25s: the index must be batched over queries (one sparse
matrix product per block of queries), deterministic on ties, and use our tokeniser; it is a
few dozen lines, and the tests pin it to bm25s to 1e-6 on real data.
"""

from __future__ import annotations

import operator
from typing import Sequence

import numpy as np
import regex
import scipy.sparse as sp

from chunklab_core.retrieval.topk import top_k_rows

K1 = 1.2
B = 0.75

# Letters, digits and combining marks of any script are word characters; everything else
# (punctuation, symbols, whitespace, underscore) separates tokens. Marks are included so that
# words of Indic, Thai, Arabic... scripts are not cut at their vowel signs.
_WORD_CHAR = r"[\p{L}\p{N}\p{M}]"
# Scripts written without spaces between words. Script_Extensions (scx) is used so that shared
# characters such as the long-vowel mark "ー" count with Katakana and Hiragana.
_CJK = r"[\p{scx=Han}\p{scx=Hiragana}\p{scx=Katakana}\p{scx=Hangul}]"
_THAI = r"\p{scx=Thai}"
_SPACELESS_RE = regex.compile(rf"(?V1)[{_WORD_CHAR}&&[{_CJK}{_THAI}]]")
_WORD_RE = regex.compile(rf"(?V1){_WORD_CHAR}+")
_RUN_RE = regex.compile(
    rf"(?V1)([{_WORD_CHAR}&&{_CJK}]+)"  # group 1: a CJK run
    rf"|([{_WORD_CHAR}&&{_THAI}]+)"  # group 2: a Thai run
    rf"|([{_WORD_CHAR}--[{_CJK}{_THAI}]]+)"  # group 3: a word in a spaced script
)


def _bigrams(run: str) -> list[str]:
    """Overlapping character bigrams of ``run``; a one-character run gives itself."""
    if len(run) == 1:
        return [run]
    return [run[i : i + 2] for i in range(len(run) - 1)]


def tokenize(text: str) -> list[str]:
    """Split ``text`` into lower-cased retrieval tokens, in text order.

    Rules: lower-case (``str.lower``); a token is a maximal run of letters, digits and
    combining marks of any script (Unicode categories L, N, M); every other character,
    underscore included, is a separator. Runs in scripts written without spaces (Han,
    Hiragana, Katakana, Hangul; and Thai, kept apart from those) are cut out of their word and
    emitted as overlapping character bigrams (a one-character run emits that character),
    because without a dictionary segmenter bigrams are the standard unit (Lucene's
    ``CJKBigramFilter``). No stemming, no stop words, no Unicode normalisation (NFC/NFKC):
    differently composed forms of a word are different tokens.

    >>> tokenize("BM25检索系统 works")
    ['bm25', '检索', '索系', '系统', 'works']
    >>> tokenize("snake_case, don't")
    ['snake', 'case', 'don', 't']
    """
    lowered = text.lower()
    if _SPACELESS_RE.search(lowered) is None:  # fast path: no CJK or Thai anywhere
        return _WORD_RE.findall(lowered)
    tokens: list[str] = []
    for cjk, thai, word in _RUN_RE.findall(lowered):
        if word:
            tokens.append(word)
        else:
            tokens.extend(_bigrams(cjk or thai))
    return tokens


def idf(df: np.ndarray | float, n_docs: int) -> np.ndarray | float:
    """Inverse document frequency, Lucene form: ``log(1 + (N - df + 0.5) / (df + 0.5))``.

    ``df``: number of documents containing the term (>= 1 for a term of the vocabulary);
    ``n_docs``: N, the number of documents. Always > 0, unlike the Robertson-Sparck Jones form
    ``log((N - df + 0.5) / (df + 0.5))`` which is negative for terms in more than half the
    documents. Sources: Robertson & Zaragoza 2009, section 3 (the RSJ weight) and Lucene's
    ``BM25Similarity.idf``; bm25s ``scoring.py`` ``_score_idf_lucene``.
    """
    return np.log1p((n_docs - np.asarray(df, dtype=np.float64) + 0.5) / (np.asarray(df) + 0.5))


def term_frequency_saturation(
    tf: np.ndarray | float,
    doc_len: np.ndarray | float,
    avg_doc_len: float,
    k1: float = K1,
    b: float = B,
) -> np.ndarray | float:
    """BM25 term-frequency part, Lucene form: ``tf / (tf + k1 * (1 - b + b * doc_len / avg_doc_len))``.

    Saturates towards 1 as ``tf`` grows; ``b`` normalises by document length. Classic Okapi
    (Robertson & Zaragoza 2009, section 3) multiplies this by ``(k1 + 1)``, a constant that
    changes no ranking; Lucene >= 8 ``BM25Similarity`` and bm25s ``scoring.py``
    (``_score_tfc_lucene``) drop it, and so do we.
    """
    tf = np.asarray(tf, dtype=np.float64)
    return tf / (tf + k1 * (1.0 - b + b * np.asarray(doc_len, dtype=np.float64) / avg_doc_len))


def _check_texts(texts: Sequence[str], what: str) -> None:
    if isinstance(texts, str):
        raise TypeError(f"{what} must be a sequence of strings, not one string; wrap it: [{what}]")


class BM25Index:
    """Okapi BM25 index over a list of texts (see the module docstring for the formula).

    ``fit(texts)`` builds a sparse term x text weight matrix W (scipy CSR), each entry
    ``idf(t) * term_frequency_saturation(tf, |d|, avgdl)``. ``search(queries, k)`` turns a
    block of queries into a sparse query x term count matrix Q and scores it as ``Q @ W``;
    blocks hold at most ``max_block_cells`` query x text cells, to bound memory.
    """

    def __init__(self, k1: float = K1, b: float = B, *, max_block_cells: int = 1 << 22) -> None:
        if not k1 >= 0:
            raise ValueError(f"k1 must be >= 0, got {k1}")
        if not 0 <= b <= 1:
            raise ValueError(f"b must be in [0, 1], got {b}")
        if max_block_cells < 1:
            raise ValueError(f"max_block_cells must be >= 1, got {max_block_cells}")
        self.k1, self.b, self.max_block_cells = float(k1), float(b), int(max_block_cells)
        self.vocabulary: dict[str, int] = {}
        self._weights: sp.csr_matrix | None = None

    @property
    def n_docs(self) -> int:
        self._check_fitted()
        return self._weights.shape[1]

    def fit(self, texts: Sequence[str]) -> "BM25Index":
        """Index ``texts``; ids returned by ``search`` are positions in this sequence."""
        _check_texts(texts, "texts")
        if len(texts) == 0:
            raise ValueError("cannot fit BM25 on an empty corpus: texts has no elements")
        vocabulary: dict[str, int] = {}
        doc_tokens = [tokenize(text) for text in texts]
        term_ids = np.fromiter(
            (vocabulary.setdefault(tok, len(vocabulary)) for toks in doc_tokens for tok in toks),
            dtype=np.int64,
        )
        doc_len = np.fromiter((len(toks) for toks in doc_tokens), dtype=np.int64, count=len(texts))
        indptr = np.concatenate(([0], np.cumsum(doc_len)))
        counts = sp.csr_matrix(
            (np.ones(term_ids.size), term_ids, indptr), shape=(len(texts), len(vocabulary))
        )
        counts.sum_duplicates()  # data = tf of each (text, term); indices sorted per row
        n_docs = len(texts)
        avg_doc_len = float(doc_len.mean())
        df = np.bincount(counts.indices, minlength=len(vocabulary))
        row_len = np.repeat(doc_len, np.diff(counts.indptr))
        if counts.nnz:  # avgdl > 0 whenever a single token exists
            tf_part = term_frequency_saturation(counts.data, row_len, avg_doc_len, self.k1, self.b)
            counts.data = idf(df, n_docs)[counts.indices] * tf_part
        self._weights = counts.T.tocsr()  # term x text
        self.vocabulary = vocabulary
        self.doc_len = doc_len
        self.avg_doc_len = avg_doc_len
        return self

    def _check_fitted(self) -> None:
        if self._weights is None:
            raise RuntimeError("BM25Index is not fitted: call fit(texts) first")

    def _query_matrix(self, queries: Sequence[str]) -> sp.csr_matrix:
        """Sparse query x term counts; tokens outside the vocabulary are dropped."""
        vocabulary = self.vocabulary
        rows = [[vocabulary[t] for t in tokenize(q) if t in vocabulary] for q in queries]
        indptr = np.concatenate(([0], np.cumsum([len(r) for r in rows])))
        cols = np.fromiter((c for r in rows for c in r), dtype=np.int64, count=int(indptr[-1]))
        matrix = sp.csr_matrix(
            (np.ones(cols.size), cols, indptr), shape=(len(queries), len(vocabulary))
        )
        matrix.sum_duplicates()
        return matrix

    def _score_blocks(self, queries: Sequence[str]):
        """Yield ``(start, dense scores block)`` over blocks of queries."""
        rows_per_block = max(1, self.max_block_cells // self.n_docs)
        for start in range(0, len(queries), rows_per_block):
            q = self._query_matrix(queries[start : start + rows_per_block])
            yield start, (q @ self._weights).toarray()

    def get_scores(self, queries: Sequence[str]) -> np.ndarray:
        """BM25 score of every query against every text, shape ``(n_queries, n_docs)``."""
        _check_texts(queries, "queries")
        out = np.zeros((len(queries), self.n_docs))  # n_docs checks that fit was called
        for start, block in self._score_blocks(queries):
            out[start : start + block.shape[0]] = block
        return out

    def search(self, queries: Sequence[str], k: int) -> tuple[np.ndarray, np.ndarray]:
        """Top-k texts per query: ``(ids int64, scores float64)``, shape ``(n_queries, min(k, n_docs))``.

        Rows are in rank order; ties break by text index (lower first), so a query with no
        known token returns ``0, 1, 2, ...`` with scores 0.
        """
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
            raise TypeError(f"k must be an integer, got {type(k).__name__}")
        k = operator.index(k)
        if k < 1:
            raise ValueError(f"k must be >= 1 (number of results per query), got {k}")
        _check_texts(queries, "queries")
        width = min(k, self.n_docs)
        ids = np.zeros((len(queries), width), dtype=np.int64)
        scores = np.zeros((len(queries), width))
        for start, block in self._score_blocks(queries):
            stop = start + block.shape[0]
            ids[start:stop], scores[start:stop] = top_k_rows(block, width)
        return ids, scores


__all__ = ["B", "K1", "BM25Index", "idf", "term_frequency_saturation", "tokenize"]
