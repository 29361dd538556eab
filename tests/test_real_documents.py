"""Real document shapes: headings from .docx / HTML / PDF, structure-aware modes, advice."""

from __future__ import annotations

import warnings

import docx
import pytest
from docx.oxml import OxmlElement
from docx.oxml.ns import qn
from fpdf import FPDF

from chunklab_core.chunking import chunk_document, document_spans
from chunklab_core.core.corpus import Corpus, Document, Question
from chunklab_core.data.document_text import extract_document, html_document
from chunklab_core.data.gold_advice import (GoldAdvice, document_quote, located_evidence, multi_document_advice,
                                       short_gold_advice)
from chunklab_core.core.headings import Heading, document_headings, heading_warnings, text_headings
from chunklab_core.data.loaders import load_user_corpus

BODY = "The committee meets every month and reviews the budget in detail. " * 3


def _headings(text, headings):
    return [(text[h.start:h.end], h.level, h.cue) for h in headings]


@pytest.fixture()
def report_docx(tmp_path):
    document = docx.Document()
    document.add_heading("Annual report", level=0)  # style "Title"
    document.add_heading("Finances", level=1)
    document.add_paragraph(BODY)
    document.add_heading("Income", level=2)
    document.add_paragraph(BODY)
    table = document.add_table(rows=2, cols=2)
    for row, values in zip(table.rows, [["Item", "Amount"], ["Grants", "1,200"]]):
        for cell, value in zip(row.cells, values):
            cell.text = value
    bold = document.add_paragraph()
    bold.add_run("Staff changes").bold = True
    document.add_paragraph(BODY)
    outlined = document.add_paragraph("Appendix with outline level")
    ppr = outlined._p.get_or_add_pPr()
    level = OxmlElement("w:outlineLvl")
    level.set(qn("w:val"), "1")
    ppr.append(level)
    document.add_paragraph("GENERAL TERMS")
    document.add_paragraph(BODY)
    path = tmp_path / "report.docx"
    document.save(str(path))
    return path


def test_docx_heading_styles_outline_bold_and_caps(report_docx):
    text, headings = extract_document(report_docx)
    assert "Grants | 1,200" in text  # the table is still read
    assert _headings(text, headings) == [
        ("Annual report", 1, "docx-style"), ("Finances", 1, "docx-style"), ("Income", 2, "docx-style"),
        ("Staff changes", 3, "bold"), ("Appendix with outline level", 2, "docx-outline"),
        ("GENERAL TERMS", 3, "caps")]


def test_docx_structure_aware_starts_chunks_at_headings(report_docx):
    text, headings = extract_document(report_docx)
    doc = Document("report.docx", text, "report", {"headings": [tuple(h) for h in headings]})
    chunks = chunk_document(doc, "structure_sections", max_tokens=60)
    starts = {c.start for c in chunks}
    for title in ("Finances", "Income", "Staff changes", "GENERAL TERMS"):
        assert text.index(title) in starts, title
    # without the loader's headings the same text is plain lines: no chunk starts at "Income"
    plain = document_spans(text, "structure_sections", max_tokens=60)
    assert text.index("Income") not in {s for s, *_ in plain}


HTML = """<html><body><h1>Guide</h1><p>Intro text here.</p>
<section><h2>Setup</h2><p>Install the tool. Run it once.</p>
<section><h3>On Linux</h3><p>Use the package manager.</p></section></section>
<h2>Usage</h2><p><strong>Quick start</strong></p><p>Call the command with a file.</p></body></html>"""


def test_html_nested_headings_have_levels():
    text, headings = html_document(HTML)
    assert _headings(text, headings) == [("Guide", 1, "html"), ("Setup", 2, "html"), ("On Linux", 3, "html"),
                                         ("Usage", 2, "html"), ("Quick start", 4, "bold")]


def test_html_heading_opens_its_section_not_the_previous_chunk():
    text, headings = html_document(HTML)
    spans = document_spans(text, "structure_sections", headings=headings, max_tokens=512)
    pieces = [text[s:e].strip() for s, e, *_ in spans]
    assert pieces[1].startswith("Setup") and pieces[2].startswith("On Linux") and pieces[3].startswith("Usage")
    assert not pieces[0].endswith("Setup")


def _outline_pdf(path, outline: bool):
    pdf = FPDF()
    pdf.set_creation_date(__import__("datetime").datetime(2026, 1, 1))
    for title, level, body in [("Introduction", 0, "This paper studies chunking."),
                               ("Related work", 1, "Earlier work used fixed windows."),
                               ("Method", 0, "We cut at headings.")]:
        pdf.add_page()
        if outline:
            pdf.start_section(title, level=level)
        pdf.set_font("Helvetica", "B", 18 if level == 0 else 14)
        pdf.multi_cell(0, 10, title, new_x="LMARGIN", new_y="NEXT")
        pdf.set_font("Helvetica", size=11)
        pdf.multi_cell(0, 6, body, new_x="LMARGIN", new_y="NEXT")
    pdf.output(str(path))
    return path


def test_pdf_outline_gives_levels(tmp_path):
    text, headings = extract_document(_outline_pdf(tmp_path / "paper.pdf", outline=True))
    assert _headings(text, headings) == [("Introduction", 1, "pdf-outline"), ("Related work", 2, "pdf-outline"),
                                         ("Method", 1, "pdf-outline")]


def test_pdf_without_outline_uses_font_sizes(tmp_path):
    text, headings = extract_document(_outline_pdf(tmp_path / "paper.pdf", outline=False))
    assert _headings(text, headings) == [("Introduction", 1, "pdf-font"), ("Related work", 2, "pdf-font"),
                                         ("Method", 1, "pdf-font")]


def test_text_headings_markdown_nq_and_weak_cues():
    md = "# Title\n\nBody text.\n\n**Bold heading**\n\nMore text here.\n\nTERMS OF USE\n\nEnd.\n"
    assert _headings(md, text_headings(md)) == [("# Title", 1, "markdown"), ("**Bold heading**", 2, "bold"),
                                                ("TERMS OF USE", 2, "caps")]
    nq = "<H1> Page </H1> <P> Text. </P> <H2> Part </H2> <P> More. </P>"
    assert _headings(nq, text_headings(nq)) == [("<H1> Page </H1>", 1, "nq-html"), ("<H2> Part </H2>", 2, "nq-html")]
    # a sentence in capitals or a long bold line is not a heading
    assert text_headings("THIS IS A SHOUTED SENTENCE.\n\n**" + "word " * 20 + "**") == []


def test_section_mode_one_chunk_per_section_split_only_when_too_long():
    text = "# A\n\nShort one.\n\n# B\n\nShort two.\n\n# C\n\n" + "Long sentence here. " * 60
    packed = document_spans(text, "structure_aware", max_tokens=200)
    sections = document_spans(text, "structure_sections", max_tokens=200)
    assert "# B" in text[packed[0][0]:packed[0][1]]  # packing: A and B share a chunk
    first_three = [text[s:e] for s, e, *_ in sections[:3]]
    assert first_three[0].startswith("# A") and first_three[1].startswith("# B") and first_three[2].startswith("# C")
    assert len(sections) > 3  # C is over the ceiling, so it is split


def test_no_headings_falls_back_and_warns():
    plain = "First paragraph here.\n\nSecond paragraph here."
    assert document_spans(plain, "structure_sections", max_tokens=5) == document_spans(
        plain, "structure_aware", max_tokens=5)
    doc = Document("notes.txt", plain, "notes", {"headings": []})
    assert document_headings(doc) == []
    assert heading_warnings([doc]) == [
        "notes.txt: no headings found (no heading styles, <h1>-<h6>, PDF outline, larger font, Markdown '#', "
        "bold-only or ALL-CAPS lines); structure-aware chunking falls back to paragraphs"]


def test_loader_stores_headings_for_every_format(report_docx, tmp_path):
    (tmp_path / "page.html").write_text(HTML, encoding="utf-8")
    _outline_pdf(tmp_path / "paper.pdf", outline=True)
    (tmp_path / "notes.md").write_text("# Notes\n\nThe budget is reviewed monthly.\n", encoding="utf-8")
    (tmp_path / "log.txt").write_text("MAINTENANCE LOG\n\nAll good.\n", encoding="utf-8")
    questions = tmp_path / "q.yaml"
    questions.write_text("- {id: q1, query: When, gold_snippets: reviewed monthly, doc: notes.md}\n")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        corpus = load_user_corpus(tmp_path, questions)
    cues = {d.meta["format"]: {h[3] for h in d.meta["headings"]} for d in corpus.documents}
    assert cues == {"docx": {"docx-style", "docx-outline", "bold", "caps"}, "html": {"html", "bold"},
                    "pdf": {"pdf-outline"}, "md": {"markdown"}, "txt": {"caps"}}


# --------------------------------------------------------------------------- validation advice

DOCS = [Document("a.md", "The Handbook says invoices are paid within 30 days of receipt.", "a"),
        Document("b.md", "Our Handbook: the fee is $1,000 per year, paid in advance.", "b")]


def test_short_word_and_bare_number_gold_are_flagged_with_a_longer_quote():
    questions = [Question("q1", "Which book?", "", (("Handbook",),)),
                 Question("q2", "How long?", "a.md", (("30",),)),
                 Question("q3", "How long?", "a.md", (("within 30 days",),))]
    lines = short_gold_advice(questions, DOCS)
    assert lines == [
        'q1: gold "Handbook" is one short word: it is found wherever it appears and lifts every strategy; '
        'quote the words around it, e.g. "The Handbook says invoices are"',
        'q2: gold "30" is a bare number: it is found wherever it appears and lifts every strategy; '
        'quote the words around it, e.g. "are paid within 30 days of receipt."']


def test_gold_in_several_documents_suggests_doc():
    questions = [Question("q1", "Which book?", "", (("handbook",),)),
                 Question("q2", "Which book?", "a.md", (("handbook",),))]
    assert multi_document_advice(questions, DOCS) == [
        "q1: its gold is found in 2 documents (a.md, b.md), so a chunk of any of them scores; if only one is "
        "right, quote more of its wording so the gold is found there alone (`doc: a.md` or the right one records "
        "the document and validate checks the gold is in it, but scoring does not read `doc`)"]


def test_approximate_match_quotes_the_documents_own_text():
    # matching text is lower-cased without "$" and ",": the quote must be the raw characters
    assert document_quote(DOCS[1].text, "the fee is 1000 per yaer") == "the fee is $1,000 per year"
    assert document_quote(DOCS[1].text, "nothing like it at all") is None


def test_located_evidence_for_cut_answer_diagnostics():
    corpus = Corpus("own", DOCS, [Question("q1", "When?", "a.md", (("within 30 days",),)),
                                  Question("q2", "Which?", "b.md", (("missing", "PAID IN ADVANCE"),)),
                                  Question("q3", "Given", "a.md", (("x",),), evidence_spans=(("a.md", 0, 3),))])
    a, b = DOCS[0].text.index("within 30 days"), DOCS[1].text.index("paid in advance")
    assert located_evidence(corpus) == [("a.md", a, a + 14), ("b.md", b, b + 15), ("a.md", 0, 3)]


def test_loader_warns_advice_as_gold_advice(tmp_path):
    (tmp_path / "a.md").write_text(DOCS[0].text, encoding="utf-8")
    (tmp_path / "b.md").write_text(DOCS[1].text, encoding="utf-8")
    questions = tmp_path / "q.yaml"
    questions.write_text("- {id: q1, query: Which, gold_snippets: Handbook}\n")
    with pytest.warns(GoldAdvice) as caught:
        load_user_corpus(tmp_path, questions)
    message = str(caught[0].message)
    assert "a.md: no headings found" in message and 'q1: gold "Handbook" is one short word' in message
    assert "q1: its gold is found in 2 documents (a.md, b.md)" in message


def test_heading_model_is_a_plain_tuple():
    assert tuple(Heading(0, 3, 1, "markdown")) == (0, 3, 1, "markdown")
