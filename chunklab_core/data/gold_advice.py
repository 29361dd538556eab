"""Advice on a user's questions: gold that matches by accident, gold in several documents,
paste-ready quotes for approximate matches, and located gold for cut-answer diagnostics.

Validation (``loaders``) rejects gold that cannot be found; this module flags gold that is
found but is likely to score wrongly, and says what to write instead. Each check is its own
function returning one line per finding (``"<question id>: ..."``), so a report can show them
and ``loaders.load_user_corpus`` can warn with them (:class:`GoldAdvice` warnings):

* :func:`short_gold_advice`: an alternative that is one short word (at most
  :data:`SHORT_WORD_CHARS` characters) or a bare number ("Handbook", "30", "$1,000") is found
  wherever that word or number appears, so it lifts every strategy; the advice quotes the
  words around its first occurrence as a longer snippet to use.
* :func:`multi_document_advice`: gold of a question without ``doc`` found whole (every slot)
  in several documents; the advice names them, says that a chunk of any of them scores (scoring
  does not read ``doc``) and how to make the gold point at one document.
* :func:`document_quote`: for a gold found only approximately, the document's *own* text of
  the matched region (``textmatch`` matches on lower-cased text without thousands separators
  or currency signs; this maps the region back to the raw characters), ready to paste.
* :func:`located_evidence`: evidence spans for cut-answer diagnostics (``chunking.health``'s
  ``evidence_completeness`` / ``evidence_fragmentation``) when the questions have none: a
  slot's first alternative that occurs exactly once (case and whitespace aside) in the
  question's document. Gold occurring several times is left out: its place would be a guess.

Not handled: the duplicate-id and table-delimiter checks (``loaders``), deciding which
document a question is about.
"""

from __future__ import annotations

import re
import warnings
from typing import Iterable, Sequence

from chunklab_core.core.corpus import Corpus, Document, Question
from chunklab_core.core.headings import heading_warnings
from chunklab_core.core.textmatch import TOKEN, contains_gold, locate_gold, match_text

SHORT_WORD_CHARS = 12
_BARE_NUMBER = re.compile(r"[$€£¥₹]?\s*[0-9][0-9.,]*\s*%?")
_CURRENCY = "[$€£¥₹]?"


class GoldAdvice(UserWarning):
    """Advice on a user's documents and questions (nothing is wrong enough to stop)."""


def _alternatives(question: Question) -> Iterable[str]:
    return (alt for slot in question.gold_slots for alt in slot)


def _words_around(text: str, start: int, end: int, words: int = 3) -> str:
    """``text[start:end]`` with up to ``words`` words either side, whitespace collapsed."""
    left = text[:start].split()[-words:]
    right = text[end:].split()[:words]
    return " ".join([*left, text[start:end], *right])


def _first_exact(text: str, snippet: str) -> re.Match[str] | None:
    words = snippet.split()
    return re.search(r"(?<!\w)" + r"\s+".join(map(re.escape, words)) + r"(?!\w)", text, re.IGNORECASE) if words else None


def short_gold_advice(questions: Sequence[Question], documents: Sequence[Document]) -> list[str]:
    """One line per alternative that is a bare number or one word of at most
    :data:`SHORT_WORD_CHARS` characters, with a longer snippet quoted from the document."""
    texts = {d.doc_id: d.text for d in documents}
    lines = []
    for question in questions:
        for alt in _alternatives(question):
            bare = _BARE_NUMBER.fullmatch(alt.strip()) is not None
            short = len(TOKEN.findall(match_text(alt))) == 1 and len(alt.strip()) <= SHORT_WORD_CHARS
            if not (bare or short):
                continue
            kind = "a bare number" if bare else "one short word"
            hint = ""
            for doc_id in [question.doc_id] if question.doc_id else list(texts):
                found = _first_exact(texts.get(doc_id, ""), alt.strip())
                if found:
                    hint = f'; quote the words around it, e.g. "{_words_around(texts[doc_id], *found.span())}"'
                    break
            lines.append(f'{question.qid}: gold "{alt}" is {kind}: it is found wherever it appears and '
                         f"lifts every strategy{hint}")
    return lines


def multi_document_advice(questions: Sequence[Question], documents: Sequence[Document],
                          threshold: float = 0.90) -> list[str]:
    """One line per question without ``doc`` whose whole gold (every slot) is found in several
    documents, saying what is true: a chunk of any of them scores; ``doc`` is checked by
    validation but not read by scoring. A question whose slots lie in different documents (no
    document holds them all) gets no line: ``doc:`` would not fit it."""
    lines = []
    for question in questions:
        if question.doc_id:
            continue
        holders = [d.doc_id for d in documents
                   if all(any(contains_gold(d.text, alt, threshold) for alt in slot)
                          for slot in question.gold_slots)]
        if len(holders) > 1:
            shown = ", ".join(holders[:5]) + (f" and {len(holders) - 5} more" if len(holders) > 5 else "")
            lines.append(f"{question.qid}: its gold is found in {len(holders)} documents ({shown}), so a chunk "
                         "of any of them scores; if only one is right, quote more of its wording so the gold is "
                         f"found there alone (`doc: {holders[0]}` or the right one records the document and "
                         "validate checks the gold is in it, but scoring does not read `doc`)")
    return lines


def _region_pattern(region: str) -> re.Pattern[str]:
    """A regex for the raw text whose matching text is ``region``: any case, any whitespace,
    thousands separators and a currency sign allowed around numbers."""
    parts, cursor = [], 0
    for token in TOKEN.finditer(region):
        gap = region[cursor : token.start()]
        parts.append(r"\s+".join(map(re.escape, gap.split(" "))) if gap.strip() else (r"\s+" if gap else ""))
        word = token.group()
        parts.append(_CURRENCY + ",?".join(map(re.escape, word)) if word[0].isdigit() else re.escape(word))
        cursor = token.end()
    return re.compile("".join(parts), re.IGNORECASE)


def document_quote(text: str, snippet: str, threshold: float = 0.90) -> str | None:
    """The document's own characters of the region where ``snippet`` is found (exactly or
    fuzzily) in ``text``, ready to paste as gold; ``None`` when not found or not mappable."""
    match = locate_gold(text, snippet, threshold)
    if not match.found or not match.region:
        return None
    found = _region_pattern(match.region).search(text)
    return found.group() if found else None


def question_evidence(question: Question, text: str | None) -> list[tuple[str, int, int]]:
    """A question's evidence spans: its own, else per slot the first alternative occurring
    exactly once (case and whitespace aside) in ``text``, its document's text."""
    if question.evidence_spans:
        return list(question.evidence_spans)
    if text is None:
        return []
    spans = []
    for slot in question.gold_slots:
        for alt in slot:
            words = alt.split()
            occurrences = list(re.finditer(r"\s+".join(map(re.escape, words)), text, re.IGNORECASE)) if words else []
            if len(occurrences) == 1:
                spans.append((question.doc_id, *occurrences[0].span()))
                break
    return spans


def located_evidence(corpus: Corpus) -> list[tuple[str, int, int]]:
    """Evidence spans for cut-answer diagnostics: :func:`question_evidence` of every question."""
    texts = {d.doc_id: d.text for d in corpus.documents}
    return [span for q in corpus.questions for span in question_evidence(q, texts.get(q.doc_id))]


_LAST_ADVICE: list = []  # [(threshold, documents, questions, lines)] of the last corpus advised


def corpus_advice(corpus: Corpus, threshold: float = 0.90) -> list[str]:
    """Every piece of advice on a user's corpus: headings, short gold, gold in several documents.

    The last corpus's lines are kept, with the very document and question objects they were
    computed from (both frozen), so a run's second call (validation, then the report) does not
    match every gold snippet against every document again; any other document or question, or
    another ``threshold``, is advised afresh."""
    documents, questions = tuple(corpus.documents), tuple(corpus.questions)
    if _LAST_ADVICE:
        kept_threshold, kept_documents, kept_questions, kept = _LAST_ADVICE[0]
        if (kept_threshold == float(threshold) and len(kept_documents) == len(documents)
                and len(kept_questions) == len(questions)
                and all(a is b for a, b in zip(kept_documents, documents))
                and all(a is b for a, b in zip(kept_questions, questions))):
            return list(kept)
    lines = [*heading_warnings(corpus.documents), *short_gold_advice(corpus.questions, corpus.documents),
             *multi_document_advice(corpus.questions, corpus.documents, threshold)]
    _LAST_ADVICE[:] = [(float(threshold), documents, questions, list(lines))]
    return lines


def warn_advice(corpus: Corpus, threshold: float = 0.90) -> list[str]:
    """Issue :func:`corpus_advice` as one :class:`GoldAdvice` warning (if any); return it."""
    lines = corpus_advice(corpus, threshold)
    if lines:
        warnings.warn("advice on your documents and questions:\n" + "\n".join(lines), GoldAdvice, stacklevel=3)
    return lines
