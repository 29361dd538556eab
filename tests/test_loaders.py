"""The user's own documents and questions: formats, the slot convention, validation."""

from __future__ import annotations

import importlib.util
import json
import warnings
from pathlib import Path

import docx
import pytest
from pypdf import PdfWriter

from chunklab_core.data import loaders
from chunklab_core.data.gold_advice import GoldAdvice
from chunklab_core.data.loaders import ValidationError, load_folder, load_questions, load_user_corpus
from chunklab_core.core.paths import PROJ_ROOT

EXAMPLE = PROJ_ROOT / "examples" / "own_docs"


# --- the committed example -------------------------------------------------------------------

def test_example_folder_loads_all_five_formats():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")  # questions.yaml is excluded, nothing is skipped
        corpus = load_user_corpus(EXAMPLE, EXAMPLE / "questions.yaml")
    # the only message: advice that lens-year's gold (two phrasings, on purpose) is in two documents
    assert [w.category for w in caught] == [GoldAdvice]
    assert str(caught[0].message).splitlines()[1:] == [
        "lens-year: its gold is found in 2 documents (handbook.md, history.pdf), so a chunk of any of them "
        "scores; if only one is right, quote more of its wording so the gold is found there alone (`doc: "
        "handbook.md` or the right one records the document and validate checks the gold is in it, but scoring "
        "does not read `doc`)"]
    assert [d.doc_id for d in corpus.documents] == [
        "archive/maintenance_log.txt", "handbook.md", "history.pdf", "inventory.docx", "visitors.html"]
    assert {d.meta["format"] for d in corpus.documents} == {"txt", "md", "pdf", "docx", "html"}
    text = {d.doc_id: d.text for d in corpus.documents}
    assert "Lamp bulbs (1000 W) | 12 | 6" in text["inventory.docx"]
    assert "Adult | 8 euros\nChild (under 12) | 4 euros" in text["visitors.html"]
    assert "last climb starts at 4 pm." in text["visitors.html"] and "console.log" not in text["visitors.html"]
    assert "31 metres tall." in text["history.pdf"] and "\n\nAutomation\n" in text["history.pdf"]
    assert len(corpus.questions) == 9 and all(q.source == "user" for q in corpus.questions)


def test_example_questions_use_the_slot_convention():
    corpus = load_user_corpus(EXAMPLE, EXAMPLE / "questions.yaml")
    by_id = {q.qid: q for q in corpus.questions}
    assert by_id["fog-horn"].gold_slots == (("every thirty seconds",), ("one blast of three seconds", "blast of three seconds"))
    assert by_id["lens-year"].gold_slots == (("installed in 1891", "between 1889 and 1891"),)
    assert by_id["lantern-height"].doc_id == "handbook.md" and by_id["engineer"].doc_id == ""
    assert by_id["small-children"].answers == ("No",) and by_id["small-children"].tags == ("yes-no",)


def test_example_binaries_match_their_generator(tmp_path):
    import fpdf  # noqa: F401  fpdf2 (dev extra) writes the example PDF: missing = failure
    spec = importlib.util.spec_from_file_location("make_example_docs", PROJ_ROOT / "examples" / "make_example_docs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.write_pdf(tmp_path / "history.pdf")
    module.write_docx(tmp_path / "inventory.docx")
    for name in ("history.pdf", "inventory.docx"):
        assert loaders.extract_text(tmp_path / name) == loaders.extract_text(EXAMPLE / name)


# --- formats on tiny fixtures ---------------------------------------------------------------

def test_html_keeps_blocks_as_lines_and_inline_tags_inline():
    html = ("<html><head><title>T</title><style>p{}</style></head><body><h1>Head  line</h1>"
            "<p>A <b>bold</b>\n word.<br>Next &amp; more</p><!-- hidden --><ul><li>one</li>\n<li>two</li></ul>"
            "<table><tr><th> Item </th> <th>Qty</th></tr>\n<tr><td>Lamp</td> <td>3</td></tr></table>"
            "<script>var x;</script><div>tail</div></body></html>")
    assert loaders.html_to_text(html) == (
        "Head line\n\nA bold word.\nNext & more\n\none\ntwo\n\nItem | Qty\nLamp | 3\n\ntail")


def test_text_files_drop_bom_and_normalise_line_ends(tmp_path):
    (tmp_path / "a.txt").write_bytes(b"\xef\xbb\xbfone\r\ntwo\rthree\n")
    (tmp_path / "b.md").write_text("# T\n\nbody\n", encoding="utf-8")
    docs = load_folder(tmp_path)
    assert [(d.doc_id, d.text) for d in docs] == [("a.txt", "one\ntwo\nthree\n"), ("b.md", "# T\n\nbody\n")]


def test_docx_table_merged_cell_once_and_document_order(tmp_path):
    document = docx.Document()
    document.add_paragraph("before")
    table = document.add_table(rows=2, cols=3)
    table.cell(0, 0).merge(table.cell(0, 1)).text = "wide"
    table.cell(0, 2).text = "c"
    for j, value in enumerate(["x", "y\nz", "w"]):
        table.cell(1, j).text = value
    document.add_paragraph("after")
    document.save(tmp_path / "t.docx")
    assert loaders.extract_text(tmp_path / "t.docx") == "before\nwide | c\nx | y z | w\nafter"


def test_folder_is_recursive_sorted_and_warns_about_skipped_types(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "z.txt").write_text("z", encoding="utf-8")
    (tmp_path / "b.txt").write_text("b", encoding="utf-8")
    (tmp_path / "data.csv").write_text("1,2", encoding="utf-8")
    (tmp_path / ".hidden.txt").write_text("h", encoding="utf-8")
    with pytest.warns(UserWarning, match=r"skipped 1 file\(s\) of unsupported type: data.csv"):
        docs = load_folder(tmp_path)
    assert [d.doc_id for d in docs] == ["b.txt", "sub/z.txt"]


# --- validation -----------------------------------------------------------------------------

def _write_questions(path: Path, questions: list[dict]) -> Path:
    if path.suffix == ".jsonl":
        path.write_text("".join(json.dumps(q) + "\n" for q in questions), encoding="utf-8")
    else:
        import yaml
        path.write_text(yaml.safe_dump(questions), encoding="utf-8")
    return path


@pytest.fixture
def folder(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("The keeper lit the lamp at dusk.\nThe  Fog horn sounded.\nIt burned for 15 hours.", encoding="utf-8")
    (docs / "b.md").write_text("# Notes\nThe lens was made in Paris.", encoding="utf-8")
    return docs


GOOD = {"id": "q1", "query": "Who lit the lamp?", "gold_snippets": "the keeper lit"}


def test_valid_questions_yaml_and_jsonl_give_the_same_questions(folder, tmp_path):
    questions = [GOOD, {"id": 2, "query": "Where?", "gold_snippets": ["made in paris", ["fog horn", "lamp"]],
                        "doc": "b.md", "tags": "t"}]
    questions[1]["doc"] = ""  # corpus-wide: the second slot's alternatives are in a.txt
    from_yaml = load_questions(_write_questions(tmp_path / "q.yaml", questions), load_folder(folder))
    from_jsonl = load_questions(_write_questions(tmp_path / "q.jsonl", questions), load_folder(folder))
    assert from_yaml == from_jsonl
    assert from_yaml[1].qid == "2" and from_yaml[1].gold_slots == (("made in paris",), ("fog horn", "lamp"))
    assert from_yaml[1].tags == ("t",)


def test_yaml_mapping_with_questions_key(folder, tmp_path):
    path = tmp_path / "q.yml"
    path.write_text("questions:\n  - id: a\n    query: q\n    gold_snippets: fog horn\n", encoding="utf-8")
    assert [q.qid for q in load_questions(path, load_folder(folder))] == ["a"]


@pytest.mark.parametrize("snippets, slots", [
    ("a", (("a",),)),
    (["a", "b"], (("a",), ("b",))),
    (["required", ["alt1", "alt2"]], (("required",), ("alt1", "alt2"))),
])
def test_slot_convention(snippets, slots):
    assert loaders.parse_gold_snippets(snippets) == (slots, [])


@pytest.mark.parametrize("snippets, problem", [
    ([], "no gold snippets"), ("  ", "is empty"), ([[]], "is empty"), (3, "must be a string or a list"),
    ([["a", 3]], "must be a string or a list of strings"), ([["a", ["b"]]], "must be a string or a list of strings"),
])
def test_slot_convention_rejects(snippets, problem):
    slots, problems = loaders.parse_gold_snippets(snippets)
    assert len(problems) == 1 and problem in problems[0]


@pytest.mark.parametrize("entry, expected", [
    ({"id": "q7", "query": "", "gold_snippets": "fog horn"}, "q.yaml: id q7: empty query"),
    ({"id": "q7", "query": "x"}, "q.yaml: id q7: no gold snippets"),
    ({"id": "q7", "query": "x", "gold_snippets": [1987]}, "q.yaml: id q7: gold_snippets item 1987 must be a string"),
    ({"id": "q7", "query": "x", "gold_snippets": "fog horn", "answers": [False]}, "(quote it in YAML"),
    ({"id": "q7", "query": "x", "gold_snippets": "lighthouse cat"},
     'q.yaml: id q7: gold snippet "lighthouse cat" occurs in no document'),
    ({"id": "q7", "query": "x", "gold_snippets": "5 hours"},  # the metric's matcher needs whole numbers
     'q.yaml: id q7: gold snippet "5 hours" occurs in no document'),
    ({"id": "q7", "query": "x", "gold_snippets": "made in paris", "doc": "a.txt"},
     'q.yaml: id q7: gold snippet "made in paris" does not occur in a.txt'),
    ({"id": "q7", "query": "x", "gold_snippets": "fog horn", "doc": "a.text"},
     "q.yaml: id q7: doc 'a.text' is not a document in the folder (did you mean 'a.txt'?)"),
    ({"id": "q7", "query": "x", "gold_snippets": "fog horn", "tag": "t"}, "q.yaml: id q7: unknown field(s) tag"),
    ({"query": "x", "gold_snippets": "fog horn"}, "q.yaml: entry 2: missing id"),
])
def test_each_question_problem_names_file_and_id(folder, tmp_path, entry, expected):
    path = _write_questions(tmp_path / "q.yaml", [GOOD, entry])
    with pytest.raises(ValidationError) as info:
        load_user_corpus(folder, path)
    assert expected in str(info.value)
    assert len(info.value.problems) == 1


def test_fuzzy_only_gold_is_accepted_with_a_warning(folder, tmp_path):
    path = _write_questions(tmp_path / "q.yaml", [dict(GOOD, gold_snippets="the keeper lit the lamp at dusc")])
    with pytest.warns(UserWarning, match=r'q.yaml: id q1: gold snippet "the keeper lit the lamp at dusc" '
                                         r'found only approximately \(score 0.9\d\); the document says: "The keeper lit the lamp at dusk"'):
        questions = load_user_corpus(folder, path).questions
    assert questions[0].gold_slots == (("the keeper lit the lamp at dusc",),)


def test_duplicate_ids_are_reported_once(folder, tmp_path):
    path = _write_questions(tmp_path / "q.yaml", [GOOD, GOOD, dict(GOOD, id="q2")])
    with pytest.raises(ValidationError) as info:
        load_questions(path, load_folder(folder))
    assert info.value.problems == ["q.yaml: id q1: duplicate id (2 questions share it)"]


def test_unreadable_files_are_named(folder, tmp_path):
    (folder / "bad.txt").write_bytes(b"ok \xff\xfe then")
    (folder / "broken.pdf").write_bytes(b"%PDF-1.4\nthis is not a pdf")
    (folder / "broken.docx").write_bytes(b"PK not a zip")
    (folder / "empty.md").write_text("  \n", encoding="utf-8")
    writer = PdfWriter()
    writer.add_blank_page(width=200, height=200)
    with open(folder / "scan.pdf", "wb") as handle:
        writer.write(handle)
    with pytest.raises(ValidationError) as info:
        load_folder(folder)
    problems = info.value.problems
    assert [p.split(":")[0] for p in problems] == ["bad.txt", "broken.docx", "broken.pdf", "empty.md", "scan.pdf"]
    assert problems[0] == "bad.txt: not valid UTF-8 (byte 0xff at byte offset 3); save it as UTF-8"
    assert "is not a .docx document" in problems[1] and "not a readable PDF" in problems[2]
    assert problems[3] == "empty.md: has no text"
    assert "scan.pdf: no extractable text" in problems[4]


def test_all_problems_are_reported_at_once(folder, tmp_path):
    (folder / "bad.txt").write_bytes(b"\xff")
    entries = [
        GOOD, GOOD,                                                       # duplicate id
        {"id": "q3", "query": " ", "gold_snippets": []},                  # empty query + no gold
        {"id": "q4", "query": "x", "gold_snippets": ["fog horn", ["nope", "lamp"]]},
        {"id": "q5", "query": "x", "gold_snippets": "anything", "doc": "bad.txt"},  # not checked: unreadable
        {"id": "q6", "query": "x", "gold_snippets": "fog horn", "doc": "c.txt"},
    ]
    path = _write_questions(tmp_path / "questions.jsonl", entries)
    with pytest.raises(ValidationError) as info:
        load_user_corpus(folder, path)
    assert info.value.problems == [
        "bad.txt: not valid UTF-8 (byte 0xff at byte offset 0); save it as UTF-8",
        "questions.jsonl: id q1: duplicate id (2 questions share it)",
        "questions.jsonl: id q3: empty query",
        "questions.jsonl: id q3: no gold snippets",
        'questions.jsonl: id q4: gold snippet "nope" occurs in no readable document; '
        'closest passage (score 0.67, in b.md): "notes"',
        "questions.jsonl: id q6: doc 'c.txt' is not a document in the folder (did you mean 'a.txt'?)",
    ]
    message = str(info.value)
    assert message.startswith("6 problems in ") and message.endswith("\n".join(info.value.problems))


def test_malformed_question_files(folder, tmp_path):
    docs = load_folder(folder)
    bad_jsonl = tmp_path / "q.jsonl"
    bad_jsonl.write_text(json.dumps(GOOD) + "\n{not json\n\n[1]\n", encoding="utf-8")
    with pytest.raises(ValidationError) as info:
        load_questions(bad_jsonl, docs)
    assert info.value.problems[0].startswith("q.jsonl: line 2: invalid JSON")
    assert info.value.problems[1].startswith("q.jsonl: line 4: expected a mapping")
    cases = {"q.yaml": "- id: [unclosed\n", "r.yaml": "id: 1\n", "s.txt": "x", "t.yaml": ""}
    expected = {"q.yaml": "invalid YAML", "r.yaml": "expected a list of questions",
                "s.txt": "must be .yaml, .yml or .jsonl", "t.yaml": "expected a list"}
    for name, content in cases.items():
        (tmp_path / name).write_text(content, encoding="utf-8")
        with pytest.raises(ValidationError, match=expected[name]):
            load_questions(tmp_path / name, docs)
    with pytest.raises(ValidationError, match="missing.yaml: cannot be read"):
        load_questions(tmp_path / "missing.yaml", docs)


def test_missing_or_empty_folder(tmp_path):
    with pytest.raises(ValidationError, match="not a folder"):
        load_folder(tmp_path / "nope")
    with pytest.raises(ValidationError, match="no supported documents"):
        load_folder(tmp_path)
