"""The chunking stage evaluator: your splitter's chunks, judged without retrieval.

Reused (``chunking.health.chunk_health``, the numbers of post 02's chunk-health table), when
the documents are given: coverage, size compliance (needs your ``max_chars``/``max_tokens``),
size statistics, redundancy, evidence completeness and fragmentation (given evidence spans),
boundary OK, structural integrity, tables intact and the lexical proxies. Without documents
only the size statistics of the chunk texts are measured (``n_chunks``, ``median_tokens``,
``size_cv``).

New here:

* ``boundary_f1``: F1 of the predicted split points (each chunk's start except a document's
  first character) against your expected split points, per document pooled over the corpus;
  a predicted point is a true positive when an unmatched expected point lies within
  ``tolerance`` characters (greedy one-to-one matching in position order; with tolerance 0 it
  is the F1 of two sets of positions, equal to scikit-learn's ``f1_score`` on indicator vectors);
* ``metadata_completeness`` = mean over chunks of (#required fields present and non-empty /
  #required fields); ``metadata_accuracy`` = share of the (chunk, field) pairs with an expected
  value whose chunk value equals it;
* vector versions of the lexical proxies (cosine of your embedding vectors instead of TF-IDF):
  ``vector_boundary_clarity`` = mean over adjacent chunks of a document (by start) of
  1 - cos(v_a, v_b); ``vector_stickiness`` = mean cos(v_a, v_b) over every pair of distinct
  chunks of the same document (how much the chunks of one document resemble each other, not
  only neighbours); ``vector_cohesion`` (API only: needs unit vectors, e.g. sentences, and the
  chunk each belongs to) = mean over chunks with >= 2 units of the mean cos of adjacent units.

Not handled: perplexity-based clarity and stickiness (MoC), semantic correctness of metadata.
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

from chunklab_core.chunking.health import chunk_health, cl100k_counts, coefficient_of_variation
from chunklab_core.core.corpus import Chunk, Document
from chunklab_core.evaluators.common import StageResult
from chunklab_core.evaluators.embedding import normalize_rows


def boundary_prf(predicted: Sequence[int], expected: Sequence[int], tolerance: int = 0) -> tuple[int, int, int]:
    """(true positives, #predicted, #expected) for two lists of split positions in one document."""
    if tolerance < 0:
        raise ValueError(f"tolerance must be >= 0, got {tolerance}")
    predicted, expected = sorted(set(predicted)), sorted(set(expected))
    used = [False] * len(expected)
    tp = j = 0
    for p in predicted:
        while j < len(expected) and (used[j] or expected[j] < p - tolerance):
            j += 1
        if j < len(expected) and abs(expected[j] - p) <= tolerance:
            used[j] = True
            tp += 1
    return tp, len(predicted), len(expected)


def boundary_f1(predicted: Mapping[str, Sequence[int]], expected: Mapping[str, Sequence[int]],
                tolerance: int = 0) -> float | None:
    """F1 = 2 TP / (#predicted + #expected), pooled over the documents of ``expected``
    (micro-averaged; 2PR/(P+R) with P = TP/#predicted, R = TP/#expected); ``None`` when neither
    side has a split point."""
    tp = n_pred = n_exp = 0
    for doc_id, points in expected.items():
        t, p, e = boundary_prf(predicted.get(doc_id, []), points, tolerance)
        tp, n_pred, n_exp = tp + t, n_pred + p, n_exp + e
    return 2 * tp / (n_pred + n_exp) if n_pred + n_exp else None


def predicted_splits(chunks: Sequence[Chunk]) -> dict[str, list[int]]:
    """Per document, the distinct chunk starts other than 0 (where the splitter cut)."""
    out: dict[str, set[int]] = {}
    for c in chunks:
        out.setdefault(c.doc_id, set())
        if c.start > 0:
            out[c.doc_id].add(int(c.start))
    return {d: sorted(s) for d, s in out.items()}


def metadata_completeness(metadata: Sequence[Mapping], required: Sequence[str]) -> float | None:
    """mean_c (#required fields of chunk c present and not empty / #required); ``None`` without
    chunks or required fields."""
    if not metadata or not required:
        return None
    def filled(value) -> bool:
        return value is not None and not (isinstance(value, (str, list, dict, tuple)) and len(value) == 0)
    return float(np.mean([sum(filled(m.get(f)) for f in required) / len(required) for m in metadata]))


def metadata_accuracy(metadata: Sequence[Mapping], expected: Sequence[Mapping | None]) -> float | None:
    """#{(c, f) : metadata[c][f] == expected[c][f]} / #{(c, f) with an expected value}; ``None``
    when nothing is expected."""
    total = right = 0
    for have, want in zip(metadata, expected):
        for field, value in (want or {}).items():
            total += 1
            right += have.get(field) == value
    return right / total if total else None


def _doc_order(chunks: Sequence[Chunk]) -> list[np.ndarray]:
    by_doc: dict[str, list[int]] = {}
    for i, c in enumerate(chunks):
        by_doc.setdefault(c.doc_id, []).append(i)
    return [np.array(sorted(rows, key=lambda i: (chunks[i].start, chunks[i].end))) for rows in by_doc.values()]


def vector_boundary_clarity(chunks: Sequence[Chunk], vectors: np.ndarray) -> float | None:
    """mean over adjacent chunk pairs (same document, ordered by start) of 1 - cos(v_a, v_b);
    ``None`` without such a pair."""
    unit = normalize_rows(np.asarray(vectors, dtype=float))
    values = [1.0 - float(unit[a] @ unit[b]) for rows in _doc_order(chunks) for a, b in zip(rows[:-1], rows[1:])]
    return float(np.mean(values)) if values else None


def vector_stickiness(chunks: Sequence[Chunk], vectors: np.ndarray) -> float | None:
    """mean over pairs of distinct chunks of the same document of cos(v_a, v_b); ``None``
    without such a pair."""
    unit = normalize_rows(np.asarray(vectors, dtype=float))
    total = pairs = 0.0
    for rows in _doc_order(chunks):
        if len(rows) < 2:
            continue
        sims = unit[rows] @ unit[rows].T
        total += (sims.sum() - np.trace(sims)) / 2
        pairs += len(rows) * (len(rows) - 1) / 2
    return float(total / pairs) if pairs else None


def vector_cohesion(unit_vectors: np.ndarray, unit_chunk: Sequence[int]) -> float | None:
    """mean over chunks with >= 2 units of mean_k cos(u_k, u_{k+1}) of its consecutive units
    (units in the given order, ``unit_chunk[i]`` their chunk); ``None`` when no chunk has 2."""
    unit = normalize_rows(np.asarray(unit_vectors, dtype=float))
    owner = np.asarray(unit_chunk)
    per_chunk = []
    for c in np.unique(owner):
        rows = np.flatnonzero(owner == c)
        if len(rows) >= 2:
            per_chunk.append(float(np.mean(np.sum(unit[rows[:-1]] * unit[rows[1:]], axis=1))))
    return float(np.mean(per_chunk)) if per_chunk else None


def evaluate_chunking(chunks: Sequence[Chunk], chunk_texts: Sequence[str] | None = None,
                      documents: Sequence[Document] | None = None, evidence=None,
                      max_chars: int | None = None, max_tokens: int | None = None,
                      expected_splits: Mapping[str, Sequence[int]] | None = None, tolerance: int = 0,
                      metadata: Sequence[Mapping] | None = None, required_fields: Sequence[str] | None = None,
                      expected_metadata: Sequence[Mapping | None] | None = None,
                      vectors: np.ndarray | None = None, unit_vectors: np.ndarray | None = None,
                      unit_chunk: Sequence[int] | None = None) -> StageResult:
    """Corpus-level chunking metrics of ``chunks``; inputs not given are "not measured"."""
    stage = StageResult("chunking", [])
    if not chunks:
        raise ValueError("no chunks to evaluate")
    if documents is not None:
        row = chunk_health(documents, chunks, strategy=None, evidence=evidence, max_chars=max_chars,
                           max_tokens=max_tokens)
        row.pop("strategy")
        stage.corpus.update(row)
        for name, why in (("size_compliance", "max_chars or max_tokens"),
                          ("pct_over_strategy_max", "max_chars or max_tokens"),
                          ("pct_oversized", "max_chars or max_tokens"),
                          ("pct_over_model_max", "the embedding model's limit (API: model_max_tokens)"),
                          ("evidence_completeness", "gold_spans"), ("evidence_fragmentation", "gold_spans")):
            if stage.corpus.get(name) is None:
                stage.corpus.pop(name, None)
                stage.not_measured[name] = why
    elif chunk_texts is not None:
        tokens = cl100k_counts(list(chunk_texts))
        stage.corpus.update(n_chunks=len(chunk_texts), median_tokens=float(np.median(tokens)),
                            size_cv=coefficient_of_variation(tokens))
        for name in ("coverage", "size_compliance", "redundancy", "boundary_ok", "structural_integrity",
                     "evidence_completeness", "evidence_fragmentation", "lexical_cohesion",
                     "lexical_boundary_clarity", "lexical_stickiness"):
            stage.not_measured[name] = "the documents (--documents)"
    if expected_splits is not None:
        stage.corpus["boundary_f1"] = boundary_f1(predicted_splits(chunks), expected_splits, tolerance)
    else:
        stage.not_measured["boundary_f1"] = "expected split points (expected_splits)"
    if metadata is not None and required_fields:
        stage.corpus["metadata_completeness"] = metadata_completeness(metadata, required_fields)
    else:
        stage.not_measured["metadata_completeness"] = "chunk metadata + required fields"
    if metadata is not None and expected_metadata is not None:
        stage.corpus["metadata_accuracy"] = metadata_accuracy(metadata, expected_metadata)
    else:
        stage.not_measured["metadata_accuracy"] = "chunk metadata + expected metadata"
    if vectors is not None:
        if len(vectors) != len(chunks):
            raise ValueError(f"{len(vectors)} vectors for {len(chunks)} chunks")
        stage.corpus["vector_boundary_clarity"] = vector_boundary_clarity(chunks, vectors)
        stage.corpus["vector_stickiness"] = vector_stickiness(chunks, vectors)
    else:
        stage.not_measured["vector_boundary_clarity"] = stage.not_measured["vector_stickiness"] = "chunk vectors"
    if unit_vectors is not None and unit_chunk is not None:
        stage.corpus["vector_cohesion"] = vector_cohesion(unit_vectors, unit_chunk)
    else:
        stage.not_measured["vector_cohesion"] = "unit (sentence) vectors and their chunks (API)"
    return stage
