"""Sentence boundaries as character spans, in every script the series meets: the one rule.

Every sentence-based step (``chunking.sentences`` windows, the sentence level of recursive and
structure-aware splitting, the semantic chunkers, ``chunking.health``'s ``boundary_ok``) uses
:func:`sentence_spans`; ``text.sentence_spans`` is this function re-exported.

A boundary falls after

* ``.`` ``!`` ``?`` (and ``‼ ⁇ ⁈ ⁉``, the Greek question mark ``;`` U+037E) followed by
  optional closers and then whitespace: "3.5", "e.g.x" and URLs are not cut;
* a script's own terminator, with or without whitespace after it: Devanagari and Bengali
  danda ``।`` / double danda ``॥``, Arabic question mark ``؟``, Urdu full stop ``۔``, Armenian
  full stop ``։``, Ethiopic ``።`` ``፧`` ``፨``, Myanmar ``။``, Khmer ``។``, Canadian syllabics
  ``᙮``, and the CJK ``。！？．｡`` (full- and half-width). Arabic writes its full stop as ``.``;
* a blank line (``\\n`` + optional whitespace + ``\\n``).

*Closers* after a terminator stay with the sentence they close: quotes ``" ' ” ’ » ›``, CJK
brackets ``」 』 ） 】 〉 》 〕``, brackets ``) ] }`` and Markdown emphasis markers ``*``,
``**``, ``_``, ``__`` -- so ``**Question?** Answer`` is two sentences. A CJK quotation closed
by ``」``/``』`` and followed by the quotative particle ``と`` or ``って`` continues the sentence
(``「…。」と述べた。`` is one sentence).

**Thai and Lao** write no full stop: sentences (and sometimes clauses) are separated by a
space, while words are not. So a run of spaces or tabs between two Thai or two Lao letters is
a boundary; a Thai "sentence" here can therefore be a clause. Tibetan ``།`` marks clauses as
well as sentences and is not a boundary.

**Abbreviations** (``abbreviations=True``, English): a ``.`` boundary is dropped when the word
before it is a known abbreviation (Mr, Dr, e.g., etc., vs, No, Fig, Jan ... see
:data:`ABBREVIATIONS`), a single capital letter (an initial, "J. K. Rowling"), or dotted
letters ("U.S."), or when the next visible character is a lower-case letter. It is off by
default; ``scripts/report_sentence_agreement.py`` compares both settings with pysbd on SQuAD.

The rule is hand-written, not a trained model (pysbd, spaCy), so every boundary in the write-up
can be explained by reading this file, and so that spans are exact offsets that tile the text.

Not handled: abbreviations in other languages, sentence-final ``:`` or ``;``, Armenian's ``:``
written with an ASCII colon, ellipses inside a sentence ("wait... then" is cut), numbered
headings ("1. Introduction" is not cut: no whitespace rule applies before the number).
"""

from __future__ import annotations

import re

SPACED_TERMINATORS = ".!?\u203c\u2047\u2048\u2049\u037e"
SCRIPT_TERMINATORS = "\u0964\u0965\u061f\u06d4\u0589\u1362\u1367\u1368\u104b\u17d4\u166e\u3002\uff01\uff1f\uff0e\uff61"
_QUOTE_CLOSERS = "\"'\u201d\u2019\u00bb\u203a\u300d\u300f"
_CLOSERS = rf"""(?:[{_QUOTE_CLOSERS})\]}}\uff09\u3011\u3009\u300b\u3015]|\*\*?|__?)*"""
_THAI_LAO = "\u0e00-\u0e7f\u0e80-\u0eff"
_BOUNDARY = re.compile(
    rf"(?P<spaced>[{re.escape(SPACED_TERMINATORS)}]+{_CLOSERS}\s+)"
    rf"|(?P<script>[{SCRIPT_TERMINATORS}]+{_CLOSERS}\s*)"
    rf"|(?P<thai>(?<=[\u0e01-\u0e5b])[ \t]+(?=[\u0e01-\u0e5b])|(?<=[\u0e81-\u0edf])[ \t]+(?=[\u0e81-\u0edf]))"
    r"|(?P<blank>\n\s*\n)"
)
_QUOTATIVE = re.compile(r"[」』][\s]*$")
_QUOTATIVE_NEXT = ("と", "って")

#: Lower-cased English abbreviations that end with a period but rarely end a sentence.
ABBREVIATIONS = frozenset(
    "mr mrs ms dr prof sr jr st mt ft vs etc e.g i.e cf al approx dept est fig figs no nos vol vols "
    "p pp ed eds inc ltd co corp gen col lt sgt capt rev hon gov sen rep jan feb mar apr jun jul aug "
    "sep sept oct nov dec mon tue wed thu fri sat sun u.s u.k a.m p.m ca c op ch sec eq ref nr".split()
)
_WORD_BEFORE = re.compile(r"(\S+)$")
_INITIAL = re.compile(r"[A-Z]")
_DOTTED = re.compile(r"(?:[A-Za-z]\.)+[A-Za-z]")


def _is_abbreviation(text: str, match: re.Match[str], range_start: int) -> bool:
    """Whether a ``.`` boundary ``match`` follows an abbreviation or precedes lower case."""
    if text[match.start()] != ".":
        return False
    word = _WORD_BEFORE.search(text, range_start, match.start())
    token = word.group(1).lstrip("([\"'“‘") if word else ""
    if token and (token.lower() in ABBREVIATIONS or _INITIAL.fullmatch(token) or _DOTTED.fullmatch(token)):
        return True
    nxt = text[match.end() : match.end() + 1]
    return nxt.islower()


def _continues_quotation(text: str, match: re.Match[str]) -> bool:
    """A CJK quotation closed by 」/』 and followed by と / って does not end the sentence."""
    return bool(_QUOTATIVE.search(match.group())) and text.startswith(_QUOTATIVE_NEXT, match.end())


def sentence_spans(text: str, start: int = 0, end: int | None = None, *,
                   abbreviations: bool = False) -> list[tuple[int, int]]:
    """Sentence spans ``[(s, e), ...]`` covering ``text[start:end]`` exactly, in order.

    Each span ends after the whitespace that follows its sentence, so the spans tile the
    range with no gaps and no overlap; an empty range gives ``[]``. See the module docstring
    for the boundaries and the ``abbreviations`` option.
    """
    end = len(text) if end is None else end
    if end <= start:
        return []
    spans: list[tuple[int, int]] = []
    cursor = start
    for match in _BOUNDARY.finditer(text, start, end):
        if match.end() <= cursor or match.end() >= end:
            continue
        if match.lastgroup == "script" and _continues_quotation(text, match):
            continue
        if abbreviations and match.lastgroup == "spaced" and _is_abbreviation(text, match, cursor):
            continue
        spans.append((cursor, match.end()))
        cursor = match.end()
    spans.append((cursor, end))
    return spans
