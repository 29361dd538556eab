"""Tables of the website as a reader expects them: no row numbers, text left, numbers right, estimate and interval in one cell.

Handles, on the HTML pandas writes for a DataFrame (``<table class="dataframe">``) inside a
rendered post (:func:`tidy_tables`):

* the index column is dropped when it is pandas' default row numbering (0, 1, 2, ... with no
  name); a named or meaningful index (a strategy, a judge) is kept as the first column;
* every cell whose text is a number, a share (``12.5%``), or an estimate with its interval
  (``0.910 [0.890, 0.929]``) gets the class ``num`` (right-aligned by the page's style);
  every other cell is text (left-aligned); a header is aligned as its column (right when
  every cell of the column is a number), not by pandas' right-aligned header row;
* an estimate and its interval bounds shown in separate columns are merged into one cell
  ``estimate [low, high]``: the bounds are the column pairs ``<name> low`` / ``<name> high``
  (or ``<name>_low`` / ``<name>_high``) of a column ``<name>``, and a bare ``low`` / ``high``
  (or ``ci_low`` / ``ci_high``) pair that directly follows the column it bounds. Bounds
  without an estimate column are left as they are.

Only the rendering changes: the notebooks and their CSV tables keep every column. Not
handled: tables that are not pandas' (Markdown tables written in prose cells are left alone),
multi-level headers (left as they are).
"""

from __future__ import annotations

import re

from bs4 import BeautifulSoup

__all__ = ["tidy_tables", "is_number_text", "interval_pairs"]

NUMBER = r"[-+−]?(?:\d[\d,]*(?:\.\d+)?|\.\d+)(?:e[-+]?\d+)?%?"
NUMBER_TEXT = re.compile(rf"^(?:{NUMBER}|nan|NaN|inf|-inf|n/a)(?:\s*\[\s*{NUMBER}\s*,\s*{NUMBER}\s*\])?$")


def is_number_text(text: str) -> bool:
    """True for ``0.5``, ``-3``, ``1,234``, ``12.5%``, ``NaN``, ``0.910 [0.890, 0.929]``."""
    return bool(NUMBER_TEXT.match(" ".join(text.split())))


def interval_pairs(headers: list[str]) -> dict[int, tuple[int, int]]:
    """``{estimate column: (low column, high column)}`` by the naming rules of the module docstring."""
    position = {name: i for i, name in enumerate(headers)}
    pairs: dict[int, tuple[int, int]] = {}
    used: set[int] = set()
    for i, name in enumerate(headers):
        for low_name, high_name in ((f"{name} low", f"{name} high"), (f"{name}_low", f"{name}_high")):
            if low_name in position and high_name in position:
                pairs[i] = (position[low_name], position[high_name])
                used.update(pairs[i])
                break
    for i, name in enumerate(headers[:-1]):
        bare = {("low", "high"), ("ci_low", "ci_high"), ("ci low", "ci high")}
        if (name, headers[i + 1]) in bare and i >= 1 and i not in used and (i - 1) not in pairs \
                and (i - 1) not in used:
            pairs[i - 1] = (i, i + 1)
            used.update((i, i + 1))
    return pairs


def _rows(table) -> list:
    return [row for section in table.find_all(["thead", "tbody"], recursive=False)
            for row in section.find_all("tr", recursive=False)] or table.find_all("tr")


def _default_index(table) -> bool:
    """pandas' unnamed 0, 1, 2, ... index: a first ``th`` per body row holding its position."""
    body = table.find("tbody")
    head = table.find("thead")
    if body is None or head is None or len(head.find_all("tr", recursive=False)) != 1:
        return False
    first_head = head.find("tr").find(["th", "td"])
    if first_head is None or first_head.get_text(strip=True):
        return False
    rows = body.find_all("tr", recursive=False)
    for position, row in enumerate(rows):
        cell = row.find(["th", "td"])
        if cell is None or cell.name != "th" or cell.get_text(strip=True) != str(position):
            return False
    return bool(rows)


def _tidy(table) -> None:
    if _default_index(table):
        for row in _rows(table):
            first = row.find(["th", "td"])
            if first is not None:
                first.decompose()
    head = table.find("thead")
    body = table.find("tbody")
    if head is not None and body is not None and len(head.find_all("tr", recursive=False)) == 1:
        header_cells = head.find("tr").find_all(["th", "td"], recursive=False)
        headers = [cell.get_text(" ", strip=True) for cell in header_cells]
        offset = 0
        rows = body.find_all("tr", recursive=False)
        if rows:
            width = len(rows[0].find_all(["th", "td"], recursive=False))
            offset = width - len(headers)  # a kept index column has no header cell of its own
        pairs = interval_pairs(headers)
        drop = sorted({j for pair in pairs.values() for j in pair}, reverse=True)
        for row in rows:
            cells = row.find_all(["th", "td"], recursive=False)
            if len(cells) != len(headers) + offset:
                continue
            for estimate, (low, high) in pairs.items():
                a, lo, hi = (cells[k + offset].get_text(strip=True) for k in (estimate, low, high))
                if is_number_text(lo) and is_number_text(hi) and lo not in ("nan", "NaN") \
                        and hi not in ("nan", "NaN"):
                    cells[estimate + offset].string = f"{a} [{lo}, {hi}]"
            for j in drop:
                cells[j + offset].decompose()
        for j in drop:
            header_cells[j].decompose()
        for estimate in pairs:
            header_cells[estimate].string = f"{headers[estimate]} [95% interval]"
    numeric: dict[int, bool] = {}
    for row in (body.find_all("tr", recursive=False) if body is not None else []):
        for k, cell in enumerate(row.find_all(["td", "th"], recursive=False)):
            number = is_number_text(cell.get_text(strip=True))
            numeric[k] = numeric.get(k, True) and number
            if number:
                cell["class"] = [*cell.get("class", []), "num"]
    if head is not None:
        for row in head.find_all("tr", recursive=False):
            if "style" in row.attrs:  # pandas right-aligns every header; the page aligns by column
                del row["style"]
            cells = row.find_all(["th", "td"], recursive=False)
            if head is not None and body is not None and body.find("tr") is not None:
                width = len(body.find("tr").find_all(["th", "td"], recursive=False))
                for k, cell in enumerate(cells, start=width - len(cells)):
                    if numeric.get(k):
                        cell["class"] = [*cell.get("class", []), "num"]


def tidy_tables(body: str) -> str:
    """``body`` with every pandas table tidied (module docstring); other HTML unchanged."""
    if "dataframe" not in body:
        return body
    soup = BeautifulSoup(body, "html.parser")
    for table in soup.find_all("table", class_="dataframe"):
        _tidy(table)
    return str(soup)
