"""Check the website of `make site` in a real headless browser (Debian's chromium).

For every page of the folder: the page loads and its script runs after the load event, every
<img> has rendered (``complete`` and ``naturalWidth > 0``), the page has no horizontal scroll
at a 1280 px wide window (``scrollWidth <= innerWidth``), and every relative link points to a
file of the folder; the lab page (``lab.html``, an interactive page) must also have run its
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
MARKER = "site-check-result"
LAB_PAGE = "lab.html"
PROBE = """
<script>
window.addEventListener("load", () => {
  const images = Array.from(document.images).map(img => ({
    src: img.getAttribute("src"), complete: img.complete, naturalWidth: img.naturalWidth }));
  const root = document.documentElement;
  const out = document.createElement("pre");
  out.id = "%s";
  out.textContent = JSON.stringify({ title: document.title, images: images,
    scrollWidth: Math.max(root.scrollWidth, document.body.scrollWidth), innerWidth: window.innerWidth,
    ready: document.body.dataset.ready || null,
    tableRows: Array.from(document.querySelectorAll("table")).map(t => t.tBodies.length ? t.tBodies[0].rows.length : 0) });
  document.body.appendChild(out);
});
</script>
""" % MARKER
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars", f"--window-size={WIDTH},{HEIGHT}", "--virtual-time-budget=15000"]


def find_chromium(name: str | None) -> str:
    """The chromium executable: ``name``, ``$CHROMIUM``, or ``chromium`` on the PATH."""
    for candidate in (name, os.environ.get("CHROMIUM"), "chromium", "chromium-browser"):
        if candidate and shutil.which(candidate):
            return shutil.which(candidate)
    raise SystemExit("error: no chromium found; install Debian's package (apt-get install chromium) "
                     "or pass --chromium PATH")


def measure(chromium: str, page: Path, profile: Path) -> dict:
    """Load ``page`` in headless Chromium; return the probe's JSON (``RuntimeError`` if it never ran)."""
    source = page.read_text(encoding="utf-8")
    base = f'<base href="{page.parent.resolve().as_uri()}/">'
    probed = source.replace("<head>", "<head>\n" + base, 1).replace("</body>", PROBE + "</body>", 1)
    with tempfile.TemporaryDirectory(prefix="check-site-") as tmp:
        copy = Path(tmp) / page.name
        copy.write_text(probed, encoding="utf-8")
        done = subprocess.run([chromium, *FLAGS, f"--user-data-dir={profile}", "--dump-dom", copy.as_uri()],
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
    subprocess.run([chromium, *FLAGS[:-2], f"--user-data-dir={profile}", f"--window-size={WIDTH},4000",
                    f"--screenshot={out}", page.resolve().as_uri()], capture_output=True, timeout=120, check=True)


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
            except (RuntimeError, subprocess.TimeoutExpired) as err:
                problems.append(str(err))
                print(f"FAIL {page.name}: did not load")
                continue
            bad_images = [i["src"] for i in result["images"] if not i["complete"] or i["naturalWidth"] <= 0]
            page_problems = [f"{page.name}: image {src} did not render" for src in bad_images]
            if result["innerWidth"] != WIDTH:
                page_problems.append(f"{page.name}: window is {result['innerWidth']} px wide, not {WIDTH}")
            if result["scrollWidth"] > result["innerWidth"]:
                page_problems.append(f"{page.name}: horizontal scroll ({result['scrollWidth']} px content "
                                     f"in a {result['innerWidth']} px window)")
            page_problems += [f"{page.name}: link to a missing file {t}" for t in broken_links(page)]
            if page.name == LAB_PAGE and (result.get("ready") != "1" or len(result["tableRows"]) < 3
                                          or min(result["tableRows"], default=0) < 1):
                page_problems.append(f"{page.name}: the lab's script did not draw its panels "
                                     f"(ready={result.get('ready')!r}, table rows {result['tableRows']})")
            problems += page_problems
            print(f"{'FAIL' if page_problems else 'ok  '} {page.name}: loaded, "
                  f"{len(result['images']) - len(bad_images)}/{len(result['images'])} images rendered, "
                  f"width {result['scrollWidth']}/{result['innerWidth']} px")
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
