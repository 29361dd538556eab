"""No committed post shows a table cut by a display limit, and the views that replace wide tables lose no column.

A cut table is pandas' elision column (a header cell "…" or "...") or its "N rows × M columns"
footer: the reader cannot see what was cut. A post may show a head, but says so in words
(``reports.table_views.head_text``), never by pandas' footer.
"""

from __future__ import annotations

import json
import re

import pandas as pd
import pytest

from chunklab_core.core.paths import PROJ_ROOT
from chunklab_core.reports import table_views

NOTEBOOKS = sorted((PROJ_ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
ELISION_HEADER = re.compile(r"<th>\s*(?:…|\.\.\.)\s*</th>")
FOOTER = re.compile(r"\d+ rows × \d+ columns")


def cut_tables(notebook: dict) -> list[str]:
    """``cell N: what`` for every output of ``notebook`` that shows a table cut by pandas' display limits."""
    found = []
    for number, cell in enumerate(notebook["cells"]):
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            html = "".join(data.get("text/html", ""))
            plain = "".join(data.get("text/plain", ""))
            if ELISION_HEADER.search(html):
                found.append(f"cell {number}: an elided column")
            if FOOTER.search(html) or FOOTER.search(plain):
                found.append(f"cell {number}: a 'rows × columns' footer")
    return found


def test_the_checker_finds_a_cut_table():
    wide = pd.DataFrame([[i] * 30 for i in range(3)])
    with pd.option_context("display.max_columns", 20):
        html = wide._repr_html_()
    notebook = {"cells": [{"cell_type": "code", "outputs": [{"data": {"text/html": html, "text/plain": ""}}]}]}
    assert "cell 0: an elided column" in cut_tables(notebook)
    whole = {"cells": [{"cell_type": "code", "outputs": [{"data": {"text/html": wide.iloc[:, :5]._repr_html_()}}]}]}
    assert cut_tables(whole) == []


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_no_committed_post_shows_a_cut_table(path):
    notebook = json.loads(path.read_text(encoding="utf-8"))
    assert cut_tables(notebook) == [], f"{path.name}: a table cut by a display limit"


def test_views_refuse_to_drop_a_column():
    table = pd.DataFrame({"key": ["a"], "x": [1], "y": [2]})
    with pytest.raises(ValueError, match="columns in no view: \\['y'\\]"):
        table_views.show_views(table, ["key"], {"x only": ["x"]})


def test_head_text_says_how_many_rows_and_links_the_rest():
    assert table_views.head_text(30, 184, "00_findings") == (
        "*The first 30 rows of 184 rows are shown; [all of them as CSV](../data/00_findings.csv).*")
    assert table_views.csv_link("07_stage") == "[the full table as CSV](../data/07_stage.csv)"
