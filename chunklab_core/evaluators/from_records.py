"""Records -> the seven stage evaluators: which record field feeds which metric.

Handles: :func:`evaluate_records`, the glue between :mod:`records` and the stage modules.
A field absent from every record is not given (its metrics are "not measured" with the field
named); a field absent from some records is ``None`` for those queries only. Chunk vectors are
aligned with the chunk file's rows; query vectors with the records' lines. A TREC run + qrels
pair supplies ``retrieved_ids`` and ``gold_ids`` of the retrieval stage (matched by qid).
Last comes the answer funnel (``funnel``) from the same fields, its answer-correct step being
generation's ``task_success``.

Not handled: file formats (``records``), intervals (``scorecard``).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from chunklab_core.core.corpus import Chunk, Document
from chunklab_core.evaluators.augmentation import evaluate_augmentation
from chunklab_core.evaluators.chunking import evaluate_chunking
from chunklab_core.evaluators.common import StageResult
from chunklab_core.evaluators.embedding import evaluate_embedding
from chunklab_core.evaluators.end_to_end import evaluate_end_to_end
from chunklab_core.evaluators.funnel import evaluate_funnel
from chunklab_core.evaluators.generation import evaluate_generation
from chunklab_core.evaluators.records import ChunkRecord
from chunklab_core.evaluators.reranking import evaluate_reranking
from chunklab_core.evaluators.retrieval import KS, evaluate_retrieval


def column(records: Sequence[dict], name: str, key: str | None = None):
    """Per record ``record[name]`` (``[key]`` inside it), or ``None`` when no record has it."""
    values = [r.get(name) if key is None else (r.get(name) or {}).get(key) for r in records]
    return None if all(v is None for v in values) else values


def evaluate_records(records: Sequence[dict], chunks: Sequence[ChunkRecord] | None = None,
                     documents: dict[str, str] | None = None, chunk_vectors: np.ndarray | None = None,
                     query_vectors: np.ndarray | None = None,
                     trec: tuple[dict, dict] | None = None, ks: Sequence[int] = KS, rerank_k: int = 5,
                     max_chars: int | None = None, max_tokens: int | None = None) -> list[StageResult]:
    """Every stage evaluator on what the inputs hold, then the funnel (stage ``funnel``)."""
    qids = [r["qid"] for r in records]
    gold_ids = column(records, "gold_ids")
    retrieved_ids = column(records, "retrieved_ids")
    if trec is not None:
        ranked, qrels = trec
        retrieved_ids = [ranked.get(q, []) for q in qids]
        gold_ids = [qrels.get(q) for q in qids]
    snippets = column(records, "gold_snippets")
    stages: list[StageResult] = []
    funnel_texts = None
    if chunks is not None:
        objs = [Chunk(i, c.doc_id, c.start, c.end, c.start, c.end) for i, c in enumerate(chunks)]
        docs = None
        if documents is not None:
            missing = sorted({c.doc_id for c in chunks} - set(documents))
            if missing:
                raise ValueError(f"chunks refer to documents missing from the documents file: {missing[:5]}")
            docs = [Document(d, t) for d, t in documents.items()]
        texts = [c.text if c.text is not None else (documents or {}).get(c.doc_id, "")[c.start:c.end] for c in chunks]
        funnel_texts = texts if documents is not None or all(c.text is not None for c in chunks) else None
        evidence = None
        spans = column(records, "gold_spans")
        if spans is not None and docs is not None:
            evidence = [s for ss in spans if ss for s in ss]
        metadata = [c.metadata for c in chunks]
        stages.append(evaluate_chunking(objs, chunk_texts=texts, documents=docs, evidence=evidence,
                                        max_chars=max_chars, max_tokens=max_tokens,
                                        metadata=metadata if any(metadata) else None,
                                        required_fields=sorted({f for m in metadata for f in m}) or None,
                                        vectors=chunk_vectors))
    else:
        stages.append(StageResult("chunking", [], not_measured={"every chunking metric": "the chunk file (--chunks)"}))
    chunk_ids = [c.chunk_id for c in chunks] if chunks is not None else None
    if chunk_vectors is not None and chunks is not None and len(chunk_vectors) != len(chunks):
        raise ValueError(f"--vectors holds {len(chunk_vectors)} rows for {len(chunks)} chunks (one row per chunk line)")
    if query_vectors is not None and len(query_vectors) != len(records):
        raise ValueError(f"--query-vectors holds {len(query_vectors)} rows for {len(records)} records")
    stages.append(evaluate_embedding(qids, chunk_ids=chunk_ids, chunk_vectors=chunk_vectors,
                                     query_vectors=query_vectors, gold_ids=gold_ids,
                                     indexed_ids=None, ann_ids=retrieved_ids, k=max(ks)))
    stages.append(evaluate_retrieval(qids, retrieved_ids=retrieved_ids, gold_ids=gold_ids,
                                     retrieved_texts=column(records, "retrieved_texts"), gold_snippets=snippets,
                                     retrieved_spans=column(records, "retrieved_spans"),
                                     gold_spans=column(records, "gold_spans"),
                                     latency_ms=column(records, "latency_ms", "retrieval"), ks=ks))
    stages.append(evaluate_reranking(qids, before_ids=retrieved_ids if column(records, "reranked_ids") else None,
                                     after_ids=column(records, "reranked_ids"), gold_ids=gold_ids, k=rerank_k))
    stages.append(evaluate_augmentation(qids, context_ids=column(records, "context_ids"), gold_ids=gold_ids,
                                        context_texts=column(records, "context_texts"), gold_snippets=snippets,
                                        context_tokens=column(records, "context_tokens"),
                                        budget_tokens=column(records, "budget_tokens")))
    stages.append(evaluate_generation(qids, answers=column(records, "answer"), references=column(records, "reference"),
                                      context_texts=column(records, "context_texts"),
                                      answerable=column(records, "answerable"),
                                      required_facts=column(records, "required_facts"),
                                      citations=column(records, "citations"), supporting_ids=gold_ids,
                                      claims=column(records, "claims"),
                                      latency_ms=column(records, "latency_ms", "generation")))
    stages.append(evaluate_end_to_end(qids, answers=column(records, "answer"), references=column(records, "reference"),
                                      answerable=column(records, "answerable"),
                                      latency_ms=column(records, "latency_ms", "total"),
                                      cost=column(records, "cost"), tokens=column(records, "tokens")))
    generation = stages[-2]
    stages.append(evaluate_funnel(qids, gold_snippets=snippets, gold_ids=gold_ids, chunk_texts=funnel_texts,
                                  chunk_ids=chunk_ids, retrieved_texts=column(records, "retrieved_texts"),
                                  retrieved_ids=retrieved_ids, context_texts=column(records, "context_texts"),
                                  context_ids=column(records, "context_ids"), answers=column(records, "answer"),
                                  task_success=generation.values.get("task_success"),
                                  answerable=column(records, "answerable"), k=max(ks)))
    return stages
