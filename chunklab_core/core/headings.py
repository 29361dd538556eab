"""One heading model for every document format: spans into the document text, with levels.

A heading is ``Heading(start, end, level, cue)``: ``document.text[start:end]`` is the heading's
own text (the text is never changed to mark it), ``level`` is 1 (top) to 6, and ``cue`` says
what made it a heading. Strong cues come from the file's structure; weak cues from looks:

=============  ======================================================  ========
cue            where it comes from                                     strength
=============  ======================================================  ========
markdown       ATX lines ``#`` .. ``######`` (outside fenced code)     strong
nq-html        Natural Questions markup ``<H1>`` .. ``<H6>``             strong
html           ``<h1>`` .. ``<h6>`` of an .html file                     strong
docx-style     .docx paragraph styles "Title", "Heading 1" .. "9"      strong
docx-outline   .docx outline level (paragraph or its style)             strong
pdf-outline    the PDF's outline (bookmarks), level = nesting depth     strong
pdf-font       PDF text set larger than the body (no outline)          strong
bold           a short line that is bold only (``**x**``, bold runs)    weak
caps           a short line in ALL CAPS                                weak
=============  ======================================================  ========

Levels beyond 6 are clipped to 6. A weak heading gets the level below the deepest strong
heading of its document (1 if there is none). "Short" means at most :data:`SHORT_WORDS` words
and :data:`SHORT_CHARS` characters, not ending with ``. , ; :``.

Format extraction (``document_text``) gives the strong headings of .docx, .html and .pdf as
titles, which :func:`locate_titles` places in the extracted text in order (whitespace
flexible); a title that cannot be placed is dropped. :func:`text_headings` finds the headings
of plain text (Markdown, NQ markup, weak cues); :func:`document_headings` gives a document's
headings (``meta["headings"]`` where a loader stored them, else :func:`text_headings`).
:func:`heading_report` and :func:`heading_warnings` say which documents have none, so that
structure-aware chunking falls back to paragraphs there.

Not handled: setext headings (``===`` underlines), numbered-paragraph cues ("1.2 Scope"),
headings inside tables, PDF font cues when the font size is set through a scaled text matrix
only (the size is read as ``Tf size x |d|`` of the text matrix).
"""

from __future__ import annotations

import re
from typing import Iterable, NamedTuple, Sequence

import pandas as pd

SHORT_WORDS = 12
SHORT_CHARS = 100
STRONG_CUES = ("markdown", "nq-html", "html", "docx-style", "docx-outline", "pdf-outline", "pdf-font")
WEAK_CUES = ("bold", "caps")


class Heading(NamedTuple):
    start: int
    end: int
    level: int
    cue: str


_ATX = re.compile(r"^ {0,3}(#{1,6})[ \t]+(\S[^\n]*?)[ \t#]*$", re.MULTILINE)
_FENCE_LINE = re.compile(r"^ {0,3}(```|~~~)", re.MULTILINE)
_NQ_HEADING = re.compile(r"<H([1-6])(?:[\s_][^>]*)?>(.*?)</H\1>", re.IGNORECASE | re.DOTALL)
_NQ_MARKUP = re.compile(r"<(/?)(H[1-6]|P|Table|Ul|Ol|Dl)(?:[\s_][^>]*)?>", re.IGNORECASE)
_LINE = re.compile(r"[^\n]+")
_BOLD_LINE = re.compile(r"^\s*(\*\*|__)(?P<inner>[^*_\n]+?)\1\s*$")
_NO_END = ".,;:"


def is_short_title(line: str) -> bool:
    """A heading-length line: 1..SHORT_WORDS words, <= SHORT_CHARS characters, no ``.,;:`` end."""
    stripped = line.strip()
    return (0 < len(stripped) <= SHORT_CHARS and len(stripped.split()) <= SHORT_WORDS
            and stripped[-1] not in _NO_END and any(ch.isalpha() for ch in stripped))


def is_all_caps(line: str) -> bool:
    """At least 4 cased letters outside parentheses, all upper case ("TERMS AND CONDITIONS",
    "MAINTENANCE LOG (example)")."""
    cased = [ch for ch in re.sub(r"\([^)]*\)", "", line) if ch.isalpha() and ch.lower() != ch.upper()]
    return len(cased) >= 4 and all(ch.isupper() for ch in cased)


def _fenced_ranges(text: str) -> list[tuple[int, int]]:
    marks = [m.start() for m in _FENCE_LINE.finditer(text)]
    return [(marks[i], marks[i + 1] if i + 1 < len(marks) else len(text)) for i in range(0, len(marks), 2)]


def markdown_headings(text: str) -> list[Heading]:
    """ATX headings outside fenced code; the span is the whole line without trailing spaces."""
    fences = _fenced_ranges(text)
    return [Heading(m.start(), m.start() + len(m.group(0).rstrip()), len(m.group(1)), "markdown")
            for m in _ATX.finditer(text) if not any(a <= m.start() < b for a, b in fences)]


def nq_headings(text: str) -> list[Heading]:
    """Top-level ``<Hn> .. </Hn>`` blocks of Natural Questions markup, tags included (a
    heading inside a table or list belongs to that block, as in ``chunking.structure``)."""
    found, depth = [], 0
    for match in _NQ_MARKUP.finditer(text):
        if match.group(1) != "/":
            if depth == 0 and match.group(2)[0] in "hH":
                close = _NQ_HEADING.match(text, match.start())
                if close is not None:
                    found.append(Heading(close.start(), close.end(), int(close.group(1)), "nq-html"))
            depth += 1
        elif depth > 0:
            depth -= 1
    return found


def weak_headings(text: str, strong: Sequence[Heading] = ()) -> list[Heading]:
    """Bold-only (``**x**`` / ``__x__``) and ALL-CAPS short lines not inside a strong heading."""
    level = min(6, max((h.level for h in strong), default=0) + 1)
    taken = [(h.start, h.end) for h in strong]
    fences = _fenced_ranges(text)
    found = []
    for m in _LINE.finditer(text):
        line = m.group()
        if any(a <= m.start() < b for a, b in [*taken, *fences]) or line.lstrip().startswith(("#", "|", "<")):
            continue
        bold = _BOLD_LINE.match(line)
        cue = ("bold" if bold and is_short_title(bold.group("inner"))
               else "caps" if is_short_title(line) and is_all_caps(line) else "")
        if cue:
            lead = len(line) - len(line.lstrip())
            found.append(Heading(m.start() + lead, m.start() + len(line.rstrip()), level, cue))
    return found


def text_headings(text: str) -> list[Heading]:
    """Headings of plain text: NQ markup when the text has its block tags, else Markdown ATX
    lines plus the weak cues."""
    if _NQ_MARKUP.search(text):
        return nq_headings(text)
    strong = markdown_headings(text)
    return sorted([*strong, *weak_headings(text, strong)])


def title_pattern(title: str) -> re.Pattern[str] | None:
    """A title's words with any whitespace between them, any case; ``None`` for a blank title."""
    words = title.split()
    return re.compile(r"\s+".join(map(re.escape, words)), re.IGNORECASE) if words else None


def locate_titles(text: str, titles: Iterable[tuple[str, int, str]],
                  bounds: Sequence[tuple[int, int]] | None = None) -> list[Heading]:
    """Place ``(title, level, cue)`` items in ``text`` in order, each after the previous one.

    ``bounds`` (one ``(lo, hi)`` per title) limits where a title may be found (e.g. its PDF
    page); a title not found is skipped and the search continues from the last placed one.
    """
    out, cursor = [], 0
    for i, (title, level, cue) in enumerate(titles):
        pattern = title_pattern(title)
        if pattern is None:
            continue
        lo, hi = bounds[i] if bounds is not None else (0, len(text))
        match = pattern.search(text, max(cursor, lo), hi)
        if match is None and bounds is not None:
            match = pattern.search(text, lo, hi)  # outline order can differ from page order
        if match is None:
            continue
        out.append(Heading(match.start(), match.end(), max(1, min(6, int(level))), cue))
        cursor = match.end()
    return sorted(set(out))


def with_weak_levels(strong: Sequence[Heading], weak: Sequence[Heading]) -> list[Heading]:
    """Strong headings plus the weak ones outside them, the weak at the level below the
    deepest strong one. Weak cues that overlap (a bold ALL-CAPS line is both ``bold`` and
    ``caps``) are one heading: the first given is kept."""
    level = min(6, max((h.level for h in strong), default=0) + 1)
    spans = [(h.start, h.end) for h in strong]
    kept = []
    for h in weak:
        if not any(a < h.end and h.start < b for a, b in spans):
            kept.append(h._replace(level=level))
            spans.append((h.start, h.end))
    return sorted([*strong, *kept])


def as_meta(headings: Iterable[Heading]) -> list[tuple[int, int, int, str]]:
    """Headings as plain tuples for ``Document.meta["headings"]``."""
    return [tuple(h) for h in headings]


def document_headings(document) -> list[Heading]:
    """The headings of a ``Document``: ``meta["headings"]`` when a loader stored them (a list
    of ``(start, end, level, cue)``), else :func:`text_headings` of its text."""
    stored = document.meta.get("headings") if document.meta else None
    if stored is None:
        return text_headings(document.text)
    return [Heading(*h) for h in stored]


def heading_report(documents: Iterable) -> pd.DataFrame:
    """Per document: number of headings, strong and weak, the cues seen, and whether
    structure-aware chunking falls back to paragraphs (no heading at all)."""
    rows = []
    for doc in documents:
        found = document_headings(doc)
        rows.append({"doc_id": doc.doc_id, "format": (doc.meta or {}).get("format", ""),
                     "headings": len(found), "strong": sum(h.cue in STRONG_CUES for h in found),
                     "weak": sum(h.cue in WEAK_CUES for h in found),
                     "cues": ", ".join(sorted({h.cue for h in found})) or "—",
                     "falls back to paragraphs": not found})
    return pd.DataFrame(rows, columns=["doc_id", "format", "headings", "strong", "weak", "cues",
                                       "falls back to paragraphs"])


def heading_warnings(documents: Iterable) -> list[str]:
    """One line per document without any heading (structure-aware falls back to paragraphs)."""
    report = heading_report(documents)
    return [f"{row.doc_id}: no headings found (no heading styles, <h1>-<h6>, PDF outline, larger "
            "font, Markdown '#', bold-only or ALL-CAPS lines); structure-aware chunking falls back "
            "to paragraphs" for row in report.itertuples() if row.headings == 0]


def corpus_heading_summary(corpora: dict) -> pd.DataFrame:
    """Per corpus: documents, documents with headings, and how many fall back to paragraphs."""
    rows = []
    for name, corpus in corpora.items():
        report = heading_report(corpus.documents)
        rows.append({"corpus": name, "documents": len(report),
                     "with headings": int((report["headings"] > 0).sum()),
                     "fall back to paragraphs": int(report["falls back to paragraphs"].sum()),
                     "cues": ", ".join(sorted({c for cues in report["cues"] for c in cues.split(", ")} - {"—"}))
                     or "—"})
    return pd.DataFrame(rows)
