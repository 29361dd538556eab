"""Post 02, long evidence: containment recall beside token span recall, and which measure
each corpus is read by.

Containment (``slot_metrics``' recall@k) counts a chunk only when it holds a whole gold
answer. Where gold is longer than a chunk -- CUAD's clauses, QASPER's evidence -- no chunk can
hold it, so recall@k stays low in every cell whatever the retriever finds. Token span recall
scores such gold fairly:

* ``token_recall@k`` (``evaluation.token_metrics.token_span_recall``, where its formula is
  documented): ``span_metrics``' span recall with word tokens for characters (so a chunk
  edge cutting a word does not give half a word).

Which measure a corpus is read by (:func:`corpus_measures`): containment can only count a
question when some single chunk holds its whole gold, so for each (corpus, strategy) the
share of questions whose evidence no one chunk's returned context holds is containment's
blind spot (the retrieval-free ``evidence_completeness`` of chunk health, per question, on
contexts). Gold longer than a
chunk is always there; gold almost as long as a chunk mostly is, because a chunk boundary
falls inside it. When that share, averaged over the strategies, is at least
:data:`LONG_GOLD_SHARE`, the corpus is read by token span recall, else by containment
recall: at 10%, containment's ceiling is below 0.9 whatever the retriever does, which is
more than the differences the post compares. (SQuAD's short answers are cut for about 2% of
questions, CUAD's clauses for about a quarter to a third, depending on the sample.) A corpus
without located evidence (NQ's short answers recur all over a page) stays with containment.
The shares (and the share of gold longer than the median chunk) are shown in the post, so
the choice can be checked.

The sentences saying which measure each corpus is read by live in ``long_evidence.md``
(:mod:`chunklab_core.reports.templates`); the figure is ``post02.figures.plot_matrix_by_measure``, its intervals ``post02.intervals``.

Not handled: gold that is not verbatim in its document (QASPER answers are mostly
abstractive: their span recall is NaN unless the data set gives evidence offsets).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Sequence

import numpy as np
import pandas as pd

from chunklab_core.chunking import strategy_label
from chunklab_core.retrieval.run import RetrievalRun
from chunklab_core.data.gold_advice import question_evidence
from chunklab_core.evaluation.matrix import MatrixResult
from chunklab_core.evaluation.measures import column
from chunklab_core.evaluation.token_metrics import token_recall_of_prefixes, token_span_recall  # noqa: F401  (re-exported)
from chunklab_core.core import numbers
from chunklab_core.reports.templates import Templates
from chunklab_core.retrieval.registry import needs_model, rows_of_model

LONG_GOLD_SHARE = 0.10
PROSE = Templates(__file__, "long_evidence.md")
MEASURE_LABELS = {"containment": "recall (containment)", "span": "token span recall"}


def _held_whole(chunks, evidence: list[tuple[str, int, int]]) -> bool:
    """Whether every evidence span lies wholly inside one chunk's returned context (what
    containment judges) of its document."""
    by_doc: dict[str, list[tuple[int, int]]] = {}
    for c in chunks:
        by_doc.setdefault(c.doc_id, []).append((c.ctx_start, c.ctx_end))
    return all(any(s <= start and end <= e for s, e in by_doc.get(doc, [])) for doc, start, end in evidence)


def long_gold_shares(matrix: MatrixResult, corpora: dict) -> pd.DataFrame:
    """Per (corpus, strategy): median chunk and gold characters (longest alternative per
    question with gold), the share of questions whose gold is longer than the median chunk,
    and the share whose evidence no single chunk holds (questions with located evidence)."""
    rows = []
    for (name, strategy), chunks in matrix.chunks.items():
        corpus = corpora[name]
        gold = [max(len(a) for slot in q.gold_slots for a in slot) for q in corpus.questions if q.gold_slots]
        if not gold or not chunks:
            continue
        texts = {d.doc_id: d.text for d in corpus.documents}
        chunks_by_doc: dict[str, list] = {}
        for c in chunks:
            chunks_by_doc.setdefault(c.doc_id, []).append(c)
        held = []
        for q in corpus.questions:
            evidence = question_evidence(q, texts.get(q.doc_id))
            if evidence:
                docs = {doc for doc, _, _ in evidence}
                held.append(_held_whole([c for d in docs for c in chunks_by_doc.get(d, [])], evidence))
        median_chunk = float(np.median([c.end - c.start for c in chunks]))
        rows.append({"corpus": name, "strategy": strategy, "median chunk chars": median_chunk,
                     "median gold chars": float(np.median(gold)),
                     "gold longer than chunk": float(np.mean(np.asarray(gold) > median_chunk)),
                     "gold cut by chunking": float(1 - np.mean(held)) if held else np.nan})
    return pd.DataFrame(rows)


def corpus_measures(shares: pd.DataFrame) -> pd.DataFrame:
    """Per corpus: the mean over strategies of the share of gold longer than the median chunk
    and of the share cut by the chunking; the measure is span when the latter is at least
    LONG_GOLD_SHARE, else containment."""
    table = shares.groupby("corpus", sort=False).agg(**{
        "median gold chars": ("median gold chars", "first"),
        "gold longer than chunk": ("gold longer than chunk", "mean"),
        "gold cut by chunking": ("gold cut by chunking", "mean")}).reset_index()
    table["measure"] = np.where(table["gold cut by chunking"] >= LONG_GOLD_SHARE, "span", "containment")
    return table


def per_question_measures(matrix: MatrixResult, k: int, model: str) -> pd.DataFrame:
    """Per question of every cell of ``model`` (BM25 under none): containment recall@k and token
    span recall@k, with the question's ``doc_id``."""
    frames = []
    for (corpus, run_model, strategy, retriever), run in matrix.runs.items():
        if run_model == model or not needs_model(retriever):
            frames.append(token_span_recall(run, [k]))
    spans = pd.concat(frames, ignore_index=True)
    base = rows_of_model(matrix.per_question, model)
    return base[["corpus", "strategy", "retriever", "qid", "doc_id", column("recall", k)]].merge(
        spans, on=["corpus", "strategy", "retriever", "qid"], how="left")


def long_evidence_table(matrix: MatrixResult, k: int, model: str, measures: pd.DataFrame,
                        per_question: pd.DataFrame | None = None) -> pd.DataFrame:
    """Cell means of containment recall@k and token span recall@k, with the corpus's measure
    (``per_question``: :func:`per_question_measures` of the same arguments, when already computed)."""
    merged = per_question if per_question is not None else per_question_measures(matrix, k, model)
    table = merged.groupby(["corpus", "strategy", "retriever"], sort=False)[
        [column("recall", k), column("token_recall", k)]].mean().reset_index()
    table = table.merge(measures[["corpus", "measure"]], on="corpus", how="left")
    table["read by"] = np.where(table["measure"] == "span", column("token_recall", k), column("recall", k))
    return table.drop(columns="measure")


def long_evidence_view(table: pd.DataFrame, k: int, labels: Mapping[str, str]) -> pd.DataFrame:
    """:func:`long_evidence_table` as a reader scans it: one row per (corpus, strategy), the two
    measures side by side for each retriever (six columns)."""
    measures = [column("recall", k), column("token_recall", k)]
    named = table.assign(sample=table["corpus"].map(labels), strategy=table["strategy"].map(strategy_label))
    wide = named.pivot(index=["sample", "strategy"], columns="retriever", values=measures)
    wide.index.names = ["corpus", "strategy"]
    rows = pd.MultiIndex.from_tuples(list(dict.fromkeys(zip(named["sample"], named["strategy"]))),
                                     names=wide.index.names)
    retrievers = list(dict.fromkeys(named["retriever"]))
    columns = pd.MultiIndex.from_tuples([(m, r) for m in measures for r in retrievers], names=[None, "retriever"])
    return wide.reindex(index=rows, columns=columns)


def measures_view(measures: pd.DataFrame, labels: Mapping[str, str]) -> pd.DataFrame:
    """:func:`corpus_measures` with each corpus named by its sample label."""
    return measures.assign(corpus=measures["corpus"].map(lambda key: labels.get(key, key)))


def describe_measures(measures: pd.DataFrame, table: pd.DataFrame, k: int, labels: Mapping[str, str]) -> str:
    """Per corpus, its measure and why, and the gap between the two measures (templates: ``long_evidence.md``)."""
    parts = []
    for _, row in measures.iterrows():
        sub = table[table["corpus"] == row["corpus"]]
        containment, span = sub[column("recall", k)].mean(), sub[column("token_recall", k)].mean()
        cut = row["gold cut by chunking"]
        reason = (PROSE.fill("reason.cut", cut=numbers.number(cut, 0, scale="percent")) if not np.isnan(cut) else PROSE.fill("reason.not_located"))
        reason += PROSE.fill("reason.gold", gold=numbers.number(row["median gold chars"], 0),
                             longer=numbers.number(row['gold longer than chunk'], 0, scale="percent"))
        parts.append(PROSE.fill(
            "corpus", sample=labels[row["corpus"]], measure=MEASURE_LABELS[row["measure"]], reason=reason,
            threshold=numbers.number(LONG_GOLD_SHARE, 0, scale="percent"), k=k, containment=numbers.number(containment),
            span=numbers.number(span) if not np.isnan(span) else PROSE.fill("span.not_computable")))
    return " ".join(parts)
