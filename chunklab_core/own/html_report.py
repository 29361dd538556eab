"""The HTML report of a run on your own documents, built without a notebook kernel.

Handles: one self-contained ``report.html`` that reads top-down -- the recommendation box
(``recommendation.box``), each scope's candidates as a table with a caption and only that
scope's warnings, recall@k with 95% intervals, what the recall costs in tokens, chunk health,
headings and advice, approximately matched gold, notes caught while computing, then the
settings and package versions. Every string that reaches the page (file names, headings, gold,
questions, advice, strategy labels, numbers) goes through ``html.escape`` in one place
(:func:`esc`), so a file named ``<img src=x onerror=alert(1)>.md`` is shown as text, never run;
table cells are never cut (no "…"); figures are embedded as base64 PNG.

Not handled: computing anything (``own.pipeline``), interactive elements, scripts (the page has
none).
"""

from __future__ import annotations

import base64
import html
import io
from typing import Iterable

import numpy as np
import pandas as pd

from chunklab_core.evaluation.measures import column

STYLE = """
body { font-family: system-ui, sans-serif; max-width: 70rem; margin: 2rem auto; padding: 0 1rem; color: #222; }
.box { border: 2px solid #1f6feb; border-radius: 6px; padding: 0.8rem 1.2rem; background: #f3f8ff; }
.box dt { font-weight: 600; float: left; clear: left; width: 8.5rem; }
.box dd { margin-left: 9rem; margin-bottom: 0.4rem; }
table { border-collapse: collapse; margin: 0.5rem 0 1.5rem; font-size: 0.85rem; }
caption { caption-side: top; text-align: left; font-size: 0.9rem; padding-bottom: 0.3rem; color: #444; }
th, td { border: 1px solid #ccc; padding: 0.2rem 0.5rem; text-align: left; vertical-align: top; }
th { background: #f4f4f4; }
.warn { color: #8a4b00; }
img { max-width: 100%; }
"""


def esc(value) -> str:
    """``value`` as HTML text: ``str(value)`` with ``& < > " '`` escaped."""
    return html.escape(str(value), quote=True)


def cell_text(value) -> str:
    """A table cell as plain text: floats to 3 decimals, NaN/None as "—", booleans yes/no."""
    if value is None or (isinstance(value, (float, np.floating)) and np.isnan(value)):
        return "—"
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, (float, np.floating)):
        return f"{value:,.3f}"
    if isinstance(value, (int, np.integer)):
        return f"{value:,}"
    return str(value)


def table(frame: pd.DataFrame, caption: str, index: bool | None = None) -> str:
    """An HTML table of ``frame`` with a caption; every header and cell escaped and shown whole."""
    index = not isinstance(frame.index, pd.RangeIndex) if index is None else index
    headers = ([esc(frame.index.name or "")] if index else []) + [esc(c) for c in frame.columns]
    rows = []
    for key, row in frame.iterrows():
        cells = ([f"<th>{esc(cell_text(key))}</th>"] if index else []) + \
                [f"<td>{esc(cell_text(v))}</td>" for v in row.tolist()]
        rows.append("<tr>" + "".join(cells) + "</tr>")
    head = "<tr>" + "".join(f"<th>{h}</th>" for h in headers) + "</tr>"
    return f"<table><caption>{esc(caption)}</caption><thead>{head}</thead><tbody>{''.join(rows)}</tbody></table>"


def items(lines: Iterable[str], css: str = "") -> str:
    """An escaped bullet list (empty string for no lines)."""
    lines = list(lines)
    if not lines:
        return ""
    attr = f' class="{css}"' if css else ""
    return f"<ul{attr}>" + "".join(f"<li>{esc(line)}</li>" for line in lines) + "</ul>"


def figure(fig) -> str:
    """A matplotlib figure, or the PNG bytes it was already saved as (``own.report.figure_png``: drawn
    once for the file and the page), as an embedded PNG (no timestamp in its metadata)."""
    if isinstance(fig, bytes):
        png = fig
    else:
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png", dpi=110, bbox_inches="tight", metadata={"Software": None})
        png = buffer.getvalue()
    data = base64.b64encode(png).decode("ascii")
    return f'<p><img alt="figure" src="data:image/png;base64,{data}"></p>'


def box_html(lines: list[tuple[str, str]]) -> str:
    """The recommendation box: one ``<dt>``/``<dd>`` pair per line of ``recommendation.box``."""
    body = "".join(f"<dt>{esc(label)}</dt><dd>{esc(text)}</dd>" for label, text in lines)
    return f'<div class="box"><h2>Recommendation</h2><dl>{body}</dl></div>'


def _tokens(value) -> str:
    return "—" if value is None or np.isnan(value) else f"{value:,.0f}"


def scope_table(rec, k: int) -> pd.DataFrame:
    """The candidates of one scope at k chunks, as the decision engine decided them: mean recall@k,
    leader − candidate with its paired 95% interval under the design shown (and the question-level one
    where questions share documents), the engine's word and the tokens at the recall target."""
    v = rec.verdict
    rows = []
    for name in sorted(v.names, key=lambda n: -v.means[n]):
        iv = v.intervals.get(name)
        gap = "—" if iv is None else f"{iv['diff']:+.3f} [{iv['low']:+.3f}, {iv['high']:+.3f}]"
        row = {"candidate": name, column("recall", k): v.means[name], "leader − candidate [95% CI]": gap}
        if v.design != "questions":
            row["over questions [95% CI]"] = ("—" if iv is None else
                                              f"[{iv['question low']:+.3f}, {iv['question high']:+.3f}]")
        rows.append({**row, "decision": v.words[name] + (" (pick)" if name == v.pick else ""),
                     "tokens at target": _tokens(rec.tokens_at_target.get(name, np.nan))})
    return pd.DataFrame(rows)


def render(result, figures: dict) -> str:
    """The whole page of an ``own.pipeline.OwnResult``; ``figures``: name -> matplotlib figure."""
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<title>chunklab-own report</title>"
            f"<style>{STYLE}</style></head><body>\n" + body(result, figures) + "\n</body></html>\n")


def body(result, figures: dict) -> str:
    """The page's content (also what the report notebook displays)."""
    from chunklab_core.own.report import config_text, interval_table

    config, k, target = result.config, result.config.k, result.config.recall_target
    n = len(result.corpus.questions)
    parts = [f"<h1>Which chunking should you use on your documents?</h1>",
             f"<p>{esc(len(result.corpus.documents))} documents in {esc(result.docs)}, {esc(n)} questions from "
             f"{esc(result.questions)}; recall@{esc(k)} (share of a question's gold slots found in the top {esc(k)} "
             f"contexts), {esc(f'{config.resamples:,}')} paired resamples, seed {esc(config.seed)}.</p>",
             box_html(result.box)]
    margin = result.recommendations[0].verdict.margin if result.recommendations else 0.0
    parts.append("<h2>Each retriever's candidates at k chunks</h2>"
                 f"<p>The secondary view, decided by the same engine as the box's decision: per candidate the paired "
                 f"95% interval of leader − candidate over your questions (and over your documents where questions "
                 f"share them). <b>equivalent</b>: every interval lies inside ±{esc(f'{margin:g}')} (or the two are "
                 "equal on every question); <b>ruled out</b>: every interval lies above 0; <b>undecided</b>: "
                 "anything else. The <b>pick</b> is the simplest of the leader and its equivalents (no model before "
                 "a model, fewer parameters, fewer tokens per context).</p>")
    from chunklab_core.own.recommendation import primary

    first = primary(result.recommendations) if result.recommendations else None
    ordered = [first, *[r for r in result.recommendations if r is not first]] if first else []
    if not ordered:
        parts.append("<p>Only one cell was run: there is nothing to compare it with.</p>")
    for rec in ordered:
        caption = (f"{rec.scope}, recall@{k}: {rec.verdict.headline()}; paired intervals, {rec.verdict.design}, "
                   f"n = {rec.verdict.n_questions}.")
        parts.append(f"<h3>{esc(rec.scope)}</h3>" + table(scope_table(rec, k), caption, index=False))
        parts.append(items([f"Chunk health: {w}" for w in rec.warnings] +
                           [f"Caution: {w}" for w in rec.verdict.warnings], "warn"))
    parts.append("<h2>Recall@k with 95% intervals</h2>")
    parts.append(table(interval_table(result.summary, k),
                       f"recall@{k} [percentile bootstrap 95% interval over the questions], strategy × retriever; "
                       "overlapping intervals do not settle a comparison, the paired verdicts above do."))
    if "recall_intervals" in figures:
        parts.append(figure(figures["recall_intervals"]))
    parts.append("<h2>What the recall costs in tokens</h2>")
    targets = result.targets.drop(columns=["strategy"]).rename(columns={"label": "strategy"})
    parts.append(table(targets, f"The smallest k whose mean slot recall reaches {target:.2f}, and the mean tokens "
                                "returned there (— where no k ≤ 10 reaches it)."))
    if "recall_vs_tokens" in figures:
        parts.append(figure(figures["recall_vs_tokens"]))
    parts.append(table(result.budget, f"Mean slot recall when a question may read this many tokens (contexts in rank "
                                      f"order while they fit); dense and hybrid with {config.models[0]}."))
    parts.append("<h2>Chunk health</h2>")
    columns = [c for c in ["strategy", "n_chunks", "median_tokens", "pct_fragments", "pct_over_strategy_max",
                           "boundary_ok", "tables_intact", "structural_integrity", "share truncated"]
               if c in result.health]
    parts.append(table(result.health[columns], "What each strategy produced, independent of the questions: "
                       "fragments are chunks under 200 characters; share truncated is the share of chunks longer "
                       "than the embedding model reads (it never sees their end; BM25 is not affected)."))
    parts.append("<h2>Headings and advice on your questions</h2>")
    parts.append(items(result.advice) or "<p>No advice: every document has headings, and no gold snippet is a "
                                         "single short word, a bare number or found in several documents.</p>")
    parts.append(table(result.headings, "Headings found per document (structure-aware chunking cuts at them)."))
    if len(result.approximate):
        parts.append(table(result.approximate, "Gold snippets matched only approximately (fuzzy score; 1.00 = "
                                               "exact), lowest first: copy the matched text into your questions file."))
    else:
        parts.append("<p>Every gold snippet was found exactly.</p>")
    if result.notes:
        parts.append("<h2>Notes raised while computing</h2>" + items(result.notes))
    parts.append("<h2>Settings and versions</h2>")
    parts.append(f"<p>{esc(config_text(config, result.config_path, result.loader_notes))}</p>")
    parts.append(table(result.corpus_table, "The corpus."))
    parts.append(table(pd.DataFrame([result.versions]), "Package versions of this run.", index=False))
    return "\n".join(parts)
