"""A retriever a user adds by dropping this one file into ``chunklab_core/retrieval/retrievers/``:
TF-IDF cosine (scikit-learn's ``TfidfVectorizer``, l2-normalised rows, so the dot product is the
cosine), top k by ``topk.top_k_rows`` (ties by the lower index). Used by tests/test_proof_by_addition."""

from chunklab_core.retrieval.registry import RetrieverSpec, register_retriever
from chunklab_core.retrieval.topk import top_k_rows


class TfidfRetriever:
    def fit(self, texts):
        from sklearn.feature_extraction.text import TfidfVectorizer

        self.vectorizer = TfidfVectorizer()
        self.matrix = self.vectorizer.fit_transform(list(texts))
        return self

    def search(self, queries, k):
        scores = (self.vectorizer.transform(list(queries)) @ self.matrix.T).toarray()
        return top_k_rows(scores, k)


SPEC = register_retriever(RetrieverSpec("tfidf", "TF-IDF (scikit-learn)", needs_model=False,
                                        factory=lambda **options: TfidfRetriever(), version=1))
