"""Check the website of `make site` in a real headless browser (Debian's chromium).

For every page of the folder, at a 1280 px and at a 390 px (phone) wide window: the page loads
and its script runs after the load event, every <img> has rendered (``complete`` and
``naturalWidth > 0``) and has a real alt text (not empty, not nbconvert's "No description has
been provided"), the page has no horizontal scroll (``scrollWidth <= innerWidth``), and every
table fits its column (its width at most the column's) or is declared scrollable (inside a
``.table-scroll`` box) with its key column first and kept in view (``position: sticky``); every
relative link points to a file of the folder. On a post page at 1280 px, no figure's text is
under 9 px as shown: the smallest text's height that ``plots.png_bytes`` records in the PNG
(text chunk ``chunklab:smallest-text-px``) times the shown width over the PNG's width; and the
post's answer (a heading that starts with "The answer") starts within the first screen. The
lab page (``lab.html``, an interactive page) must also have run its
script to the end (``<body data-ready="1">``, set after its three panels are drawn) and drawn
a row in each of its three tables. Prints one line per page and exits 1 on any failure, naming page and item.

How: Chromium is run once per page with ``--headless --dump-dom`` on a copy of the page that
carries a ``<base href>`` back to the folder (so images and links resolve as in the original)
and a small script that writes its measurements, as JSON, into the DOM on the load event;
the dumped DOM is parsed here. No browser is downloaded: ``chromium`` must be installed
(``apt-get install chromium``) or named by ``--chromium`` / the ``CHROMIUM`` variable.
``--screenshots DIR`` also writes a 1280 px wide PNG of every page, to look at.

Usage: ``python scripts/check_site.py site [--screenshots /tmp/shots]``
"""

from __future__ import annotations

import argparse
import html
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from urllib.parse import unquote, urlsplit

WIDTH, HEIGHT = 1280, 900
PHONE_WIDTH, PHONE_HEIGHT = 390, 844
MIN_WINDOW = 500  # headless Chromium's narrowest window; narrower widths are measured in an iframe
MIN_TEXT_PX = 9.0
TEXT_KEY = "chunklab:smallest-text-px"
DEFAULT_ALT = "No description has been provided for this image"
ANSWER = re.compile(r"^the answer", re.I)
MARKER = "site-check-result"
LAB_PAGE = "lab.html"
PROBE = """
<script>
window.addEventListener("load", () => {
  const images = Array.from(document.images).map(img => ({
    src: img.getAttribute("src"), complete: img.complete, naturalWidth: img.naturalWidth,
    shownWidth: img.getBoundingClientRect().width, alt: img.getAttribute("alt") }));
  const main = document.querySelector("main") || document.body;
  const mainStyle = getComputedStyle(main);
  const column = main.clientWidth - parseFloat(mainStyle.paddingLeft) - parseFloat(mainStyle.paddingRight);
  const tables = Array.from(document.querySelectorAll("main table")).map(t => {
    const box = t.closest(".table-scroll");
    const first = t.querySelector("tbody tr td:first-child, tbody tr th:first-child");
    return { width: Math.max(t.scrollWidth, t.getBoundingClientRect().width), shown: box ? box.getBoundingClientRect().width : t.getBoundingClientRect().width,
             scrollable: !!box, sticky: first ? getComputedStyle(first).position === "sticky" : false,
             head: (t.querySelector("thead th:not(:empty), thead td") || {}).textContent || "" };
  });
  const answers = Array.from(document.querySelectorAll("h2, h3")).filter(h => /^the answer/i.test(h.textContent.trim()))
    .map(h => h.getBoundingClientRect().top + window.scrollY);
  const root = document.documentElement;
  const out = document.createElement("pre");
  out.id = "%s";
  out.textContent = JSON.stringify({ title: document.title, images: images,
    scrollWidth: Math.max(root.scrollWidth, document.body.scrollWidth), innerWidth: window.innerWidth,
    innerHeight: window.innerHeight, column: column, tables: tables, answers: answers,
    ready: document.body.dataset.ready || null,
    tableRows: Array.from(document.querySelectorAll("table")).map(t => t.tBodies.length ? t.tBodies[0].rows.length : 0) });
  // in the phone frame (an iframe of the phone's width: headless Chromium's window is at least 500 px wide)
  // the result goes to the frame's parent, whose DOM is the one dumped
  (window.top !== window ? window.top.document.body : document.body).appendChild(out);
});
</script>
""" % MARKER
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars", "--virtual-time-budget=15000"]


def find_chromium(name: str | None) -> str:
    """The chromium executable: ``name``, ``$CHROMIUM``, or ``chromium`` on the PATH."""
    for candidate in (name, os.environ.get("CHROMIUM"), "chromium", "chromium-browser"):
        if candidate and shutil.which(candidate):
            return shutil.which(candidate)
    raise SystemExit("error: no chromium found; install Debian's package (apt-get install chromium) "
                     "or pass --chromium PATH")


def measure(chromium: str, page: Path, profile: Path, width: int = WIDTH, height: int = HEIGHT) -> dict:
    """Load ``page`` in headless Chromium at ``width`` × ``height``; return the probe's JSON
    (``RuntimeError`` if it never ran)."""
    source = page.read_text(encoding="utf-8")
    base = f'<base href="{page.parent.resolve().as_uri()}/">'
    probed = source.replace("<head>", "<head>\n" + base, 1).replace("</body>", PROBE + "</body>", 1)
    with tempfile.TemporaryDirectory(prefix="check-site-") as tmp:
        copy = Path(tmp) / page.name
        copy.write_text(probed, encoding="utf-8")
        target, window = copy, (width, height)
        if width < MIN_WINDOW:  # a narrow frame inside a window Chromium accepts
            target = Path(tmp) / "phone-frame.html"
            target.write_text(f'<!DOCTYPE html><html><body style="margin:0"><iframe src="{copy.name}" '
                              f'style="border:0;width:{width}px;height:{height}px"></iframe></body></html>',
                              encoding="utf-8")
            window = (MIN_WINDOW, height)
        done = subprocess.run([chromium, *FLAGS, f"--window-size={window[0]},{window[1]}", f"--user-data-dir={profile}",
                               "--allow-file-access-from-files", "--dump-dom", target.as_uri()],
                              capture_output=True, text=True, timeout=120)
    found = re.search(rf'<pre id="{MARKER}">(.*?)</pre>', done.stdout, re.S)
    if done.returncode != 0 or not found:
        raise RuntimeError(f"{page.name}: the page did not finish loading in Chromium "
                           f"(exit {done.returncode}): {done.stderr.strip()[-400:]}")
    return json.loads(html.unescape(found.group(1)))


def broken_links(page: Path) -> list[str]:
    """Relative href/src targets of ``page`` that are not files of its folder."""
    text = page.read_text(encoding="utf-8")
    missing = []
    for target in re.findall(r'(?:href|src)="([^"]+)"', text):
        parts = urlsplit(target)
        if parts.scheme or target.startswith(("#", "//")):
            if parts.scheme in {"http", "https"}:
                missing.append(f"{target} (an external address: the site must work offline)")
            continue
        if not (page.parent / unquote(parts.path)).is_file():
            missing.append(target)
    return missing


def screenshot(chromium: str, page: Path, out: Path, profile: Path) -> None:
    """A full-width PNG of the page's first 4,000 px, for a person to look at."""
    subprocess.run([chromium, *FLAGS[:-1], f"--user-data-dir={profile}", f"--window-size={WIDTH},4000",
                    f"--screenshot={out}", page.resolve().as_uri()], capture_output=True, timeout=120, check=True)


def png_text(path: Path) -> dict[str, str]:
    """The tEXt chunks of the PNG file ``path`` (keyword -> text); empty for a file that is not a PNG."""
    import struct

    data = path.read_bytes() if path.is_file() else b""
    if not data.startswith(b"\x89PNG\r\n\x1a\n"):
        return {}
    found, position = {}, 8
    while position + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[position:position + 8])
        if kind == b"tEXt":
            keyword, _, value = data[position + 8:position + 8 + length].partition(b"\0")
            found[keyword.decode("latin-1")] = value.decode("latin-1")
        if kind == b"IEND":
            break
        position += 12 + length
    return found


def shown_text_px(folder: Path, image: dict) -> float | None:
    """The smallest text of ``image`` as shown: the recorded text size × shown width / PNG width
    (``None`` when the PNG records no text size)."""
    recorded = png_text(folder / unquote(urlsplit(image["src"] or "").path)).get(TEXT_KEY)
    if recorded is None or not image["naturalWidth"]:
        return None
    return float(recorded) * image["shownWidth"] / image["naturalWidth"]


def layout_problems(folder: Path, page: Path, result: dict, width: int) -> list[str]:
    """What is wrong with the measured page at ``width``: sideways scroll, tables wider than the
    column and not declared scrollable with a sticky key column, images without an alt text; at
    the desktop width on a post page, figure text under 9 px and an answer below the first screen."""
    where = f"{page.name} at {width} px"
    problems = []
    if result["innerWidth"] != width:
        problems.append(f"{where}: window is {result['innerWidth']} px wide, not {width}")
    if result["scrollWidth"] > result["innerWidth"]:
        problems.append(f"{where}: horizontal scroll ({result['scrollWidth']} px content "
                        f"in a {result['innerWidth']} px window)")
    column = result.get("column") or result["innerWidth"]
    for number, table in enumerate(result.get("tables", []), 1):
        if table["width"] <= column + 1:
            continue
        if not table["scrollable"] or table["shown"] > column + 1:
            problems.append(f"{where}: table {number} ({table['head'][:30]!r}) is {table['width']:.0f} px wide in a "
                            f"{column:.0f} px column and not declared scrollable")
        elif not table["sticky"]:
            problems.append(f"{where}: table {number} ({table['head'][:30]!r}) scrolls but its key column is not kept in view")
    is_post = page.name not in {"index.html", LAB_PAGE}
    for image in result["images"]:
        alt = (image.get("alt") or "").strip()
        if not alt or alt == DEFAULT_ALT:
            problems.append(f"{where}: image {image['src']} has no alt text")
        if is_post and width == WIDTH and image["naturalWidth"]:
            shown = shown_text_px(folder, image)
            if shown is None:
                problems.append(f"{where}: image {image['src']} records no text size ({TEXT_KEY}; draw it with "
                                "reports.plots.show_figure)")
            elif shown < MIN_TEXT_PX:
                problems.append(f"{where}: image {image['src']}'s smallest text is {shown:.1f} px as shown "
                                f"(under {MIN_TEXT_PX:.0f} px): make the figure narrower or its text larger")
    if is_post and width == WIDTH and page.name in ANSWER_PENDING:
        print(f"note: {where}: the answer-first rule is not applied yet ({ANSWER_PENDING[page.name]})")
    elif is_post and width == WIDTH:
        answers = result.get("answers") or []
        if not answers:
            problems.append(f"{where}: no section headed 'The answer…' (the post's answer, right under its title)")
        elif min(answers) > result["innerHeight"]:
            problems.append(f"{where}: the answer starts at {min(answers):.0f} px, below the first screen "
                            f"({result['innerHeight']} px)")
    return problems


# Posts not yet converted to answer-first, each with its reason (shrink this list; never grow it).
ANSWER_PENDING: dict[str, str] = {}


def check_site(folder: Path, chromium: str, screenshots: Path | None = None) -> list[str]:
    """Every problem of every page of ``folder`` (empty when all is well); prints a line per page."""
    pages = sorted(folder.glob("*.html"))
    if not (folder / "index.html").is_file():
        return [f"{folder}: no index.html (run `make site` first)"]
    problems = []
    with tempfile.TemporaryDirectory(prefix="check-site-profile-") as profile:
        for page in pages:
            try:
                result = measure(chromium, page, Path(profile))
                phone = measure(chromium, page, Path(profile), PHONE_WIDTH, PHONE_HEIGHT)
            except (RuntimeError, subprocess.TimeoutExpired) as err:
                problems.append(str(err))
                print(f"FAIL {page.name}: did not load")
                continue
            bad_images = [i["src"] for i in result["images"] if not i["complete"] or i["naturalWidth"] <= 0]
            page_problems = [f"{page.name}: image {src} did not render" for src in bad_images]
            page_problems += layout_problems(folder, page, result, WIDTH)
            page_problems += layout_problems(folder, page, phone, PHONE_WIDTH)
            page_problems += [f"{page.name}: link to a missing file {t}" for t in broken_links(page)]
            if page.name == LAB_PAGE and (result.get("ready") != "1" or len(result["tableRows"]) < 3
                                          or min(result["tableRows"], default=0) < 1):
                page_problems.append(f"{page.name}: the lab's script did not draw its panels "
                                     f"(ready={result.get('ready')!r}, table rows {result['tableRows']})")
            problems += page_problems
            print(f"{'FAIL' if page_problems else 'ok  '} {page.name}: loaded, "
                  f"{len(result['images']) - len(bad_images)}/{len(result['images'])} images rendered, "
                  f"width {result['scrollWidth']}/{result['innerWidth']} px, "
                  f"{sum(t['width'] > (result.get('column') or WIDTH) + 1 for t in result.get('tables', []))} of "
                  f"{len(result.get('tables', []))} tables scroll at {WIDTH} px")
            if screenshots is not None:
                screenshots.mkdir(parents=True, exist_ok=True)
                screenshot(chromium, page, screenshots / (page.stem + ".png"), Path(profile))
    return problems


SCREENSHOTS_MARKER = ".chunklab-screenshots"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path, nargs="?", default=Path("site"), help="the site folder (default site/)")
    parser.add_argument("--chromium", default=None, help="chromium executable (default: $CHROMIUM or chromium)")
    parser.add_argument("--screenshots", type=Path, default=None, help="also write a PNG of every page here")
    args = parser.parse_args(argv)
    if args.screenshots is not None:  # a new folder, or one this check wrote: never a folder of yours
        from chunklab_core.core.output_dirs import OutputFolderRefused, require_output_folder, write_marker

        try:
            require_output_folder(args.screenshots, SCREENSHOTS_MARKER, inputs=[args.folder],
                                  option="--screenshots", append_only=True)
        except OutputFolderRefused as err:
            print(f"check_site: {err}", file=sys.stderr)
            return 2
        args.screenshots.mkdir(parents=True, exist_ok=True)
        write_marker(args.screenshots, SCREENSHOTS_MARKER, "scripts/check_site.py --screenshots")
    problems = check_site(args.folder, find_chromium(args.chromium), args.screenshots)
    for problem in problems:
        print("problem:", problem, file=sys.stderr)
    print(f"{len(list(args.folder.glob('*.html')))} pages checked in Chromium, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
