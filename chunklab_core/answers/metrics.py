"""Deterministic metrics for generated answers: SQuAD EM/F1, ROUGE-L, grounding, numbers, abstention.

Handles
-------
* SQuAD v1.1 answer metrics: :func:`squad_normalize`, :func:`exact_match`, :func:`token_prf`
  and :func:`token_f1`, with the semantics of the official evaluation script
  ("Official evaluation script for v1.1 of the SQuAD dataset", Rajpurkar et al. 2016,
  ``evaluate-v1.1.py``: ``normalize_answer``, ``exact_match_score``, ``f1_score`` and
  ``metric_max_over_ground_truths``). They are written out here rather than imported because
  the script is not a package; the tests pin its results on hand-computed fixtures.
* :func:`rouge_l_f1`: LCS-based F-measure on SQuAD-normalised tokens (Lin 2004).
* :func:`context_grounding`, :func:`unsupported_numbers`, :func:`unsupported_number_rate`:
  how much of an answer the retrieved context supports.
* :func:`is_abstention`: a documented pattern list (``ABSTENTION_PATTERNS``).

The reference grader built on these metrics (correct / partial / wrong with a short reason)
is :mod:`chunklab_core.answers.reference_grader`.

"Not measured" is ``None``, never 0: every metric returns ``None`` where it is undefined (no
answer was produced; grounding of an abstention or of an answer without content words; the
number rate of an answer without numbers), and :func:`mean_ignoring_none` leaves those out.
An empty answer *is* measured (it scores 0).

Not handled: paraphrase, synonyms, numbers in words, units, and answers that abstain on part
of the question but answer the rest (they count as abstentions). Those are what the LLM
judges are for; this grader is their deterministic baseline.
"""

from __future__ import annotations

import math
import re
import string
from collections import Counter
from typing import Iterable, NamedTuple, Sequence

from rapidfuzz.distance import LCSseq

from chunklab_core.core.textmatch import canonical_number, extract_numbers

__all__ = [
    "ABSTENTION_PATTERNS",
    "STOPWORDS",
    "TokenPRF",
    "content_words",
    "context_grounding",
    "exact_match",
    "gold_list",
    "is_abstention",
    "mean_ignoring_none",
    "rouge_l_f1",
    "squad_normalize",
    "token_f1",
    "token_prf",
    "unsupported_number_rate",
    "unsupported_numbers",
]

#: Function words left out of "content words" (applied after ``squad_normalize``, which
#: already removed a/an/the and apostrophes, hence "dont").
STOPWORDS = frozenset(
    """
    and or but nor so yet of in on at to for by with from as into onto over under about
    after before between during than then also is are was were be been being am do does did
    done has have had it its this that these those he she they them him her his hers their
    theirs we us our you your i me my mine there here which who whom whose what when where
    why how not no yes very can could would should will shall may might must such some any
    all each both either neither other own same only just dont doesnt didnt isnt wasnt
    """.split()
)

#: Regular expressions (searched in the lower-cased answer, curly apostrophes made straight)
#: that mark an answer as declining to answer.
ABSTENTION_PATTERNS: tuple[str, ...] = (
    r"\bi (?:do not|don't|dont) know\b",
    r"\b(?:i|we) (?:cannot|can't|can not|could not|couldn't|(?:am|are|was|were) unable to)"
    r" (?:answer|determine|find|tell|say|know)\b",
    r"\b(?:i|we) (?:do|did)(?: not|n't) (?:have|find|see) (?:(?:enough|any|sufficient|the) )?"
    r"(?:information|answer|details?|mention)\b",
    r"\bcannot be (?:determined|answered)\b",
    r"\bcannot be (?:found|inferred|known)\b[^.]*"
    r"\b(?:context|passage|text|document|excerpt|information|provided|given)\b",
    r"\bnot possible to (?:determine|answer|tell|say|know)\b",
    r"\bnot (?:mentioned|stated|specified|provided|given|found|available|included|present"
    r"|contained|addressed|discussed|described|covered|indicated)\b[^.]*"
    r"\b(?:context|passage|text|document|excerpt|source)s?\b",
    r"\bnot (?:in|within|part of) the (?:\w+ )?(?:context|passage|text|document|excerpt)s?\b",
    r"\b(?:context|passage|text|document|excerpt|source)s? (?:does|do|did)(?: not|n't)"
    r" (?:mention|say|state|specify|contain|provide|include|give|indicate|discuss|describe"
    r"|address|cover|answer|tell|offer|have|explain)\b",
    r"\b(?:no|not enough|insufficient) (?:information|details?|mention|data|evidence)\b[^.]*"
    r"\b(?:context|passage|text|document|excerpt|provided|given)\b",
    r"^\W*(?:unknown|unanswerable|n/?a|no answer)\W*$",
    r"\bunanswerable\b",
)
_ABSTENTION = re.compile("|".join(f"(?:{p})" for p in ABSTENTION_PATTERNS))
_PUNCTUATION = frozenset(string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b")


# --------------------------------------------------------------------------- helpers


def gold_list(golds: str | Sequence[str]) -> list[str]:
    """One gold string or a non-empty list of them, as a list; anything else raises ``ValueError``."""
    if isinstance(golds, str):
        return [golds]
    if not isinstance(golds, (list, tuple)):
        raise ValueError(f"golds must be a string or a list of strings, got {golds!r}")
    golds = list(golds)
    if not golds or not all(isinstance(g, str) for g in golds):
        raise ValueError(f"golds must be a string or a non-empty list of strings, got {golds!r}")
    return golds


def _tokens(text: str) -> list[str]:
    return squad_normalize(text).split()


def mean_ignoring_none(values: Iterable[float | None]) -> float | None:
    """Mean of the measured values; ``None`` (and NaN, as pandas writes missing) left out.

    Returns ``None`` when nothing was measured, so "no data" never reads as a score of 0.
    """
    measured = [float(v) for v in values if v is not None and not math.isnan(float(v))]
    return sum(measured) / len(measured) if measured else None


# --------------------------------------------------------------------------- SQuAD metrics


def squad_normalize(text: str) -> str:
    """SQuAD v1.1 ``normalize_answer``: lower case, drop ``string.punctuation``, replace the
    articles a/an/the (whole words) by spaces, collapse whitespace; in that order.
    """
    text = "".join(ch for ch in text.lower() if ch not in _PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def exact_match(prediction: str | None, golds: str | Sequence[str]) -> float | None:
    """``max over golds of [squad_normalize(prediction) == squad_normalize(gold)]`` (SQuAD)."""
    golds = gold_list(golds)
    if prediction is None:
        return None
    pred = squad_normalize(prediction)
    return max(float(pred == squad_normalize(g)) for g in golds)


class TokenPRF(NamedTuple):
    precision: float
    recall: float
    f1: float


def _prf(pred_tokens: list[str], gold_tokens: list[str]) -> TokenPRF:
    """SQuAD ``f1_score``: ``same = |Counter(pred) & Counter(gold)|``; 0 when ``same == 0``;
    ``P = same/|pred|``, ``R = same/|gold|``, ``F1 = 2PR/(P+R)``.
    """
    same = sum((Counter(pred_tokens) & Counter(gold_tokens)).values())
    if same == 0:
        return TokenPRF(0.0, 0.0, 0.0)
    p, r = same / len(pred_tokens), same / len(gold_tokens)
    return TokenPRF(p, r, 2 * p * r / (p + r))


def token_prf(prediction: str | None, golds: str | Sequence[str]) -> TokenPRF | None:
    """Token precision, recall and F1 against the gold with the highest F1 (first on ties)."""
    golds = gold_list(golds)
    if prediction is None:
        return None
    pred = _tokens(prediction)
    return max((_prf(pred, _tokens(g)) for g in golds), key=lambda prf: prf.f1)


def token_f1(prediction: str | None, golds: str | Sequence[str]) -> float | None:
    """SQuAD token F1, max over golds (``metric_max_over_ground_truths(f1_score, ...)``)."""
    prf = token_prf(prediction, golds)
    return None if prf is None else prf.f1


def rouge_l_f1(prediction: str | None, golds: str | Sequence[str]) -> float | None:
    """ROUGE-L F1 on SQuAD-normalised tokens, max over golds.

    ``LCS`` = longest common subsequence of the token lists; ``P = LCS/len(pred)``,
    ``R = LCS/len(ref)``, ``F = 2PR/(P+R)`` (0 when LCS = 0). This is ROUGE-L of Lin (2004),
    "ROUGE: A Package for Automatic Evaluation of Summaries", with beta = 1, as in Google's
    ``rouge-score`` package (without stemming; it tokenises differently: no article removal).
    LCS length from ``rapidfuzz.distance.LCSseq`` on the token lists.
    """
    golds = gold_list(golds)
    if prediction is None:
        return None
    pred = _tokens(prediction)
    best = 0.0
    for gold in golds:
        ref = _tokens(gold)
        lcs = LCSseq.similarity(pred, ref) if pred and ref else 0
        if lcs:
            p, r = lcs / len(pred), lcs / len(ref)
            best = max(best, 2 * p * r / (p + r))
    return best


# --------------------------------------------------------------------------- grounding


def is_abstention(answer: str) -> bool:
    """Whether ``answer`` declines to answer (any of ``ABSTENTION_PATTERNS`` matches)."""
    text = " ".join(answer.replace("\u2019", "'").lower().split())
    return bool(_ABSTENTION.search(text))


def content_words(text: str) -> list[str]:
    """SQuAD-normalised tokens of ``text`` that are not in ``STOPWORDS``, unique, in order."""
    return list(dict.fromkeys(t for t in _tokens(text) if t not in STOPWORDS))


def context_grounding(answer: str | None, context: str) -> float | None:
    """Share of the answer's distinct content words that occur among the context's tokens.

    ``|content(answer) ∩ tokens(context)| / |content(answer)|`` on SQuAD-normalised tokens.
    ``None`` when there is no answer, the answer abstains, or it has no content words.
    """
    if answer is None or is_abstention(answer):
        return None
    words = content_words(answer)
    if not words:
        return None
    context_tokens = set(_tokens(context))
    return sum(w in context_tokens for w in words) / len(words)


def unsupported_numbers(answer: str | None, context: str) -> list[str]:
    """Numbers of the answer (as written, first occurrence, in order) absent from the context.

    Compared whole and without thousands separators (``textmatch.canonical_number``), so
    "1000" is supported by "1,000" but "5" is not supported by "15".
    """
    if answer is None:
        return []
    in_context = {canonical_number(n) for n in extract_numbers(context)}
    seen: dict[str, str] = {}
    for number in extract_numbers(answer):
        seen.setdefault(canonical_number(number), number)
    return [written for canon, written in seen.items() if canon not in in_context]


def unsupported_number_rate(answer: str | None, context: str) -> float | None:
    """``len(unsupported_numbers) / number of distinct numbers in the answer``.

    ``None`` when there is no answer, it abstains, or it states no number.
    """
    if answer is None or is_abstention(answer):
        return None
    distinct = {canonical_number(n) for n in extract_numbers(answer)}
    if not distinct:
        return None
    return len(unsupported_numbers(answer, context)) / len(distinct)
