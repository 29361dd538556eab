"""The augmentation stage evaluator: the packed context your pipeline hands the LLM.

Per query, on the context's chunk ids in packing order (a repeated id is one chunk, at its
first position; ``common.encode_ranked``), with ``C`` the distinct context ids and ``G`` the
query's relevant (gold) ids:

* ``context_precision`` = |C n G| / |C|; ``context_noise`` = 1 - context_precision;
* ``context_recall`` = |C n G| / |G| (not measured when G is empty);
* ``context_sufficiency`` = 1[G is a subset of C]: every gold chunk was packed;
* ``answer_in_context`` = 1[some context text holds the gold] (the series' normalised
  containment, ``common.contains_gold``: one alternative of every slot in one text; post 05's
  "passage retrieved"), from texts and snippets instead of ids;
* without ids, **by containment** of the gold's slots in the context texts (said in the
  metric's definition): ``context_recall`` = #slots filled by some context text / #slots and
  ``context_sufficiency`` = 1[every slot filled by some context text] (slots may sit in
  different texts; one slot of alternatives makes both equal to ``answer_in_context``);
  ``context_precision`` (``context_noise``) and ``evidence_edge_placement`` with "a context
  text is gold when it holds the gold" (retrieval's snippet relevance) in place of G;
* ``context_text_tokens`` = words (``common.word_tokens``) in the context texts: what the
  packed context costs, shown beside every A vs B comparison;
* ``duplicate_ratio`` = (#context items - |C|) / #context items: packing slots spent on repeats;
* ``budget_compliance`` = 1[context_tokens <= budget_tokens] (tokens as your pipeline counts them);
* ``evidence_edge_placement`` = share of the packed gold chunks that sit at the first or the
  last position of the context; LLMs use the edges of a long context best ("Lost in the
  Middle", Liu et al., TACL 2024). Not measured when no gold chunk was packed.

A metric whose input was not given is ``None`` (``StageResult.not_measured``); a query without
the input is NaN in the arrays and ``None`` everywhere else.

Not handled: token-level overlap of context and evidence (``retrieval``'s span metrics on the
context spans), counting tokens for you (give ``context_tokens``).
"""

from __future__ import annotations

from typing import Collection, Sequence

import numpy as np

from chunklab_core.core.text import normalize
from chunklab_core.evaluators.common import (StageResult, as_slots, contains_gold, encode_ranked, none_where,
                                             slots_filled, word_tokens)


def context_precision(in_gold: np.ndarray, distinct: np.ndarray) -> np.ndarray:
    """|C n G| / |C| per query; NaN for an empty context."""
    distinct = np.asarray(distinct, dtype=float)
    return np.divide(in_gold, distinct, out=np.full_like(distinct, np.nan), where=distinct > 0)


def context_recall(in_gold: np.ndarray, n_gold: np.ndarray) -> np.ndarray:
    """|C n G| / |G| per query; NaN where G is empty."""
    n_gold = np.asarray(n_gold, dtype=float)
    return np.divide(in_gold, n_gold, out=np.full_like(n_gold, np.nan), where=n_gold > 0)


def context_sufficiency(in_gold: np.ndarray, n_gold: np.ndarray) -> np.ndarray:
    """1[|C n G| = |G|] per query (every gold chunk packed); NaN where G is empty."""
    n_gold = np.asarray(n_gold)
    return np.where(n_gold > 0, (np.asarray(in_gold) == n_gold).astype(float), np.nan)


def duplicate_ratio(items: np.ndarray, distinct: np.ndarray) -> np.ndarray:
    """(#items - #distinct) / #items per query; NaN for an empty context."""
    items = np.asarray(items, dtype=float)
    return np.divide(items - distinct, items, out=np.full_like(items, np.nan), where=items > 0)


def budget_compliance(tokens: np.ndarray, budget: np.ndarray) -> np.ndarray:
    """1[tokens <= budget] per query; NaN where either is missing (NaN)."""
    tokens, budget = np.asarray(tokens, dtype=float), np.asarray(budget, dtype=float)
    out = (tokens <= budget).astype(float)
    out[np.isnan(tokens) | np.isnan(budget)] = np.nan
    return out


def edge_placement(rel: np.ndarray, items: np.ndarray) -> np.ndarray:
    """(#gold at position 1 + #gold at position L, L > 1) / #gold packed per query, L = the
    number of context items; NaN when no gold chunk was packed."""
    rel = np.asarray(rel, dtype=float)
    items = np.asarray(items, dtype=np.int64)
    packed = rel.sum(axis=1)
    rows = np.arange(rel.shape[0])
    first = rel[:, 0] if rel.shape[1] else np.zeros(rel.shape[0])
    last = np.where(items > 1, rel[rows, np.clip(items - 1, 0, max(rel.shape[1] - 1, 0))], 0.0) \
        if rel.shape[1] else np.zeros(rel.shape[0])
    return np.divide(first + last, packed, out=np.full_like(packed, np.nan), where=packed > 0)


def answer_in_context(texts: Sequence[str], snippets) -> float:
    """1.0 when one normalised text holds the gold (``common.contains_gold``: one alternative
    of every slot), else 0.0; gold cut across two packed texts is not found (as in the series)."""
    slots = as_slots(snippets)
    return float(slots is not None and any(contains_gold(normalize(t), slots) for t in texts))


def text_relevance(context_texts, gold_snippets) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(rel, items, unmeasured): ``rel[i, j]`` = 1[context text j of query i holds the gold]
    (``common.contains_gold``), padded with 0; ``items`` the number of texts; ``unmeasured``
    where a query has no texts or no gold."""
    n = len(context_texts)
    items = np.array([0 if t is None else len(t) for t in context_texts], dtype=np.int64)
    rel = np.zeros((n, max(int(items.max()) if n else 0, 1)))
    unmeasured = np.zeros(n, dtype=bool)
    for i, (texts, gold) in enumerate(zip(context_texts, gold_snippets)):
        slots = as_slots(gold)
        if texts is None or slots is None:
            unmeasured[i] = True
            continue
        rel[i, :len(texts)] = [float(contains_gold(normalize(t), slots)) for t in texts]
    return rel, items, unmeasured


def containment_recall(texts: Sequence[str], snippets) -> float | None:
    """#slots of the gold with an alternative in some normalised context text / #slots;
    ``None`` without gold."""
    slots = as_slots(snippets)
    return None if slots is None else slots_filled([normalize(t) for t in texts], slots) / len(slots)


def containment_sufficiency(texts: Sequence[str], snippets) -> float | None:
    """1[every slot of the gold has an alternative in some normalised context text]; ``None``
    without gold."""
    recall = containment_recall(texts, snippets)
    return None if recall is None else float(recall == 1.0)


def evaluate_augmentation(qids: Sequence[str], context_ids: Sequence[Sequence[str] | None] | None = None,
                          gold_ids: Sequence[Collection[str] | None] | None = None,
                          context_texts: Sequence[Sequence[str] | None] | None = None,
                          gold_snippets: Sequence[Sequence[str] | None] | None = None,
                          context_tokens: Sequence[float | None] | None = None,
                          budget_tokens: Sequence[float | None] | float | None = None) -> StageResult:
    """Score the packed contexts; arguments are per query, ``None`` = not given."""
    n = len(qids)
    stage = StageResult("augmentation", list(qids))
    if isinstance(budget_tokens, (int, float)):
        budget_tokens = [float(budget_tokens)] * n
    for name, arg in (("context_ids", context_ids), ("gold_ids", gold_ids), ("context_texts", context_texts),
                      ("gold_snippets", gold_snippets), ("context_tokens", context_tokens),
                      ("budget_tokens", budget_tokens)):
        if arg is not None and len(arg) != n:
            raise ValueError(f"{name} has {len(arg)} entries for {n} queries")
    if context_ids is not None:
        lists = [list(c) if c is not None else [] for c in context_ids]
        items = np.fromiter((len(c) for c in lists), dtype=np.int64, count=n)
        missing_ctx = np.array([c is None for c in context_ids], dtype=bool)
        depth = max(int(items.max()) if n else 0, 1)
        encoded = encode_ranked(lists, [g or () for g in gold_ids] if gold_ids is not None else None, depth)
        stage.values["duplicate_ratio"] = none_where(duplicate_ratio(items, encoded.returned), missing_ctx)
        if gold_ids is not None:
            unmeasured = missing_ctx | np.array([g is None for g in gold_ids], dtype=bool)
            in_gold = encoded.rel.sum(axis=1)
            precision = none_where(context_precision(in_gold, encoded.returned), unmeasured)
            stage.values["context_precision"] = precision
            stage.values["context_noise"] = 1.0 - precision
            stage.values["context_recall"] = none_where(context_recall(in_gold, encoded.n_relevant), unmeasured)
            stage.values["context_sufficiency"] = none_where(context_sufficiency(in_gold, encoded.n_relevant),
                                                             unmeasured)
            stage.values["evidence_edge_placement"] = none_where(edge_placement(encoded.rel, items), unmeasured)
    else:
        stage.not_measured["duplicate_ratio"] = "context_ids"
    by_text = context_texts is not None and gold_snippets is not None
    if context_ids is None or gold_ids is None:
        for name in ("context_precision", "context_noise", "context_recall", "context_sufficiency",
                     "evidence_edge_placement"):
            if by_text:
                continue
            stage.not_measured[name] = "context_ids + gold_ids"
    if by_text:
        pairs = list(zip(context_texts, gold_snippets))
        stage.values["answer_in_context"] = np.array(
            [np.nan if t is None or as_slots(s) is None else answer_in_context(t, s) for t, s in pairs])
        stage.definitions["answer_in_context"] = "containment: gold_snippets in context_texts"
        if context_ids is None or gold_ids is None:
            for name, fn in (("context_recall", containment_recall), ("context_sufficiency", containment_sufficiency)):
                values = [None if t is None else fn(t, s) for t, s in pairs]
                stage.values[name] = np.array([np.nan if v is None else v for v in values], dtype=float)
                stage.definitions[name] = "containment: gold_snippets slots in context_texts (no context_ids + gold_ids)"
            rel, items, unmeasured = text_relevance(context_texts, gold_snippets)
            precision = none_where(context_precision(rel.sum(axis=1), items), unmeasured)
            stage.values["context_precision"], stage.values["context_noise"] = precision, 1.0 - precision
            stage.values["evidence_edge_placement"] = none_where(edge_placement(rel, items), unmeasured)
            for name in ("context_precision", "context_noise", "evidence_edge_placement"):
                stage.definitions[name] = "containment: a context text is gold when it holds gold_snippets"
    else:
        stage.not_measured["answer_in_context"] = "context_texts + gold_snippets"
    if context_ids is not None and gold_ids is not None:
        for name in ("context_recall", "context_sufficiency"):
            stage.definitions[name] = "ids: context_ids against gold_ids"
    if context_texts is not None:
        stage.values["context_text_tokens"] = np.array(
            [np.nan if t is None else float(sum(len(word_tokens(x)) for x in t)) for t in context_texts])
    else:
        stage.not_measured["context_text_tokens"] = "context_texts"
    if context_tokens is not None and budget_tokens is not None:
        tokens = np.array([np.nan if v is None else float(v) for v in context_tokens])
        budget = np.array([np.nan if v is None else float(v) for v in budget_tokens])
        stage.values["budget_compliance"] = budget_compliance(tokens, budget)
    else:
        stage.not_measured["budget_compliance"] = "context_tokens + budget_tokens"
    return stage
