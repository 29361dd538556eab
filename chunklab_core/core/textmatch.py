"""Finding gold answers in retrieved contexts, written the way people write them.

Handles
-------
* **Matching text** (:func:`match_text`): table cell delimiters made uniform
  (:func:`table_cells`: outer pipes of a row dropped, ``" | "`` between cells, as .docx and
  HTML rows are written), then ``text.normalize`` (lower case, whitespace collapsed) plus two
  number rules: thousands separators are dropped ("1,000" -> "1000", "1,000,000.5" ->
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
* **Building blocks** for :mod:`chunklab_core.evaluation.gold_slots` (slots of alternatives and graded
  relevance, built on the matching above): :func:`check_threshold`, :func:`matching_snippet`,
  :func:`roman_numerals`, :func:`match_prepared`, :func:`widen_to_words` and :data:`TOKEN`.

Word boundaries apply to scripts written with spaces. Characters from U+2E80 on (CJK, kana,
Hangul) and Thai, Lao, Myanmar and Khmer letters are treated as words of their own, since
those scripts do not separate words by spaces.

Not handled: numbers written in words ("fourteen"), space-grouped thousands ("1 000"), "1.000"
as a thousands separator, units and currency conversion ("$1,000" also matches "1,000 euros"),
unicode compatibility forms and curly versus straight quotes. Spans returned for debugging are
offsets into ``match_text(context)``, not into the raw context.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Sequence

from rapidfuzz import fuzz
from rapidfuzz.distance import LCSseq

from chunklab_core.core.text import normalize

__all__ = [
    "GoldMatch",
    "TOKEN",
    "canonical_number",
    "check_threshold",
    "contains_gold",
    "extract_numbers",
    "match_gold",
    "match_prepared",
    "match_text",
    "matching_snippet",
    "numbers_consistent",
    "roman_numerals",
    "table_cells",
    "widen_to_words",
]


_NUMBER = re.compile(r"[0-9]+(?:[.,][0-9]+)*")
_THOUSANDS = re.compile(r"[0-9]{1,3}(?:,[0-9]{3})+(?:\.[0-9]+)?")
_CURRENCY_BEFORE_DIGIT = re.compile(r"[$€£¥₹](?=[0-9])")
#: A token of matching text: a whole number (with its separators) or a run of word characters.
TOKEN = re.compile(r"[0-9]+(?:[.,][0-9]+)*|[^\W_]+")
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


_CELL_DELIMITER = re.compile(r"[ \t]*\|[ \t]*")


def table_cells(text: str) -> str:
    """Table rows written with one delimiter style, so a row copied from any format is found.

    On every line holding a ``|``: surrounding spaces are stripped, then one leading and one
    trailing ``|`` (a Markdown row's outer pipes), and each ``|`` with the spaces or tabs around
    it becomes ``" | "`` -- the way ``document_text`` writes .docx and HTML rows. So
    ``"| Partner | 120 | 300 |"``, ``"Partner|120|300"`` and ``"Partner | 120 | 300"`` are the
    same row. Lines without ``|`` are unchanged; escaped pipes (``\\|``) are not special.
    """
    if "|" not in text:
        return text
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if "|" in line:
            row = line.strip(" \t")
            row = row[1:] if row.startswith("|") else row
            row = row[:-1] if row.endswith("|") else row
            lines[i] = _CELL_DELIMITER.sub(" | ", row.strip(" \t"))
    return "\n".join(lines)


@lru_cache(maxsize=16384)
def match_text(text: str) -> str:
    """``normalize(table_cells(text))`` with thousands separators and currency signs before digits dropped."""
    return _NUMBER.sub(_canonical_thousands, _CURRENCY_BEFORE_DIGIT.sub("", normalize(table_cells(text))))


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


def widen_to_words(text: str, start: int, end: int) -> tuple[int, int]:
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


def check_threshold(threshold: float) -> None:
    """Raise ``ValueError`` unless ``0 < threshold <= 1``."""
    if not 0.0 < threshold <= 1.0:
        raise ValueError(f"threshold must be in (0, 1], got {threshold!r}")


def matching_snippet(snippet: str) -> str:
    """The matching text of a gold snippet; a non-string or an empty snippet raises ``ValueError``."""
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


def roman_numerals(snippet: str) -> tuple[str, ...]:
    """Capitalised Roman numerals of the raw snippet ("Super Bowl XX" -> ("xx",)), lower-cased.

    Any all-capital word made of I, V, X, L, C, D, M except the pronoun "I" counts, so an
    acronym such as "DC" is guarded too; that only costs a fuzzy match whose typo falls in it.
    """
    return tuple(m.lower() for m in _ROMAN.findall(snippet) if m != "I")


def _figures_consistent(snip: str, region: str, romans: tuple[str, ...]) -> bool:
    """Number guard plus: every guarded Roman numeral is a whole word of the region."""
    if not numbers_consistent(snip, region):
        return False
    words = set(TOKEN.findall(region))
    return all(r in words for r in romans)


def _score_region(
    ctx: str, snip: str, start: int, end: int, threshold: float, romans: tuple[str, ...]
) -> GoldMatch:
    start, end = widen_to_words(ctx, start, end)
    region = ctx[start:end]
    score = fuzz.ratio(snip, region) / 100.0
    found = score >= threshold and _figures_consistent(snip, region, romans)
    return GoldMatch(found, score, start, end, "fuzzy" if found else "none", region)


@lru_cache(maxsize=32768)
def match_prepared(ctx: str, snip: str, threshold: float, romans: tuple[str, ...] = ()) -> GoldMatch:
    """The three containment steps on already prepared inputs (cached).

    ``ctx`` is ``match_text(context)``, ``snip`` is ``matching_snippet(snippet)`` and
    ``romans`` is ``roman_numerals(snippet)``: callers matching one context against many
    snippets (``gold_slots``) prepare each once.
    """
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
    check_threshold(threshold)
    snip = matching_snippet(snippet)
    return match_prepared(match_text(context), snip, float(threshold), roman_numerals(snippet))


def match_gold(context: str, snippet: str, threshold: float = 0.90) -> GoldMatch:
    """Where and how well ``snippet`` is found in ``context`` (see the module docstring).

    The debugging variant of :func:`contains_gold`: when the search stopped early because
    the threshold was out of reach, it also computes the best ``partial_ratio`` score.
    """
    found = _fast_match(context, snippet, threshold)
    if found.score is None:
        score = fuzz.partial_ratio(matching_snippet(snippet), match_text(context)) / 100.0
        found = replace(found, score=score)
    return found


def locate_gold(context: str, snippet: str, threshold: float = 0.90) -> GoldMatch:
    """:func:`match_gold` without its debugging score: the same match when the snippet is found; when
    it is not, ``score`` may be ``None`` (the search stopped once the threshold was out of reach),
    which spares a ``partial_ratio`` over the whole context (a document, for the loader and its advice)."""
    return _fast_match(context, snippet, threshold)


def contains_gold(context: str, snippet: str, threshold: float = 0.90) -> bool:
    """Whether ``context`` holds ``snippet`` (exactly, or fuzzily at ``threshold``)."""
    return _fast_match(context, snippet, threshold).found
