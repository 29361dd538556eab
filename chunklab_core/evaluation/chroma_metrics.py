"""Chroma's token-level retrieval metrics, one function each, as the report's code computes them.

Source: Smith & Troynikov, "Evaluating Chunking Strategies for Retrieval", Chroma technical
report (2024), section "Metrics", and its code: ``chunking_evaluation``'s
``evaluation_framework/base_evaluation.py`` (``_scores_from_dataset_and_retrievals`` for recall,
precision and IoU at a depth, ``_full_precision_score`` for precision_Ω), read, not imported.
For a query with relevant excerpts ``t_e`` and retrieved chunks ``t_r``:

* recall      = |t_e ∩ t_r| / |t_e|
* precision   = |t_e ∩ t_r| / |t_r|, with |t_r| the SUM of the retrieved chunks' lengths (the
  code's ``precision_denominator``: characters two overlapping chunks share count twice, and
  chunks of other corpora count too)
* IoU         = |t_e ∩ t_r| / (|t_r| + |t_e| − |t_e ∩ t_r|), |t_r| summed as for precision (the code's
  ``precision_denominator + sum_of_ranges(unused_highlights)``; the report's
  ``|t_e| + |t_r| − |t_e ∩ t_r|``)
* precision_Ω = |t_e ∩ ∪C_Ω| / |∪C_Ω ∪ t_e|: ``C_Ω`` every chunk of the question's corpus whose
  range meets an excerpt, the denominator the UNION of their ranges and of the excerpt parts
  no chunk covers (``_full_precision_score``: ``union_ranges`` of the chunks plus the unused
  highlights), so overlapping chunks count their shared text once. "Meets" is the code's
  ``intersect_two_ranges``: ``max(starts) <= min(ends)``, so a chunk that only touches an
  excerpt (ends where it starts) is in ``C_Ω``. 0 when no chunk meets an excerpt.

In the numerators a character of ``t_e`` counts once however many chunks hold it (the code's
``union_ranges`` of the intersections); ``|t_e|`` is the excerpts' union (the code sums their
lengths; Chroma's excerpts never overlap one another, so the two agree on its data). The unit
is whatever the spans count: the series passes character offsets, as Chroma's code does
(although the report calls them tokens).

Spans are ``(doc_id, start, end)``, half-open; those of different documents never intersect.
The series' ``span_metrics`` computes recall, precision and IoU with ``|t_r|`` as a set (shared
characters once): the two agree whenever the retrieved chunks do not overlap, and the recalls
agree always (tests show both).

Not handled: the report's averaging (mean ± standard deviation over questions is done by the
post), tokens in a tokenizer's sense (pass token offsets to count them), Chroma's locating of a
chunk by ``str.find`` of its text (with a final ``.`` dropped; spans here are exact offsets).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from chunklab_core.evaluation.span_metrics import (DocSpan, checked_ranking, has_evidence, intersection_length,
                                                   run_columns, total_length)


def _by_doc(spans: Sequence[DocSpan]) -> dict[str, list[tuple[int, int]]]:
    grouped: dict[str, list[tuple[int, int]]] = {}
    for doc_id, start, end in spans:
        if end < start:
            raise ValueError(f"span ({doc_id!r}, {start}, {end}) ends before it starts")
        grouped.setdefault(doc_id, []).append((int(start), int(end)))
    return grouped


def _relevant_retrieved(retrieved: Sequence[DocSpan], excerpts: Sequence[DocSpan]) -> tuple[int, int, int]:
    """(|t_e ∩ t_r| as sets, |t_e| as a set, |t_r| summed over chunks)."""
    ex, ret = _by_doc(excerpts), _by_doc(retrieved)
    common = sum(intersection_length(v, ret.get(doc, [])) for doc, v in ex.items())
    relevant = sum(total_length(v) for v in ex.values())
    returned = sum(end - start for _, start, end in retrieved)
    return common, relevant, returned


def chroma_recall(retrieved: Sequence[DocSpan], excerpts: Sequence[DocSpan]) -> float:
    """|t_e ∩ t_r| / |t_e| (Chroma report, "Metrics"); NaN without excerpts."""
    common, relevant, _ = _relevant_retrieved(retrieved, excerpts)
    return common / relevant if relevant else float("nan")


def chroma_precision(retrieved: Sequence[DocSpan], excerpts: Sequence[DocSpan]) -> float:
    """|t_e ∩ t_r| / |t_r|, |t_r| summed over the retrieved chunks (Chroma report, "Metrics");
    0 when nothing was retrieved, NaN without excerpts."""
    common, relevant, returned = _relevant_retrieved(retrieved, excerpts)
    if not relevant:
        return float("nan")
    return common / returned if returned else 0.0


def chroma_iou(retrieved: Sequence[DocSpan], excerpts: Sequence[DocSpan]) -> float:
    """|t_e ∩ t_r| / (|t_e| + |t_r| − |t_e ∩ t_r|) (Chroma report, "Metrics"); NaN without excerpts."""
    common, relevant, returned = _relevant_retrieved(retrieved, excerpts)
    if not relevant:
        return float("nan")
    return common / (relevant + returned - common)


def omega_chunks(chunks: Sequence[DocSpan], excerpts: Sequence[DocSpan]) -> list[DocSpan]:
    """C_Ω: every chunk whose range meets an excerpt of its document, a touch included
    (``max(starts) <= min(ends)``, Chroma's ``intersect_two_ranges``)."""
    ex = _by_doc(excerpts)
    return [c for c in chunks if any(max(c[1], s) <= min(c[2], e) for s, e in ex.get(c[0], []))]


def chroma_precision_omega(chunks: Sequence[DocSpan], excerpts: Sequence[DocSpan]) -> float:
    """precision_Ω = |t_e ∩ ∪C_Ω| / |∪C_Ω ∪ t_e| (Chroma's ``_full_precision_score``): the
    precision a retriever that returned every chunk meeting an excerpt would reach, the chunks'
    shared text counted once; ``chunks`` is every chunk of the corpus (of the question's
    documents suffices). 0 when no chunk holds a relevant character, NaN without excerpts."""
    ex, omega = _by_doc(excerpts), _by_doc(omega_chunks(chunks, excerpts))
    if not sum(total_length(v) for v in ex.values()):
        return float("nan")
    common = sum(intersection_length(v, omega.get(doc, [])) for doc, v in ex.items())
    if not common:
        return 0.0
    covered = sum(total_length(omega.get(doc, []) + v) for doc, v in ex.items())
    return common / covered


def mean_and_sd(values: Sequence[float]) -> tuple[float, float]:
    """The report's summary: mean and population standard deviation (numpy ``std``, ddof 0)
    over questions, NaN ignored. An assumption: the report does not say which deviation."""
    array = np.asarray(values, dtype=float)
    array = array[~np.isnan(array)]
    if array.size == 0:
        return float("nan"), float("nan")
    return float(array.mean()), float(array.std())


CHROMA_MEASURES = ("chroma_recall", "chroma_precision", "chroma_iou")


def chroma_scores(run, ks: Sequence[int]) -> "pd.DataFrame":
    """Per-question Chroma metrics of one ``RetrievalRun`` at each depth in ``ks`` (columns
    ``chroma_recall@k`` ...), plus ``chroma_precision_omega`` over the run's chunks (depth-free),
    and beside it ``chroma_precision_omega_summed``: the same chunks with their lengths summed
    (``chroma_precision`` of ``C_Ω``, the report's formula read literally, which counts
    overlapping chunks' shared text twice), so a post can show what the union changes.
    Questions without evidence spans get NaN. Id columns as ``span_metrics.span_scores``."""
    import pandas as pd

    ranked = checked_ranking(run, ks)  # the span scorer's run checks
    questions = run.corpus.questions
    by_doc: dict[str, list[DocSpan]] = {}
    for chunk in run.chunks:
        by_doc.setdefault(chunk.doc_id, []).append((chunk.doc_id, chunk.ctx_start, chunk.ctx_end))
    frame = run_columns(run)
    columns = {f"{name}@{k}": np.full(len(questions), np.nan) for name in CHROMA_MEASURES for k in ks}
    omega = np.full(len(questions), np.nan)
    summed = np.full(len(questions), np.nan)
    for row, question in enumerate(questions):
        evidence = list(question.evidence_spans)
        if not has_evidence(evidence):
            continue
        docs = {doc for doc, _, _ in evidence}
        candidates = [c for d in docs for c in by_doc.get(d, [])]
        omega[row] = chroma_precision_omega(candidates, evidence)
        summed[row] = chroma_precision(omega_chunks(candidates, evidence), evidence)
        for k in ks:
            returned = [run.contexts[i] for i in ranked[row, :k] if i >= 0]
            columns[f"chroma_recall@{k}"][row] = chroma_recall(returned, evidence)
            columns[f"chroma_precision@{k}"][row] = chroma_precision(returned, evidence)
            columns[f"chroma_iou@{k}"][row] = chroma_iou(returned, evidence)
    frame.update(columns)
    frame["chroma_precision_omega"] = omega
    frame["chroma_precision_omega_summed"] = summed
    return pd.DataFrame(frame)
