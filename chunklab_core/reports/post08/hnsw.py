"""Post 08: what Chroma's approximate vector index changes against the series' exact search.

Chroma's code (``chunking_evaluation``'s ``base_evaluation.py``) stores the chunks in a chromadb
collection created with only ``{"hnsw:search_ef": 50}``: chromadb's default ``l2`` space (on unit
vectors the same order as cosine, ``|u - v|^2 = 2 - 2 cos``), its default graph
(``ef_construction`` 100, 16 neighbours) and an approximate HNSW search. The series ranks by exact
cosine search. Handles:

* :func:`hnsw_top_k`: for one recorded dense run, the top-``k`` contexts chromadb's HNSW index
  returns (``evaluators.vector_db.ChromaIndex``, cosine space, ``ef_search`` 50, the defaults
  above) over the same vectors, recorded once per input (``RunStore.keyed``, kind ``hnsw``:
  replayed afterwards, so a replay loads no model);
* :func:`hnsw_effect`: per strategy, how many questions get the same top-``k`` set from both,
  and Chroma's recall, precision and IoU at ``k`` from the exact lists against the HNSW lists.

HNSW graphs are built with random levels, so a rebuild may return other lists (the record is one
build). Not handled: chromadb's ``l2`` space itself (cosine on the same vectors ranks alike), the
report's frozen question embeddings (the code reads them from its repository; here the questions
are embedded by the same model).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from chunklab_core.chunking import strategy_label
from chunklab_core.evaluation.chroma_metrics import chroma_iou, chroma_precision, chroma_recall
from chunklab_core.retrieval.registry import needs_model, stored_retrievers

EF_SEARCH = 50  # Chroma's code: metadata={"hnsw:search_ef": 50}
EF_CONSTRUCTION = 100  # chromadb's default
MAX_NEIGHBORS = 16  # chromadb's default


def hnsw_top_k(run, model: str, k: int, store=None) -> np.ndarray:
    """``(n_questions, k)`` context indices chromadb's HNSW returns for ``run`` (-1 pads)."""
    from chunklab_core.retrieval.recorded_runs import default_store, texts_sha256

    store = store or default_store()
    texts = [run.context_text(i) for i in range(len(run.contexts))]
    queries = [q.text for q in run.corpus.questions]
    key = {"what": "chromadb HNSW top-k over the dense run's contexts", "model": model, "k": int(k),
           "texts": texts_sha256(texts), "queries": texts_sha256(queries), "space": "cosine",
           "ef_search": EF_SEARCH, "ef_construction": EF_CONSTRUCTION, "max_neighbors": MAX_NEIGHBORS}

    def compute() -> dict[str, np.ndarray]:
        from chunklab_core.evaluators.vector_db import ChromaIndex
        from chunklab_core.retrieval.dense import DenseRetriever

        dense = DenseRetriever(model)
        vectors = dense.embed(texts)
        query_vectors = dense.embed(queries, prefix=dense.query_prefix)
        index = ChromaIndex([str(i) for i in range(len(texts))], vectors, name=f"hnsw-{run.strategy}"[:60],
                            ef_construction=EF_CONSTRUCTION, ef_search=EF_SEARCH, max_neighbors=MAX_NEIGHBORS)
        try:
            found = index.search(query_vectors, k)
        finally:
            index.close()
        ids = np.full((len(queries), k), -1, dtype=np.int64)
        for row, hits in enumerate(found):
            ids[row, : len(hits)] = [int(h) for h in hits]
        return {"hnsw_ids": ids}

    describe = f"chromadb HNSW top-{k} of {run.strategy} on {run.corpus.name}"
    return np.asarray(store.keyed("hnsw", key, compute, describe)["hnsw_ids"], dtype=np.int64)


def same_sets(exact: np.ndarray, approx: np.ndarray) -> np.ndarray:
    """Per row, True when both lists hold the same contexts (order ignored, -1 ignored)."""
    return np.array([set(a[a >= 0].tolist()) == set(b[b >= 0].tolist()) for a, b in zip(exact, approx)], dtype=bool)


def _metric_means(run, ids: np.ndarray) -> dict[str, float]:
    values = {"recall": [], "precision": [], "iou": []}
    for row, question in enumerate(run.corpus.questions):
        evidence = list(question.evidence_spans)
        if not evidence:
            continue
        returned = [run.contexts[i] for i in ids[row] if i >= 0]
        values["recall"].append(chroma_recall(returned, evidence))
        values["precision"].append(chroma_precision(returned, evidence))
        values["iou"].append(chroma_iou(returned, evidence))
    return {name: 100 * float(np.nanmean(v)) for name, v in values.items()}


def _stored_dense(retriever: str) -> bool:
    """A stored run ranked by an embedding model (what an HNSW index would search)."""
    return needs_model(retriever) and retriever in stored_retrievers()


def hnsw_effect(result, strategies: Sequence[str], model: str, k: int = 5, store=None) -> pd.DataFrame:
    """Per strategy's dense run: questions, questions whose top-``k`` set HNSW and exact search
    share, and Chroma's recall / precision / IoU at ``k`` (points) from each, with the
    difference HNSW − exact."""
    rows = []
    for (corpus, run_model, strategy, retriever), run in result.runs.items():
        if strategy not in strategies or not _stored_dense(retriever) or run_model != model:
            continue
        exact = np.asarray(run.ranked)[:, :k]
        approx = hnsw_top_k(run, model, k, store)
        same = same_sets(exact, approx)
        row = {"strategy": strategy, "label": strategy_label(strategy), "retrieved": k, "questions": len(same),
               "same top-k": int(same.sum())}
        exact_means, approx_means = _metric_means(run, exact), _metric_means(run, approx)
        for name in exact_means:
            row[f"{name} exact"] = exact_means[name]
            row[f"{name} hnsw"] = approx_means[name]
            row[f"{name} hnsw − exact"] = approx_means[name] - exact_means[name]
        rows.append(row)
    return pd.DataFrame(rows)
