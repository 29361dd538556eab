"""Fault injection, hostile strings on pages (issue 30): file names, headings, questions and
answers that hold HTML are shown as text on every page of the website; nothing can run.

The checks are the reusable ones of ``tests/html_checks.py``."""

from __future__ import annotations

import base64
import sys
from pathlib import Path

import nbformat
import pandas as pd
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

sys.path.insert(0, str(Path(__file__).parent))
from html_checks import HOSTILE, MARKER, assert_no_live_markup, assert_shown_as_text  # noqa: E402

from chunklab_core.core.html_safety import escape_markdown_html, strip_active_content, url  # noqa: E402
from chunklab_core.reports.website import build_site  # noqa: E402

PNG = base64.b64encode(bytes.fromhex(
    "89504e470d0a1a0a0000000d49484452000000010000000108020000009077"
    "53de0000000c4944415408d763f8cfc0000003010100c9fe92ef0000000049454e44ae426082")).decode()


def hostile_post(path: Path) -> None:
    """A post whose data (outputs) carry every hostile string, and whose prose is hostile too."""
    data_markdown = "\n\n".join(f"- answer: {s}" for s in HOSTILE) + "\n\nA quoted id: `<kept in code>`"
    frame = pd.DataFrame({"question": list(HOSTILE), "answer": list(HOSTILE)})
    cells = [new_markdown_cell("# A title with <img src=x onerror=alert(1)> in it\n\n"
                               "Its question, <b onclick=\"alert(4)\">bold</b>?"),
             new_code_cell("show()", outputs=[
                 new_output("display_data", data={"text/markdown": data_markdown, "text/plain": "md"}),
                 new_output("execute_result", data={"text/html": frame.to_html(), "text/plain": "df"},
                            execution_count=1),
                 new_output("stream", name="stdout", text="\n".join(HOSTILE) + "\n"),
                 new_output("display_data", data={"image/png": PNG, "text/plain": "<Figure>"})])]
    nbformat.write(new_notebook(cells=cells), path)


def test_every_site_page_shows_hostile_data_as_text(tmp_path):
    folder = tmp_path / "notebooks"
    folder.mkdir()
    hostile_post(folder / '01_a"b<c>&d.ipynb')
    hostile_post(folder / "02_second.ipynb")
    pages = build_site(tmp_path / "site", sorted(folder.glob("*.ipynb")))
    assert len(pages) == 3
    for page in pages:
        html = page.read_text(encoding="utf-8")
        assert_no_live_markup(html)
        if page.name != "index.html":
            assert_shown_as_text(html)  # every hostile string of the outputs, as text
            assert "<code>&lt;kept in code&gt;</code>" in html  # code spans still render as code
    index = (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    assert f'href="{url("01_a" + chr(34) + "b<c>&d.html")}"' in index  # a hostile file name is one link
    assert "A title with &lt;img src=x onerror=alert(1)&gt; in it" in index  # the title, as text
    assert (tmp_path / "site" / '01_a"b<c>&d.html').is_file()


def test_markdown_escaping_keeps_code_and_character_references():
    assert escape_markdown_html("a <b> & c `<b>` &lt;ok&gt;") == "a &lt;b> &amp; c `<b>` &lt;ok&gt;"
    assert escape_markdown_html("```\n<b>\n```\n<i>\n> quoted") == "```\n<b>\n```\n&lt;i>\n> quoted"


def test_strip_active_content_removes_what_runs_and_keeps_the_rest():
    page = ('<h2 onmouseover="x()">t</h2><script>alert(1)</script><iframe src="e"></iframe>'
            '<a href=" JaVaScRiPt:alert(1)">l</a><img src="data:text/html;base64,AA"><img src="figures/a.png">'
            '<style scoped>.x {}</style><table><tr><td>1</td></tr></table>')
    clean = strip_active_content(page)
    assert_no_live_markup(clean)
    assert "iframe" not in clean and "data:text" not in clean
    assert '<img src="figures/a.png"/>' in clean and "<style scoped" in clean and "<td>1</td>" in clean


def test_the_checks_themselves_catch_live_markup():
    import pytest

    for live in ('<img src=x onerror=alert(1)>', f"<h1>{MARKER}</h1>", "<script>1</script>",
                 '<a href="javascript:alert(3)">click</a>'):
        with pytest.raises(AssertionError):
            assert_no_live_markup(f"<p>{live}</p>")
    with pytest.raises(AssertionError, match="unescaped"):
        assert_shown_as_text("<p>Tom & Jerry's \"quoted\" text</p>", ("Tom & Jerry's \"quoted\" text",))
