"""The executed posts as a static website: one HTML page per post, an index, no code cells.

Handles: every executed post ``notebooks/NN_*.ipynb`` of the one list of posts
(``reports.posts.POSTS``, so a post added there appears without a change here; a notebook
not in it is not published). Each page shows the post's prose, tables and figures with the
code cells left out (their outputs stay), warnings and progress bars (stderr) dropped, and
links to the index and to the previous and next post. A page opens with the post's key
findings (its closing section, found by its heading: :data:`KEY_SECTIONS`, repeated after the
introduction without its figures) and ends with the versions of the packages it ran with (the
output of the post's ``start_post()`` cell, moved from the top); pandas tables are shown as a
reader expects them (:mod:`chunklab_core.reports.site_tables`: no row numbers, text left,
numbers right, an estimate and its interval in one cell). The index lists every post in one
form: its title (the first markdown heading, ``NN · title``), its subtitle (the first
paragraph under the heading when it is in italics, else that paragraph's first sentence) and
its lead figure (the first figure the post draws). Figures are written as PNG files
beside the pages and linked relatively, as is the style sheet, so the folder works
offline, from ``file://`` and on any static host. The folder is built next to the target and
moved into place only when complete, so a failed build leaves the previous site untouched.

Built on nbconvert (its ``basic`` template renders cells and outputs; the page frame, the
index and the navigation are this module's, because nbconvert has no multi-page site).

What data puts on a page is shown as text (:mod:`chunklab_core.core.html_safety`): Markdown,
in cells and in outputs (prose a post builds from questions, answers, file names), has its raw
HTML made literal before rendering (the posts use Markdown, not HTML, so they render the same),
every page body is stripped of anything that can run (scripts, event attributes,
``javascript:`` links), and titles, page names and figure paths are escaped where this module
writes them.

The lab (``lab.html`` and its data ``lab-data.js``, :mod:`chunklab_core.reports.lab`): an
interactive page on the recorded runs, built by the CLI (``make site``) unless ``--no-lab``;
:func:`build_site` writes it when given its data, and the index then links to it. It is the one
page with a script, its own (the template beside ``lab.py``), which shows data as text only; it
links the site's one style sheet (``site.css``, whose last section, scoped to ``body.lab``, is the lab's).

Not handled: executing notebooks (``make notebooks`` does), math typesetting (the posts use
none), interactive outputs (JavaScript widgets), unexecuted notebooks (rendered as they are).

CLI: ``python -m chunklab_core.reports.website --out site [notebooks/01_x.ipynb ...]``.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import copy

import nbformat

from chunklab_core.core import bounds
from chunklab_core.core.html_safety import attr, escape_markdown_html, strip_active_content, text, url

from chunklab_core.core.output_dirs import OutputFolderRefused, require_output_folder, write_marker
from chunklab_core.core.paths import PROJ_ROOT
from chunklab_core.reports.posts import POSTS
from chunklab_core.reports.site_style import STYLE_FILE, write_style  # the site's one style sheet (the lab links it too)
from chunklab_core.reports.site_tables import tidy_tables
from chunklab_core.core.cli_errors import command_edge

IMAGE_DIR = "img"
# Headings of a post's closing section (the first that matches), shown first as its key findings.
KEY_SECTIONS = ("What this shows", "What to take away", "Takeaways", "What this run supports",
                "An honest reading", "The findings")
# A post that opens with its answer (a section so headed, before its closing one) is shown as it is:
# no key findings copied above the answer.
ANSWER_SECTIONS = ("The answer",)
VERSIONS_CALL = "start_post("
SECTION = re.compile(r"^##\s+(?:\d+\.\s+)?(.+?)\s*$", re.MULTILINE)

DATA_DIR_NAME = "data"  # CSV files a post links (``../data/NAME.csv``) are copied here

PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<link rel="stylesheet" href="{style}">
</head>
<body>
<header class="site">{nav}</header>
<main>
{body}
</main>
<footer class="site">{nav}</footer>
</body>
</html>
"""


@dataclass
class Post:
    """One executed post: where it is, what it is called, what it asks, and its HTML file name."""

    source: Path
    title: str
    question_html: str
    lead_figure: str | None = None  # relative path of the first figure the post draws (set by the build)

    @property
    def page(self) -> str:
        return self.source.stem + ".html"


def discover_posts(folder: Path | None = None, names: list[str] | None = None) -> list[Path]:
    """The executed posts of ``folder`` (default ``notebooks/``) in name order: ``<name>.ipynb``
    for each post of ``reports.posts.POSTS`` (or of ``names``) that is there."""
    folder = Path(folder) if folder is not None else PROJ_ROOT / "notebooks"
    names = [p.name for p in POSTS] if names is None else names
    return sorted(path for path in (folder / f"{name}.ipynb" for name in names) if path.is_file())


def _markdown_to_html(text: str) -> str:
    from nbconvert.filters.markdown import markdown2html

    return strip_active_content(markdown2html(escape_markdown_html(text)))


def subtitle(paragraph: str) -> str:
    """The index's one form of a post's subtitle: the paragraph when it is all in italics
    (``*...*``), else its first sentence set in italics."""
    text = " ".join(paragraph.split())
    if re.fullmatch(r"\*[^*].*[^*]\*", text) or re.fullmatch(r"_[^_].*[^_]_", text):
        return text
    first = re.split(r"(?<=[.!?])\s+(?=[A-Z*])", text, maxsplit=1)[0]
    return f"*{first.strip('*')}*"


def read_post(path: Path) -> tuple[Post, nbformat.NotebookNode]:
    """The post's title (first markdown heading), question (the paragraph under it), lead figure.

    Raises ``ValueError`` naming the file when the notebook has no markdown heading.
    """
    notebook = nbformat.read(path, as_version=4)
    title, question = None, ""
    for cell in notebook.cells:
        if cell.cell_type != "markdown":
            continue
        lines = cell.source.splitlines()
        heads = [i for i, line in enumerate(lines) if re.match(r"^#{1,6}\s+\S", line)]
        if not heads:
            continue
        title = re.sub(r"^#{1,6}\s+", "", lines[heads[0]]).strip()
        paragraph = []
        for line in lines[heads[0] + 1:]:
            if not line.strip():
                if paragraph:
                    break
                continue
            paragraph.append(line)
        question = _markdown_to_html(subtitle("\n".join(paragraph))) if paragraph else ""
        break
    if title is None:
        raise ValueError(f"{path}: no markdown heading (the post's title is its first '# ...' line)")
    return Post(path, title, question), notebook


def _drop_noise(notebook: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """Drop stderr streams (warnings, progress bars); errors and printed output stay visible.
    Markdown cells and outputs get their raw HTML made literal."""
    for cell in notebook.cells:
        if cell.cell_type == "markdown":
            cell.source = escape_markdown_html(cell.source)
        if cell.cell_type == "code":
            cell.outputs = [o for o in cell.outputs
                            if not (o.get("output_type") == "stream" and o.get("name") == "stderr")]
            for output in cell.outputs:
                data = output.get("data", {})
                if "text/markdown" in data:
                    source = data["text/markdown"]
                    data["text/markdown"] = escape_markdown_html("".join(source) if isinstance(source, list)
                                                                 else source)
    return notebook


def _section_of(notebook: nbformat.NotebookNode, names: tuple[str, ...]) -> tuple[int, int] | None:
    """``(first, end)`` cell positions of the first ``## `` section whose heading starts with one of ``names``."""
    starts = [(i, SECTION.search(c.source)) for i, c in enumerate(notebook.cells)
              if c.cell_type == "markdown" and SECTION.search(c.source)]
    for position, (i, match) in enumerate(starts):
        if match.group(1).startswith(names):
            end = starts[position + 1][0] if position + 1 < len(starts) else len(notebook.cells)
            return i, end
    return None


def arrange_for_reading(notebook: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """A copy of ``notebook`` that opens with its key findings and ends with its versions.

    Key findings: the cells of the closing section (:data:`KEY_SECTIONS`), copied after the
    first cell under the heading "Key findings", figures left out (they stay in the section);
    not when the post already opens with its answer (a section of :data:`ANSWER_SECTIONS` before it).
    Versions: the outputs of the cell that calls ``start_post(`` move to a last section.
    """
    notebook = copy.deepcopy(notebook)
    cells = notebook.cells
    versions = []
    for cell in cells:
        if cell.cell_type == "code" and VERSIONS_CALL in cell.source and cell.outputs:
            versions, cell.outputs = cell.outputs, []
            break
    found = _section_of(notebook, KEY_SECTIONS)
    answered = _section_of(notebook, ANSWER_SECTIONS)
    if found is not None and found[0] > 1 and not (answered is not None and answered[0] < found[0]):
        first, end = found
        copies = copy.deepcopy(cells[first:end])
        heading = SECTION.search(copies[0].source)
        copies[0].source = (copies[0].source[:heading.start()] + "## Key findings\n\n*From the closing "
                            f"section, “{heading.group(1)}”; the evidence follows.*"
                            + copies[0].source[heading.end():])
        for number, cell in enumerate(copies):
            if "id" in cell:  # a copy needs an id of its own (nbformat requires unique cell ids)
                cell["id"] = f"key-findings-{number}"
            if cell.cell_type == "code":
                cell.outputs = [o for o in cell.outputs
                                if not set(o.get("data", {})) & {"image/png", "image/jpeg", "image/svg+xml"}]
        cells[1:1] = copies
    if versions:
        cells.append(nbformat.v4.new_markdown_cell("## Versions\n\nThe packages this post ran with."))
        cell = nbformat.v4.new_code_cell("")
        cell.outputs = versions
        cells.append(cell)
    return notebook


def render_body(notebook: nbformat.NotebookNode, image_prefix: str) -> tuple[str, dict[str, bytes]]:
    """The post's HTML body without code cells, and its figures as ``{relative path: bytes}``.

    The notebook is first arranged for reading (:func:`arrange_for_reading`) and its pandas
    tables tidied (:func:`chunklab_core.reports.site_tables.tidy_tables`).
    """
    notebook = arrange_for_reading(notebook)
    from nbconvert import HTMLExporter
    from nbconvert.preprocessors import ExtractOutputPreprocessor

    exporter = HTMLExporter(template_name="basic", exclude_input=True, exclude_input_prompt=True,
                            exclude_output_prompt=True)
    extract = ExtractOutputPreprocessor(
        output_filename_template=image_prefix + "_{cell_index}_{index}{extension}")
    extract.extract_output_types = {"image/png", "image/jpeg", "image/svg+xml"}
    exporter.register_preprocessor(extract, enabled=True)
    resources = {"output_files_dir": IMAGE_DIR, "unique_key": image_prefix}
    body, resources = exporter.from_notebook_node(_drop_noise(notebook), resources=resources)
    body = present_figures(tidy_tables(body), figure_alts(notebook, image_prefix))
    files = {name: data if isinstance(data, bytes) else data.encode("utf-8")
             for name, data in resources.get("outputs", {}).items()}
    return strip_active_content(body), files


def figure_alts(notebook: nbformat.NotebookNode, image_prefix: str) -> dict[str, str]:
    """``{extracted image path: alt text}`` from each image output's ``metadata["alt"]`` (``plots.show_figure``
    puts it there); the paths are those ``ExtractOutputPreprocessor`` gives (cell index, output index)."""
    alts = {}
    for cell_index, cell in enumerate(notebook.cells):
        for index, output in enumerate(cell.get("outputs", [])):
            alt = output.get("metadata", {}).get("alt") or output.get("metadata", {}).get("image/png", {}).get("alt")
            if alt and "image/png" in output.get("data", {}):
                alts[f"{IMAGE_DIR}/{image_prefix}_{cell_index}_{index}.png"] = alt
    return alts


def present_figures(body: str, alts: dict[str, str]) -> str:
    """Every image of ``body`` with its alt text (``alts``, else a generic one naming it a figure of the
    post) and wrapped in a link to the PNG itself (click to enlarge); every table in a
    ``.table-scroll`` box (it scrolls inside the column when wider, its first column kept in view);
    links to ``../data/NAME.csv`` pointed at the site's copy (``data/NAME.csv``)."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(body, "html.parser")
    for img in soup.find_all("img"):
        src = img.get("src", "")
        img["alt"] = alts.get(src) or img.get("alt") or "A figure of this post (its caption follows)"
        img["loading"] = "lazy"
        if img.parent.name != "a":
            link = soup.new_tag("a", href=src, attrs={"class": "figure-link", "title": "Open the figure at full size"})
            img.wrap(link)
    for table in soup.find_all("table"):
        if not (table.parent.name == "div" and "table-scroll" in (table.parent.get("class") or [])):
            table.wrap(soup.new_tag("div", attrs={"class": "table-scroll"}))
    for link in soup.find_all("a", href=True):
        if link["href"].startswith(f"../{DATA_DIR_NAME}/"):
            link["href"] = link["href"][3:]
    return str(soup)


def linked_data_files(body: str) -> list[str]:
    """The ``data/...`` files a page links (copied beside the pages by :func:`build_site`)."""
    return sorted(set(re.findall(rf'href="({DATA_DIR_NAME}/[^"#?]+)"', body)))


def _nav(posts: list[Post], index: int | None) -> str:
    """Links to the index and, on a post page, to the previous and next post."""
    home = '<a href="index.html">All posts</a>'
    if index is None:
        return f"<span><strong>chunklab</strong> · a research series on retrieval for RAG</span>{home}"
    prev_link = (f'<a rel="prev" href="{url(posts[index - 1].page)}">&larr; {text(posts[index - 1].title)}</a>'
                 if index > 0 else "<span></span>")
    next_link = (f'<a rel="next" href="{url(posts[index + 1].page)}">{text(posts[index + 1].title)} &rarr;</a>'
                 if index + 1 < len(posts) else "<span></span>")
    return f"{prev_link}{home}{next_link}"


def _index_body(posts: list[Post], lab: bool = False) -> str:
    items = []
    for post in posts:
        figure = (f'<img src="{url(post.lead_figure)}" alt="Lead figure of {attr(post.title)}">'
                  if post.lead_figure else "")
        items.append(f'<li><div class="text"><h2><a href="{url(post.page)}">{text(post.title)}</a></h2>'
                     f"{post.question_html}</div>{figure}</li>")
    return ("<h1>chunklab</h1>\n<p>How should you chunk and retrieve your documents for RAG, and are the "
            "answers built on that retrieval right? Each post below is a notebook executed end to end; "
            "these pages show its prose, tables and figures without the code.</p>\n"
            + (LAB_LINK if lab else "")
            + f'<ul class="post-list">\n' + "\n".join(items) + "\n</ul>")


SITE_MARKER = ".chunklab-site"  # lists an earlier build's files: only such a folder is replaced

LAB_LINK = ('<p><a href="lab.html"><strong>The lab</strong></a>: the recorded rankings, budgets and index '
            "footprints of the series, to change and read again in your browser.</p>\n")


def build_site(out: Path, notebooks: list[Path] | None = None, lab_data: dict | None = None) -> list[Path]:
    """Render ``notebooks`` (default: every executed post) into the folder ``out``; return the pages.

    The folder is replaced as a whole, atomically from the reader's side: built in a temporary
    sibling, then swapped in; only a new or empty folder, or an earlier build (its
    :data:`SITE_MARKER` lists its files, and nothing else is there), is replaced
    (``core.output_dirs``: never a folder of your files, a tracked or an irreplaceable folder;
    :class:`~chunklab_core.core.output_dirs.OutputFolderRefused` says why). ``ValueError`` when
    there is no post to render. ``lab_data``
    (:func:`chunklab_core.reports.lab.build_lab_data`) adds the lab page.
    """
    out = Path(out)
    sources = [Path(p) for p in notebooks] if notebooks else discover_posts()
    if not sources:
        raise ValueError("no executed post notebooks/NN_*.ipynb to render (run `make notebooks` first)")
    require_output_folder(out, SITE_MARKER, inputs=sources)
    read = [read_post(path) for path in sorted(sources, key=lambda p: p.name)]
    posts = [post for post, _ in read]
    out.parent.mkdir(parents=True, exist_ok=True)
    build = Path(tempfile.mkdtemp(prefix=f".{out.name}.building-", dir=out.parent))
    try:
        (build / IMAGE_DIR).mkdir()
        write_style(build)
        pages = []
        for number, (post, notebook) in enumerate(read):
            body, files = render_body(notebook, post.source.stem)
            for name, data in files.items():
                (build / name).write_bytes(data)
            for name in linked_data_files(body):
                source = PROJ_ROOT / name
                if source.is_file():
                    (build / name).parent.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(source, build / name)
            post.lead_figure = next(iter(files), None)  # extracted in cell order: the first figure
            page = PAGE.format(title=text(post.title), style=STYLE_FILE, nav=_nav(posts, number), body=body)
            (build / post.page).write_text(page, encoding="utf-8")
            pages.append(out / post.page)
        index = PAGE.format(title="chunklab · the series", style=STYLE_FILE, nav=_nav(posts, None),
                            body=_index_body(posts, lab_data is not None))
        if lab_data is not None:
            from chunklab_core.reports import lab

            pages += [out / p.name for p in lab.write_lab(build, lab_data, _nav(posts, None))
                      if p.suffix == ".html"]
        (build / "index.html").write_text(index, encoding="utf-8")
        write_marker(build, SITE_MARKER, "make site")  # the next build may replace this folder, nothing else
        os.chmod(build, 0o755)
        if out.exists():
            stale = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-", dir=out.parent))
            os.replace(out, stale / "site")
            shutil.rmtree(stale, ignore_errors=True)
        os.replace(build, out)
    finally:
        shutil.rmtree(build, ignore_errors=True)
    return [out / "index.html", *pages]


@command_edge
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Render the executed posts to a static website.")
    parser.add_argument("notebooks", nargs="*", type=Path,
                        help="executed posts to render (default: every notebooks/NN_*.ipynb)")
    parser.add_argument("--out", type=Path, default=PROJ_ROOT / "site", help="output folder (default: site/)")
    parser.add_argument("--no-lab", action="store_true", help="leave out the lab page (it replays the recorded runs)")
    parser.add_argument("--lab-corpora", nargs="+", metavar="CORPUS",
                        help="the lab's corpora (default: the posts' own, SQuAD and NQ); a smaller lab for a quick check")
    parser.add_argument("--lab-resamples", type=bounds.int_in("resamples"), metavar="N",
                        help="bootstrap resamples of the lab's budget intervals (default: the posts' 10,000)")
    args = parser.parse_args(argv)
    try:  # before the lab's minutes of work
        require_output_folder(args.out, SITE_MARKER, inputs=args.notebooks or discover_posts())
    except OutputFolderRefused as err:
        raise OutputFolderRefused(f"{err} (with make: make site SITE_DIR=another_folder)") from None
    lab_data = None
    if not args.no_lab:
        import dataclasses

        from chunklab_core.reports import lab

        config = lab.LabConfig()
        if args.lab_corpora:
            corpora = tuple(args.lab_corpora)
            config = dataclasses.replace(config, ranking_corpora=corpora, budget_corpora=corpora,
                                         footprint_corpora=corpora)
        if args.lab_resamples:
            config = dataclasses.replace(config, resamples=args.lab_resamples)
        lab_data = lab.build_lab_data(config)
    pages = build_site(args.out, args.notebooks or None, lab_data)
    print(f"{len(pages)} pages in {args.out}: open {args.out / 'index.html'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
