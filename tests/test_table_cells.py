"""Table cell delimiters in gold matching, and the closest passage of a snippet found nowhere."""

from __future__ import annotations

import docx
import pytest

from chunklab_core.data.document_text import docx_to_text, html_to_text
from chunklab_core.data.gold_diagnosis import closest_hint, closest_passage
from chunklab_core.data.loaders import ValidationError, load_user_corpus
from chunklab_core.core.textmatch import contains_gold, match_gold, match_text, table_cells


@pytest.mark.parametrize("row", [
    "| Partner | 120 | 300 |",
    "|Partner|120|300|",
    "Partner|120|300",
    "  | Partner  |\t120 | 300 |  ",
    "Partner | 120 | 300",
])
def test_every_delimiter_style_gives_the_docx_row(row):
    assert table_cells(row) == "Partner | 120 | 300"


def test_lines_without_pipes_are_unchanged_and_each_row_is_handled():
    text = "Prices\n| a | b |\n|---|---|\n| c | d |\nplain  text"
    assert table_cells(text) == "Prices\na | b\n--- | ---\nc | d\nplain  text"
    assert table_cells("no pipes at all") == "no pipes at all"


def _docx(path, rows):
    document = docx.Document()
    document.add_paragraph("Price list")
    table = document.add_table(rows=len(rows), cols=len(rows[0]))
    for i, row in enumerate(rows):
        for j, value in enumerate(row):
            table.cell(i, j).text = value
    document.save(path)
    return path


def test_snippet_with_outer_pipes_is_found_in_docx_html_and_markdown_rows(tmp_path):
    rows = [["Tier", "Seats", "Price"], ["Partner", "120", "300"]]
    docx_text = docx_to_text(_docx(tmp_path / "t.docx", rows))
    html_text = html_to_text("<table><tr><td>Tier</td><td>Seats</td><td>Price</td></tr>"
                             "<tr><td>Partner</td><td>120</td><td>300</td></tr></table>")
    md_text = "| Tier | Seats | Price |\n|---|---|---|\n| Partner | 120 | 300 |\n"
    for text in (docx_text, html_text, md_text):
        for snippet in ("| Partner | 120 | 300 |", "Partner | 120 | 300", "Partner|120|300"):
            match = match_gold(text, snippet)
            assert match.found and match.method == "exact", (text, snippet)


def test_numbers_in_cells_are_still_guarded():
    assert not contains_gold("| Partner | 120 | 300 |", "| Partner | 120 | 900 |")
    assert not contains_gold("Partner | 1200 | 300", "Partner | 120 | 300")


def test_match_text_normalises_cells_before_collapsing_lines():
    assert match_text("| A |  B |\n| C | D |") == "a | b\nc | d".replace("\n", " ")


def test_closest_passage_names_document_score_and_text():
    documents = {"a.md": "Nothing about lanterns here.",
                 "b.md": "The lantern sits 38 metres above mean sea level, visible far."}
    found = closest_passage("36 metres above mean sea level", documents)
    assert found.doc_id == "b.md" and found.passage == "38 metres above mean sea level"
    assert found.score == pytest.approx(29 / 30) and not found.numbers_match
    hint = closest_hint("36 metres above mean sea level", documents)
    assert hint == '; closest passage (score 0.97, in b.md; its numbers differ): "38 metres above mean sea level"'
    assert closest_passage("anything", {"empty.md": ""}) is None


def test_validation_lists_the_closest_passage_of_a_missing_snippet(tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "prices.md").write_text("| Tier | Price |\n|---|---|\n| Partner | 300 |\n", encoding="utf-8")
    questions = tmp_path / "q.yaml"
    questions.write_text('- {id: p, query: "Partner price?", gold_snippets: "| Partner | 300 |"}\n'
                         '- {id: q, query: "Gold price?", gold_snippets: "| Gold partner | 350 |"}\n', encoding="utf-8")
    with pytest.raises(ValidationError) as error:
        load_user_corpus(folder, questions)
    assert len(error.value.problems) == 1
    problem = error.value.problems[0]
    assert problem.startswith('q.yaml: id q: gold snippet "| Gold partner | 350 |" occurs in no document; '
                              "closest passage (score ")
    assert 'in prices.md; its numbers differ): "partner | 300"' in problem
