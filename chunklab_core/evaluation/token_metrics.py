"""Token span recall: the share of the gold's word tokens that the top-k returned contexts hold.

Handles, per question and k:

* ``token_recall@k`` = |gold tokens inside R| / |gold tokens|, with R the union of the top-k
  returned contexts' character spans and the gold tokens the words and numbers
  (``textmatch.TOKEN``) of the document text inside the question's evidence spans; a token
  counts as inside when all its characters are. Evidence spans are the question's own
  (CUAD, Chroma, SQuAD) or its gold located once in its document
  (``gold_advice.question_evidence``); questions with neither get NaN. It is
  ``span_metrics``' span recall with tokens for characters (so a chunk edge cutting a word
  does not give half a word). Defined in this series (post 02 reads long gold by it).

Not handled: gold that is not verbatim in its document (its evidence cannot be located: NaN),
which corpus is read by which measure (``reports.post02.long_evidence``).
"""

from __future__ import annotations

import bisect
from typing import Sequence

import numpy as np
import pandas as pd

from chunklab_core.data.gold_advice import question_evidence
from chunklab_core.evaluation.measures import column
from chunklab_core.evaluation.span_metrics import merge_intervals
from chunklab_core.core.textmatch import TOKEN
from chunklab_core.retrieval.run import RetrievalRun


def _gold_tokens(text: str, evidence: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """Character spans of the tokens inside the (merged) evidence intervals of one document."""
    return [m.span() for start, end in merge_intervals(evidence) for m in TOKEN.finditer(text, start, end)]


def _inside(tokens: list[tuple[int, int]], returned: list[tuple[int, int]]) -> int:
    """How many token spans lie wholly inside the union of ``returned`` intervals."""
    merged = merge_intervals(returned)
    starts = [s for s, _ in merged]
    count = 0
    for start, end in tokens:
        i = bisect.bisect_right(starts, start) - 1
        count += i >= 0 and merged[i][1] >= end
    return count


def token_span_recall(run: RetrievalRun, ks: Sequence[int], **_context) -> pd.DataFrame:
    """Per question ``token_recall@k`` of one run (see the module docstring); ``_context`` is not used."""
    corpus = run.corpus
    texts = {d.doc_id: d.text for d in corpus.documents}
    ranked = np.asarray(run.ranked)
    rows = {column("token_recall", k): np.full(len(corpus.questions), np.nan) for k in ks}
    for row, question in enumerate(corpus.questions):
        evidence = question_evidence(question, texts.get(question.doc_id))
        by_doc: dict[str, list[tuple[int, int]]] = {}
        for doc_id, start, end in evidence:
            by_doc.setdefault(doc_id, []).append((start, end))
        tokens = {doc: _gold_tokens(texts[doc], spans) for doc, spans in by_doc.items() if doc in texts}
        total = sum(len(t) for t in tokens.values())
        if total == 0:
            continue
        for k in ks:
            returned: dict[str, list[tuple[int, int]]] = {}
            for index in ranked[row, :k]:
                if index >= 0:
                    doc_id, start, end = run.contexts[index]
                    returned.setdefault(doc_id, []).append((start, end))
            inside = sum(_inside(t, returned.get(doc, [])) for doc, t in tokens.items())
            rows[column("token_recall", k)][row] = inside / total
    return pd.DataFrame({"corpus": corpus.name, "strategy": run.strategy, "retriever": run.retriever,
                         "qid": [q.qid for q in corpus.questions], **rows})


def token_recall_of_prefixes(run: RetrievalRun, ranking: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Token span recall of the first ``lengths[q, j]`` contexts of ``ranking[q]`` (the same
    formula as :func:`token_span_recall`, on a prefix of any length instead of the top k).

    ``ranking`` (n_q, depth) indices into ``run.contexts`` (-1 = nothing), ``lengths`` (n_q, n)
    prefix lengths; returns (n_q, n) floats, NaN for questions without gold tokens.
    """
    corpus = run.corpus
    texts = {d.doc_id: d.text for d in corpus.documents}
    ranking, lengths = np.asarray(ranking), np.asarray(lengths)
    if ranking.ndim != 2 or lengths.ndim != 2 or ranking.shape[0] != len(corpus.questions) or lengths.shape[0] != len(
            corpus.questions):
        raise ValueError(f"ranking {ranking.shape} and lengths {lengths.shape} need one row per question "
                         f"({len(corpus.questions)})")
    out = np.full(lengths.shape, np.nan)
    for row, question in enumerate(corpus.questions):
        by_doc: dict[str, list[tuple[int, int]]] = {}
        for doc_id, start, end in question_evidence(question, texts.get(question.doc_id)):
            by_doc.setdefault(doc_id, []).append((start, end))
        tokens = {doc: _gold_tokens(texts[doc], spans) for doc, spans in by_doc.items() if doc in texts}
        total = sum(len(t) for t in tokens.values())
        if total == 0:
            continue
        for col, length in enumerate(lengths[row]):
            returned: dict[str, list[tuple[int, int]]] = {}
            for index in ranking[row, :int(length)]:
                if index >= 0:
                    doc_id, start, end = run.contexts[index]
                    returned.setdefault(doc_id, []).append((start, end))
            out[row, col] = sum(_inside(t, returned.get(doc, [])) for doc, t in tokens.items()) / total
    return out
