"""Fault injection, wrong results on real documents (issue 30): a bold ALL-CAPS line counted
twice, a sized structure strategy ignoring the loader's headings, NFD documents against NFC
gold, .docx tables not seen as tables, and ``doc:`` advice that validation then refuses."""

from __future__ import annotations

import unicodedata

import docx
import pytest

from chunklab_core.chunking import chunk_document, document_spans
from chunklab_core.chunking.structure import structure_blocks, tables_intact
from chunklab_core.core.corpus import Document, Question
from chunklab_core.core.headings import Heading, document_headings, heading_report, text_headings
from chunklab_core.core.textmatch import contains_gold
from chunklab_core.data.document_text import extract_document, html_document
from chunklab_core.data.gold_advice import multi_document_advice
from chunklab_core.data.loaders import load_user_corpus
from chunklab_core.own.config import parse_config

BODY = "Items bought in store can be returned within thirty days with the receipt. " * 3


def test_a_bold_all_caps_line_is_one_heading_in_every_format(tmp_path):
    _, html_headings = html_document(f"<p>{BODY}</p><p><b>RETURNS POLICY</b></p><p>{BODY}</p>")
    md = text_headings(f"{BODY}\n\n**RETURNS POLICY**\n\n{BODY}\n")
    document = docx.Document()
    document.add_paragraph(BODY)
    document.add_paragraph().add_run("RETURNS POLICY").bold = True
    document.add_paragraph(BODY)
    document.save(tmp_path / "p.docx")
    _, docx_headings = extract_document(tmp_path / "p.docx")
    for found in (html_headings, md, docx_headings):
        assert len(found) == 1 and found[0].cue == "bold", found
    doc = Document("p.docx", "", "p", {"headings": [tuple(h) for h in docx_headings], "format": "docx"})
    assert heading_report([doc])["headings"].tolist() == [1]


def test_a_structure_strategy_sized_in_a_config_cuts_at_the_loaders_headings():
    text = f"{BODY}\nRefunds and exchanges\n{BODY}"
    start = text.index("Refunds")
    heading = Heading(start, start + len("Refunds and exchanges"), 1, "docx-style")  # not visible in the text
    doc = Document("a.docx", text, "a", {"headings": [tuple(heading)]})
    assert text_headings(text) == [] and document_headings(doc) == [heading]
    [name] = parse_config({"strategies": [{"kind": "structure", "max": 60}]}).strategies
    sized = [(c.start, c.end) for c in chunk_document(doc, name)]
    base = [(s, e) for s, e, *_ in document_spans(text, "structure_aware", headings=[heading], max_tokens=60)]
    assert sized == base and any(s == start for s, _ in sized)


def test_nfd_documents_and_nfc_gold_match_both_ways():
    text = "Le café de la gare est fermé le lundi; la crème brûlée y est servie."
    nfd, nfc = unicodedata.normalize("NFD", text), unicodedata.normalize("NFC", text)
    assert nfd != nfc
    for document, gold in ((nfd, "crème brûlée"), (nfc, unicodedata.normalize("NFD", "crème brûlée"))):
        assert contains_gold(document, unicodedata.normalize("NFC", gold)) and contains_gold(document, gold)


def test_docx_tables_are_tables_for_the_structure_code(tmp_path):
    document = docx.Document()
    document.add_paragraph(BODY)
    table = document.add_table(rows=3, cols=3)
    for r, row in enumerate([("Tier", "Rate", "Cap"), ("Partner", "120", "300"), ("Guest", "80", "100")]):
        for c, value in enumerate(row):
            table.cell(r, c).text = value
    document.add_paragraph(BODY)
    document.save(tmp_path / "t.docx")
    text, _ = extract_document(tmp_path / "t.docx")
    assert "Partner | 120 | 300" in text and "|" not in text.replace(" | ", "")
    assert [b.kind for b in structure_blocks(text)].count("table") == 1
    spans = document_spans(text, "structure_aware", headings=[], max_tokens=512)
    assert tables_intact(text, spans) == (1, 1)


def test_doc_advice_is_only_given_where_following_it_passes_validation(tmp_path):
    docs = [Document("a.md", "The return window is thirty days.", "a", {}),
            Document("b.md", "Refunds are approved by the store manager.", "b", {}),
            Document("c.md", "Refunds are approved by the store manager within thirty days.", "c", {})]
    split = Question("q1", "Window and approver?", "", (("return window",), ("the store manager",)))
    assert multi_document_advice([split], docs[:2]) == []  # no document holds both slots: no doc: advice
    both = Question("q2", "Approver?", "", (("the store manager",),))
    [line] = multi_document_advice([both], docs)
    assert "scoring does not read `doc`" in line and "`doc: b.md`" in line
    folder = tmp_path / "docs"
    folder.mkdir()
    for d in docs:
        (folder / d.doc_id).write_text(d.text, encoding="utf-8")
    questions = tmp_path / "q.yaml"
    questions.write_text("- {id: q2, query: Who approves, gold_snippets: the store manager, doc: b.md}\n", encoding="utf-8")
    assert [q.doc_id for q in load_user_corpus(folder, questions).questions] == ["b.md"]  # the advice, followed
