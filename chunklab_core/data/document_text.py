"""Plain text out of a user's files: Markdown/text, HTML, PDF and .docx.

Handles, per file type (every offset of a user's gold refers to the *extracted* text below):

* ``.md``, ``.txt``: UTF-8 (a leading BOM is dropped), line ends ``\\r\\n``/``\\r`` made ``\\n``.
* ``.html``, ``.htm``: read as UTF-8 like text, parsed by BeautifulSoup (``html.parser``);
  ``<script>``, ``<style>``, ``<head>`` and similar are dropped; whitespace is collapsed as a
  browser would (``<pre>`` keeps its line breaks, not its indentation); paragraph-level
  elements (``p``, headings, ``div``, lists, tables, ...) are separated by a blank line, list
  items and table rows start a new line, and a row's cells are joined by ``" | "`` as for
  .docx. This is written out rather than a plain ``get_text("\\n")``, which also breaks
  lines around inline tags (``a <b>bold</b> word`` would become three lines and split
  sentences); the block structure is kept either way.
* ``.pdf``: pypdf's text of each page, pages joined by ``"\\n\\n"``; a PDF without
  extractable text (a scan) is an error naming the file: run OCR first.
* ``.docx``: python-docx body in document order, paragraphs one per line, each table row a
  line of its cells joined by ``" | "`` (a merged cell once; line breaks inside a cell become
  spaces). Headers, footers, footnotes and text boxes are not read.

Headings (``extract_document``; the model is ``headings.Heading``): .docx paragraph styles
("Title", "Heading n") and outline levels, and paragraphs whose text is all in bold runs
(weak); HTML ``<h1>``-``<h6>`` and paragraphs wholly in ``<b>``/``<strong>`` (weak); the PDF
outline, else text set at least :data:`FONT_HEADING_RATIO` times the body font size (levels
by size, largest first); Markdown/text by ``headings.text_headings``; ALL-CAPS short lines
(weak) in every format. Each heading is a span of the extracted text; the text is the same
as ``extract_text`` gives.

A file whose text is more than 10% control characters (NUL padding, a binary file named .txt) is
refused as not a document (:func:`control_share`).

Not handled: OCR, other encodings than UTF-8, .doc/.odt/.rtf, scanning folders (``loaders``).
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

from chunklab_core.core.headings import Heading, is_short_title, locate_titles, text_headings, weak_headings, with_weak_levels

TEXT_SUFFIXES = (".md", ".txt")
HTML_SUFFIXES = (".html", ".htm")
SUPPORTED_SUFFIXES = (*TEXT_SUFFIXES, *HTML_SUFFIXES, ".pdf", ".docx")
_DROP_TAGS = ["script", "style", "noscript", "template", "head", "svg"]
_PARAGRAPH_TAGS = (  # a blank line before and after
    "address article aside blockquote details div dl fieldset figcaption figure footer form h1 h2 "
    "h3 h4 h5 h6 header hr main nav ol p pre section summary table ul"
).split()
_LINE_TAGS = ["li", "tr", "dt", "dd", "caption"]  # a line break before
_HEADING_TAGS = ["h1", "h2", "h3", "h4", "h5", "h6"]
FONT_HEADING_RATIO = 1.15


def decode_utf8(data: bytes) -> str:
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValueError(f"not valid UTF-8 (byte 0x{data[exc.start]:02x} at byte offset {exc.start}); "
                         "save it as UTF-8") from None
    return text.replace("\r\n", "\n").replace("\r", "\n")


def html_to_text(html: str) -> str:
    """Visible text of an HTML page, one line per block element (see the module docstring)."""
    return html_document(html)[0]


def _html_titles(soup) -> list[tuple[str, int, str]]:
    """``(title, level, cue)`` of h1-h6 and of bold-only short paragraphs, in document order."""
    titles = []
    for tag in soup.find_all(["p", *_HEADING_TAGS]):
        text = " ".join(tag.get_text(" ").split())
        if tag.name in _HEADING_TAGS:
            titles.append((text, int(tag.name[1]), "html"))
        elif text and is_short_title(text):
            bold = " ".join(" ".join(b.get_text(" ") for b in tag.find_all(["b", "strong"])).split())
            if bold == text:
                titles.append((text, 6, "bold"))
    return titles


def html_document(html: str) -> tuple[str, list[Heading]]:
    """``(html_to_text(html), headings)``: see the module docstring."""
    from bs4 import BeautifulSoup, NavigableString  # imported by the HTML path only (a tenth of a second)

    soup = BeautifulSoup(html, "html.parser")
    for tag in soup.find_all(_DROP_TAGS):
        tag.decompose()
    titles = _html_titles(soup)
    for string in soup.find_all(string=True):
        if type(string) is NavigableString and string.find_parent("pre") is None:
            string.replace_with(re.sub(r"\s+", " ", str(string)))
    for br in soup.find_all("br"):
        br.replace_with("\n")
    for row in soup.find_all("tr"):
        for cell in row.find_all(["td", "th"], recursive=False)[1:]:
            cell.insert_before(" | ")
    for tag in soup.find_all(_LINE_TAGS):
        tag.insert_before("\n")
    for tag in soup.find_all(_PARAGRAPH_TAGS):
        tag.insert_before("\n\n")
        tag.insert_after("\n\n")
    text = re.sub(r"[ \t]+", " ", soup.get_text())  # across tag boundaries too, as browsers do
    text = re.sub(r" ?\n ?", "\n", text)
    text = re.sub(r"\n{3,}", "\n\n", text).strip()
    return text, _combine(text, locate_titles(text, titles))


def _combine(text: str, located: list[Heading]) -> list[Heading]:
    """Strong located headings plus weak ones (located bold, and ALL-CAPS lines of the text)."""
    strong = [h for h in located if h.cue not in ("bold", "caps")]
    weak = [h for h in located if h.cue in ("bold", "caps")]
    weak += [h for h in weak_headings(text, strong) if h.cue == "caps"]
    return with_weak_levels(strong, weak)


def pdf_to_text(path: Path) -> str:
    """Each page's text by pypdf, pages joined by a blank line."""
    return pdf_document(path)[0]


def _outline_titles(reader, items, depth: int = 1) -> list[tuple[str, int, int]]:
    """``(title, level, page index)`` of a pypdf outline, depth first (nested lists go deeper)."""
    out = []
    for item in items:
        if isinstance(item, list):
            out.extend(_outline_titles(reader, item, depth + 1))
        else:
            try:
                page = reader.get_destination_page_number(item)
            except Exception:  # a broken destination: the title is still worth placing
                page = -1
            out.append((str(item.title), depth, page))
    return out


def _font_titles(page) -> list[tuple[str, float]]:
    """``(text, size)`` of each text run of a page, size = Tf size x |d| of the text matrix."""
    runs: list[tuple[str, float]] = []

    def visit(text, cm, tm, font_dict, font_size):
        if text.strip():
            scale = abs(tm[3]) if tm and tm[3] else 1.0
            runs.append((text, float(font_size) * scale))

    page.extract_text(visitor_text=visit)
    return runs


def _pdf_font_headings(pages) -> list[list[tuple[str, int, str]]]:
    """Per page, ``(title, level, "pdf-font")`` for runs set larger than the body font."""
    per_page = [_font_titles(p) for p in pages]
    weight: dict[float, int] = {}
    for runs in per_page:
        for text, size in runs:
            weight[round(size, 1)] = weight.get(round(size, 1), 0) + len(text.strip())
    if not weight:
        return [[] for _ in pages]
    body = max(weight, key=weight.get)
    sizes = sorted({round(s, 1) for runs in per_page for t, s in runs
                    if s >= FONT_HEADING_RATIO * body and is_short_title(t)}, reverse=True)
    level = {size: i + 1 for i, size in enumerate(sizes)}
    return [[(t.strip(), level[round(s, 1)], "pdf-font") for t, s in runs if round(s, 1) in level
             and is_short_title(t)] for runs in per_page]


def pdf_document(path: Path) -> tuple[str, list[Heading]]:
    """``(pdf_to_text(path), headings)``: outline titles, else larger-font lines; see the module docstring."""
    from pypdf import PdfReader

    try:
        reader = PdfReader(path)
        encrypted = reader.is_encrypted
    except Exception as exc:  # corrupt PDFs raise assorted exception types from pypdf
        raise ValueError(f"not a readable PDF ({type(exc).__name__}: {exc})") from None
    if encrypted:
        try:
            opened = bool(reader.decrypt(""))  # many "protected" PDFs open with an empty password
        except Exception as exc:  # e.g. AES without the optional ``cryptography`` package
            raise ValueError(f"the PDF is encrypted and cannot be opened here ({type(exc).__name__}: {exc}); "
                             "save an unprotected copy (print to PDF, or remove the password)") from None
        if not opened:
            raise ValueError("the PDF is encrypted with a password; save an unprotected copy "
                             "(print to PDF, or remove the password) and use that")
    try:
        pages = [page.extract_text() or "" for page in reader.pages]
        text = "\n\n".join(pages)
        starts = [0]
        for page in pages:
            starts.append(starts[-1] + len(page) + 2)
        bounds_of = [(starts[i], starts[i] + len(p)) for i, p in enumerate(pages)]
        outline = _outline_titles(reader, reader.outline)
        if outline:
            titles = [(t, level, "pdf-outline") for t, level, _ in outline]
            bounds = [bounds_of[p] if 0 <= p < len(pages) else (0, len(text)) for _, _, p in outline]
        else:
            per_page = _pdf_font_headings(reader.pages)
            titles = [item for items in per_page for item in items]
            bounds = [bounds_of[i] for i, items in enumerate(per_page) for _ in items]
        located = locate_titles(text, titles, bounds)
    except Exception as exc:  # corrupt PDFs raise assorted exception types from pypdf
        raise ValueError(f"not a readable PDF ({type(exc).__name__}: {exc})") from None
    return text, _combine(text, located)


def docx_to_text(path: Path) -> str:
    """Body paragraphs one per line and table rows as ``cell | cell``, in document order."""
    return docx_document(path)[0]


def _outline_level(element) -> int | None:
    """``w:outlineLvl`` (0-based) of a paragraph's or style's ``w:pPr``, as a 1-based level."""
    from docx.oxml.ns import qn

    ppr = element.find(qn("w:pPr")) if element is not None else None
    found = ppr.find(qn("w:outlineLvl")) if ppr is not None else None
    if found is None:
        return None
    value = int(found.get(qn("w:val")))
    return value + 1 if value < 9 else None  # 9 means "body text"


def _docx_heading(paragraph) -> tuple[int, str] | None:
    """(level, cue) of a .docx paragraph that is a heading, else ``None``."""
    text = paragraph.text
    if not text.strip():
        return None
    style = paragraph.style
    name = (style.name or "") if style is not None else ""
    styled = re.fullmatch(r"Heading (\d)", name)
    if styled:
        return int(styled.group(1)), "docx-style"
    if name == "Title":
        return 1, "docx-style"
    level = _outline_level(paragraph._p)
    while level is None and style is not None:
        level = _outline_level(style.element)
        style = style.base_style
    if level is not None:
        return level, "docx-outline"
    runs = [r for r in paragraph.runs if r.text.strip()]
    if runs and is_short_title(text) and all(r.bold or (r.bold is None and r.style is not None and r.style.font.bold)
                                              for r in runs):
        return 6, "bold"
    return None


def docx_document(path: Path) -> tuple[str, list[Heading]]:
    """``(docx_to_text(path), headings)``: styles, outline levels, bold-only short paragraphs."""
    import zipfile

    import docx
    from docx.table import Table

    if not zipfile.is_zipfile(path):
        raise ValueError("is not a .docx document: a .docx file is a zip archive and this one is not "
                         "(an old .doc, or another format, renamed to .docx?); open it in a word "
                         "processor and save it as .docx")
    try:
        document = docx.Document(str(path))
        lines: list[str] = []
        found: list[Heading] = []
        offset = 0
        for block in document.iter_inner_content():
            if not isinstance(block, Table):
                heading = _docx_heading(block)
                if heading is not None:
                    lead = len(block.text) - len(block.text.lstrip())
                    found.append(Heading(offset + lead, offset + len(block.text.rstrip()), min(6, heading[0]),
                                         heading[1]))
                lines.append(block.text)
                offset += len(block.text) + 1
                continue
            for row in block.rows:
                cells, previous = [], None
                for cell in row.cells:
                    if cell._tc is not previous:  # a merged cell is returned once per grid column
                        cells.append(cell.text.replace("\n", " "))
                    previous = cell._tc
                lines.append(" | ".join(cells))
                offset += len(lines[-1]) + 1
    except Exception as exc:  # python-docx raises zipfile, KeyError, lxml and its own errors
        raise ValueError(f"not a readable .docx ({type(exc).__name__}: {exc})") from None
    text = "\n".join(lines)
    return text, _combine(text, found)


def extract_text(path: Path) -> str:
    """The text of one supported file; ``ValueError`` with the reason if it cannot be read."""
    return extract_document(path)[0]


def extract_document(path: Path) -> tuple[str, list[Heading]]:
    """``(text, headings)`` of one supported file; ``ValueError`` with the reason if it cannot be read."""
    suffix = path.suffix.lower()
    if suffix in (*TEXT_SUFFIXES, *HTML_SUFFIXES):
        try:
            text = decode_utf8(path.read_bytes())
        except OSError as exc:
            raise ValueError(f"cannot be read ({exc.strerror})") from None
        text, headings = html_document(text) if suffix in HTML_SUFFIXES else (text, text_headings(text))
    elif suffix == ".pdf":
        text, headings = pdf_document(path)
        if not text.strip():
            raise ValueError("no extractable text (a scanned PDF? run OCR first)")
    elif suffix == ".docx":
        text, headings = docx_document(path)
    else:
        raise ValueError(f"unsupported file type {suffix!r}")
    if not text.strip():
        raise ValueError("has no text")
    share = control_share(text)
    if share > MAX_CONTROL_SHARE:
        raise ValueError(f"{share:.0%} of its characters are control characters (NUL and the like): a binary "
                         "file, not a text document; remove it from the folder or convert it to text")
    return text, headings


MAX_CONTROL_SHARE = 0.10  # of a document's characters; printed text has next to none
_LAYOUT_CONTROLS = frozenset("\n\t\r\f\v")


def control_share(text: str) -> float:
    """Share of ``text``'s characters that are control characters (Unicode category Cc), tab,
    line and page breaks excepted: 0 for written text, near 1 for a binary file or NUL padding."""
    if not text:
        return 0.0
    controls = sum(1 for c in text if c not in _LAYOUT_CONTROLS and unicodedata.category(c) == "Cc")
    return controls / len(text)
