"""The chromadb adapter on a small real corpus (4 SQuAD articles of post 01's sample, chunked by the
series, LSA vectors): build an in-memory collection, query it, and score it against exact search
over the same vectors."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.decomposition import TruncatedSVD
from sklearn.feature_extraction.text import TfidfVectorizer

from chunklab_core.data.corpora import load_corpus
from chunklab_core.evaluation.scoring import run_cell
from chunklab_core.evaluation.trec_export import context_id
from chunklab_core.evaluators.embedding import exact_top_k
from chunklab_core.evaluators.retrieval import evaluate_retrieval
from chunklab_core.evaluators.vector_db import ChromaIndex, evaluate_index

@pytest.fixture(scope="module")
def corpus_vectors(mirror):
    import os

    os.environ.setdefault("CHUNKLAB_DATA_MIRROR", str(mirror))
    corpus = load_corpus("squad", squad_articles=4, squad_questions=120, seed=20260729)
    run = run_cell(corpus, "fixed_500", "bm25", k_max=5)  # the chunks and the series' relevance judgments
    ids = [context_id(*c) for c in run.contexts]
    texts = [run.context_text(i) for i in range(len(ids))]
    tfidf = TfidfVectorizer().fit(texts)
    svd = TruncatedSVD(n_components=32, random_state=0).fit(tfidf.transform(texts))
    vectors = svd.transform(tfidf.transform(texts))
    queries = svd.transform(tfidf.transform([q.text for q in corpus.questions]))
    gold = [[ids[c] for c in rel] for rel in run.relevant]
    return [q.qid for q in corpus.questions], ids, vectors, queries, gold


def test_chromadb_against_exact_search(corpus_vectors):
    qids, ids, vectors, queries, gold = corpus_vectors
    assert len(ids) > 50
    index = ChromaIndex(ids, vectors, ef_search=10, max_neighbors=4)
    try:
        assert sorted(index.indexed_ids()) == sorted(ids)
        k = 5
        embedding, retrieval = evaluate_index(index, qids, ids, vectors, queries, gold, k=k)
        ann = index.search(queries, k)
    finally:
        index.close()
    exact = [[ids[j] for j in row] for row in exact_top_k(queries, vectors, k)]
    expected = [len(set(a) & set(e)) / k for a, e in zip(ann, exact)]
    assert embedding.values[f"ann_recall@{k}"].tolist() == pytest.approx(expected)
    assert embedding.means()["index_coverage"] == 1.0
    assert 0.0 <= embedding.means()[f"ann_recall@{k}"] <= 1.0
    same = evaluate_retrieval(qids, ann, gold, ks=[1, 5])
    for metric in ("hit@5", "recall@5", "ndcg@5"):
        np.testing.assert_array_equal(retrieval.values[metric], same.values[metric])


def test_a_wide_search_matches_exact_search(corpus_vectors):
    qids, ids, vectors, queries, gold = corpus_vectors
    index = ChromaIndex(ids, vectors, name="wide-search", ef_search=max(200, len(ids)), ef_construction=200)
    try:
        embedding, _ = evaluate_index(index, qids, ids, vectors, queries, gold, k=5)
    finally:
        index.close()
    assert embedding.means()["ann_recall@5"] >= 0.95  # HNSW searching every node is (nearly) exact


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="one vector row per id"):
        ChromaIndex(["a", "b"], np.zeros((3, 4)))
    with pytest.raises(ValueError, match="unique"):
        ChromaIndex(["a", "a"], np.ones((2, 4)))
