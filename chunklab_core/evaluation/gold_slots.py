"""Gold answers as slots of alternatives, and graded relevance of a context.

Handles: the questions-file convention for gold (:func:`normalize_gold`: a slot is filled
when any one of its alternatives is found; a question is answered when every slot is
filled), which slots a context fills (:func:`slot_found`, :func:`slots_found`), how much of
a snippet a context holds (:func:`gold_coverage`) and the graded relevance of a context for
graded nDCG (:func:`relevance_grade`: 2 whole, 1 part, 0 none; partial credit passes the
number guard, :func:`partial_evidence`). Finding one snippet in one
context -- normalisation, number guards, fuzzy alignment -- is :mod:`chunklab_core.core.textmatch`.
Coverage tokens (:data:`chunklab_core.core.textmatch.TOKEN`) of CJK text are whole runs of
characters, so partial coverage is coarse there. Not handled: ranking metrics over the
grades (``slot_metrics``).
"""

from __future__ import annotations

from collections import Counter
from functools import lru_cache
from typing import Sequence

import numpy as np
from rapidfuzz import fuzz

from chunklab_core.core.textmatch import (TOKEN, check_threshold, contains_gold, match_prepared, match_text,
                                     matching_snippet, numbers_consistent, roman_numerals, widen_to_words)

#: Coverage of a snippet at or above which a context counts as partial evidence (grade 1).
PARTIAL_COVERAGE = 0.5

def normalize_gold(gold: str | Sequence[str | Sequence[str]]) -> tuple[tuple[str, ...], ...]:
    """Turn a user's gold specification into slots: a tuple of tuples of alternatives.

    The convention for questions files (a slot is filled when any one of its alternatives is
    found; a question is answered when every slot is filled):

    * a string is one slot with one alternative:
      ``"Denver Broncos"`` -> ``(("Denver Broncos",),)``;
    * a list is a list of slots: each string item is a slot on its own (required), each
      list item is one slot of alternatives (filled by any of them):
      ``["required", ["alt1", "alt2"]]`` -> ``(("required",), ("alt1", "alt2"))``;
      ``["a", "b"]`` -> ``(("a",), ("b",))`` (both required);
      alternatives for a single slot are written ``[["Denver Broncos", "Broncos"]]``.

    Tuples count as lists, so ``normalize_gold(normalize_gold(g)) == normalize_gold(g)``.
    Strings are kept as written (matching normalises them later); empty or blank strings,
    empty lists, deeper nesting and non-strings raise ``ValueError``.
    """

    def check(snippet: object) -> str:
        if not isinstance(snippet, str):
            raise ValueError(f"gold alternatives must be strings, got {snippet!r} in {gold!r}")
        if not snippet.strip():
            raise ValueError(f"empty gold alternative in {gold!r}")
        return snippet

    if isinstance(gold, str):
        return ((check(gold),),)
    if not isinstance(gold, (list, tuple)) or not gold:
        raise ValueError(f"gold must be a string or a non-empty list, got {gold!r}")
    slots = []
    for item in gold:
        if isinstance(item, str):
            slots.append((check(item),))
        elif isinstance(item, (list, tuple)) and item:
            slots.append(tuple(check(alt) for alt in item))
        else:
            raise ValueError(f"a slot must be a string or a non-empty list, got {item!r}")
    return tuple(slots)


def slot_found(context: str, slot: Sequence[str], threshold: float = 0.90) -> bool:
    """Whether any alternative of ``slot`` is found in ``context``."""
    if isinstance(slot, str):
        raise ValueError(f"a slot is a tuple of alternatives, got the string {slot!r}")
    if not slot:
        raise ValueError("empty slot: no alternative to look for")
    return any(contains_gold(context, alt, threshold) for alt in slot)


def slots_found(
    contexts: Sequence[str], slots: Sequence[Sequence[str]] | str, threshold: float = 0.90
) -> np.ndarray:
    """Boolean matrix ``(n_contexts, n_slots)``: which context fills which slot.

    ``slots`` goes through :func:`normalize_gold` first. Matching text is cached per context
    string and results per (context, alternative, threshold), so the same chunk retrieved in
    many strategy/retriever cells is matched once. A slot's remaining alternatives are skipped
    once it is filled. Pairs that cannot reach the threshold are dropped by a bit-parallel
    LCS bound before the costlier partial alignment (which runs with ``score_cutoff``); both
    are exact shortcuts, so the result equals ``slot_found`` on every pair.
    """
    check_threshold(threshold)
    gold = normalize_gold(slots)  # type: ignore[arg-type]
    snips = [[(matching_snippet(alt), roman_numerals(alt)) for alt in slot] for slot in gold]
    out = np.zeros((len(contexts), len(gold)), dtype=bool)
    for i, context in enumerate(contexts):
        ctx = match_text(context)
        for j, slot in enumerate(snips):
            out[i, j] = any(match_prepared(ctx, s, float(threshold), r).found for s, r in slot)
    return out


# --------------------------------------------------------------------------- graded evidence


def gold_coverage(context: str, snippet: str, threshold: float = 0.90) -> float:
    """Share of ``snippet`` present in ``context``, in [0, 1].

    1.0 when :func:`contains_gold` finds the snippet. Otherwise the snippet is placed in the
    context by ``fuzz.partial_ratio_alignment`` (the whole context when it is shorter than the
    snippet), the region is widened to whole words, and the coverage is the share of the
    snippet's tokens (words and whole numbers of its matching text, counted with
    multiplicity) that the region holds: ``|Counter(snippet) & Counter(region)| /
    len(snippet tokens)``. Numbers count only when equal, so "within 30 days" covers 2 of the
    3 tokens of "within 14 days". Because it is one region, tokens scattered across a long
    context do not add up.
    """
    return _coverage_region(context, snippet, threshold)[0]


def _coverage_region(context: str, snippet: str, threshold: float) -> tuple[float, str | None]:
    """(coverage, the aligned region of matching text; ``None`` when the snippet is found)."""
    if contains_gold(context, snippet, threshold):
        return 1.0, None
    return _partial_coverage_region(match_text(context), snippet)


def _partial_coverage_region(ctx: str, snippet: str) -> tuple[float, str]:
    """The coverage and region of :func:`_coverage_region` for a snippet known not to be found
    in the context whose matching text is ``ctx``."""
    snip = matching_snippet(snippet)
    snip_tokens = TOKEN.findall(snip)
    if not ctx or not snip_tokens:
        return 0.0, ""
    if len(ctx) <= len(snip):
        region = ctx
    else:
        alignment = fuzz.partial_ratio_alignment(snip, ctx)
        start, end = widen_to_words(ctx, alignment.dest_start, alignment.dest_end)
        region = ctx[start:end]
    common = Counter(snip_tokens) & Counter(TOKEN.findall(region))
    return sum(common.values()) / len(snip_tokens), region


def partial_evidence(context: str, snippet: str, threshold: float = 0.90,
                     partial_coverage: float = PARTIAL_COVERAGE) -> bool:
    """Whether ``context`` is partial evidence for ``snippet``: ``gold_coverage >=
    partial_coverage`` *and* the covered region passes the number guard
    (``textmatch.numbers_consistent``: every number of the snippet appears in the region, in
    order). So "Invoices are paid within 14 days." is no evidence at all for the gold
    "invoices are paid within 30 days", though it holds 4 of its 5 tokens: partial credit never
    bypasses the guard that full matching applies."""
    coverage, region = _coverage_region(context, snippet, threshold)
    if region is None:
        return True
    return coverage >= partial_coverage and numbers_consistent(matching_snippet(snippet), region)


def relevance_grade(
    context: str,
    slots: Sequence[Sequence[str]] | str,
    threshold: float = 0.90,
    partial_coverage: float = PARTIAL_COVERAGE,
) -> int:
    """Graded relevance of a context for graded nDCG: 2 whole, 1 part, 0 none.

    2 when every slot is filled (:func:`slot_found`); 1 when at least one slot is filled or
    some alternative is :func:`partial_evidence` (coverage ``>= partial_coverage``, default
    0.5, with the number guard); else 0.
    """
    gold = normalize_gold(slots)  # type: ignore[arg-type]
    filled = [slot_found(context, slot, threshold) for slot in gold]
    if all(filled):
        return 2
    if any(filled):
        return 1
    return unfilled_grade(context, gold, threshold, partial_coverage)


def unfilled_grade(context: str, gold: tuple[tuple[str, ...], ...], threshold: float = 0.90,
                   partial_coverage: float = PARTIAL_COVERAGE) -> int:
    """:func:`relevance_grade` of a context that fills no slot of the normalised ``gold``
    (the caller has matched every alternative already): 1 when some alternative is
    :func:`partial_evidence`, else 0.

    Equal to the definition by construction: ``partial_evidence`` of an alternative that is
    not found is its coverage rule (``_partial_coverage_region``) with the number guard. The
    whole context's token overlap bounds a region's coverage from above (a region's tokens are
    a sub-multiset of the context's), so alternatives whose bound is under
    ``partial_coverage`` are skipped: an exact shortcut, computed as integer sums of
    ``min(count in snippet, count in context)`` over the snippet's tokens (the size of the
    multiset intersection ``Counter & Counter``) without building Counters.
    """
    ctx = match_text(context)
    ctx_tokens = _context_tokens(ctx)
    for slot in gold:
        for alt in slot:
            snip = matching_snippet(alt)
            items, total = _snippet_token_counts(snip)
            common = 0
            for token, count in items:
                have = ctx_tokens.get(token, 0)
                common += count if count < have else have
            if common / max(1, total) < partial_coverage:
                continue
            coverage, region = _partial_coverage_region(ctx, alt)
            if coverage >= partial_coverage and numbers_consistent(snip, region):
                return 1
    return 0


@lru_cache(maxsize=4096)
def _context_tokens(ctx: str) -> Counter[str]:
    """Token counts of a matching text (cached; callers must not modify the Counter)."""
    return Counter(TOKEN.findall(ctx))


@lru_cache(maxsize=16384)
def _snippet_token_counts(snip: str) -> tuple[tuple[tuple[str, int], ...], int]:
    """((token, count) of a snippet's matching text, in first-seen order), and their total."""
    counts = Counter(TOKEN.findall(snip))
    return tuple(counts.items()), counts.total()
