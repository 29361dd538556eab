"""The scorecard's files: CSV, JSON and one self-contained HTML page, written all or nothing.

Handles: :func:`write_scorecard` writes into a temporary folder beside ``out`` and moves it into
place only when every file is written (an existing ``out`` is replaced the same way: renamed
aside, the new folder renamed in, the old one removed; ``core.atomic_files.replace_folder``), so a failed or killed run never leaves
a half-written scorecard. Files: ``scorecard.csv`` (every stage's rows), ``scorecard.json``
(rows + per-query values, for pairing later), ``per_query_<stage>.csv``, ``scorecard.html``
(inline CSS, no script, no external resource; every string passes through ``html.escape``),
and ``comparison.csv`` when a comparison is given.

Not handled: computing anything (``scorecard``).
"""

from __future__ import annotations

import html
import json
import math
from pathlib import Path

import pandas as pd

from chunklab_core.core.atomic_files import replace_folder
from chunklab_core.evaluators.scorecard import STAGE_ORDER, STAGE_TITLES, Scorecard, scorecard_dict

STYLE = """body{font-family:system-ui,sans-serif;margin:2em;max-width:70em;color:#222}
table{border-collapse:collapse;margin-bottom:1.5em}th,td{border:1px solid #ccc;padding:.25em .6em;text-align:left}
th{background:#f3f3f3}td.num{text-align:right;font-variant-numeric:tabular-nums}.nm{color:#888}"""


def _fmt(value) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, float):
        return f"{value:.4g}" if abs(value) >= 1e4 else f"{value:.3f}"
    return str(value)


def _table_html(frame: pd.DataFrame, numeric: set[str]) -> str:
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in frame.columns)
    body = []
    for row in frame.itertuples(index=False):
        cells = []
        for column, value in zip(frame.columns, row):
            cls = ' class="num"' if column in numeric else ""
            text = _fmt(value)
            if column == "status" and str(value).startswith("not measured"):
                cls = ' class="nm"'
            cells.append(f"<td{cls}>{html.escape(text)}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def scorecard_html(card: Scorecard, comparison: pd.DataFrame | None = None, title: str = "Pipeline scorecard") -> str:
    """The page: one table per stage (value with its 95% interval, or "not measured" and the
    input that would measure it), then the A vs B comparison if given."""
    parts = [f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>",
             f"<style>{STYLE}</style></head><body><h1>{html.escape(title)}</h1>",
             f"<p>{html.escape(f'Source: {card.source}. Intervals: {card.options.confidence:.0%} percentile bootstrap over queries ({card.options.resamples} resamples, seed {card.options.seed}); clustered by document where each query names one. Not measured is empty, never 0.')}</p>"]
    numeric = {"n", "value", "low", "high", "mean_a", "mean_b", "difference"}
    for stage in STAGE_ORDER:
        if stage in card.tables:
            parts.append(f"<h2>{html.escape(STAGE_TITLES[stage])}</h2>")
            parts.append(_table_html(card.tables[stage].drop(columns=["stage"]), numeric))
    if comparison is not None:
        parts.append("<h2>Paired comparison (A − B on the same queries)</h2>")
        parts.append(_table_html(comparison, numeric))
    parts.append("</body></html>")
    return "\n".join(parts)


def write_scorecard(card: Scorecard, out: str | Path, comparison: pd.DataFrame | None = None) -> Path:
    """Write every file into ``out`` (replaced as a whole, never half-written); returns ``out``."""
    out = Path(out)

    def fill(tmp: Path) -> None:
        card.table().to_csv(tmp / "scorecard.csv", index=False)
        (tmp / "scorecard.json").write_text(json.dumps(scorecard_dict(card), indent=1, allow_nan=False), encoding="utf-8")
        for stage, result in card.stages.items():
            if result.qids and result.values:
                result.per_query().to_csv(tmp / f"per_query_{stage}.csv", index=False)
        if comparison is not None:
            comparison.to_csv(tmp / "comparison.csv", index=False)
        (tmp / "scorecard.html").write_text(scorecard_html(card, comparison), encoding="utf-8")

    replace_folder(out, fill, tmp_tag="", old_tag="old.")
    return out
