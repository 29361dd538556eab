"""A retrieval run seen through Chroma's report's chunk locating, to score it as the report's code does.

Chroma's code (``chunking_evaluation``) scores every metric on the spans its own search gives
each chunk string (``chunking.report_locating``): a final ``.`` dropped, the first occurrence of a
repeated string, a token window's leading and trailing whitespace kept. A series run of the same
splitter has the same chunks in the same order with spans found by the series' recovery (ends
stripped, each chunk after the previous one). :func:`located_as_report` maps each chunk of a run,
one to one and in order per document, onto the report's span for it, and each returned context
with it, so that ``evaluation.chroma_metrics.chroma_scores`` computes what the report's code
computes from the same ranking. Two chunks the report's search puts on the same first occurrence
stay two retrieved items, as the report's collection keeps two records.

The ranking itself is the series' (its chunks embedded as the series stores them, ends
stripped): the view changes the spans scored, never the order retrieved.

Not handled: strategies other than the report's TokenText and recursive rows (``report_locating``
names them); a run whose chunks of a document are not one-to-one with the report's strings raises
``ValueError`` naming the document and both counts.
"""

from __future__ import annotations

from dataclasses import replace

from chunklab_core.chunking.report_locating import report_spans
from chunklab_core.retrieval.run import RetrievalRun

__all__ = ["located_as_report", "report_span_map"]


def report_span_map(run: RetrievalRun, func_name: str, params) -> dict[tuple[str, int, int], tuple[int, int]]:
    """``(doc_id, start, end)`` of every chunk of ``run`` (its returned context) -> the report's
    ``(start, end)`` for the same chunk, paired by position within each document."""
    by_doc: dict[str, list] = {}
    for chunk in run.chunks:
        by_doc.setdefault(chunk.doc_id, []).append(chunk)
    mapping: dict[tuple[str, int, int], tuple[int, int]] = {}
    for doc_id, chunks in by_doc.items():
        spans = report_spans(run.corpus.doc(doc_id).text, func_name, params)
        if len(spans) != len(chunks):
            raise ValueError(f"{run.strategy} on {doc_id}: the run has {len(chunks)} chunks, the report's "
                             f"splitter returns {len(spans)} strings; they cannot be paired one to one")
        ordered = sorted(chunks, key=lambda c: (c.start, c.end))
        for chunk, span in zip(ordered, spans):
            mapping[(doc_id, chunk.ctx_start, chunk.ctx_end)] = span
    return mapping


def located_as_report(run: RetrievalRun, func_name: str, params) -> RetrievalRun:
    """``run`` with every chunk's indexed and returned span, and every returned context, replaced by
    the span Chroma's code gives the same chunk (:func:`report_span_map`); ranking unchanged."""
    mapping = report_span_map(run, func_name, params)
    chunks = []
    for chunk in run.chunks:
        start, end = mapping[(chunk.doc_id, chunk.ctx_start, chunk.ctx_end)]
        chunks.append(replace(chunk, start=start, end=end, ctx_start=start, ctx_end=end))
    contexts = [(doc_id, *mapping[(doc_id, start, end)]) for doc_id, start, end in run.contexts]
    return replace(run, chunks=chunks, contexts=contexts)
