"""Finding gold answers in retrieved contexts, written the way people write them.

Handles
-------
* **Matching text** (:func:`match_text`): ``text.normalize`` (lower case, whitespace collapsed)
  plus two number rules: thousands separators are dropped ("1,000" -> "1000", "1,000,000.5" ->
  "1000000.5"; a comma counts as a thousands separator only inside ``d{1,3}(,ddd)+``, so "3,5"
  and "12,34" are kept as written), and a currency sign directly before a digit is dropped
  ("$1,000" -> "1000", so it is found in "1,000 dollars").
* **Numbers** (:func:`extract_numbers`, :func:`numbers_consistent`): numbers are runs of ASCII
  digits with internal ``.``/``,`` separators, compared as whole tokens after the thousands rule
  above ("5" never matches inside "15"; "1000" equals "1,000"; "3.5" differs from "3,5").
* **Containment** (:func:`match_gold`, :func:`contains_gold`), three steps on matching text:

  1. *exact*: the snippet occurs at word boundaries (so "5 business days" is not found in
     "15 business days", nor "l" inside "hello");
  2. *short context*: when the context is shorter than the snippet it counts only if it is the
     whole snippet, ``fuzz.ratio(snippet, context) / 100 >= threshold``;
  3. *fuzzy*: ``fuzz.partial_ratio_alignment`` places the snippet in the context; the aligned
     region is widened to whole words and re-scored with ``fuzz.ratio`` (a partial window can
     sit inside a longer word, which would make every short snippet "found"); it counts when
     that score ``>= threshold`` and every number of the snippet appears, in order, in the
     region. If the best region fails the number guard, the windows around each occurrence of
     the snippet's first number are tried too. Capitalised Roman numerals of the raw snippet
     ("Super Bowl XX") must also be whole words of the region, or "Super Bowl XX" would be
     found in "super bowl xlix" (a case from SQuAD dev).

  With one substitution, a snippet of n characters scores ``1 - 1/n``; so at 0.90 typos are
  tolerated from 10 characters on, and shorter snippets must match exactly.
* **Slots** (:func:`normalize_gold`, :func:`slot_found`, :func:`slots_found`) and graded
  relevance (:func:`gold_coverage`, :func:`relevance_grade`).

Word boundaries apply to scripts written with spaces. Characters from U+2E80 on (CJK, kana,
Hangul) and Thai, Lao, Myanmar and Khmer letters are treated as words of their own, since
those scripts do not separate words by spaces.

Not handled: numbers written in words ("fourteen"), space-grouped thousands ("1 000"), "1.000"
as a thousands separator, units and currency conversion ("$1,000" also matches "1,000 euros"),
unicode compatibility forms and curly versus straight quotes. Spans returned for debugging are
offsets into ``match_text(context)``, not into the raw context. Coverage tokens of CJK text are
whole runs of characters, so partial coverage is coarse there.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Sequence

import numpy as np
from rapidfuzz import fuzz
from rapidfuzz.distance import LCSseq

from chunklab_core.text import normalize

__all__ = [
    "GoldMatch",
    "PARTIAL_COVERAGE",
    "canonical_number",
    "contains_gold",
    "extract_numbers",
    "gold_coverage",
    "match_gold",
    "match_text",
    "normalize_gold",
    "numbers_consistent",
    "relevance_grade",
    "slot_found",
    "slots_found",
]

#: Coverage of a snippet at or above which a context counts as partial evidence (grade 1).
PARTIAL_COVERAGE = 0.5

_NUMBER = re.compile(r"[0-9]+(?:[.,][0-9]+)*")
_THOUSANDS = re.compile(r"[0-9]{1,3}(?:,[0-9]{3})+(?:\.[0-9]+)?")
_CURRENCY_BEFORE_DIGIT = re.compile(r"[$€£¥₹](?=[0-9])")
_TOKEN = re.compile(r"[0-9]+(?:[.,][0-9]+)*|[^\W_]+")
_ROMAN = re.compile(r"(?<![^\W_])[IVXLCDM]+(?![^\W_])")
_NO_SPACE_SCRIPTS = ((0x0E00, 0x0EFF), (0x1000, 0x109F), (0x1780, 0x17FF))


# --------------------------------------------------------------------------- numbers


def canonical_number(number: str) -> str:
    """``number`` without thousands separators when it is written ``d{1,3}(,ddd)+[.d+]``."""
    return number.replace(",", "") if _THOUSANDS.fullmatch(number) else number


def extract_numbers(text: str) -> list[str]:
    """The numbers in ``text`` as written, in order: "1,000", "3.5", "14", "2019".

    A number is a run of ASCII digits with internal ``.`` or ``,`` separators; a sentence's
    final period is not part of it ("in 2019." gives "2019"). Signs, percent signs and units
    are not part of it either.
    """
    return _NUMBER.findall(text)


def _canonical_numbers(text: str) -> list[str]:
    return [canonical_number(n) for n in _NUMBER.findall(text)]


def _is_subsequence(needle: Sequence[str], haystack: Sequence[str]) -> bool:
    remaining = iter(haystack)
    return all(any(item == other for other in remaining) for item in needle)


def numbers_consistent(snippet: str, passage_region: str) -> bool:
    """True when every number of ``snippet`` appears in ``passage_region``, in the same order.

    Numbers are compared whole and canonical (``canonical_number``): "within 14 days" is not
    consistent with "within 30 days", "5 business days" not with "15 business days", and
    "1000" is consistent with "1,000". A snippet without numbers is always consistent.
    """
    return _is_subsequence(_canonical_numbers(snippet), _canonical_numbers(passage_region))


# --------------------------------------------------------------------------- matching text


def _canonical_thousands(match: re.Match[str]) -> str:
    return canonical_number(match.group(0))


@lru_cache(maxsize=16384)
def match_text(text: str) -> str:
    """``normalize(text)`` with thousands separators and currency signs before digits dropped."""
    return _NUMBER.sub(_canonical_thousands, _CURRENCY_BEFORE_DIGIT.sub("", normalize(text)))


def _spaced_word_char(ch: str) -> bool:
    """Whether ``ch`` belongs to a word of a script that separates words by spaces."""
    if not ch.isalnum():
        return False
    code = ord(ch)
    if code >= 0x2E80:
        return False
    return not any(lo <= code <= hi for lo, hi in _NO_SPACE_SCRIPTS)


def _joined(text: str, i: int) -> bool:
    """Whether positions ``i - 1`` and ``i`` of ``text`` lie inside one word or number."""
    if i <= 0 or i >= len(text):
        return False
    left, right = text[i - 1], text[i]
    if _spaced_word_char(left) and _spaced_word_char(right):
        return True
    # a separator inside a number: "3.|5" or "3|.5"
    if left in ".," and right.isdigit() and i >= 2 and text[i - 2].isdigit():
        return True
    return right in ".," and left.isdigit() and i + 1 < len(text) and text[i + 1].isdigit()


def _widen_to_words(text: str, start: int, end: int) -> tuple[int, int]:
    """Grow ``[start, end)`` to whole words and numbers, then trim surrounding spaces."""
    while _joined(text, start):
        start -= 1
    while _joined(text, end):
        end += 1
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


# --------------------------------------------------------------------------- containment


@dataclass(frozen=True)
class GoldMatch:
    """Outcome of looking for one snippet in one context (for debugging and tables).

    ``score`` is in [0, 1] (``match_gold`` always fills it; internally ``None`` means the
    search stopped once the threshold was out of reach); ``start``/``end`` index
    ``match_text(context)`` (``None`` when there is nothing to point at); ``method`` is
    "exact", "whole-context", "fuzzy" or "none"; ``region`` is the text that was scored.
    """

    found: bool
    score: float | None
    start: int | None
    end: int | None
    method: str
    region: str = ""


def _check_threshold(threshold: float) -> None:
    if not 0.0 < threshold <= 1.0:
        raise ValueError(f"threshold must be in (0, 1], got {threshold!r}")


def _matching_snippet(snippet: str) -> str:
    if not isinstance(snippet, str):
        raise ValueError(f"snippet must be a string, got {type(snippet).__name__}")
    snip = match_text(snippet)
    if not snip:
        raise ValueError(f"empty gold snippet {snippet!r}: nothing to look for")
    return snip


def _exact(ctx: str, snip: str) -> GoldMatch | None:
    pos = ctx.find(snip)
    while pos != -1:
        end = pos + len(snip)
        if not _joined(ctx, pos) and not _joined(ctx, end):
            return GoldMatch(True, 1.0, pos, end, "exact", ctx[pos:end])
        pos = ctx.find(snip, pos + 1)
    return None


def _roman_numerals(snippet: str) -> tuple[str, ...]:
    """Capitalised Roman numerals of the raw snippet ("Super Bowl XX" -> ("xx",)), lower-cased.

    Any all-capital word made of I, V, X, L, C, D, M except the pronoun "I" counts, so an
    acronym such as "DC" is guarded too; that only costs a fuzzy match whose typo falls in it.
    """
    return tuple(m.lower() for m in _ROMAN.findall(snippet) if m != "I")


def _figures_consistent(snip: str, region: str, romans: tuple[str, ...]) -> bool:
    """Number guard plus: every guarded Roman numeral is a whole word of the region."""
    if not numbers_consistent(snip, region):
        return False
    words = set(_TOKEN.findall(region))
    return all(r in words for r in romans)


def _score_region(
    ctx: str, snip: str, start: int, end: int, threshold: float, romans: tuple[str, ...]
) -> GoldMatch:
    start, end = _widen_to_words(ctx, start, end)
    region = ctx[start:end]
    score = fuzz.ratio(snip, region) / 100.0
    found = score >= threshold and _figures_consistent(snip, region, romans)
    return GoldMatch(found, score, start, end, "fuzzy" if found else "none", region)


@lru_cache(maxsize=32768)
def _match(ctx: str, snip: str, threshold: float, romans: tuple[str, ...] = ()) -> GoldMatch:
    if not ctx:
        return GoldMatch(False, 0.0, None, None, "none")
    exact = _exact(ctx, snip)
    if exact is not None:
        return exact
    if len(ctx) < len(snip):
        score = fuzz.ratio(snip, ctx) / 100.0
        found = score >= threshold and _figures_consistent(snip, ctx, romans)
        return GoldMatch(found, score, 0, len(ctx), "whole-context" if found else "none", ctx)
    # Cheap exact pre-check: any window w scoring 2 LCS(s, w) / (|s| + |w|) >= t needs
    # LCS(s, w) >= t |s| / (2 - t) (as |w| >= LCS), and LCS(s, w) <= LCS(s, context).
    needed = math.ceil(threshold * len(snip) / (2.0 - threshold) - 1e-9)
    if LCSseq.similarity(snip, ctx, score_cutoff=needed) < needed:
        return GoldMatch(False, None, None, None, "none")
    cutoff = threshold * 100.0
    alignment = fuzz.partial_ratio_alignment(snip, ctx, score_cutoff=cutoff)
    if alignment is None:
        return GoldMatch(False, None, None, None, "none")
    best = _score_region(ctx, snip, alignment.dest_start, alignment.dest_end, threshold, romans)
    if best.found:
        return best
    numbers = _canonical_numbers(snip)
    if numbers:
        # The best-scoring region may hold a different figure; try the regions around each
        # occurrence of the snippet's first number (whole-token, canonical).
        for m in _NUMBER.finditer(ctx):
            if canonical_number(m.group(0)) != numbers[0]:
                continue
            lo = max(0, m.start() - len(snip))
            window = ctx[lo : m.end() + len(snip)]
            local = fuzz.partial_ratio_alignment(snip, window, score_cutoff=cutoff)
            if local is None:
                continue
            candidate = _score_region(
                ctx, snip, lo + local.dest_start, lo + local.dest_end, threshold, romans
            )
            if candidate.found:
                return candidate
    return best


def _fast_match(context: str, snippet: str, threshold: float) -> GoldMatch:
    _check_threshold(threshold)
    snip = _matching_snippet(snippet)
    return _match(match_text(context), snip, float(threshold), _roman_numerals(snippet))


def match_gold(context: str, snippet: str, threshold: float = 0.90) -> GoldMatch:
    """Where and how well ``snippet`` is found in ``context`` (see the module docstring).

    The debugging variant of :func:`contains_gold`: when the search stopped early because
    the threshold was out of reach, it also computes the best ``partial_ratio`` score.
    """
    found = _fast_match(context, snippet, threshold)
    if found.score is None:
        score = fuzz.partial_ratio(_matching_snippet(snippet), match_text(context)) / 100.0
        found = replace(found, score=score)
    return found


def contains_gold(context: str, snippet: str, threshold: float = 0.90) -> bool:
    """Whether ``context`` holds ``snippet`` (exactly, or fuzzily at ``threshold``)."""
    return _fast_match(context, snippet, threshold).found


# --------------------------------------------------------------------------- slots


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
    _check_threshold(threshold)
    gold = normalize_gold(slots)  # type: ignore[arg-type]
    snips = [[(_matching_snippet(alt), _roman_numerals(alt)) for alt in slot] for slot in gold]
    out = np.zeros((len(contexts), len(gold)), dtype=bool)
    for i, context in enumerate(contexts):
        ctx = match_text(context)
        for j, slot in enumerate(snips):
            out[i, j] = any(_match(ctx, s, float(threshold), r).found for s, r in slot)
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
    if contains_gold(context, snippet, threshold):
        return 1.0
    snip, ctx = _matching_snippet(snippet), match_text(context)
    snip_tokens = _TOKEN.findall(snip)
    if not ctx or not snip_tokens:
        return 0.0
    if len(ctx) <= len(snip):
        region = ctx
    else:
        alignment = fuzz.partial_ratio_alignment(snip, ctx)
        start, end = _widen_to_words(ctx, alignment.dest_start, alignment.dest_end)
        region = ctx[start:end]
    common = Counter(snip_tokens) & Counter(_TOKEN.findall(region))
    return sum(common.values()) / len(snip_tokens)


def relevance_grade(
    context: str,
    slots: Sequence[Sequence[str]] | str,
    threshold: float = 0.90,
    partial_coverage: float = PARTIAL_COVERAGE,
) -> int:
    """Graded relevance of a context for graded nDCG: 2 whole, 1 part, 0 none.

    2 when every slot is filled (:func:`slot_found`); 1 when at least one slot is filled or
    some alternative has ``gold_coverage >= partial_coverage`` (default 0.5); else 0.
    """
    gold = normalize_gold(slots)  # type: ignore[arg-type]
    filled = [slot_found(context, slot, threshold) for slot in gold]
    if all(filled):
        return 2
    if any(filled):
        return 1
    ctx_tokens = _context_tokens(match_text(context))
    for slot in gold:
        for alt in slot:
            # The tokens of one region are a sub-multiset of the context's, so the whole
            # context's token overlap bounds the coverage from above: an exact shortcut.
            snip_tokens = Counter(_TOKEN.findall(_matching_snippet(alt)))
            bound = sum((snip_tokens & ctx_tokens).values()) / max(1, snip_tokens.total())
            if bound < partial_coverage:
                continue
            if gold_coverage(context, alt, threshold) >= partial_coverage:
                return 1
    return 0


@lru_cache(maxsize=4096)
def _context_tokens(ctx: str) -> Counter[str]:
    """Token counts of a matching text (cached; callers must not modify the Counter)."""
    return Counter(_TOKEN.findall(ctx))

