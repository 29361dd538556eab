"""Per-question retrieval metrics when gold is written the way people write it (post 02).

Handles
-------
Gold as *slots* (``Question.gold_slots``: each slot a tuple of alternatives, filled when any
alternative is found) matched fuzzily by :mod:`chunklab_core.core.textmatch`. Only the contexts a
run returned are judged (its top ``k_max``, or the deep ranking a budget reads). Judge once:
a judgment depends only on the context's text, the question's gold slots and the threshold,
so :data:`JUDGMENTS` keeps one per (sha256 of the context text, gold, threshold) for the life
of the process (:class:`JudgmentMemo`); the pool, the per-question table, the token budgets
and the recall-token curve of a post read the same judgments, and a context returned by
several retrievers or chunkings is judged once per question.

Per question, with ``F_r`` the set of slots filled by the context at rank r and ``S`` the
question's slots (formulas over the top k):

* ``recall@k``   = |F_1 u ... u F_k| / |S|   (slot recall; equals ``hit@k`` when |S| = 1);
* ``complete@k`` = 1[|F_1 u ... u F_k| = |S|];
* ``hit@k``      = 1[some context in the top k fills some slot];
* ``p@k``, ``rr@k_max``: precision and reciprocal rank with the *hit* definition of relevant
  (the context fills at least one slot), the same quantities posts 01 and 03 report:
  ``p@k`` = #{r <= k : F_r non-empty} / k, ``rr@k_max`` = 1 / min{r : F_r non-empty} (0 if
  none). Partial evidence (grade 1 without a filled slot) counts only in nDCG;
* ``ndcg@k_max``: graded, gains = ``gold_slots.relevance_grade`` (2 every slot, 1 part of the
  evidence, 0 none), ``evaluation.ranking_metrics.ndcg_at_k``. The ideal ranking is built from a *pooled*
  judged set, as TREC does (Voorhees & Harman, "TREC: Experiment and Evaluation in Information
  Retrieval", MIT Press 2005, ch. 3): pass ``pool_grades`` from :func:`pool_judgments` over
  every retriever of the same (corpus, strategy). Without a pool the ideal is the sorted
  grades of the contexts *this run* returned; the ideal DCG is then never larger than the
  pooled one, so that nDCG is an upper bound of the pooled nDCG and only measures the order
  of what was returned (column ``ndcg_ideal`` says which was used);
* ``tokens@k`` (``evaluation.ranking_metrics.tokens_at_k``); ``context_efficiency@k`` = tokens of the found gold /
  tokens@k, where the found gold of a filled slot is the first of its alternatives (in the
  order written) found in some top-k context, counted in cl100k_base tokens as written; NaN
  when tokens@k is 0.

Questions with no gold slots (span-only or yes/no questions) get NaN slot metrics (not 0) and
``has_gold`` False; tokens@k is still reported.

Not handled: judging contexts that no run returned (no exhaustive qrels: a pool is what the
runs found), character-span gold (``span_metrics``), token budgets (``budget``).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Sequence

import numpy as np
import pandas as pd

from chunklab_core.evaluation import gold_slots, judgment_store, ranking_metrics as metrics
from chunklab_core.core import textmatch
from chunklab_core.evaluation.measures import KS, column
from chunklab_core.retrieval.run import RetrievalRun
from chunklab_core.core.tokens import count_tokens_many, text_digest

@dataclass(frozen=True)
class ContextJudgment:
    """One context judged for one question: which slots it fills, how, and its grade.

    ``first_alternative[j]`` is the index of the first alternative of slot j (in the order
    written) found in the context, -1 when the slot is not filled.
    """

    fills: tuple[bool, ...]
    first_alternative: tuple[int, ...]
    grade: int


# (doc_id, ctx_start, ctx_end, qid, threshold) -> judgment; plain dict so callers can share it
Judgments = dict


@lru_cache(maxsize=4096)
def _prepared_gold(gold: tuple[tuple[str, ...], ...]) -> tuple[tuple[tuple[str, tuple[str, ...]], ...], ...]:
    """Per slot, per alternative: (matching snippet, Roman numerals), as ``slots_found`` prepares them."""
    return tuple(tuple((textmatch.matching_snippet(alt), textmatch.roman_numerals(alt)) for alt in slot)
                 for slot in gold)


def judge_context(context: str, slots: Sequence[Sequence[str]], threshold: float = 0.90) -> ContextJudgment:
    """Judge one context for one question's slots (``gold_slots.slots_found`` + grade).

    ``fills`` equals ``gold_slots.slots_found([context], slots, threshold)[0]``, the first
    alternative is the first found in the order written (where ``slots_found`` stops), and the
    grade equals ``gold_slots.relevance_grade(context, slots, threshold)``: 2 when every slot
    is filled, 1 when some is, else the partial-coverage rule
    (``gold_slots.unfilled_grade``, which skips re-matching the alternatives already matched
    here). Each alternative is matched once (``textmatch.match_prepared``).
    """
    textmatch.check_threshold(threshold)
    gold = gold_slots.normalize_gold(slots)  # type: ignore[arg-type]
    ctx = textmatch.match_text(context)
    threshold = float(threshold)
    first = []
    for prepared in _prepared_gold(gold):
        index = -1
        for i, (snip, romans) in enumerate(prepared):
            if textmatch.match_prepared(ctx, snip, threshold, romans).found:
                index = i
                break
        first.append(index)
    fills = tuple(i >= 0 for i in first)
    if all(fills):
        grade = 2
    elif any(fills):
        grade = 1
    else:
        grade = gold_slots.unfilled_grade(context, gold, threshold)
    return ContextJudgment(fills, tuple(first), int(grade))


class JudgmentMemo:
    """Judge once: one :class:`ContextJudgment` per (context text, gold slots, threshold).

    Keyed by ``(gold, threshold)`` then by the sha256 of the context text
    (``tokens.text_digest``), so the key is the content the judgment depends on, whatever
    cell, retriever or depth returned the context. Equal judgments are stored once (interned)
    and numbered, so a run's judgments are laid out by table lookups. ``computed`` counts
    the judgments made (the misses): tests check that nothing is judged twice.
    """

    def __init__(self) -> None:
        self._by_gold: dict[tuple, dict[bytes, int]] = {}
        self._codes: dict[ContextJudgment, int] = {}
        self.judgments: list[ContextJudgment] = []
        self.computed = 0

    def code(self, judgment: ContextJudgment) -> int:
        """The number of an (interned) judgment."""
        code = self._codes.get(judgment)
        if code is None:
            code = self._codes[judgment] = len(self.judgments)
            self.judgments.append(judgment)
        return code

    def table(self, gold: tuple, threshold: float) -> dict[bytes, int]:
        """The ``{context sha256: judgment number}`` table of one question's gold."""
        key = (gold, float(threshold))
        table = self._by_gold.get(key)
        if table is None:
            table = self._by_gold[key] = {}
        return table

    def __len__(self) -> int:
        return sum(len(t) for t in self._by_gold.values())

    def clear(self) -> None:
        self._by_gold.clear()
        self._codes.clear()
        self.judgments.clear()
        self.computed = 0


#: The process-wide memo :func:`judge_run` reads and fills.
JUDGMENTS = JudgmentMemo()


@dataclass
class RankedJudgments:
    """Per-rank judgments of one run, as arrays (the cheap input of metrics and budgets).

    ``fills`` (n_q, depth, max_slots) bool, padded False beyond a question's slots and for
    ranks with nothing returned; ``first_alternative`` same shape, -1 where not filled;
    ``n_slots`` (n_q,); ``grades`` (n_q, depth); ``tokens`` (n_q, depth) context tokens, 0 for
    padding; ``alternative_tokens[q][j][a]`` tokens of alternative a of slot j of question q.
    """

    corpus: str
    strategy: str
    retriever: str
    qids: list[str]
    doc_ids: list[str]
    fills: np.ndarray
    first_alternative: np.ndarray
    n_slots: np.ndarray
    grades: np.ndarray
    tokens: np.ndarray
    alternative_tokens: list[list[tuple[int, ...]]]

    @property
    def has_gold(self) -> np.ndarray:
        return self.n_slots > 0


def _context_tokens(run: RetrievalRun) -> np.ndarray:
    if run.context_tokens is not None:
        tokens = np.asarray(run.context_tokens)
        if tokens.shape != (len(run.contexts),):
            raise ValueError(f"run.context_tokens has shape {tokens.shape}, expected ({len(run.contexts)},)")
        return tokens
    return count_tokens_many(run.context_text(i) for i in range(len(run.contexts)))


def judge_run(run: RetrievalRun, threshold: float = 0.90, cache: Judgments | None = None,
              store=None) -> RankedJudgments:
    """Judge every returned (context, question) pair of ``run`` once and lay them out by rank.

    Judgments are read from the stored judgments of the cell where current
    (``judgment_store``: ``store``, default the run store's folder in ``CHUNKLAB_RUNS``'s mode;
    in record mode the new ones are added there), else come from :data:`JUDGMENTS` (one per
    context text, gold and threshold per process; a miss calls :func:`judge_context`). ``cache`` (a dict, filled in place) is also
    read and filled, keyed by (doc_id, ctx_start, ctx_end, qid, threshold), for callers that
    keep their own.
    """
    questions = run.corpus.questions
    ranked = np.asarray(run.ranked)
    if ranked.ndim != 2 or ranked.shape[0] != len(questions):
        raise ValueError(f"run.ranked must be (n_questions={len(questions)}, k_max), got shape {ranked.shape}")
    if ranked.size and (ranked.max() >= len(run.contexts) or ranked.min() < -1):
        raise ValueError(f"run.ranked holds indices outside [-1, {len(run.contexts)}) (there are "
                         f"{len(run.contexts)} contexts)")
    threshold = float(threshold)
    n_q, depth = ranked.shape
    max_slots = max((len(q.gold_slots) for q in questions), default=0)
    context_tokens = _context_tokens(run)
    tokens = np.where(ranked >= 0, context_tokens[np.maximum(ranked, 0)] if len(context_tokens) else 0, 0)
    memo = JUDGMENTS
    store = judgment_store.default_store() if store is None else store
    stored = store.stored_codes(run, threshold, memo, ContextJudgment)
    codes = np.full((n_q, depth), -1, dtype=np.int64) if stored is None else stored
    fresh = np.zeros((n_q, depth), dtype=bool)
    digests: dict[int, bytes] = {}
    for row, (question, indices) in enumerate(zip(questions, ranked.tolist())):
        slots = question.gold_slots
        if not slots:
            continue
        table = memo.table(tuple(map(tuple, slots)), threshold)
        for rank, index in enumerate(indices):
            if index < 0:
                continue
            if codes[row, rank] >= 0:  # read from the stored judgments (judgment_store)
                if cache is not None:
                    cache[(*run.contexts[index], question.qid, threshold)] = memo.judgments[codes[row, rank]]
                continue
            fresh[row, rank] = True
            key = None
            if cache is not None:
                key = (*run.contexts[index], question.qid, threshold)
                judgment = cache.get(key)
                if judgment is not None:
                    codes[row, rank] = memo.code(judgment)
                    continue
            digest = digests.get(index)
            if digest is None:
                digest = digests[index] = text_digest(run.context_text(index))
            code = table.get(digest)
            if code is None:
                judgment = judge_context(run.context_text(index), slots, threshold)
                code = table[digest] = memo.code(judgment)
                memo.computed += 1
            if cache is not None:
                cache[key] = memo.judgments[code]
            codes[row, rank] = code
    store.add(run, threshold, codes, fresh, memo, ContextJudgment)
    fills = np.zeros((n_q, depth, max_slots), dtype=bool)
    first = np.full((n_q, depth, max_slots), -1, dtype=np.int64)
    grades = np.zeros((n_q, depth), dtype=float)
    used = np.unique(codes[codes >= 0])
    if len(used):  # the distinct judgments of this run as padded rows, then one lookup per cell
        lookup = np.zeros(int(used.max()) + 1, dtype=np.int64)
        lookup[used] = np.arange(len(used))
        row_fills = np.zeros((len(used), max_slots), dtype=bool)
        row_first = np.full((len(used), max_slots), -1, dtype=np.int64)
        row_grades = np.zeros(len(used), dtype=float)
        for i, code in enumerate(used.tolist()):
            judgment = memo.judgments[code]
            width = len(judgment.fills)
            row_fills[i, :width] = judgment.fills
            row_first[i, :width] = judgment.first_alternative
            row_grades[i] = judgment.grade
        where = codes >= 0
        index = lookup[codes[where]]
        fills[where] = row_fills[index]
        first[where] = row_first[index]
        grades[where] = row_grades[index]
    alternatives = [alt for q in questions for slot in q.gold_slots for alt in slot]
    counted = iter(count_tokens_many(alternatives).tolist())
    alternative_tokens = [[tuple(next(counted) for _ in slot) for slot in q.gold_slots] for q in questions]
    return RankedJudgments(
        corpus=run.corpus.name,
        strategy=run.strategy,
        retriever=run.retriever,
        qids=[q.qid for q in questions],
        doc_ids=[q.doc_id for q in questions],
        fills=fills,
        first_alternative=first,
        n_slots=np.array([len(q.gold_slots) for q in questions], dtype=np.int64),
        grades=grades,
        tokens=tokens.astype(float),
        alternative_tokens=alternative_tokens,
    )


def pool_judgments(runs: Sequence[RetrievalRun], threshold: float = 0.90,
                   cache: Judgments | None = None) -> dict[str, list[int]]:
    """Pooled judged set per question: grades of every distinct context any run returned.

    ``runs`` must share corpus and strategy (the same chunking; contexts are identified by
    their character span). Returns ``{qid: grades sorted in decreasing order}`` (zeros kept).
    """
    if not runs:
        raise ValueError("no runs to pool")
    cells = {(r.corpus.name, r.strategy) for r in runs}
    if len(cells) != 1:
        raise ValueError(f"pool runs of one (corpus, strategy) only, got {sorted(cells)}: contexts of "
                         "different chunkings are different judged sets")
    pooled: dict[str, dict[tuple, int]] = {}
    for run in runs:
        judged = judge_run(run, threshold, cache)
        for row, qid in enumerate(judged.qids):
            seen = pooled.setdefault(qid, {})
            for rank, index in enumerate(run.ranked[row]):
                if index >= 0 and judged.n_slots[row] > 0:
                    seen[run.contexts[index]] = int(judged.grades[row, rank])
    return {qid: sorted(grades.values(), reverse=True) for qid, grades in pooled.items()}


def cumulative_slot_fills(fills: np.ndarray) -> np.ndarray:
    """Slots filled by the top r contexts, for every r: cumulative OR over ranks (same shape)."""
    return np.logical_or.accumulate(fills, axis=1) if fills.shape[1] else fills


def recall_by_rank(fills: np.ndarray, n_slots: np.ndarray) -> np.ndarray:
    """Slot recall of the top r contexts, (n_q, depth): |F_1 u ... u F_r| / |S|; NaN when |S| = 0."""
    filled = cumulative_slot_fills(fills).sum(axis=2).astype(float)
    n_slots = np.asarray(n_slots, dtype=float)[:, None]
    return np.divide(filled, n_slots, out=np.full(filled.shape, np.nan), where=n_slots > 0)


def _ideal_gains(judged: RankedJudgments, k_max: int, pool_grades: dict[str, list[int]] | None) -> np.ndarray:
    ideal = np.zeros((len(judged.qids), k_max))
    for row, qid in enumerate(judged.qids):
        returned = np.sort(judged.grades[row])[::-1]
        if pool_grades is None:
            grades = returned
        else:
            if qid not in pool_grades:
                raise ValueError(f"pool_grades has no entry for question {qid!r}; build it with "
                                 "pool_judgments over every run of this (corpus, strategy)")
            grades = np.sort(np.asarray(pool_grades[qid], dtype=float))[::-1]
            width = max(len(grades), len(returned))
            if np.any(np.pad(returned, (0, width - len(returned))) > np.pad(grades, (0, width - len(grades)))):
                raise ValueError(f"the pool for question {qid!r} lacks contexts this run returned "
                                 f"(pool {grades.tolist()}, returned {returned.tolist()}); include this run "
                                 "in pool_judgments")
        take = min(k_max, len(grades))
        ideal[row, :take] = grades[:take]
    return ideal


def _found_gold_tokens(judged: RankedJudgments, k: int) -> np.ndarray:
    out = np.zeros(len(judged.qids))
    for row, slots in enumerate(judged.alternative_tokens):
        for j, alt_tokens in enumerate(slots):
            found = judged.first_alternative[row, :k, j]
            found = found[found >= 0]
            if len(found):
                out[row] += alt_tokens[int(found.min())]
    return out


def slot_scores(judged: RankedJudgments, ks: Sequence[int] = KS,
                pool_grades: dict[str, list[int]] | None = None) -> pd.DataFrame:
    """The per-question metric table from per-rank judgments (see the module docstring)."""
    n_q, k_max = judged.grades.shape
    if not ks or min(ks) < 1 or max(ks) > k_max:
        raise ValueError(f"every k must lie in [1, {k_max}] (the retrieved depth), got {list(ks)}")
    gold = judged.has_gold
    masked = np.where(gold, 1.0, np.nan)  # NaN for questions without gold
    recall = recall_by_rank(judged.fills, judged.n_slots)
    filled_any = cumulative_slot_fills(judged.fills).any(axis=2)
    frame: dict[str, object] = {
        "corpus": judged.corpus, "strategy": judged.strategy, "retriever": judged.retriever,
        "qid": judged.qids, "doc_id": judged.doc_ids, "has_gold": gold, "n_slots": judged.n_slots,
    }
    for k in ks:
        frame[column("recall", k)] = recall[:, k - 1]
    for k in ks:
        frame[column("complete", k)] = np.where(recall[:, k - 1] == 1.0, 1.0, 0.0) * masked
    for k in ks:
        frame[column("hit", k)] = filled_any[:, k - 1] * masked
    hits = judged.fills.any(axis=2).astype(float)  # the hit definition of relevant, per rank
    for k in ks:
        frame[column("p", k)] = metrics.precision_at_k(hits, k) * masked
    frame[column("rr", k_max)] = metrics.reciprocal_rank_at_k(hits, k_max) * masked
    ideal = _ideal_gains(judged, k_max, pool_grades)
    frame[column("ndcg", k_max)] = metrics.ndcg_at_k(judged.grades, k_max, ideal) * masked
    frame["ndcg_ideal"] = "returned" if pool_grades is None else "pool"
    for k in ks:
        frame[column("tokens", k)] = metrics.tokens_at_k(judged.tokens, k)
    for k in ks:
        tokens = metrics.tokens_at_k(judged.tokens, k)
        gold_tokens = _found_gold_tokens(judged, k)
        efficiency = np.divide(gold_tokens, tokens, out=np.full(n_q, np.nan), where=tokens > 0)
        frame[column("context_efficiency", k)] = efficiency * masked
    return pd.DataFrame(frame)


def score_slots(run: RetrievalRun, ks: Sequence[int] = KS, threshold: float = 0.90,
                pool_grades: dict[str, list[int]] | None = None,
                cache: Judgments | None = None) -> pd.DataFrame:
    """Per-question slot metrics of one run (id columns as ``evaluation.scoring.score_run``)."""
    return slot_scores(judge_run(run, threshold, cache), ks, pool_grades)
