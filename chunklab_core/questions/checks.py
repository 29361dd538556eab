"""Word overlap between a question and its passage, and rule-based validity checks.

Handles: ``overlap_words`` (the tokens the overlap counts), ``word_overlap`` (one formula),
and seven checks, each a small function returning a ``Check(flag, evidence)``:

1. ``answer_not_in_passage``: the reference answer does not occur in the passage (exact, else
   case/whitespace-insensitive, ``longdocs.locate``); evidence: the closest passage stretch
   and its ``rapidfuzz`` partial-ratio score (case-insensitive).
2. ``numbers_disagree``: numbers in the question absent from the passage, compared whole and
   without thousands separators (``answers.metrics.unsupported_numbers``).
3. ``context_dependent``: wording that needs the passage to be understood: a reference to the
   document ("the passage", "the study", "according to the text"), a demonstrative with a
   noun ("this algorithm", "these species"), or a personal pronoun ("it", "he", "they").
   Evidence: the phrase matched.
4. ``yes_no_restatement``: a question that opens with an auxiliary ("Is", "Did", "Can"...)
   and whose content words nearly all (``word_overlap`` >= ``threshold``) occur in one
   passage sentence (``text.sentence_spans``); evidence: that sentence and its overlap.
5. ``near_duplicates``: questions of one set whose ``rapidfuzz`` token-sort ratio with another
   question of the set is >= ``threshold`` (out of 100); evidence: the closest other question.
6. ``answer_in_question``: the question gives its own answer away — every content word of the
   reference answer occurs in the question ("Who is Mrs. Farrow?" with answer "Mrs. Farrow");
   an answer without content words (a bare number, "the") is checked as a whole word instead.
   Evidence: the answer's words found.
7. ``not_a_question``: neither a question mark at the end nor a question word or auxiliary at
   the start ("The passage describes ..."); search queries ("who sings ...") pass by their
   first word. Evidence: the opening words.

Not handled, and left to a reader: whether the answer really answers the question, questions
that other passages answer differently, context dependence without a listed cue ("the
company", "the ship"), wrong paraphrases without numbers, numbers spelled out in words.
The pronoun rule flags some sound questions ("What is it called ...?"): the evidence column
is there so a reader can tell.
"""

from __future__ import annotations

import re
from typing import NamedTuple, Sequence

import numpy as np
from rapidfuzz import fuzz, process, utils

from chunklab_core.answers.metrics import STOPWORDS, unsupported_numbers
from chunklab_core.data.longdocs import locate
from chunklab_core.core.text import sentence_spans
from chunklab_core.core.textmatch import TOKEN, canonical_number

AUXILIARIES = frozenset("is are was were am do does did can could has have had will would shall should "
                        "may might must".split())
ARTICLES = frozenset({"a", "an", "the"})
_CLITIC = re.compile(r"(?<=\w)\s+(?=(?:['’](?:s|t|re|ve|ll|d|m)|n['’]t)\b)", re.IGNORECASE)
_DOCUMENT_NOUNS = ("passage", "text", "article", "paragraph", "document", "context", "excerpt", "section",
                   "author", "authors", "study", "paper", "story", "report", "above", "following")
CONTEXT_PATTERNS: tuple[tuple[str, str], ...] = (
    ("document reference", r"\b(?:the|this|that|these|those)\s+(?:" + "|".join(_DOCUMENT_NOUNS) + r")\b"),
    ("document reference", r"\baccording to (?:the|this)\b|\b(?:mentioned|described|discussed|stated) "
                           r"(?:above|here|earlier|in the)\b"),
    ("demonstrative", r"\b(?:this|these|those)\s+[^\W\d_]+"),
    ("pronoun", r"\b(?:it|its|he|him|his|she|her|they|them|their)\b"),
)
_CONTEXT_RES = tuple((kind, re.compile(pattern, re.IGNORECASE)) for kind, pattern in CONTEXT_PATTERNS)


class Check(NamedTuple):
    """One check's verdict on one question: ``flag`` and a short human-readable ``evidence``."""

    flag: bool
    evidence: str


def overlap_words(text: str) -> list[str]:
    """Distinct content words of ``text``, in order, as ``word_overlap`` counts them.

    Steps: lower-case; a clitic split off by tokenisation is joined back ("Handmaid 's" ->
    "handmaid's", "do n't" -> "don't": Natural Questions pages are tokenised that way, the
    queries are not); apostrophes removed ("handmaid's" -> "handmaids"); tokens are numbers
    (digits with inner ``.``/``,``, thousands separators dropped) or runs of letters and
    digits, every other character separates ("straight-to-series" -> straight, to, series);
    a/an/the and ``answers.metrics.STOPWORDS`` dropped.
    """
    if not isinstance(text, str):
        raise ValueError(f"text must be a string, got {type(text).__name__}")
    joined = _CLITIC.sub("", text.lower()).replace("'", "").replace("’", "")
    tokens = (canonical_number(t) for t in TOKEN.findall(joined))
    return list(dict.fromkeys(t for t in tokens if t not in STOPWORDS and t not in ARTICLES))


def word_overlap(question: str, passage: str) -> float | None:
    """Share of the question's content words that occur in the passage.

    ``overlap(q, p) = |W(q) ∩ W(p)| / |W(q)|`` with ``W`` the set of ``overlap_words``: the
    unigram precision of the question against the passage on distinct content words (ROUGE-1
    precision, Lin 2004, with counts clipped to 1). ``None`` when the question has no
    content word (nothing to measure).
    """
    words = overlap_words(question)
    if not words:
        return None
    in_passage = set(overlap_words(passage))
    return sum(w in in_passage for w in words) / len(words)


def _all_words(text: str) -> list[str]:
    """Every word of ``text`` in order (``overlap_words``' tokenisation, function words kept)."""
    joined = _CLITIC.sub("", text.lower()).replace("'", "").replace("’", "")
    return [canonical_number(t) for t in TOKEN.findall(joined)]


def bigram_overlap(question: str, passage: str) -> float | None:
    """Share of the question's distinct word bigrams that occur as bigrams in the passage.

    ``overlap2(q, p) = |B(q) ∩ B(p)| / |B(q)|`` with ``B`` the set of adjacent word pairs of
    ``_all_words`` (function words kept, so copied phrasing counts, not only copied topic
    words): ROUGE-2 precision (Lin 2004) with counts clipped to 1. A stricter reading of
    "copying" than :func:`word_overlap`; ``None`` for a question of fewer than two words.
    """
    if not isinstance(question, str) or not isinstance(passage, str):
        raise ValueError("question and passage must be strings")
    words = _all_words(question)
    pairs = set(zip(words, words[1:]))
    if not pairs:
        return None
    passage_words = _all_words(passage)
    in_passage = set(zip(passage_words, passage_words[1:]))
    return len(pairs & in_passage) / len(pairs)


def locate_ignoring_spacing(text: str, snippet: str) -> list[tuple[int, int]]:
    """Occurrences ``[(start, end), ...]`` of ``snippet`` in ``text``, offsets into ``text``.

    ``longdocs.locate`` first (exact, else case- and whitespace-insensitive); when that finds
    nothing, the case-insensitive occurrences once every whitespace character is removed from
    both sides -- Natural Questions pages are tokenised ("April 26 , 2017", "U.S. v. Schoon" as
    "U. S. v. Schoon"), so spacing alone must not make an answer "absent". Such a span runs
    from the snippet's first to its last non-space character in ``text``. Used by the validity
    check below and by post 04's relevance rule, so that both treat spacing the same way.
    """
    return locate(text, snippet) or _spaceless_spans(text, snippet)


def _spaceless_spans(text: str, snippet: str) -> list[tuple[int, int]]:
    """Case-insensitive occurrences with all whitespace removed, mapped back to ``text``."""
    key = "".join(snippet.lower().split())
    if not key:
        return []
    origin, squeezed = [], []
    for i, char in enumerate(text):
        if not char.isspace():
            lowered = char.lower()  # may be longer than one character: map each back to i
            squeezed.append(lowered)
            origin.extend([i] * len(lowered))
    haystack = "".join(squeezed)
    found, start = [], haystack.find(key)
    while start >= 0:
        found.append((origin[start], origin[start + len(key) - 1] + 1))
        start = haystack.find(key, start + len(key))
    return found


def answer_not_in_passage(answer: str, passage: str) -> Check:
    """Flag an answer that does not occur in the passage (an empty answer is flagged).

    Occurs: found by :func:`locate_ignoring_spacing`. A match found only once spacing is
    ignored is not flagged; its evidence says the spacing differs.
    """
    if not answer.strip():
        return Check(True, "empty answer")
    if locate(passage, answer):
        return Check(False, "")
    if _spaceless_spans(passage, answer):
        return Check(False, "found once spacing is ignored")
    alignment = fuzz.partial_ratio_alignment(answer.lower(), passage.lower())  # lower() keeps offsets
    closest = passage[alignment.dest_start:alignment.dest_end] if alignment is not None else ""
    score = alignment.score if alignment is not None else 0.0
    return Check(True, f"closest passage text {closest!r} (partial ratio {score:.0f})")


def numbers_disagree(question: str, passage: str) -> Check:
    """Flag a question stating a number the passage does not contain."""
    missing = unsupported_numbers(question, passage)
    if not missing:
        return Check(False, "")
    return Check(True, f"not in the passage: {', '.join(missing)}")


def context_dependent(question: str) -> Check:
    """Flag wording that needs the passage to be understood (``CONTEXT_PATTERNS``)."""
    for kind, pattern in _CONTEXT_RES:
        match = pattern.search(question)
        if match:
            return Check(True, f"{kind}: {match.group(0)!r}")
    return Check(False, "")


def is_yes_no(question: str) -> bool:
    """Whether the question opens with an auxiliary verb (``AUXILIARIES``): a yes/no form."""
    words = re.findall(r"[^\W\d_]+", question.lower())
    return bool(words) and words[0] in AUXILIARIES


def yes_no_restatement(question: str, passage: str, threshold: float = 0.8) -> Check:
    """Flag a yes/no question whose content words nearly all occur in one passage sentence."""
    if not is_yes_no(question):
        return Check(False, "")
    best, best_sentence = 0.0, ""
    for start, end in sentence_spans(passage):
        sentence = passage[start:end].strip()
        share = word_overlap(question, sentence) or 0.0
        if share > best:
            best, best_sentence = share, sentence
    flagged = best >= threshold
    return Check(flagged, f"yes/no form; {best:.0%} of its words in {best_sentence!r}")


def near_duplicates(questions: Sequence[str], threshold: float = 90.0) -> list[Check]:
    """For each question, flag a near-duplicate elsewhere in ``questions``.

    Similarity: ``rapidfuzz.fuzz.token_sort_ratio`` after ``rapidfuzz.utils.default_process``
    (lower case, punctuation removed), 0-100; a question is flagged when its most similar
    *other* question scores >= ``threshold``. Empty questions are never flagged.
    """
    if not 0 <= threshold <= 100:
        raise ValueError(f"threshold must lie in [0, 100], got {threshold}")
    texts = list(questions)
    if len(texts) < 2:
        return [Check(False, "") for _ in texts]
    scores = process.cdist(texts, texts, scorer=fuzz.token_sort_ratio, processor=utils.default_process,
                           dtype=np.float64)
    np.fill_diagonal(scores, -1.0)
    checks = []
    for i, text in enumerate(texts):
        j = int(np.argmax(scores[i]))
        if not text.strip() or scores[i, j] < threshold:
            checks.append(Check(False, ""))
        else:
            checks.append(Check(True, f"{scores[i, j]:.0f} vs {texts[j]!r}"))
    return checks


QUESTION_WORDS = frozenset("what which who whom whose when where why how name list give define".split()) | AUXILIARIES


def answer_in_question(question: str, answer: str) -> Check:
    """Flag a question that contains its own answer (every content word of the answer, or the whole answer)."""
    answer_words = [w for w in overlap_words(answer) if w not in ARTICLES]
    question_words = set(overlap_words(question))
    if answer_words:
        if all(w in question_words for w in answer_words):
            return Check(True, f"answer words in the question: {', '.join(dict.fromkeys(answer_words))}")
        return Check(False, "")
    whole = answer.strip().lower()
    if whole and re.search(r"(?<!\w)" + re.escape(whole) + r"(?!\w)", question.lower()):
        return Check(True, f"the answer {answer.strip()!r} is in the question")
    return Check(False, "")


def not_a_question(question: str) -> Check:
    """Flag text that is not a question: no final "?" and no question word or auxiliary first."""
    text = question.strip()
    words = re.findall(r"[^\W\d_]+", text.lower())
    if not text or text.endswith("?") or (words and words[0] in QUESTION_WORDS):
        return Check(False, "")
    return Check(True, f"opens with {' '.join(text.split()[:4])!r}, no question mark")


CHECK_NAMES = ("answer not in passage", "numbers disagree", "context-dependent", "yes/no restatement",
               "near-duplicate", "answer in question", "not a question")


def check_all(questions: Sequence[str], answers: Sequence[str], passages: Sequence[str],
              restatement_threshold: float = 0.8, duplicate_threshold: float = 90.0) -> list[dict[str, Check]]:
    """All seven checks for each (question, answer, passage); duplicates within ``questions``."""
    if not len(questions) == len(answers) == len(passages):
        raise ValueError(f"questions, answers and passages must have the same length, got "
                         f"{len(questions)}, {len(answers)}, {len(passages)}")
    duplicates = near_duplicates(questions, duplicate_threshold)
    return [{"answer not in passage": answer_not_in_passage(a, p), "numbers disagree": numbers_disagree(q, p),
             "context-dependent": context_dependent(q),
             "yes/no restatement": yes_no_restatement(q, p, restatement_threshold),
             "near-duplicate": dup, "answer in question": answer_in_question(q, a),
             "not a question": not_a_question(q)}
            for q, a, p, dup in zip(questions, answers, passages, duplicates)]
