"""Comparing chunkings at a fixed token budget instead of a fixed k (post 02).

A k of 5 means 5 sentences for one strategy and 5 pages for another; a reader (or an LLM
prompt) has a token budget instead. For a budget B each question reads its ranked contexts in
order while the running total of their cl100k_base tokens stays within B, and stops at the
first context that does not fit: it does not skip to a smaller one further down, because a
reader of a ranked list reads a prefix (skipping would reward a strategy for its size mix, not
its ranking). A first context larger than B means nothing is read (hit 0, recall 0, 0 tokens).

What is read is always a prefix of the ranking, so the metrics come from per-rank arrays:
``m(B)`` = the number of leading contexts whose cumulative tokens are <= B, then hit and slot
recall are those of the top m(B) (``slot_metrics.recall_by_rank``). Both are non-decreasing
in B. :func:`recall_token_curve` gives the fixed-k view (mean recall against mean tokens for
k = 1..k_max) for plotting one curve per strategy x retriever.

Depth: a run that carries a deep ranking (``RetrievalRun.ranked_deep``: every context of the
recorded depth, 100 chunks) is read from it (:func:`budget_run`), so small chunks do not run out
of contexts at the ``k_max`` of the fixed-k metrics. Where a question's recorded ranking ends
before its budget is spent although the cell has more contexts, the depth still binds and the
row says so (``depth_binds``): there a strategy with larger chunks can win by reading more.

Not handled: truncating a context to fit the remaining budget, prompt overhead tokens,
span-based gold (``span_metrics``); questions without gold slots get NaN.
"""

from __future__ import annotations

from typing import Sequence

import dataclasses

import numpy as np
import pandas as pd

from chunklab_core.retrieval.run import RetrievalRun
from chunklab_core.evaluation.slot_metrics import RankedJudgments, cumulative_slot_fills, judge_run, recall_by_rank

BUDGETS = (500, 1000, 2000, 4000)
MATCHED_BUDGETS = (256, 512, 1024, 2048, 4096, 8192)  # the candidate pool's budgets (decision.candidates): doubling, cl100k_base tokens


def contexts_within_budget(tokens: np.ndarray, budget: float) -> np.ndarray:
    """m(B) per question: the number of leading contexts with cumulative tokens <= B.

    ``tokens`` (n_q, depth), 0 for ranks where nothing was returned (they never stop the
    reading and add nothing). The first rank whose cumulative total exceeds B ends the prefix.
    """
    tokens = np.asarray(tokens, dtype=float)
    if tokens.ndim != 2:
        raise ValueError(f"tokens must be 2-D (questions x ranks), got shape {tokens.shape}")
    if np.any(tokens < 0):
        raise ValueError("token counts must be >= 0")
    if budget < 0:
        raise ValueError(f"budget must be >= 0, got {budget!r}")
    fits = np.cumsum(tokens, axis=1) <= budget
    # cumulative sums are non-decreasing, so the fitting ranks are a prefix: count them
    return fits.sum(axis=1)


def available_contexts(run: RetrievalRun):
    """Per question, how many contexts its ranking could return: the cell's contexts, or for a run
    scoped to each question's document (``retrieval.scope``) that document's contexts only
    (``RetrievalRun.scope_contexts``). A recorded ranking shorter than this is cut by its depth."""
    return run.scope_contexts if getattr(run, "scope_contexts", None) is not None else len(run.contexts)


def budget_run(run: RetrievalRun, max_budget: float) -> tuple[RetrievalRun, np.ndarray]:
    """The run as deep as a budget of ``max_budget`` tokens needs, and where its depth binds.

    Reads ``run.ranked_deep`` (``run.ranked`` when it has none) and keeps, per question, the
    leading contexts that fit in ``max_budget`` plus the first that does not (so every budget up
    to ``max_budget`` is decided); later ranks become -1. ``depth_binds`` (per question) is True
    when every recorded context fits, fewer than all of the cell's contexts were recorded, and
    the budget is not used up: the recorded depth, not the budget, ended the reading.
    """
    deep = np.asarray(run.ranked_deep if run.ranked_deep is not None else run.ranked)
    tokens_of = np.asarray(run.context_tokens, dtype=float)
    tokens = np.where(deep >= 0, tokens_of[np.maximum(deep, 0)] if len(tokens_of) else 0.0, 0.0)
    fits = contexts_within_budget(tokens, max_budget)
    valid = (deep >= 0).sum(axis=1)
    keep = np.minimum(fits + 1, valid)
    width = max(int(keep.max()) if len(keep) else 0, 1)
    cut = np.full((deep.shape[0], width), -1, dtype=np.int64)
    for row, n in enumerate(keep):
        cut[row, :n] = deep[row, :n]
    depth_binds = (fits >= valid) & (valid < available_contexts(run)) & (tokens.sum(axis=1) < max_budget)
    return dataclasses.replace(run, ranked=cut), depth_binds


def _as_fills(rel: np.ndarray, n_slots) -> tuple[np.ndarray, np.ndarray]:
    rel = np.asarray(rel)
    if rel.ndim == 2:  # one slot: relevant or not per rank
        return (rel > 0)[:, :, None], np.ones(rel.shape[0], dtype=np.int64)
    if rel.ndim != 3:
        raise ValueError(f"rel must be (n_q, depth) grades or (n_q, depth, n_slots) slot fills, got shape {rel.shape}")
    fills = rel.astype(bool)
    n_slots = np.full(rel.shape[0], rel.shape[2]) if n_slots is None else np.asarray(n_slots)
    if n_slots.shape != (rel.shape[0],):
        raise ValueError(f"n_slots must give one count per question, got shape {n_slots.shape}")
    return fills, n_slots


def budget_metrics(rel: np.ndarray, tokens: np.ndarray, budget: float, n_slots=None) -> dict[str, np.ndarray]:
    """Hit, slot recall, contexts read and tokens used per question at budget B.

    ``rel``: (n_q, depth) grades (> 0 = relevant; one slot, so recall = hit) or
    (n_q, depth, n_slots) bool slot fills with ``n_slots`` (n_q,) the real slot counts when
    questions have fewer slots than the padded last axis (NaN recall and hit when 0).
    """
    fills, n_slots = _as_fills(rel, n_slots)
    tokens = np.asarray(tokens, dtype=float)
    if tokens.shape != fills.shape[:2]:
        raise ValueError(f"tokens {tokens.shape} and rel {fills.shape[:2]} must both be (n_q, depth)")
    taken = contexts_within_budget(tokens, budget)
    has_gold = n_slots > 0
    # prepend rank 0 (nothing read) so that m = 0 indexes a row of zeros
    recall = np.concatenate([np.where(has_gold, 0.0, np.nan)[:, None], recall_by_rank(fills, n_slots)], axis=1)
    hit = np.concatenate([np.zeros((len(taken), 1), bool), cumulative_slot_fills(fills).any(axis=2)], axis=1)
    used = np.concatenate([np.zeros((len(taken), 1)), np.cumsum(tokens, axis=1)], axis=1)
    rows = np.arange(len(taken))
    return {
        "contexts_read": taken,
        "tokens_used": used[rows, taken],
        "hit": np.where(has_gold, hit[rows, taken].astype(float), np.nan),
        "recall": recall[rows, taken],
    }


def _judged(run_or_tables: RetrievalRun | RankedJudgments, threshold: float) -> RankedJudgments:
    if isinstance(run_or_tables, RankedJudgments):
        return run_or_tables
    if isinstance(run_or_tables, RetrievalRun):
        return judge_run(run_or_tables, threshold)
    raise ValueError(f"expected a RetrievalRun or slot_metrics.RankedJudgments, got {type(run_or_tables).__name__}")


def recall_at_budget(run_or_tables: RetrievalRun | RankedJudgments, budgets: Sequence[float] = BUDGETS,
                     threshold: float = 0.90) -> pd.DataFrame:
    """Tidy per-question table: corpus, strategy, retriever, qid, budget, contexts_read,
    tokens_used, hit, recall (slot recall on the contexts read within the budget), depth_binds
    (a run: read from its deep ranking, :func:`budget_run`; True at a budget only where every
    recorded context was read within it, the cell has more contexts than were recorded, and the
    budget is not spent; judged tables: False)."""
    if not budgets:
        raise ValueError("no budgets given")
    recorded = partial = None
    if isinstance(run_or_tables, RetrievalRun):
        deep = np.asarray(run_or_tables.ranked_deep if run_or_tables.ranked_deep is not None else run_or_tables.ranked)
        recorded = (deep >= 0).sum(axis=1)  # contexts the recorded ranking holds per question
        partial = recorded < available_contexts(run_or_tables)  # more contexts than were recorded (its scope's)
        run_or_tables, _ = budget_run(run_or_tables, max(budgets))
    judged = _judged(run_or_tables, threshold)
    frames = []
    for budget in budgets:
        scores = budget_metrics(judged.fills, judged.tokens, budget, judged.n_slots)
        if recorded is None:
            bound = np.zeros(len(judged.qids), dtype=bool)
        else:  # at this budget every recorded context was read, the cell holds more, and the budget is not spent
            bound = (scores["contexts_read"] >= recorded) & partial & (scores["tokens_used"] < budget)
        frames.append(pd.DataFrame({
            "corpus": judged.corpus, "strategy": judged.strategy, "retriever": judged.retriever,
            "qid": judged.qids, "budget": budget, **scores, "depth_binds": bound,
        }))
    return pd.concat(frames, ignore_index=True)


def recall_token_curve(run_or_tables: RetrievalRun | RankedJudgments, threshold: float = 0.90) -> pd.DataFrame:
    """Mean slot recall, hit and returned tokens at k = 1..k_max (one curve per run).

    Means are over the questions with gold slots, for tokens too, so both axes describe the
    same questions.
    """
    judged = _judged(run_or_tables, threshold)
    gold = judged.has_gold
    if not gold.any():
        raise ValueError(f"no question of {judged.corpus!r} has gold slots; nothing to plot")
    depth = judged.tokens.shape[1]
    recall = recall_by_rank(judged.fills, judged.n_slots)[gold]
    hit = cumulative_slot_fills(judged.fills).any(axis=2)[gold]
    tokens = np.cumsum(judged.tokens, axis=1)[gold]
    return pd.DataFrame({
        "corpus": judged.corpus, "strategy": judged.strategy, "retriever": judged.retriever,
        "k": np.arange(1, depth + 1), "questions": int(gold.sum()),
        "mean_tokens": tokens.mean(axis=0), "recall": recall.mean(axis=0), "hit": hit.mean(axis=0),
    })
