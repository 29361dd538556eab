"""The retrieval stage evaluator: ranked chunk ids (or spans) of your retriever against gold.

Per query, at each cutoff ``k`` (rank 1 first; **a chunk id returned twice counts once, at its
first rank**, ``common.encode_ranked``), with ``R`` the query's distinct relevant ids:

* ``hit@k``, ``precision@k``, ``rr@k`` (MRR@k is its mean), ``ndcg@k``: the series' functions
  (``evaluation.ranking_metrics``; trec_eval conventions, binary gains);
* ``recall@k`` = |relevant in top k| / R, ``f1@k`` = 2 P R / (P + R) of ``precision@k`` and
  ``recall@k`` (0 when both are 0) and ``map@k`` = (sum_{i <= k} P@i rel_i) / min(R, k), average
  precision **bounded by min(#relevant, K)** (a perfect top k scores 1 even when R > k; trec_eval's
  ``map_cut_k`` and ranx's ``map@k`` divide by R instead and agree whenever R <= k): the
  registered measures ``id_recall``, ``f1`` and ``map`` (``evaluation/measures/``, one module each,
  stating its formula and source), computed by those members; this evaluator's column
  ``recall@k`` is the measure ``id_recall`` (the series' ``recall`` is slot recall);
* ``span_recall@k``, ``span_precision@k``, ``span_iou@k``, ``complete_evidence@k`` (character
  spans, ``evaluation.span_metrics.span_overlap``) when retrieved spans and gold spans are given;
* ``returned_tokens@k``: words in the top k retrieved texts (what each side hands on, shown
  beside every A vs B comparison);
* latency percentiles ``latency_p50_ms``, ``latency_p95_ms`` (``common.percentile``).

Relevance comes from ``gold_ids`` (then every metric is defined when R >= 1; a query with no
relevant id is not measured, as pytrec_eval leaves out queries without qrels), or, without
gold ids, from ``gold_snippets`` found in the retrieved texts by the series' rule (normalised
containment, ``core.text.normalize``; gold as slots of alternatives, ``common.as_slots``):
then R is unknown and only hit, precision and RR are
measured; recall, F1, MAP and nDCG stay ``None`` ("needs gold_ids").

Not handled: graded relevance, relevance judged over the whole collection from snippets.
"""

from __future__ import annotations

from typing import Collection, Sequence

import numpy as np

from chunklab_core.core.text import normalize
from chunklab_core.evaluation import ranking_metrics as rm
from chunklab_core.evaluation.measures import KS  # the series' cut-offs, the evaluators' default
from chunklab_core.evaluation.measures.f1 import MEASURE as F1
from chunklab_core.evaluation.measures.id_recall import MEASURE as ID_RECALL
from chunklab_core.evaluation.measures.map import MEASURE as MAP
from chunklab_core.evaluation.span_metrics import span_overlap
from chunklab_core.evaluators.common import (EncodedRun, StageResult, as_slots, contains_gold, encode_ranked,
                                             none_where, word_tokens)


def snippet_relevance(texts: Sequence[Sequence[str]], snippets: Sequence | None,
                      depth: int) -> np.ndarray:
    """0/1 grades: retrieved text ``i`` of a query is relevant when it holds the query's gold
    (``common.contains_gold``: after ``core.text.normalize``, one alternative of every slot;
    one slot of alternatives is post 01's rule); NaN rows for queries without snippets."""
    rel = np.zeros((len(texts), depth))
    for row, (returned, golds) in enumerate(zip(texts, snippets)):
        slots = as_slots(golds)
        if slots is None:
            rel[row] = np.nan
            continue
        for col, text in enumerate(list(returned)[:depth]):
            rel[row, col] = float(contains_gold(normalize(text), slots))
    return rel


def returned_tokens(texts: Sequence[Sequence[str] | None], k: int) -> np.ndarray:
    """Words (``common.word_tokens``) in the top ``k`` retrieved texts per query: what a
    retriever hands on, to put beside its hit rate; NaN for a query without texts."""
    return np.array([np.nan if t is None else float(sum(len(word_tokens(x)) for x in list(t)[:k])) for t in texts])


def _ranking(stage: StageResult, rel: np.ndarray, n_relevant: np.ndarray | None, ks: Sequence[int],
             unmeasured: np.ndarray) -> None:
    judged = None if n_relevant is None else rm.JudgedIds(rel, n_relevant)
    tables = {} if judged is None else {m.name: m(judged, ks) for m in (ID_RECALL, F1, MAP)}  # the registered measures
    for k in ks:
        stage.values[f"hit@{k}"] = none_where(rm.hit_at_k(rel, k), unmeasured)
        precision = none_where(rm.precision_at_k(rel, k), unmeasured)
        stage.values[f"precision@{k}"] = precision
        stage.values[f"rr@{k}"] = none_where(rm.reciprocal_rank_at_k(rel, k), unmeasured)
        if n_relevant is None:
            for name in ("recall", "f1", "map", "ndcg"):
                stage.not_measured[f"{name}@{k}"] = "gold_ids (the relevant chunk ids; R is unknown from snippets)"
            continue
        for name, measure in (("recall", ID_RECALL), ("f1", F1), ("map", MAP)):
            stage.values[f"{name}@{k}"] = none_where(tables[measure.name][(measure @ k).column].to_numpy(), unmeasured)
        ndcg = rm.ndcg_at_k(rel, k, rm.binary_ideal_gains(n_relevant, k))
        stage.values[f"ndcg@{k}"] = none_where(ndcg, unmeasured | (n_relevant == 0))


def evaluate_retrieval(qids: Sequence[str], retrieved_ids: Sequence[Sequence[str]] | None = None,
                       gold_ids: Sequence[Collection[str] | None] | None = None,
                       retrieved_texts: Sequence[Sequence[str]] | None = None,
                       gold_snippets: Sequence[Sequence[str] | None] | None = None,
                       retrieved_spans: Sequence[Sequence[tuple[str, int, int]]] | None = None,
                       gold_spans: Sequence[Sequence[tuple[str, int, int]] | None] | None = None,
                       latency_ms: Sequence[float | None] | None = None,
                       ks: Sequence[int] = KS) -> StageResult:
    """Score one retriever's output; every argument is per query (``None`` inside a list: not
    given for that query; the whole argument ``None``: not given at all)."""
    n = len(qids)
    ks = sorted(set(int(k) for k in ks))
    if not ks or ks[0] < 1:
        raise ValueError(f"every k must be an integer >= 1, got {list(ks)}")
    stage = StageResult("retrieval", list(qids))
    depth = ks[-1]
    for name, arg in (("retrieved_ids", retrieved_ids), ("gold_ids", gold_ids), ("retrieved_texts", retrieved_texts),
                      ("gold_snippets", gold_snippets), ("retrieved_spans", retrieved_spans),
                      ("gold_spans", gold_spans), ("latency_ms", latency_ms)):
        if arg is not None and len(arg) != n:
            raise ValueError(f"{name} has {len(arg)} entries for {n} queries")
    if retrieved_ids is not None and gold_ids is not None:
        no_gold = np.array([g is None or r is None for g, r in zip(gold_ids, retrieved_ids)])
        encoded: EncodedRun = encode_ranked([r or [] for r in retrieved_ids], [g or () for g in gold_ids], depth)
        _ranking(stage, encoded.rel, encoded.n_relevant, ks, no_gold | (encoded.n_relevant == 0))
    elif retrieved_texts is not None and gold_snippets is not None:
        rel = snippet_relevance([t or [] for t in retrieved_texts], gold_snippets, depth)
        unmeasured = np.isnan(rel[:, 0]) if n else np.zeros(0, bool)
        _ranking(stage, np.nan_to_num(rel), None, ks, unmeasured)
        for k in ks:
            for name in ("hit", "precision", "rr"):
                stage.definitions[f"{name}@{k}"] = "containment: gold_snippets in retrieved_texts"
    else:
        for k in ks:
            for name in ("hit", "precision", "rr", "recall", "f1", "map", "ndcg"):
                stage.not_measured[f"{name}@{k}"] = ("retrieved_ids + gold_ids (or retrieved_texts + "
                                                     "gold_snippets for hit, precision, rr)")
    if retrieved_texts is not None:
        for k in ks:
            stage.values[f"returned_tokens@{k}"] = returned_tokens(retrieved_texts, k)
    else:
        for k in ks:
            stage.not_measured[f"returned_tokens@{k}"] = "retrieved_texts"
    span_names = ("span_recall", "span_precision", "span_iou", "complete_evidence")
    if retrieved_spans is not None and gold_spans is not None:
        for k in ks:
            columns = {name: np.full(n, np.nan) for name in span_names}
            for row, (returned, gold) in enumerate(zip(retrieved_spans, gold_spans)):
                if returned is None or not gold:
                    continue
                scores = span_overlap(list(returned)[:k], list(gold))
                for name, value in zip(span_names, scores):
                    columns[name][row] = value
            for name in span_names:
                stage.values[f"{name}@{k}"] = columns[name]
    else:
        for k in ks:
            for name in span_names:
                stage.not_measured[f"{name}@{k}"] = "retrieved_spans + gold_spans"
    if latency_ms is not None:
        values = np.array([np.nan if v is None else float(v) for v in latency_ms], dtype=float)
        stage.percentiles["latency_p50_ms"] = (values, 50.0)
        stage.percentiles["latency_p95_ms"] = (values, 95.0)
    else:
        stage.not_measured["latency_p50_ms"] = stage.not_measured["latency_p95_ms"] = "latency_ms.retrieval"
    return stage
