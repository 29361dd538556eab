"""Span metrics: retrieved character spans against gold evidence spans (post 02).

Handles data sets whose gold has character offsets (``Question.evidence_spans``: QMSum turns,
Chroma's reference excerpts, SQuAD answer spans). Per question and k, with R the union of the
top-k returned contexts' spans and E the union of the evidence spans (both as sets of
character positions, per document):

* ``span_recall@k``       = |R n E| / |E|
* ``span_precision@k``    = |R n E| / |R|   (0 when nothing was returned)
* ``span_iou@k``          = |R n E| / |R u E|
* ``complete_evidence@k`` = 1[every evidence span lies entirely inside R]

The unit is the character. Chroma's chunking evaluation (Smith & Troynikov, "Evaluating
Chunking Strategies for Retrieval", Chroma technical report, 2024) defines the same ratios and
calls the unit "tokens", but its code counts characters too. One difference: Chroma's precision
and IoU denominators add up the lengths of the returned chunks, so overlapping chunks count
their shared characters twice; here R is a set (intervals merged), so a character is counted
once however many returned contexts hold it. Without overlap the two agree.

Intervals are half-open ``[start, end)``; empty ones are dropped; spans of different documents
never intersect. Questions without evidence spans get NaN (``has_evidence`` False).

Not handled: gold without offsets (``slot_metrics``), token-level units, partial credit inside
an evidence span beyond the character count.
"""

from __future__ import annotations

from typing import Iterable, NamedTuple, Sequence

import numpy as np
import pandas as pd

from chunklab_core.evaluation.measures import KS, column
from chunklab_core.retrieval.run import RetrievalRun

SPAN_MEASURES = ("span_recall", "span_precision", "span_iou", "complete_evidence")  # registry names, column order

Interval = tuple[int, int]
DocSpan = tuple[str, int, int]


def merge_intervals(intervals: Iterable[Interval]) -> list[Interval]:
    """Sorted, disjoint intervals covering the same characters: the union as a list.

    Overlapping and touching intervals are merged ([0, 5) + [5, 8) -> [0, 8)); empty ones
    (start == end) are dropped; start > end raises ``ValueError``.
    """
    cleaned = []
    for start, end in intervals:
        if start > end:
            raise ValueError(f"interval [{start}, {end}) ends before it starts")
        if start < end:
            cleaned.append((int(start), int(end)))
    merged: list[Interval] = []
    for start, end in sorted(cleaned):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def total_length(intervals: Iterable[Interval]) -> int:
    """|union of intervals| in characters."""
    return sum(end - start for start, end in merge_intervals(intervals))


def intersection_length(a: Iterable[Interval], b: Iterable[Interval]) -> int:
    """|union(a) n union(b)| in characters, by a linear sweep over the merged lists."""
    return _merged_intersection(merge_intervals(a), merge_intervals(b))


def _merged_intersection(a: list[Interval], b: list[Interval]) -> int:
    """:func:`intersection_length` of two lists already merged (``merge_intervals``' output)."""
    i = j = total = 0
    while i < len(a) and j < len(b):
        low, high = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        total += max(0, high - low)
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return total


def _by_document(spans: Iterable[DocSpan]) -> dict[str, list[Interval]]:
    grouped: dict[str, list[Interval]] = {}
    for doc_id, start, end in spans:
        grouped.setdefault(doc_id, []).append((start, end))
    return {doc: merge_intervals(intervals) for doc, intervals in grouped.items()}


class SpanScores(NamedTuple):
    recall: float
    precision: float
    iou: float
    complete: float


def span_overlap(retrieved: Sequence[DocSpan], evidence: Sequence[DocSpan]) -> SpanScores:
    """Recall, precision, IoU and completeness of ``retrieved`` against ``evidence``.

    Both are ``(doc_id, start, end)`` spans; all four are NaN when the evidence is empty.
    """
    return _overlap(retrieved, _Evidence(evidence))


class _Evidence:
    """A question's evidence spans prepared once for :func:`span_overlap` at every k: merged per
    document, their character total, and each span merged on its own."""

    def __init__(self, evidence: Sequence[DocSpan]) -> None:
        self.by_doc = _by_document(evidence)
        self.chars = sum(total_length(v) for v in self.by_doc.values())
        self.spans = [(doc, end - start, merge_intervals([(start, end)])) for doc, start, end in evidence]


def _overlap(retrieved: Sequence[DocSpan], evidence: _Evidence) -> SpanScores:
    """:func:`span_overlap` against prepared evidence (the same arithmetic, merged lists reused)."""
    evidence_chars = evidence.chars
    if evidence_chars == 0:
        return SpanScores(np.nan, np.nan, np.nan, np.nan)
    retrieved_by_doc = _by_document(retrieved)
    retrieved_chars = sum(total_length(v) for v in retrieved_by_doc.values())
    common = sum(_merged_intersection(v, retrieved_by_doc.get(doc, [])) for doc, v in evidence.by_doc.items())
    complete = all(_merged_intersection(span, retrieved_by_doc.get(doc, [])) == length
                   for doc, length, span in evidence.spans)
    return SpanScores(
        recall=common / evidence_chars,
        precision=common / retrieved_chars if retrieved_chars else 0.0,
        iou=common / (retrieved_chars + evidence_chars - common),
        complete=float(complete),
    )


def checked_ranking(run: RetrievalRun, ks: Sequence[int]) -> np.ndarray:
    """``run.ranked`` as an array, checked: one row per question and every k in [1, depth]
    (``ValueError`` otherwise). The run checks of every span-based scorer (``chroma_metrics`` too)."""
    ranked = np.asarray(run.ranked)
    questions = run.corpus.questions
    if ranked.ndim != 2 or ranked.shape[0] != len(questions):
        raise ValueError(f"run.ranked must be (n_questions={len(questions)}, k_max), got shape {ranked.shape}")
    if not ks or min(ks) < 1 or max(ks) > ranked.shape[1]:
        raise ValueError(f"every k must lie in [1, {ranked.shape[1]}] (the retrieved depth), got {list(ks)}")
    return ranked


def run_columns(run: RetrievalRun) -> dict[str, object]:
    """The id columns of a per-question span table: corpus, strategy, retriever, qid, doc_id."""
    questions = run.corpus.questions
    return {"corpus": run.corpus.name, "strategy": run.strategy, "retriever": run.retriever,
            "qid": [q.qid for q in questions], "doc_id": [q.doc_id for q in questions]}


def has_evidence(spans: Iterable[DocSpan]) -> bool:
    """True when the evidence spans hold at least one character."""
    return bool(merge_intervals((s, e) for _, s, e in spans))


def span_scores(run: RetrievalRun, ks: Sequence[int] = KS, **_context) -> pd.DataFrame:
    """Per-question span metrics of one run (id columns as ``evaluation.scoring.score_run``);
    ``_context`` (the matrix's threshold and pool grades) is not used."""
    ranked = checked_ranking(run, ks)
    questions = run.corpus.questions
    frame = {**run_columns(run), "has_evidence": [has_evidence(q.evidence_spans) for q in questions]}
    columns = {column(name, k): np.full(len(questions), np.nan) for name in SPAN_MEASURES for k in ks}
    for row, question in enumerate(questions):
        if not frame["has_evidence"][row]:
            continue
        evidence = _Evidence(question.evidence_spans)
        ranks = ranked[row].tolist()
        for k in ks:
            returned = [run.contexts[i] for i in ranks[:k] if i >= 0]
            scores = _overlap(returned, evidence)
            columns[column("span_recall", k)][row] = scores.recall
            columns[column("span_precision", k)][row] = scores.precision
            columns[column("span_iou", k)][row] = scores.iou
            columns[column("complete_evidence", k)][row] = scores.complete
    frame.update(columns)
    return pd.DataFrame(frame)

