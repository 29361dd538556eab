"""Fault injection, the user's documents and questions file: symbolic links, skipped files,
damaged or encrypted files, duplicate keys and ids YAML would rewrite (issue 15)."""

from __future__ import annotations

import os

import pytest

from chunklab_core.data.loaders import ValidationError, load_folder, load_user_corpus

TEXT = "The keeper lit the lamp at dusk. The fog horn sounded every thirty seconds.\n"


@pytest.fixture
def docs(tmp_path):
    folder = tmp_path / "docs"
    (folder / "data").mkdir(parents=True)
    (folder / "data" / "log.txt").write_text(TEXT, encoding="utf-8")
    return folder


def questions(tmp_path, body):
    path = tmp_path / "q.yaml"
    path.write_text(body, encoding="utf-8")
    return path


def problems_of(docs, path):
    with pytest.raises(ValidationError) as err:
        load_user_corpus(docs, path)
    return str(err.value)


# ---- symbolic links ----------------------------------------------------------------------
def test_a_linked_subfolder_inside_the_folder_is_read(docs):
    (docs / ".store").mkdir()
    (docs / ".store" / "manual.md").write_text("# Manual\n\nOil the bearing monthly.\n", encoding="utf-8")
    (docs / "manuals").symlink_to(docs / ".store", target_is_directory=True)
    assert [d.doc_id for d in load_folder(docs)] == ["data/log.txt", "manuals/manual.md"]


def test_link_loops_and_second_links_are_read_once(docs):
    (docs / "data" / "loop").symlink_to(docs, target_is_directory=True)  # back to the root
    (docs / "same").symlink_to(docs / "data", target_is_directory=True)
    with pytest.warns(UserWarning, match=r"a link to a folder already read.*not read twice"):
        documents = load_folder(docs)
    assert [d.doc_id for d in documents] == ["data/log.txt"]


def test_a_file_linked_inside_the_folder_is_one_document(docs):
    (docs / "latest.txt").symlink_to(docs / "data" / "log.txt")
    with pytest.warns(UserWarning, match=r"latest.txt: the same file as data/log.txt; read once"):
        assert [d.doc_id for d in load_folder(docs)] == ["data/log.txt"]


def test_a_link_leading_outside_the_folder_is_refused_and_never_read(docs, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("outside text", encoding="utf-8")
    (docs / "hostname.txt").symlink_to(secret)
    (docs / "elsewhere").symlink_to(tmp_path, target_is_directory=True)
    (docs / "gone.txt").symlink_to(tmp_path / "deleted.txt")
    with pytest.raises(ValidationError) as err:
        load_folder(docs)
    message = str(err.value)
    assert f"hostname.txt: symbolic link to {secret}, outside the folder; refused" in message
    assert f"elsewhere: symbolic link to {tmp_path}, outside the folder; refused" in message
    assert "gone.txt: broken symbolic link" in message
    assert "outside text" not in message


# ---- skipped and unreadable files -----------------------------------------------------------
def test_skipped_files_are_listed_in_the_error(docs, tmp_path):
    (docs / "minutes.doc").write_bytes(b"\xd0\xcf\x11\xe0 old word file")
    (docs / "data" / "table.xlsx").write_bytes(b"PK")
    path = questions(tmp_path, "- id: q1\n  query: When?\n  gold_snippets: meeting at noon\n")
    message = problems_of(docs, path)
    assert 'gold snippet "meeting at noon" occurs in no document' in message
    assert "note: skipped 2 file(s) of unsupported type (not documents): data/table.xlsx, minutes.doc" in message


def test_a_docx_that_is_not_a_zip_says_so(docs):
    (docs / "report.docx").write_text("I am plain text with a .docx name", encoding="utf-8")
    with pytest.raises(ValidationError, match=r"report.docx: is not a \.docx document: a \.docx file is a zip "
                                              r"archive and this one is not"):
        load_folder(docs)


def test_an_encrypted_pdf_says_so(docs):
    from fpdf import FPDF

    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("helvetica", size=12)
    pdf.cell(text="Secret minutes")
    pdf.set_encryption(owner_password="owner", user_password="reader")
    pdf.output(str(docs / "minutes.pdf"))
    with pytest.raises(ValidationError, match=r"minutes.pdf: the PDF is encrypted with a password; save an "
                                              r"unprotected copy"):
        load_folder(docs)


# ---- the questions file ---------------------------------------------------------------------
def test_a_key_given_twice_is_an_error_not_the_last_value(docs, tmp_path):
    path = questions(tmp_path, "- id: q1\n  query: Who lit the lamp?\n  gold_snippets: keeper lit\n"
                               "  query: When did the horn sound?\n")
    message = problems_of(docs, path)
    assert "q.yaml: line 4: key 'query' given twice in one entry (first on line 2)" in message


def test_a_key_given_twice_in_jsonl_is_an_error(docs, tmp_path):
    path = tmp_path / "q.jsonl"
    path.write_text('{"id": "q1", "query": "a", "query": "b", "gold_snippets": "keeper lit"}\n', encoding="utf-8")
    assert "q.jsonl: line 1: key 'query' given twice" in problems_of(docs, path)


@pytest.mark.parametrize("written, read_as", [
    ("007", "an integer (7)"),
    ("0x1F", "an integer (31)"),
    ("1_000", "an integer (1000)"),
    ("1.5", "a number (1.5)"),
    ("yes", "a boolean (True)"),
    ("off", "a boolean (False)"),
    ("2024-01-02", "a date (2024-01-02)"),
])
def test_ids_yaml_would_rewrite_are_errors_with_a_quoting_hint(docs, tmp_path, written, read_as):
    path = questions(tmp_path, f"- id: {written}\n  query: Who?\n  gold_snippets: keeper lit\n")
    message = problems_of(docs, path)
    assert f"q.yaml: entry 1: id {written} is read by YAML as {read_as}, not as the text written; " \
           f'quote it in YAML (id: "{written}")' in message


def test_01_and_1_no_longer_collide_silently(docs, tmp_path):
    path = questions(tmp_path, "- id: 01\n  query: Who?\n  gold_snippets: keeper lit\n"
                               "- id: 1\n  query: What?\n  gold_snippets: fog horn\n")
    message = problems_of(docs, path)
    assert "1 problem" in message and 'id 01 is read by YAML as an integer (1)' in message
    quoted = questions(tmp_path, '- id: "01"\n  query: Who?\n  gold_snippets: keeper lit\n'
                                 "- id: 1\n  query: What?\n  gold_snippets: fog horn\n")
    assert [q.qid for q in load_user_corpus(docs, quoted).questions] == ["01", "1"]


def test_float_and_boolean_ids_in_jsonl_get_the_hint(docs, tmp_path):
    path = tmp_path / "q.jsonl"
    path.write_text('{"id": 1.0, "query": "a", "gold_snippets": "keeper lit"}\n'
                    '{"id": true, "query": "b", "gold_snippets": "fog horn"}\n', encoding="utf-8")
    message = problems_of(docs, path)
    assert "line 1: id 1.0 is a number, not a string; quote it" in message
    assert "line 2: id True is a boolean, not a string; quote it" in message
