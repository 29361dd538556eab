"""`make site`: pages without code, index, links, figures as files; the browser check (slow)."""

from __future__ import annotations

import base64
import importlib.util
import shutil
import struct
import zlib

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from chunklab_core.core.paths import PROJ_ROOT
from chunklab_core.reports.website import build_site, discover_posts, read_post


def _png(width: int = 4, height: int = 3) -> bytes:
    """A valid RGB PNG, written by hand (no imaging library needed)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    raw = b"".join(b"\x00" + b"\x80\x20\x20" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")


def _post(path, title: str, question: str, figure: bool = True):
    cells = [new_markdown_cell(f"# {title}\n\n{question}\n\nMore prose."),
             new_code_cell("SECRET_CODE = 1", outputs=[new_output("stream", name="stderr", text="warning!\n")]),
             new_markdown_cell("## A section")]
    if figure:
        cells.append(new_code_cell("plot()", outputs=[new_output(
            "display_data", data={"image/png": base64.b64encode(_png()).decode(), "text/plain": "<Figure>"})]))
    nbformat.write(new_notebook(cells=cells), path)


FICTIONAL = ["01_first", "02_second", "02_bad", "03_third", "07_seventh"]  # the posts of these tests


def test_the_posts_published_are_those_of_the_one_list_of_posts(tmp_path):
    from chunklab_core.reports import posts

    folder = tmp_path / "notebooks"
    folder.mkdir()
    for name in ("01_chunking", "07_reranking", "09_not_registered", "01_first"):
        _post(folder / f"{name}.ipynb", f"{name[:2]} · A post", "*A question?*", figure=False)
    assert [p.name for p in discover_posts(folder)] == ["01_chunking.ipynb", "07_reranking.ipynb"]
    assert [p.stem for p in discover_posts()] == sorted(p.name for p in posts.POSTS)  # every post is executed


def test_pages_index_and_links(tmp_path):
    folder = tmp_path / "notebooks"
    folder.mkdir()
    _post(folder / "01_first.ipynb", "01 · First post", "*Does the first thing work?*")
    _post(folder / "02_second.ipynb", "02 · Second post", "Is the second one better?", figure=False)
    _post(folder / "07_seventh.ipynb", "07 · Seventh", "And a post added later?")
    (folder / "notes.ipynb").write_text((folder / "01_first.ipynb").read_text())  # not a post
    assert [p.name for p in discover_posts(folder, FICTIONAL)] == ["01_first.ipynb", "02_second.ipynb", "07_seventh.ipynb"]
    out = tmp_path / "site"
    pages = build_site(out, discover_posts(folder, FICTIONAL))
    assert sorted(p.name for p in pages) == ["01_first.html", "02_second.html", "07_seventh.html", "index.html"]
    first, second = (out / "01_first.html").read_text(), (out / "02_second.html").read_text()
    assert "SECRET_CODE" not in first and "warning!" not in first  # no code, no stderr
    assert 'href="02_second.html"' in first and 'href="index.html"' in first
    assert 'href="01_first.html"' in second and 'href="07_seventh.html"' in second
    images = sorted(p.name for p in (out / "img").iterdir())
    assert images == ["01_first_3_0.png", "07_seventh_3_0.png"]
    assert (out / "img" / images[0]).read_bytes() == _png()
    index = (out / "index.html").read_text()
    assert "<em>Does the first thing work?</em>" in index and "Is the second one better?" in index
    assert index.count("<img") == 2 and 'src="img/01_first_3_0.png"' in index
    assert "http://" not in index and "https://" not in first  # nothing fetched from elsewhere


def test_a_failed_build_keeps_the_old_site(tmp_path):
    folder = tmp_path / "notebooks"
    folder.mkdir()
    _post(folder / "01_first.ipynb", "01 · First", "Q?")
    out = tmp_path / "site"
    build_site(out, discover_posts(folder, FICTIONAL))
    nbformat.write(new_notebook(cells=[new_markdown_cell("no heading here")]), folder / "02_bad.ipynb")
    with pytest.raises(ValueError, match="02_bad.ipynb: no markdown heading"):
        build_site(out, discover_posts(folder, FICTIONAL))
    assert sorted(p.name for p in out.glob("*.html")) == ["01_first.html", "index.html"]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".site")]


def test_titles_come_from_the_first_heading_of_every_post():
    for path in discover_posts():
        post, _ = read_post(path)
        assert post.title.startswith(path.name[:2]) and post.question_html
        # one form for every index entry: "NN · title", then a one-sentence or italic subtitle
        assert post.title.startswith(f"{path.name[:2]} · "), post.title
        assert post.question_html.strip().startswith("<p><em>"), (path.name, post.question_html[:80])


def _check_site():
    spec = importlib.util.spec_from_file_location("check_site", PROJ_ROOT / "scripts" / "check_site.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_the_series_site_passes_the_browser_check(tmp_path):
    check = _check_site()
    chromium = check.find_chromium(None)  # fails (SystemExit) without Debian's chromium
    out = tmp_path / "site"
    build_site(out)
    assert check.check_site(out, chromium) == []
    # The check can fail: a broken image and a too-wide block are reported.
    shutil.copy(out / "index.html", out / "broken.html")
    page = (out / "broken.html").read_text()
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from chunklab_core.reports import plots

    fig, ax = plt.subplots(figsize=(20, 3))  # 2,200 px wide with 5 pt text: about 3 px at column width
    ax.set_title("tiny", fontsize=5)
    ax.tick_params(labelsize=5)
    (out / "img" / "tiny.png").write_bytes(plots.png_bytes(fig))
    plt.close(fig)
    wide = "<table><tbody><tr><td style='white-space:nowrap'>" + "a wide cell " * 120 + "</td></tr></tbody></table>"
    page = page.replace("</main>", '<img src="img/missing.png"><div style="width:3000px">wide</div>'
                        '<img src="img/tiny.png" alt="">' + wide + "</main>")
    (out / "broken.html").write_text(page)
    problems = check.check_site(out, chromium)
    assert any("broken.html: image img/missing.png did not render" in p for p in problems)
    assert any("broken.html at 1280 px: horizontal scroll" in p for p in problems)
    assert any("broken.html at 390 px: horizontal scroll" in p for p in problems)  # the phone frame works
    assert any("broken.html: link to a missing file img/missing.png" in p for p in problems)
    assert any("image img/tiny.png has no alt text" in p for p in problems)
    assert any("image img/tiny.png's smallest text is" in p for p in problems)
    assert any("is" in p and "not declared scrollable" in p for p in problems)
    assert any("broken.html at 1280 px: no section headed 'The answer" in p for p in problems)


def test_pages_open_with_key_findings_end_with_versions_and_tables_read_as_tables(tmp_path):
    import pandas as pd

    folder = tmp_path / "notebooks"
    folder.mkdir()
    table = pd.DataFrame({"strategy": ["Fixed 500", "Fixed 1000"], "recall": [0.9104, 0.8951],
                          "recall low": [0.8899, 0.87], "recall high": [0.9295, 0.92], "n": [800, 800]})
    versions = pd.DataFrame({"package": ["numpy"], "version": ["2.0"]})
    cells = [new_markdown_cell("# 03 — Third post\n\nA whole paragraph. With a second sentence."),
             new_code_cell("start_post()", outputs=[new_output(
                 "display_data", data={"text/html": versions.to_html(), "text/plain": "v"})]),
             new_markdown_cell("## Results"),
             new_code_cell("table", outputs=[new_output(
                 "execute_result", data={"text/html": table.to_html(), "text/plain": "t"}, execution_count=1)]),
             new_markdown_cell("## 7. What this run supports\n\nThe finding, in words.")]
    nbformat.write(new_notebook(cells=cells), folder / "03_third.ipynb")
    build_site(tmp_path / "site", discover_posts(folder, FICTIONAL))
    page = (tmp_path / "site" / "03_third.html").read_text()
    # key findings first, versions last
    assert page.index("Key findings") < page.index("The finding, in words.") < page.index("Results")
    assert page.count("The finding, in words.") == 2
    assert page.index("What this run supports") < page.index("Versions") < page.index("numpy")
    # no row numbers, text left and numbers right, estimate and interval in one cell
    assert "<th>0</th>" not in page and "<th>1</th>" not in page
    assert '<td class="num">0.9104 [0.8899, 0.9295]</td>' in page
    assert "recall low" not in page and "recall [95% interval]" in page
    assert "<td>Fixed 500</td>" in page and '<td class="num">800</td>' in page
    assert '<th>strategy</th>' in page and '<th class="num">n</th>' in page  # headers aligned as their column
    assert "text-align: right;" not in page.split("<main>")[1]
    # one form for every index entry: an italic subtitle, the first sentence when there is none
    index = (tmp_path / "site" / "index.html").read_text()
    assert "<em>A whole paragraph.</em>" in index and "second sentence" not in index


def test_site_tables_by_hand():
    from chunklab_core.reports.site_tables import interval_pairs, is_number_text, tidy_tables

    assert is_number_text("0.910 [0.890, 0.929]") and is_number_text("12.5%") and is_number_text("-3")
    assert is_number_text("1,234") and is_number_text("NaN") and not is_number_text("Fixed 500")
    assert interval_pairs(["a", "kappa", "kappa low", "kappa high", "d", "low", "high"]) == {1: (2, 3), 4: (5, 6)}
    assert interval_pairs(["low", "high"]) == {}  # bounds without an estimate stay as they are
    named = ('<table class="dataframe"><thead><tr><th></th><th>x</th></tr><tr><th>judge</th><th></th></tr>'
             '</thead><tbody><tr><th>a</th><td>1</td></tr></tbody></table>')
    assert "<th>a</th>" in tidy_tables(named)  # a meaningful index is kept
    assert tidy_tables("<p>no table</p>") == "<p>no table</p>"


def test_site_check_rules_on_measured_pages(tmp_path):
    """check_site's rules on hand-made measurements: text size as shown, tables, alt texts, the answer."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from chunklab_core.reports import plots

    check = _check_site()
    fig, ax = plt.subplots(figsize=(4, 2))
    ax.tick_params(labelsize=10)
    ax.set_title("t", fontsize=10)
    (tmp_path / "f.png").write_bytes(plots.png_bytes(fig))
    plt.close(fig)
    recorded = float(check.png_text(tmp_path / "f.png")[check.TEXT_KEY])
    assert recorded == pytest.approx(10 * plt.rcParams["savefig.dpi"] / 72, abs=0.01)
    image = {"src": "f.png", "naturalWidth": 400, "shownWidth": 200, "alt": "A chart.", "complete": True}
    assert check.shown_text_px(tmp_path, image) == pytest.approx(recorded / 2)
    page = tmp_path / "01_post.html"
    good = {"innerWidth": 1280, "innerHeight": 900, "scrollWidth": 1280, "column": 872, "answers": [300],
            "images": [dict(image, shownWidth=400)],
            "tables": [{"width": 800, "shown": 800, "scrollable": True, "sticky": True, "head": "a"},
                       {"width": 1500, "shown": 872, "scrollable": True, "sticky": True, "head": "b"}]}
    assert check.layout_problems(tmp_path, page, good, 1280) == []
    bad = dict(good, answers=[1400], images=[dict(image, shownWidth=100, alt="")],
               tables=[{"width": 1500, "shown": 1500, "scrollable": False, "sticky": False, "head": "wide"},
                       {"width": 1500, "shown": 872, "scrollable": True, "sticky": False, "head": "loose"}])
    found = " | ".join(check.layout_problems(tmp_path, page, bad, 1280))
    for expected in ("has no alt text", "smallest text is", "not declared scrollable",
                     "key column is not kept in view", "below the first screen"):
        assert expected in found
