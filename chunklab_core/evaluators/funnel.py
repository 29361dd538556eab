"""The answer funnel: per query, how far the gold answer gets through the pipeline.

Handles: :func:`evaluate_funnel`, six steps per query, each 1 (the answer got through), 0 (lost
there) or NaN (not measured for that query), from the records' fields:

1. ``in_some_chunk``: the answer is present in some chunk -- by containment (``common
   .contains_gold``: one alternative of every gold slot in one normalised chunk text) when the
   chunk texts and ``gold_snippets`` are given; else by ids, 1[the query has a gold chunk id]
   (among the chunk file's ids when it is given);
2. ``retrieved``: in the top ``k`` retrieved -- containment in one of the top ``k``
   ``retrieved_texts``, else 1[a gold id among the top ``k`` ``retrieved_ids``];
3. ``in_context``: kept in the packed context -- containment in one ``context_texts`` item
   (augmentation's ``answer_in_context``), else 1[a gold id among ``context_ids``];
4. ``answered``: the answer is not an abstention (``answers.metrics.is_abstention``), so an
   abstention is its own loss, not counted against the next two steps;
5. ``used_in_answer``: the answer string is in the response (normalised containment of the
   gold in ``answer``: a proxy for use, titled as what it is);
6. ``answer_correct``: generation's ``task_success`` (exact match with a reference; titled
   "exact match", the proxy it is).

Snippets are preferred to ids at every step, so the funnel follows the answer text; each
step's ``definitions`` entry says which was used. Queries marked ``answerable: false`` are left
out (their answer is nowhere to lose). A step is "reached" when it and every step before it
passed; the steps, their shares and the step that loses the most are :mod:`scorecard`'s
(``funnel_table``).

Not handled: intervals (``scorecard``), a step measured from a judge (there is none).
"""

from __future__ import annotations

from typing import Collection, Sequence

import numpy as np

from chunklab_core.answers.metrics import is_abstention
from chunklab_core.core.text import normalize
from chunklab_core.evaluators.common import StageResult, as_slots, contains_gold

STEPS = ("in_some_chunk", "retrieved", "in_context", "answered", "used_in_answer", "answer_correct")
STEP_TITLES = {"in_some_chunk": "answer present in some chunk", "retrieved": "retrieved in the top k",
               "in_context": "kept in the packed context", "answered": "answered (not abstained)",
               "used_in_answer": "answer string in the response", "answer_correct": "exact match"}
STEP_NEEDS = {"in_some_chunk": "--chunks (with texts or --documents) + gold_snippets, or gold_ids",
              "retrieved": "retrieved_texts + gold_snippets, or retrieved_ids + gold_ids",
              "in_context": "context_texts + gold_snippets, or context_ids + gold_ids",
              "answered": "answer", "used_in_answer": "answer + gold_snippets", "answer_correct": "answer + reference"}


def gold_in_texts(texts: Sequence[str], slots) -> float:
    """1.0 when one of the (raw) ``texts`` holds the gold slots by normalised containment."""
    return float(any(contains_gold(normalize(t), slots) for t in texts))


def gold_in_corpus(normalised_chunks: Sequence[str], joined: str, slots) -> float:
    """1.0 when one normalised chunk holds every slot; the chunks joined by NUL are checked
    first (a slot found in no chunk rules the query out without scanning them)."""
    if not all(any(a in joined for a in slot) for slot in slots):
        return 0.0
    if len(slots) == 1:
        return 1.0
    return float(any(contains_gold(body, slots) for body in normalised_chunks))


def ids_overlap(returned: Sequence[str] | None, gold: Collection[str] | None, k: int | None = None) -> float:
    """1.0 when a gold id is among ``returned`` (its first ``k``), else 0.0; NaN without either."""
    if returned is None or gold is None:
        return np.nan
    return float(bool(set(list(returned)[:k]) & set(gold)))


def _column(values) -> np.ndarray:
    return np.array([np.nan if v is None else float(v) for v in values], dtype=float)


def evaluate_funnel(qids: Sequence[str], gold_snippets: Sequence | None = None,
                    gold_ids: Sequence[Collection[str] | None] | None = None,
                    chunk_texts: Sequence[str] | None = None, chunk_ids: Sequence[str] | None = None,
                    retrieved_texts: Sequence[Sequence[str] | None] | None = None,
                    retrieved_ids: Sequence[Sequence[str] | None] | None = None,
                    context_texts: Sequence[Sequence[str] | None] | None = None,
                    context_ids: Sequence[Sequence[str] | None] | None = None,
                    answers: Sequence[str | None] | None = None,
                    task_success: np.ndarray | None = None,
                    answerable: Sequence[bool | None] | None = None, k: int = 10) -> StageResult:
    """The five steps per query (``StageResult("funnel")``); a step whose inputs were not given
    is in ``not_measured`` with what would measure it."""
    n = len(qids)
    none = [None] * n
    slots = [as_slots(g) for g in gold_snippets] if gold_snippets is not None else none
    has_slots = gold_snippets is not None
    stage = StageResult("funnel", list(qids))
    steps: dict[str, tuple[np.ndarray, str]] = {}
    if chunk_texts is not None and has_slots:
        bodies = [normalize(t) for t in chunk_texts]
        joined = "\x00".join(bodies)
        steps["in_some_chunk"] = (_column(None if s is None else gold_in_corpus(bodies, joined, s) for s in slots),
                                  "containment: gold_snippets in one chunk text")
    elif gold_ids is not None:
        known = set(chunk_ids) if chunk_ids is not None else None
        steps["in_some_chunk"] = (_column(None if g is None else float(bool(set(g) & known if known is not None else g))
                                          for g in gold_ids), "ids: the query has a gold chunk id")
    if retrieved_texts is not None and has_slots:
        steps["retrieved"] = (_column(None if t is None or s is None else gold_in_texts(list(t)[:k], s)
                                      for t, s in zip(retrieved_texts, slots)),
                              f"containment: gold_snippets in one of the top {k} retrieved_texts")
    elif retrieved_ids is not None and gold_ids is not None:
        steps["retrieved"] = (np.array([ids_overlap(r, g, k) for r, g in zip(retrieved_ids, gold_ids)]),
                              f"ids: a gold id among the top {k} retrieved_ids")
    if context_texts is not None and has_slots:
        steps["in_context"] = (_column(None if t is None or s is None else gold_in_texts(t, s)
                                       for t, s in zip(context_texts, slots)),
                               "containment: gold_snippets in one context text")
    elif context_ids is not None and gold_ids is not None:
        steps["in_context"] = (np.array([ids_overlap(c, g) for c, g in zip(context_ids, gold_ids)]),
                               "ids: a gold id among context_ids")
    if answers is not None:
        steps["answered"] = (_column(None if a is None else float(not is_abstention(a)) for a in answers),
                             "the answer is not an abstention (answers.metrics.is_abstention)")
    if answers is not None and has_slots:
        steps["used_in_answer"] = (_column(None if a is None or s is None else float(contains_gold(normalize(a), s))
                                           for a, s in zip(answers, slots)),
                                   "proxy: gold_snippets contained in the answer string")
    if task_success is not None:
        steps["answer_correct"] = (np.asarray(task_success, dtype=float),
                                   "proxy: generation's task_success, exact match with a reference (abstention fails)")
    unanswerable = np.array([a is False for a in (answerable if answerable is not None else none)], dtype=bool)
    for step in STEPS:
        if step in steps:
            values, definition = steps[step]
            stage.values[step] = np.where(unanswerable, np.nan, values) if n else values
            stage.definitions[step] = definition
        else:
            stage.not_measured[step] = STEP_NEEDS[step]
    return stage
