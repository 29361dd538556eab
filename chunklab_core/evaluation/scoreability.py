"""Which questions a measure can score at all, and the corpus without those none can.

Handles: per question, whether each gold-reading measure of the matrix could ever credit it
(:data:`MEASURE_TESTS`), judged against the question's *whole document*, the best context any
chunking can return: slot ``recall`` (some gold slot found in the document by the matrix's own
judge, exact or fuzzy containment at the threshold: ``slot_metrics.judge_context``), graded
``ndcg`` (the judge's grade above 0, partial credit included), character ``span_recall`` (the
question's own evidence offsets: ``span_metrics.has_evidence``) and ``token_recall`` (token
span recall: those offsets, or its gold located once in its document:
``data.gold_advice.question_evidence``, as ``token_metrics`` reads it). :func:`question_table` gives those booleans;
:func:`keep_scoreable` drops the questions no measure can score (a question whose gold is
nowhere in its document, or that has no gold, only pulls every cell's score towards the same
floor); :func:`retrieved_counts` counts, from a scored matrix, the questions each measure
credits in some retrieved context of some cell (the top ``k`` of every strategy, retriever and
model).

A corpus with dropped questions records it in its ``source`` (``scoreable_only``: the judge's
threshold), so ``make verify-runs`` rebuilds the same questions (``reports.run_recording``).

Not handled: the measures themselves (``slot_metrics``, ``span_metrics``), fuzzy matching
(``core.textmatch``).
"""

from __future__ import annotations

from typing import Callable, Mapping

import numpy as np
import pandas as pd

from chunklab_core.core.corpus import Corpus, Question
from chunklab_core.data.gold_advice import question_evidence
from chunklab_core.evaluation.slot_metrics import judge_context
from chunklab_core.evaluation.span_metrics import has_evidence


def _slot_recall(question: Question, text: str, threshold: float) -> bool:
    return bool(question.gold_slots) and any(judge_context(text, question.gold_slots, threshold).fills)


def _graded(question: Question, text: str, threshold: float) -> bool:
    return bool(question.gold_slots) and judge_context(text, question.gold_slots, threshold).grade > 0


def _span(question: Question, text: str, threshold: float) -> bool:
    return has_evidence(question.evidence_spans)


def _token_span(question: Question, text: str, threshold: float) -> bool:
    return bool(question_evidence(question, text))


# measure name (the matrix's column stem) -> can the question's whole document earn it credit?
MEASURE_TESTS: dict[str, Callable[[Question, str, float], bool]] = {
    "recall": _slot_recall,
    "ndcg": _graded,
    "span_recall": _span,
    "token_recall": _token_span,
}


def question_table(corpus: Corpus, threshold: float = 0.90) -> pd.DataFrame:
    """One row per question: qid, doc_id, and per measure of :data:`MEASURE_TESTS` whether its
    whole document can earn it credit; ``any`` is whether some measure can. A question that names
    no document of the corpus (your own questions may name none) can earn credit where any
    document can."""
    known = {document.doc_id: document.text for document in corpus.documents}
    everywhere = list(known.values())
    rows = []
    for question in corpus.questions:
        texts = [known[question.doc_id]] if question.doc_id in known else everywhere
        row = {"qid": question.qid, "doc_id": question.doc_id}
        for name, test in MEASURE_TESTS.items():
            row[name] = any(test(question, text, threshold) for text in texts)
        rows.append(row)
    table = pd.DataFrame(rows, columns=["qid", "doc_id", *MEASURE_TESTS])
    table["any"] = table[list(MEASURE_TESTS)].any(axis=1) if len(table) else pd.Series(dtype=bool)
    return table


def keep_scoreable(corpus: Corpus, threshold: float = 0.90) -> Corpus:
    """``corpus`` without the questions no measure can score (the same object when none is dropped).

    The documents stay (chunks and the other questions' rankings do not depend on the dropped
    questions); ``source`` gains ``scoreable_only: threshold`` so the sample can be rebuilt.
    """
    table = question_table(corpus, threshold)
    if table["any"].all():
        return corpus
    keep = set(table.loc[table["any"], "qid"])
    kept = Corpus(corpus.name, corpus.documents, [q for q in corpus.questions if q.qid in keep])
    kept.source = None if corpus.source is None else {**corpus.source, "scoreable_only": float(threshold)}
    kept.scope = corpus.scope
    return kept


def scoreable_again(corpus: Corpus, source: dict) -> Corpus:
    """The corpus a recorded ``source`` names: :func:`keep_scoreable` when it says ``scoreable_only``."""
    threshold = source.get("scoreable_only")
    return corpus if threshold is None else keep_scoreable(corpus, threshold)


def retrieved_counts(per_question: pd.DataFrame, k: int) -> pd.DataFrame:
    """Per corpus and measure of :data:`MEASURE_TESTS`: questions credited (``<measure>@<k>`` above 0)
    in some cell (any strategy, retriever, model), and questions scored. Measures without a
    column at ``k`` in the matrix's table (``token_recall``: post 02 computes it apart) are left out."""
    rows = []
    for corpus, frame in per_question.groupby("corpus", sort=False):
        for name in MEASURE_TESTS:
            column = f"{name}@{k}"
            if column not in frame:
                continue
            credited = frame.groupby("qid")[column].apply(lambda s: bool(np.nanmax(s.to_numpy(float), initial=0) > 0))
            rows.append({"corpus": corpus, "measure": name, "questions": int(frame["qid"].nunique()),
                         "credited in a retrieved context": int(credited.sum())})
    return pd.DataFrame(rows, columns=["corpus", "measure", "questions", "credited in a retrieved context"])


def document_counts(corpora: Mapping[str, Corpus], threshold: float = 0.90) -> pd.DataFrame:
    """Per corpus: questions, and per measure those whose whole document can earn credit, and
    those no measure can score (dropped by :func:`keep_scoreable`)."""
    rows = []
    for key, corpus in corpora.items():
        table = question_table(corpus, threshold)
        row = {"corpus": key, "questions": len(table)}
        for name in MEASURE_TESTS:
            row[name] = int(table[name].sum())
        row["no measure"] = int((~table["any"]).sum())
        rows.append(row)
    return pd.DataFrame(rows)


__all__ = ["MEASURE_TESTS", "question_table", "keep_scoreable", "scoreable_again", "retrieved_counts",
           "document_counts"]
