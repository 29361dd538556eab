"""Write the binary example documents of ``examples/own_docs/``: a .pdf and a .docx.

The .md, .txt, .html and questions.yaml files there are written by hand; these two are
generated so that anyone can see (and rerun) exactly what they contain. The output is
byte-for-byte reproducible for a given fpdf2 / python-docx version: fixed creation dates,
and the .docx zip members rewritten with a fixed timestamp.

Needs ``fpdf2`` (a dev dependency) for the PDF and ``python-docx`` for the .docx.
Run: ``python examples/make_example_docs.py``.
"""

from __future__ import annotations

import io
import zipfile
from datetime import datetime, timezone
from pathlib import Path

import docx
from fpdf import FPDF

OUT_DIR = Path(__file__).resolve().parent / "own_docs"
FIXED_DATE = datetime(2026, 1, 1, tzinfo=timezone.utc)

PDF_PAGES = [
    ("A short history of Harbour Point", [
        "Harbour Point lighthouse was built between 1889 and 1891 by the engineer Margaret Ellery. "
        "The tower is made of local granite and is 31 metres tall.",
        "The first keeper, Thomas Quayle, served for 27 years. His logbooks are kept in the town museum.",
    ]),
    ("Automation", [
        "The light was automated in 1987, and the last resident keeper left the station in March 1988. "
        "Since then the lighthouse has been monitored remotely from the harbour office.",
    ]),
]

DOCX_PARAGRAPHS = [
    "Harbour Point spare parts inventory (invented example)",
    "Parts are counted every January. Reorder when the stock falls below the minimum shown.",
]
DOCX_TABLE = [
    ["Part", "In stock", "Minimum"],
    ["Lamp bulbs (1000 W)", "12", "6"],
    ["Rotation bearings", "2", "1"],
    ["Fuel filters", "5", "3"],
]
DOCX_AFTER = "All spare parts are stored in the oil house next to the tower."


def write_pdf(path: Path) -> None:
    pdf = FPDF()
    pdf.set_creation_date(FIXED_DATE)
    pdf.set_title("A short history of Harbour Point")
    for heading, paragraphs in PDF_PAGES:
        pdf.add_page()
        pdf.set_font("Helvetica", "B", 16)
        pdf.multi_cell(0, 10, heading, new_x="LMARGIN", new_y="NEXT")
        pdf.set_font("Helvetica", size=11)
        for paragraph in paragraphs:
            pdf.multi_cell(0, 6, paragraph, new_x="LMARGIN", new_y="NEXT")
            pdf.ln(3)
    pdf.output(str(path))


def write_docx(path: Path) -> None:
    document = docx.Document()
    props = document.core_properties
    props.created = props.modified = FIXED_DATE.replace(tzinfo=None)
    props.author = props.last_modified_by = "chunklab example"
    props.revision = 1
    document.add_heading(DOCX_PARAGRAPHS[0], level=1)
    document.add_paragraph(DOCX_PARAGRAPHS[1])
    table = document.add_table(rows=len(DOCX_TABLE), cols=len(DOCX_TABLE[0]))
    for row, values in zip(table.rows, DOCX_TABLE):
        for cell, value in zip(row.cells, values):
            cell.text = value
    document.add_paragraph(DOCX_AFTER)
    buffer = io.BytesIO()
    document.save(buffer)
    _rezip_with_fixed_time(buffer.getvalue(), path)


def _rezip_with_fixed_time(data: bytes, path: Path) -> None:
    """python-docx stamps zip members with the current time; rewrite them with a fixed one."""
    with zipfile.ZipFile(io.BytesIO(data)) as source, zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as target:
        for item in source.infolist():
            info = zipfile.ZipInfo(item.filename, date_time=FIXED_DATE.timetuple()[:6])
            info.compress_type = zipfile.ZIP_DEFLATED
            target.writestr(info, source.read(item.filename))


if __name__ == "__main__":
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    write_pdf(OUT_DIR / "history.pdf")
    write_docx(OUT_DIR / "inventory.docx")
    print(f"wrote {OUT_DIR / 'history.pdf'} and {OUT_DIR / 'inventory.docx'}")
