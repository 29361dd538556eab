"""The reference grader: correct / partial / wrong for a generated answer, by rules, with no model.

Handles: one verdict per answer against all its gold answers, with a short reason
(:func:`reference_grade`; the rules are in its docstring), built on the SQuAD metrics, the
abstention patterns and the number check of :mod:`chunklab_core.answers.metrics`. Spelled-out
numbers up to twenty, the tens and "hundred" are read as digits (:func:`number_words_to_digits`).

Not handled: paraphrase, synonyms, compound number words, units. Those are what the LLM
judges are for; this grader is their deterministic baseline.
"""

from __future__ import annotations

import re
from typing import Any, Sequence

from chunklab_core.answers.metrics import (context_grounding, exact_match, gold_list, is_abstention, squad_normalize, token_f1, token_prf, unsupported_numbers)
from chunklab_core.answers.verdicts import CORRECT, PARTIAL, WRONG
from chunklab_core.core.textmatch import canonical_number, extract_numbers

__all__ = ["PARTIAL_F1", "number_words_to_digits", "reference_grade"]

#: Token F1 at or above which a non-matching answer is graded "partial".
PARTIAL_F1 = 0.5

_RANK = {CORRECT: 2, PARTIAL: 1, WRONG: 0}


def _contains_tokens(answer_norm: str, gold_norm: str) -> bool:
    return bool(gold_norm) and f" {gold_norm} " in f" {answer_norm} "


def _grade_one(answer: str, gold: str) -> tuple[str, str, float]:
    f1 = token_prf(answer, gold).f1
    gold_numbers = extract_numbers(gold)
    written = {canonical_number(n): n for n in reversed(extract_numbers(answer))}
    missing = [n for n in dict.fromkeys(gold_numbers) if canonical_number(n) not in written]
    if missing:
        if written:
            stated = ", ".join(reversed(written.values()))
            return WRONG, f"states {stated}, gold figure {', '.join(missing)}", f1
        return WRONG, f"gold figure {', '.join(missing)} missing", f1
    answer_norm, gold_norm = squad_normalize(answer), squad_normalize(gold)
    if answer_norm == gold_norm:
        return CORRECT, "exact match", f1
    if _contains_tokens(answer_norm, gold_norm):
        return CORRECT, f"contains gold {gold!r}", f1
    if f1 >= PARTIAL_F1:
        return PARTIAL, f"token F1 {f1:.2f} >= {PARTIAL_F1}", f1
    return WRONG, f"token F1 {f1:.2f} < {PARTIAL_F1}", f1


_NUMBER_WORDS = {
    word: str(value)
    for value, word in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
        "fifteen sixteen seventeen eighteen nineteen twenty".split()
    )
}
_NUMBER_WORDS.update({"thirty": "30", "forty": "40", "fifty": "50", "sixty": "60", "seventy": "70",
                      "eighty": "80", "ninety": "90", "hundred": "100"})
_NUMBER_WORD_RE = re.compile(r"\b(" + "|".join(_NUMBER_WORDS) + r")\b", re.IGNORECASE)


def number_words_to_digits(text: str) -> str:
    """Spell-out numbers zero..twenty, the tens and "hundred" written as digits ("four" -> "4").

    Used by the reference grader only (so "4" answers the gold "four"); exact match and F1
    stay the official SQuAD ones. Compound forms ("twenty-one") become "20-1" and still
    differ from "21": the grader then falls back to its other rules.
    """
    return _NUMBER_WORD_RE.sub(lambda m: _NUMBER_WORDS[m.group(1).lower()], text)


def reference_grade(
    answer: str, golds: str | Sequence[str], context: str | None = None
) -> dict[str, Any]:
    """Grade ``answer`` against reference ``golds`` with rules only (no model).

    Rules, per gold, best label over golds (correct > partial > wrong, then higher F1):

    1. the answer abstains (:func:`is_abstention`) -> wrong, "abstained" (before any gold);
    2. the gold states numbers and one of them is not among the answer's numbers (compared
       canonically) -> wrong: the answer states a different figure or none. Extra numbers
       next to all of the gold's are not penalised (years, other counts);
    3. SQuAD exact match, or the normalised gold is contained word-aligned in the normalised
       answer -> correct;
    4. SQuAD token F1 >= ``PARTIAL_F1`` (0.5: at least half the words shared in both
       directions on average) -> partial;
    5. otherwise wrong.

    Rules 2-5 compare answer and gold after :func:`number_words_to_digits`. Returns ``{"label", "reason", "exact_match", "f1", "gold"}`` (``gold``: the reference
    that decided the label; ``exact_match`` and ``f1`` are SQuAD maxima over golds). With a
    ``context``, also ``"grounding"`` and ``"unsupported_numbers"``; they are reported only
    and do not change the label. Containment is lenient to answers listing several
    candidates; the LLM judges are the finer instrument.
    """
    golds = gold_list(golds)
    if not isinstance(answer, str):
        raise ValueError(f"answer must be a string, got {answer!r}")
    result: dict[str, Any] = {
        "exact_match": exact_match(answer, golds),
        "f1": token_f1(answer, golds),
    }
    if context is not None:
        result["grounding"] = context_grounding(answer, context)
        result["unsupported_numbers"] = unsupported_numbers(answer, context)
    if not answer.strip():
        return {"label": WRONG, "reason": "empty answer", "gold": None, **result}
    if is_abstention(answer):
        return {"label": WRONG, "reason": "abstained", "gold": None, **result}
    spelled = number_words_to_digits(answer)
    graded = [(_grade_one(spelled, number_words_to_digits(gold)), gold) for gold in golds]
    (label, reason, _), gold = max(graded, key=lambda item: (_RANK[item[0][0]], item[0][2]))
    return {"label": label, "reason": reason, "gold": gold, **result}
