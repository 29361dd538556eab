"""What a chunking strategy costs in the index, kept apart from what it retrieves.

Handles one function per quantity, computed from a strategy's chunks (indexed spans) alone:

* :func:`mean_stride` -- mean distance, in characters, between the starts of consecutive
  chunks of one document (``chunk_size - overlap`` for a fixed window);
* :func:`union_length` and :func:`duplication_factor` -- indexed characters divided by the
  characters the indexed spans cover, ``sum(end - start) / |union of spans|`` (1.0 without
  overlap; a 500-character window with 125 of overlap tends to 500 / 375 = 1.33);
* :func:`bm25_postings` -- postings of an inverted index, one per (term, chunk) pair with the
  term in the chunk: ``sum over chunks of |distinct tokens|`` (``bm25.tokenize``);
* :func:`bm25_index_bytes` -- ``postings * bytes_per_posting`` (8 = an int32 chunk id and a
  float32 weight, as in a CSR matrix; term offsets and the vocabulary are not counted);
* :func:`vector_index_bytes` -- ``vectors * dim * bytes_per_value`` (4 = float32; a flat
  exact index, no ANN graph, no quantisation).

:func:`footprint_table` puts them in one row per strategy, with the chunk count and the
indexed tokens (``tokens.count_tokens_many``, cl100k_base). The definitions follow the
chunking-evaluation practice of reporting a strategy's footprint (stride, chunk count,
indexed tokens, duplication from overlap) as its own measurement, separate from quality.

Not handled: compression of postings, ANN index overheads, storing the chunk texts themselves.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from chunklab_core.retrieval.bm25 import tokenize
from chunklab_core.core.corpus import Chunk, Corpus
from chunklab_core.core.tokens import count_tokens_many

EMBEDDING_DIMS = {"all-MiniLM-L6-v2": 384, "all-mpnet-base-v2": 768}


def _by_document(chunks: Sequence[Chunk]) -> dict[str, list[tuple[int, int]]]:
    spans: dict[str, list[tuple[int, int]]] = {}
    for c in chunks:
        spans.setdefault(c.doc_id, []).append((c.start, c.end))
    return {doc: sorted(s) for doc, s in spans.items()}


def mean_stride(chunks: Sequence[Chunk]) -> float:
    """Mean of ``start[i+1] - start[i]`` over consecutive chunks of each document (NaN if none)."""
    gaps = [b[0] - a[0] for spans in _by_document(chunks).values() for a, b in zip(spans, spans[1:])]
    return float(np.mean(gaps)) if gaps else float("nan")


def union_length(spans: Sequence[tuple[int, int]]) -> int:
    """Characters covered by the union of half-open ``(start, end)`` spans of one text."""
    covered, reach = 0, None
    for start, end in sorted(spans):
        if reach is None or start >= reach:
            covered += end - start
            reach = end
        elif end > reach:
            covered += end - reach
            reach = end
    return covered


def duplication_factor(chunks: Sequence[Chunk]) -> float:
    """Indexed characters / covered characters: ``sum(end - start) / |union of spans|``."""
    indexed = sum(c.end - c.start for c in chunks)
    covered = sum(union_length(spans) for spans in _by_document(chunks).values())
    if covered == 0:
        raise ValueError("the chunks cover no character; duplication is undefined")
    return indexed / covered


def bm25_postings(texts: Sequence[str]) -> int:
    """``sum over texts of |distinct tokens|``: one posting per (term, text) pair."""
    return int(sum(len(set(tokenize(t))) for t in texts))


def bm25_index_bytes(postings: int, bytes_per_posting: int = 8) -> int:
    """``postings * bytes_per_posting`` (int32 id + float32 weight = 8 bytes)."""
    return int(postings) * int(bytes_per_posting)


def vector_index_bytes(n_vectors: int, dim: int, bytes_per_value: int = 4) -> int:
    """``n_vectors * dim * bytes_per_value`` (float32 = 4 bytes)."""
    return int(n_vectors) * int(dim) * int(bytes_per_value)


def footprint_row(corpus: Corpus, strategy: str, chunks: Sequence[Chunk],
                  dims: dict[str, int] = EMBEDDING_DIMS) -> dict:
    """One strategy's footprint on one corpus (see the module docstring)."""
    texts = [corpus.doc(c.doc_id).text[c.start:c.end] for c in chunks]
    postings = bm25_postings(texts)
    row = {
        "corpus": corpus.name, "strategy": strategy, "chunks": len(chunks),
        "stride_chars": mean_stride(chunks),
        "indexed_chars": sum(len(t) for t in texts),
        "indexed_tokens": int(count_tokens_many(texts).sum()),
        "duplication": duplication_factor(chunks),
        "bm25_postings": postings,
        "bm25_MB": bm25_index_bytes(postings) / 1e6,
    }
    for model, dim in dims.items():
        row[f"vectors_MB_{model}"] = vector_index_bytes(len(chunks), dim) / 1e6
    return row


def footprint_table(corpora: dict[str, Corpus], strategies: Sequence[str],
                    dims: dict[str, int] = EMBEDDING_DIMS) -> pd.DataFrame:
    """One row per (corpus, strategy)."""
    from chunklab_core.chunking import chunk_corpus

    return pd.DataFrame([footprint_row(corpus, s, chunk_corpus(corpus.documents, s), dims)
                         for corpus in corpora.values() for s in strategies])
