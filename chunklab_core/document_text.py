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

Not handled: OCR, other encodings than UTF-8, .doc/.odt/.rtf, scanning folders (``loaders``).
"""

from __future__ import annotations

import re
from pathlib import Path

from bs4 import BeautifulSoup, NavigableString

TEXT_SUFFIXES = (".md", ".txt")
HTML_SUFFIXES = (".html", ".htm")
SUPPORTED_SUFFIXES = (*TEXT_SUFFIXES, *HTML_SUFFIXES, ".pdf", ".docx")
_DROP_TAGS = ["script", "style", "noscript", "template", "head", "svg"]
_PARAGRAPH_TAGS = (  # a blank line before and after
    "address article aside blockquote details div dl fieldset figcaption figure footer form h1 h2 "
    "h3 h4 h5 h6 header hr main nav ol p pre section summary table ul"
).split()
_LINE_TAGS = ["li", "tr", "dt", "dd", "caption"]  # a line break before


def decode_utf8(data: bytes) -> str:
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValueError(f"not valid UTF-8 (byte 0x{data[exc.start]:02x} at byte offset {exc.start}); "
                         "save it as UTF-8") from None
    return text.replace("\r\n", "\n").replace("\r", "\n")


def html_to_text(html: str) -> str:
    """Visible text of an HTML page, one line per block element (see the module docstring)."""
    soup = BeautifulSoup(html, "html.parser")
    for tag in soup.find_all(_DROP_TAGS):
        tag.decompose()
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
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def pdf_to_text(path: Path) -> str:
    """Each page's text by pypdf, pages joined by a blank line."""
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
        return "\n\n".join(page.extract_text() or "" for page in reader.pages)
    except Exception as exc:
        raise ValueError(f"not a readable PDF ({type(exc).__name__}: {exc})") from None


def docx_to_text(path: Path) -> str:
    """Body paragraphs one per line and table rows as ``cell | cell``, in document order."""
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
        for block in document.iter_inner_content():
            if not isinstance(block, Table):
                lines.append(block.text)
                continue
            for row in block.rows:
                cells, previous = [], None
                for cell in row.cells:
                    if cell._tc is not previous:  # a merged cell is returned once per grid column
                        cells.append(cell.text.replace("\n", " "))
                    previous = cell._tc
                lines.append(" | ".join(cells))
    except Exception as exc:  # python-docx raises zipfile, KeyError, lxml and its own errors
        raise ValueError(f"not a readable .docx ({type(exc).__name__}: {exc})") from None
    return "\n".join(lines)


def extract_text(path: Path) -> str:
    """The text of one supported file; ``ValueError`` with the reason if it cannot be read."""
    suffix = path.suffix.lower()
    if suffix in (*TEXT_SUFFIXES, *HTML_SUFFIXES):
        try:
            text = decode_utf8(path.read_bytes())
        except OSError as exc:
            raise ValueError(f"cannot be read ({exc.strerror})") from None
        text = html_to_text(text) if suffix in HTML_SUFFIXES else text
    elif suffix == ".pdf":
        text = pdf_to_text(path)
        if not text.strip():
            raise ValueError("no extractable text (a scanned PDF? run OCR first)")
    elif suffix == ".docx":
        text = docx_to_text(path)
    else:
        raise ValueError(f"unsupported file type {suffix!r}")
    if not text.strip():
        raise ValueError("has no text")
    return text
