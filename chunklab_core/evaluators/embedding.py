"""The embedding & index stage evaluator: your vectors and your vector index, against exact search.

Corpus-level (one value each, on the chunk vectors ``V``, N x d):

* ``zero_norm_rate`` = #{i : ||v_i|| <= 1e-12} / N (a zero vector matches nothing by cosine);
* ``duplicate_vector_rate`` = (N - #distinct rows) / N (bit-identical rows, ``numpy.unique(axis=0)``:
  chunks that can never be told apart by the index);
* ``mean_vector_norm`` = mean_i ||v_i||_2;
* ``index_coverage`` = |distinct chunk ids in the index| / |distinct chunk ids| (needs the ids
  your index holds).

Per query (query vectors ``Q`` aligned with the records; similarity is cosine, rows L2-normalised,
a zero row has cosine 0 with everything):

* ``exact_recall@k``: the measure ``id_recall`` (``evaluation/measures/id_recall.py``) of the exact
  top k (``exact_top_k``) against the gold ids: what a perfect index over these vectors would find;
* ``ann_recall@k`` = |ANN top k n exact top k| / min(k, N): the k-NN recall of ann-benchmarks
  (Aumüller, Bernhardsson & Faithfull, "ANN-Benchmarks", Information Systems 2020), for the ids
  your approximate index returned (a repeated id counts once);
* ``positive_similarity`` = mean cos(q, v_g) over the gold chunks g, ``negative_similarity`` =
  mean cos(q, v) over every other chunk, ``similarity_margin`` = positive - negative.

Not handled: building an index (``evaluators.vector_db`` does, for chromadb), other similarity
functions than cosine, product-quantised vectors.
"""

from __future__ import annotations

from typing import Collection, Sequence

import numpy as np

from chunklab_core.evaluators.common import StageResult, encode_ranked, first_occurrences
from chunklab_core.evaluation.measures.id_recall import MEASURE as ID_RECALL

ZERO_NORM = 1e-12


def _matrix(vectors, name: str) -> np.ndarray:
    m = np.asarray(vectors, dtype=np.float64)
    if m.ndim != 2 or m.shape[0] == 0:
        raise ValueError(f"{name} must be a non-empty 2-D array (rows x dimensions), got shape {m.shape}")
    if not np.all(np.isfinite(m)):
        raise ValueError(f"{name} holds NaN or infinite values (row {int(np.argwhere(~np.isfinite(m))[0, 0])})")
    return m


def zero_norm_rate(vectors: np.ndarray) -> float:
    """#{i : ||v_i||_2 <= 1e-12} / N."""
    return float(np.mean(np.linalg.norm(_matrix(vectors, "vectors"), axis=1) <= ZERO_NORM))


def duplicate_vector_rate(vectors: np.ndarray) -> float:
    """(N - #distinct rows) / N; rows compared bit for bit."""
    m = _matrix(vectors, "vectors")
    return float((m.shape[0] - np.unique(m, axis=0).shape[0]) / m.shape[0])


def mean_vector_norm(vectors: np.ndarray) -> float:
    """mean_i ||v_i||_2."""
    return float(np.linalg.norm(_matrix(vectors, "vectors"), axis=1).mean())


def index_coverage(chunk_ids: Collection[str], indexed_ids: Collection[str]) -> float | None:
    """|set(chunk_ids) n set(indexed_ids)| / |set(chunk_ids)|; ``None`` without chunks."""
    chunks = set(chunk_ids)
    return len(chunks & set(indexed_ids)) / len(chunks) if chunks else None


def normalize_rows(m: np.ndarray) -> np.ndarray:
    """Rows divided by their L2 norm; zero rows stay zero."""
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    return np.divide(m, norms, out=np.zeros_like(m), where=norms > ZERO_NORM)


def cosine_matrix(queries: np.ndarray, vectors: np.ndarray) -> np.ndarray:
    """cos(q_i, v_j) for every pair, (n_queries, N)."""
    return normalize_rows(_matrix(queries, "query vectors")) @ normalize_rows(_matrix(vectors, "vectors")).T


def exact_top_k(queries: np.ndarray, vectors: np.ndarray, k: int) -> np.ndarray:
    """Row indices of the k most cosine-similar vectors per query, best first; ties broken by
    the lower row index (a stable sort on -similarity), so the result is deterministic."""
    sims = cosine_matrix(queries, vectors)
    k = min(int(k), sims.shape[1])
    return np.argsort(-sims, axis=1, kind="stable")[:, :k]


def ann_recall_at_k(ann_ids: Sequence[Sequence], exact_ids: Sequence[Sequence], k: int) -> np.ndarray:
    """|first-occurrence ANN top k n exact top k| / min(k, |exact list|) per query."""
    out = np.empty(len(exact_ids))
    for row, (ann, exact) in enumerate(zip(ann_ids, exact_ids)):
        truth = set(list(exact)[:k])
        found = {i for i in first_occurrences(list(ann)[:k]) if i is not None}
        out[row] = len(found & truth) / len(truth) if truth else np.nan
    return out


def similarity_margins(sims: np.ndarray, gold_rows: Sequence[Sequence[int]]) -> tuple[np.ndarray, np.ndarray]:
    """Per query: (mean cos to the gold rows, mean cos to every other row); NaN where a side is empty."""
    n, total = sims.shape
    positive, negative = np.full(n, np.nan), np.full(n, np.nan)
    for row, gold in enumerate(gold_rows):
        gold = np.unique(np.asarray(list(gold), dtype=np.int64))
        if gold.size:
            positive[row] = sims[row, gold].mean()
        if total - gold.size:
            negative[row] = (sims[row].sum() - sims[row, gold].sum()) / (total - gold.size)
    return positive, negative


def evaluate_embedding(qids: Sequence[str], chunk_ids: Sequence[str] | None = None,
                       chunk_vectors: np.ndarray | None = None, query_vectors: np.ndarray | None = None,
                       gold_ids: Sequence[Collection[str] | None] | None = None,
                       indexed_ids: Collection[str] | None = None,
                       ann_ids: Sequence[Sequence[str] | None] | None = None, k: int = 10) -> StageResult:
    """Score the vectors and the index; ``None`` = not given."""
    stage = StageResult("embedding_index", list(qids))
    n = len(qids)
    if chunk_vectors is None:
        for name in ("zero_norm_rate", "duplicate_vector_rate", "mean_vector_norm"):
            stage.not_measured[name] = "chunk vectors (--vectors)"
    else:
        stage.corpus.update(zero_norm_rate=zero_norm_rate(chunk_vectors),
                            duplicate_vector_rate=duplicate_vector_rate(chunk_vectors),
                            mean_vector_norm=mean_vector_norm(chunk_vectors))
    if chunk_ids is not None and indexed_ids is not None:
        stage.corpus["index_coverage"] = index_coverage(chunk_ids, indexed_ids)
    else:
        stage.not_measured["index_coverage"] = "chunk ids + the ids your index holds (indexed_ids)"
    per_query = [f"exact_recall@{k}", f"ann_recall@{k}", "positive_similarity", "negative_similarity",
                 "similarity_margin"]
    if chunk_vectors is None or query_vectors is None or chunk_ids is None:
        for name in per_query:
            stage.not_measured[name] = "chunk vectors + chunk ids + query vectors (--query-vectors)"
        return stage
    chunk_vectors, query_vectors = _matrix(chunk_vectors, "chunk vectors"), _matrix(query_vectors, "query vectors")
    if len(chunk_ids) != chunk_vectors.shape[0]:
        raise ValueError(f"{len(chunk_ids)} chunk ids for {chunk_vectors.shape[0]} chunk vectors")
    if query_vectors.shape[0] != n:
        raise ValueError(f"{query_vectors.shape[0]} query vectors for {n} queries")
    if query_vectors.shape[1] != chunk_vectors.shape[1]:
        raise ValueError(f"query vectors have {query_vectors.shape[1]} dimensions, chunk vectors {chunk_vectors.shape[1]}")
    sims = cosine_matrix(query_vectors, chunk_vectors)
    top = np.argsort(-sims, axis=1, kind="stable")[:, :min(k, sims.shape[1])]
    ids = np.asarray(list(chunk_ids), dtype=object)
    exact = [list(ids[row]) for row in top]
    if ann_ids is not None:
        if len(ann_ids) != n:
            raise ValueError(f"ann_ids has {len(ann_ids)} entries for {n} queries")
        recall = ann_recall_at_k([a or [] for a in ann_ids], exact, k)
        recall[[a is None for a in ann_ids]] = np.nan
        stage.values[f"ann_recall@{k}"] = recall
    else:
        stage.not_measured[f"ann_recall@{k}"] = "the ids your approximate index returned (retrieved_ids)"
    if gold_ids is None:
        for name in per_query:
            if name != f"ann_recall@{k}":
                stage.not_measured[name] = "gold_ids"
        return stage
    encoded = encode_ranked(exact, [g or () for g in gold_ids], k)
    unmeasured = np.array([g is None for g in gold_ids], dtype=bool)
    recall = ID_RECALL(encoded, [k])[(ID_RECALL @ k).column].to_numpy(dtype=float, copy=True)
    recall[unmeasured] = np.nan
    stage.values[f"exact_recall@{k}"] = recall
    row_of = {c: i for i, c in enumerate(chunk_ids)}
    gold_rows = [[row_of[g] for g in (gold or ()) if g in row_of] for gold in gold_ids]
    positive, negative = similarity_margins(sims, gold_rows)
    positive[unmeasured] = negative[unmeasured] = np.nan
    stage.values["positive_similarity"], stage.values["negative_similarity"] = positive, negative
    stage.values["similarity_margin"] = positive - negative
    return stage
