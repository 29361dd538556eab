"""The lab's formulas, one function each: the ranking metrics under both nDCG gain rules, the
context-budget calculator, the measured budget it is shown against, the footprint estimate, the
budget grid and the gold-centred excerpt. The page's script (``lab.html``) repeats each; the
tests check page and functions against each other and against pytrec_eval and ranx.

Not handled: the panels' data (``reports.lab``), anything the page shows.
"""

from __future__ import annotations

import math
import re
from typing import Sequence

import numpy as np



def footprint_estimate(corpus_tokens: int, size: int, overlap: int) -> dict:
    """Footprint of windows of ``size`` tokens sharing ``overlap`` with the next, over T tokens.

    stride = size − overlap; chunks n = 1 if T <= size else 1 + ceil((T − size) / stride);
    indexed tokens = T + (n − 1) · overlap (every consecutive pair shares ``overlap`` tokens);
    duplication = indexed / T. Source: ``retrieval.footprint`` (post 07) on one text cut by
    ``chunking.token_windows.fixed_tokens``; the corpus is treated as one text, so the real
    count, per document, is higher by about one window per document. ``ValueError`` unless
    0 <= overlap < size and T >= 1.
    """
    for name, value in (("corpus tokens", corpus_tokens), ("size", size), ("overlap", overlap)):
        if not isinstance(value, (int, np.integer)) or isinstance(value, bool):
            raise ValueError(f"{name} must be an integer, got {value!r}")
    if corpus_tokens < 1 or size < 1:
        raise ValueError(f"corpus tokens and size must be >= 1, got {corpus_tokens} and {size}")
    if not 0 <= overlap < size:
        raise ValueError(f"overlap must be >= 0 and below the size {size}, got {overlap}")
    stride = size - overlap
    chunks = 1 if corpus_tokens <= size else 1 + math.ceil((corpus_tokens - size) / stride)
    indexed = corpus_tokens + (chunks - 1) * overlap
    return {"stride": stride, "chunks": chunks, "indexed_tokens": indexed, "duplication": indexed / corpus_tokens}


#: How a grade is turned into nDCG gain: the page's two rules, the same names in its URL.
GAIN_RULES = {
    "threshold": "threshold only: a context below the relevance threshold has gain 0 in nDCG (and is "
                 "left out of the ideal ranking), as it is not relevant for P@k, recall@k and MRR@k",
    "trec": "all grades as gain (trec_eval's and ranx's convention at relevance level 1): every "
            "grade g > 0 earns 2^g − 1 in nDCG, even below the threshold that decides P@k, recall@k and MRR@k",
}


def reference_metrics(grades: Sequence[int], rescores: Sequence[float], k: int, min_grade: int,
                      total_relevant: int, depth: int, gain: str = "threshold") -> dict:
    """The ranking panels' numbers through the package's functions, for one ranking.

    The first ``depth`` contexts are re-ordered by ``rescores`` (``rerank.stage.rerank_prefix``;
    depth <= 1: first-stage order); relevant = grade >= ``min_grade``; P@k, RR@k
    (``evaluation.ranking_metrics``); recall@k = relevant in the top k / ``total_relevant``
    (``inside``: relevant in the top k); nDCG@k (``ranking_metrics.ndcg_at_k``, gain 2^g − 1,
    log2 discount) under ``gain`` (:data:`GAIN_RULES`): ``"threshold"``, gains of the relevant
    contexts only and the ideal from the relevant grades found; ``"trec"``, gains of every grade
    and the ideal from every grade > 0 found; either ideal padded with ``min_grade`` up to
    ``total_relevant`` relevant contexts (the relevant ones the ranking does not hold).
    """
    from chunklab_core.evaluation import ranking_metrics as metrics
    from chunklab_core.rerank.stage import rerank_prefix

    if gain not in GAIN_RULES:
        raise ValueError(f"gain must be one of {sorted(GAIN_RULES)}, got {gain!r}")
    grades = np.asarray(grades, dtype=int)
    order = np.arange(len(grades))[None, :]
    if depth > 1:
        order = rerank_prefix(order, np.asarray(rescores, dtype=float)[None, :], int(depth))
    shown = grades[order[0]]
    relevant = shown >= min_grade
    earns = relevant if gain == "threshold" else shown > 0
    width = max(k, len(grades))
    rel = np.zeros((1, width))
    rel[0, :len(grades)] = relevant
    gains = np.zeros((1, width))
    gains[0, :len(grades)] = np.where(earns, 2.0 ** shown - 1, 0.0)
    found = grades[grades >= min_grade].tolist()
    earning = found if gain == "threshold" else grades[grades > 0].tolist()
    ideal_grades = sorted(earning + [min_grade] * max(0, total_relevant - len(found)), reverse=True)
    ideal = np.zeros((1, max(width, len(ideal_grades))))
    ideal[0, :len(ideal_grades)] = 2.0 ** np.asarray(ideal_grades, dtype=float) - 1
    hits = float(rel[0, :k].sum())
    return {
        "order": order[0].tolist(),
        "precision": float(metrics.precision_at_k(rel, k)[0]),
        "recall": hits / total_relevant if total_relevant else 0.0,
        "mrr": float(metrics.reciprocal_rank_at_k(rel, k)[0]),
        "ndcg": float(metrics.ndcg_at_k(gains, k, ideal)[0]),
        "inside": int(hits),
    }


def context_budget(k: int, chunk_tokens: int, overlap: int, prompt_tokens: int, answer_tokens: int,
                   window: int, price_per_million: float) -> dict:
    """The context-budget calculator: what ``k`` retrieved chunks of ``chunk_tokens`` cost per question.

    context = k · chunk size (each chunk is sent whole, its overlap included); of it, at most
    (k − 1) · overlap tokens repeat text already sent, when neighbouring windows are both
    retrieved; tokens per question = prompt + context + answer; it fits when that is at most the
    model's ``window``; cost per 1,000 questions = 1,000 · tokens per question · price per
    million tokens / 10^6 (one price for input and output: a model priced apart per direction
    needs the two parts priced separately). ``ValueError`` unless k, chunk size and window are >= 1,
    0 <= overlap < chunk size, and prompt, answer and price are >= 0.
    """
    for name, value in (("k", k), ("chunk size", chunk_tokens), ("window", window)):
        if value < 1:
            raise ValueError(f"{name} must be at least 1, got {value}")
    if not 0 <= overlap < chunk_tokens:
        raise ValueError(f"overlap must be >= 0 and below the chunk size {chunk_tokens}, got {overlap}")
    for name, value in (("prompt tokens", prompt_tokens), ("answer tokens", answer_tokens),
                        ("price", price_per_million)):
        if value < 0:
            raise ValueError(f"{name} cannot be negative, got {value}")
    context = k * chunk_tokens
    total = prompt_tokens + context + answer_tokens
    return {"context_tokens": context, "repeated_at_most": (k - 1) * overlap, "tokens_per_question": total,
            "fits": total <= window, "headroom": window - total,
            "cost_per_1000": 1000 * total * price_per_million / 1e6}


def measured_budget(grid: Sequence[int], context_tokens: int) -> int | None:
    """The largest budget of ``grid`` the series measured that fits in ``context_tokens``
    (``None`` below the smallest): the recall the calculator's context is shown to buy."""
    within = [b for b in grid if b <= context_tokens]
    return max(within) if within else None


def budget_grid(post_budgets: Sequence[int] = (500, 1000, 2000, 4000)) -> list[int]:
    """Budgets the page offers: powers of two from 256 to 8,192 and the budgets post 02 reports."""
    return sorted({2 ** e for e in range(8, 14)} | {int(b) for b in post_budgets})


def excerpt(full: str, alternatives: Sequence[str], chars: int, before: int = 60) -> tuple[int, str]:
    """``(start, text)``: the first ``chars`` characters of ``full`` (``…`` where cut), or, when a
    gold alternative (case ignored, whole words, as the page marks it) first occurs only past them, ``chars`` characters from
    ``before`` characters ahead of it, so the excerpt of a context graded full or partial shows
    its answer (the page marks the alternatives it holds)."""
    def cut(start: int) -> str:
        body = full[start:start + chars].strip()
        return ("…" if start > 0 else "") + body + ("…" if start + chars < len(full) else "")

    lowered = full.lower()
    hits = (re.search(r"(?<!\w)" + re.escape(a.strip().lower()) + r"(?!\w)", lowered) for a in alternatives if a.strip())
    found = [(m.start(), m.end() - m.start()) for m in hits if m]
    if not found:
        return 0, cut(0)
    position, length = min(found)
    if position + length <= chars:
        return 0, cut(0)
    start = max(0, min(position - before, len(full) - chars))
    return start, cut(start)
