"""The scorecard's files: CSV, JSON and one self-contained HTML page, written all or nothing.

Handles: :func:`write_scorecard` writes into a temporary folder beside ``out`` and moves it into
place only when every file is written (an existing ``out`` is replaced the same way: renamed
aside, the new folder renamed in, the old one removed; ``core.atomic_files.replace_folder``), so a failed or killed run never leaves
a half-written scorecard. Files: ``scorecard.csv`` (every stage's rows), ``scorecard.json``
(rows + per-query values, for pairing later), ``per_query_<stage>.csv``, ``scorecard.html``
(inline CSS, no script, no external resource; every string passes through ``html.escape``;
its sentences are the templates of ``report_files.md``), ``funnel.csv`` and ``funnel.png`` (the
answer funnel, the PNG also inline in the page) when a funnel step was measured, and
``comparison.csv`` when a comparison is given.

Not handled: computing anything (``scorecard``).
"""

from __future__ import annotations

import base64
import html
import io
import json
import math
from pathlib import Path
from typing import Sequence

import pandas as pd

from chunklab_core.core.atomic_files import replace_folder
from chunklab_core.core.csv_cells import frame_csv
from chunklab_core.core.output_dirs import write_marker
from chunklab_core.evaluators.funnel_headline import denominator_notes, funnel_headline
from chunklab_core.evaluators.scorecard import (STAGE_ORDER, STAGE_TITLES, Scorecard, biggest_loss, scorecard_dict,
                                                 correct_without_gold,
                                                 unit_of)

MARKER = ".chunklab-evaluate"
STYLE = """body{font-family:system-ui,sans-serif;margin:2em;max-width:70em;color:#222}
table{border-collapse:collapse;margin-bottom:1.5em}th,td{border:1px solid #ccc;padding:.25em .6em;text-align:left}
th{background:#f3f3f3}td.num{text-align:right;font-variant-numeric:tabular-nums}.nm{color:#888}
p.lead{font-size:1.15em}img{max-width:100%}"""
TEMPLATES = Path(__file__).with_suffix(".md")
NUMERIC = {"n", "value", "low", "high", "mean_a", "mean_b", "difference", "tokens_a", "tokens_b", "reached", "reached_low",
           "reached_high", "lost", "lost_low", "lost_high"}
#: Per stage, the metrics its one-line summary prefers (the first measured one; ``@k``: the largest k).
HEADLINES = {"chunking": ("coverage", "median_tokens", "n_chunks"), "embedding_index": ("ann_recall@", "exact_recall@"),
             "retrieval": ("hit@",), "reranking": ("delta_hit@", "rescued@"),
             "augmentation": ("answer_in_context", "context_recall"), "generation": ("token_f1", "exact_match"),
             "end_to_end": ("task_success", "exact_match", "latency_p95_ms")}
STAGE_COLUMNS = ["metric", "kind", "unit", "n", "value", "low", "high", "status", "definition"]


def templates() -> dict[str, str]:
    """The page's sentences: ``report_files.md``, one template per ``## name`` section."""
    out: dict[str, str] = {}
    name = None
    for line in TEMPLATES.read_text(encoding="utf-8").splitlines():
        if line.startswith("## "):
            name = line[3:].strip()
            out[name] = ""
        elif name is not None and line.strip():
            out[name] = (out[name] + " " + line.strip()).strip()
    return out


def fill(name: str, **values) -> str:
    """Template ``name`` with every value HTML-escaped (the templates' own tags are kept)."""
    return templates()[name].format(**{k: html.escape(str(v)) for k, v in values.items()})


def fmt_number(value, unit: str = "fraction") -> str:
    """A value as what it is: counts whole (thousands separated), fractions and cosines to 3
    decimals, tokens, ms and ranks to 1, empty for not measured."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, (bool, str)):
        return str(value)
    if unit == "count" or (isinstance(value, int)):
        return f"{int(round(value)):,}"
    if unit in ("tokens", "ms", "ranks"):
        return f"{value:,.1f}"
    if abs(value) >= 1e4:
        return f"{value:,.0f}"
    text = f"{value:.3f}"
    return "0.000" if text == "-0.000" else text


def _table_html(frame: pd.DataFrame, numeric: set[str] = NUMERIC, unit_of_row=None) -> str:
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in frame.columns)
    body = []
    for row in frame.to_dict(orient="records"):
        unit = unit_of_row(row) if unit_of_row else row.get("unit", "fraction")
        cells = []
        for column, value in row.items():
            cls = ' class="num"' if column in numeric else ""
            text = fmt_number(value, "count" if column == "n" else "tokens" if column.startswith("tokens") else unit) \
                if column in numeric else ("" if value is None or (isinstance(value, float) and math.isnan(value))
                                           else str(value))
            cells.append(f"<td{cls}>{html.escape(text)}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def funnel_png(funnel: pd.DataFrame, marked: Sequence[str] | None = None) -> bytes:
    """The funnel as a PNG (matplotlib, Agg canvas, no timestamp): per step, the share of
    queries that reach it with its interval, the share lost there written beside the bar, the
    bars of the steps the headline names in red (``marked``: step titles, the headline's ``tied``;
    ``None``: the step that loses the most)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(8, 0.6 * len(funnel) + 1.2), dpi=100)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    y = list(range(len(funnel)))[::-1]
    reached = funnel["reached"].astype(float).to_numpy()
    err = [reached - funnel["reached_low"].astype(float).to_numpy(),
           funnel["reached_high"].astype(float).to_numpy() - reached]
    if marked is None:
        worst = biggest_loss(funnel)
        marked = [] if worst is None else [worst["title"]]
    colors = ["#e45756" if title in marked else "#4c78a8" for title in funnel["title"]]
    ax.barh(y, reached, xerr=err, color=colors, capsize=3)
    for yi, lost in zip(y, funnel["lost"].astype(float)):
        ax.text(1.02, yi, f"lost {lost:.3f}", va="center", fontsize=9, transform=ax.get_yaxis_transform(),
                clip_on=False)
    ax.set_yticks(y, list(funnel["title"]))
    ax.set_xlim(0, 1)
    ax.set_xlabel(f"share of the {int(funnel['n'].iloc[0]):,} queries that reach the step (fraction)")
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", metadata={"Software": None})
    return buffer.getvalue()


def headline_sentence(card: Scorecard) -> str | None:
    """The funnel's headline (HTML) by the rule of ``funnel_headline``; ``None`` without a funnel."""
    h = funnel_headline(card)
    if h is None:
        return None
    count, share = (lambda v: fmt_number(int(v), "count")), fmt_number
    base = dict(n=count(h["n"]), final=share(h["final"]), final_low=share(h["final_low"]),
                final_high=share(h["final_high"]), last=h["last"])
    if h["rule"] == "no_loss":
        return fill("funnel_no_loss", n=base["n"], last=h["last"])
    lost = dict(step=h["step"], lost=share(h["lost"]), lost_low=share(h["lost_low"]), lost_high=share(h["lost_high"]))
    if h["next"] is None:
        return fill("funnel_sentence_one", **base, **lost)
    pair = dict(next=h["next"], diff=share(h["diff"]), diff_low=share(h["diff_low"]), diff_high=share(h["diff_high"]),
                confidence=f"{card.options.confidence:.0%}")
    if h["rule"] == "named":
        return fill("funnel_sentence", **base, **lost, **pair)
    tied = h["tied"]
    return fill("funnel_tied", **base, **lost, **pair,
                tied=", ".join(tied[:-1]) + " and " + tied[-1] if len(tied) > 1 else tied[0])


def _funnel_html(card: Scorecard, png: bytes | None) -> list[str]:
    parts = [f"<h2>{fill('funnel_title')}</h2>"]
    funnel = card.funnel
    missing = card.stages["funnel"].not_measured if "funnel" in card.stages else {}
    if funnel is None or funnel.empty:
        return parts + [f"<p class='lead'>{fill('funnel_empty')}</p>"]
    parts.append(f"<p class='lead'>{headline_sentence(card)}</p>")
    for note in denominator_notes(card):
        parts.append("<p>" + fill("funnel_denominator", step=note["step"], reached=fmt_number(note["reached"]),
                                  n=fmt_number(note["n"], "count"), stage=STAGE_TITLES[note["stage"]].lower(),
                                  metric=note["metric"], value=fmt_number(note["value"]),
                                  stage_n=fmt_number(note["stage_n"], "count")) + "</p>")
    if {"used_in_answer", "answer_correct"} & set(funnel["step"]):
        parts.append(f"<p>{fill('funnel_proxies')}</p>")
    if png is not None:
        parts.append(f"<p><img alt='{fill('funnel_alt')}' src='data:image/png;base64,"
                     f"{base64.b64encode(png).decode('ascii')}'></p>")
    parts.append(_table_html(funnel.drop(columns=["step"]), unit_of_row=lambda row: "fraction"))
    flag = correct_without_gold(card.stages.get("funnel"))
    if flag is not None:  # records that contradict the funnel: said, never silently counted as lost
        parts.append(f"<p class='flag'>{fill('funnel_contradiction', n=fmt_number(flag['n'], 'count'), of=fmt_number(flag['of'], 'count'), qids=', '.join(flag['qids']))}</p>")
    if missing:
        from chunklab_core.evaluators.funnel import STEP_TITLES
        parts.append(f"<p>{fill('funnel_missing', steps='; '.join(STEP_TITLES[s] for s in missing))}</p>")
    return parts


def _headline(stage: str, table: pd.DataFrame) -> dict | None:
    measured = table[table["value"].notna()]
    for prefix in HEADLINES.get(stage, ()):
        rows = measured[measured["metric"].str.startswith(prefix)]
        if len(rows):
            return rows.iloc[-1].to_dict()
    return measured.iloc[0].to_dict() if len(measured) else None


def _stage_lines(card: Scorecard) -> list[str]:
    items = []
    for stage in STAGE_ORDER:
        if stage not in card.tables:
            continue
        table = card.tables[stage]
        n_measured = int(table["value"].notna().sum())
        n_missing = len(table) - n_measured
        row = _headline(stage, table)
        title = STAGE_TITLES[stage]
        if row is None:
            items.append(fill("stage_line_none", title=title, missing=n_missing))
        elif row["kind"] == "corpus":
            items.append(fill("stage_line_corpus", title=title, metric=row["metric"], unit=row["unit"],
                              value=fmt_number(row["value"], row["unit"]), measured=n_measured, missing=n_missing))
        else:
            items.append(fill("stage_line", title=title, metric=row["metric"], value=fmt_number(row["value"], row["unit"]),
                              low=fmt_number(row["low"], row["unit"]), high=fmt_number(row["high"], row["unit"]),
                              n=fmt_number(row["n"], "count"), measured=n_measured, missing=n_missing))
    return ["<ul>" + "".join(f"<li>{item}</li>" for item in items) + "</ul>"]


def _not_measured_html(card: Scorecard) -> list[str]:
    groups: dict[str, dict[str, list[str]]] = {}
    for stage in STAGE_ORDER:
        if stage not in card.tables:
            continue
        table = card.tables[stage]
        for row in table[table["value"].isna()].to_dict(orient="records"):
            status = str(row["status"])
            needs = status.split("needs ", 1)[1] if "needs " in status else status
            groups.setdefault(needs, {}).setdefault(STAGE_TITLES[stage], []).append(row["metric"])
    if "funnel" in card.stages:
        from chunklab_core.evaluators.funnel import STEP_TITLES
        for step, needs in card.stages["funnel"].not_measured.items():
            groups.setdefault(needs, {}).setdefault(fill("funnel_title"), []).append(STEP_TITLES[step])
    if not groups:
        return []
    items = [fill("not_measured_item", needs=needs,
                  metrics="; ".join(f"{stage}: {', '.join(metrics)}" for stage, metrics in by_stage.items()))
             for needs, by_stage in groups.items()]
    return [f"<h2>{fill('not_measured_title')}</h2>", "<ul>" + "".join(f"<li>{i}</li>" for i in items) + "</ul>"]


def run_title(card: Scorecard, comparison: pd.DataFrame | None = None) -> str:
    """The page's title: it names the run (the records file), and the two sides when compared."""
    title = f"Scorecard of {card.source or 'these records'}"
    if comparison is not None:
        a, b = comparison.attrs.get("names", ("A", "B"))
        title += f" ({a}, compared with {b})"
    return title


def scorecard_html(card: Scorecard, comparison: pd.DataFrame | None = None, title: str | None = None,
                   png: bytes | None = None) -> str:
    """The page: the header (units and intervals), the answer funnel (its sentence, the figure
    ``png`` inline, its table), one line per stage, the measured rows of each stage, the A vs B
    comparison if given (with the words each side returned), then every metric not measured
    in one list grouped by what would measure it."""
    n_queries = max((len(r.qids) for r in card.stages.values()), default=0)
    title = title or run_title(card, comparison)
    parts = [f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>",
             f"<style>{STYLE}</style></head><body><h1>{html.escape(title)}</h1>",
             "<p>" + fill("header", source=card.source, n_queries=fmt_number(n_queries, "count"),
                          confidence=f"{card.options.confidence:.0%}", resamples=fmt_number(card.options.resamples, "count"),
                          seed=card.options.seed) + "</p>"]
    parts += _funnel_html(card, png)
    parts += [f"<h2>{fill('stages_title')}</h2>"] + _stage_lines(card)
    parts.append(f"<h2>{fill('tables_title')}</h2>")
    for stage in STAGE_ORDER:
        if stage in card.tables:
            table = card.tables[stage]
            measured = table[table["value"].notna()]
            if len(measured):
                parts.append(f"<h3>{html.escape(STAGE_TITLES[stage])}</h3>")
                parts.append(_table_html(measured[STAGE_COLUMNS]))
    if comparison is not None:
        names = comparison.attrs.get("names", ("A", "B"))
        parts.append(f"<h2>{fill('comparison_title', a=names[0], b=names[1])}</h2>")
        parts.append(_table_html(comparison, unit_of_row=lambda row: unit_of(str(row["metric"]))))
    parts += _not_measured_html(card)
    parts.append("</body></html>")
    return "\n".join(parts)


def write_scorecard(card: Scorecard, out: str | Path, comparison: pd.DataFrame | None = None) -> Path:
    """Write every file into ``out`` (replaced as a whole, never half-written); returns ``out``."""
    out = Path(out)

    def fill(tmp: Path) -> None:
        (tmp / "scorecard.csv").write_text(frame_csv(card.table(), index=False), encoding="utf-8", newline="")
        (tmp / "scorecard.json").write_text(json.dumps(scorecard_dict(card), indent=1, allow_nan=False), encoding="utf-8")
        for stage, result in card.stages.items():
            if result.qids and result.values:
                (tmp / f"per_query_{stage}.csv").write_text(frame_csv(result.per_query(), index=False), encoding="utf-8", newline="")
        if comparison is not None:
            (tmp / "comparison.csv").write_text(frame_csv(comparison, index=False), encoding="utf-8", newline="")
        png = None
        if card.funnel is not None and not card.funnel.empty:
            (tmp / "funnel.csv").write_text(frame_csv(card.funnel, index=False), encoding="utf-8", newline="")
            headline = funnel_headline(card)
            png = funnel_png(card.funnel, (headline or {}).get("tied", []))
            (tmp / "funnel.png").write_bytes(png)
        (tmp / "scorecard.html").write_text(scorecard_html(card, comparison, png=png), encoding="utf-8")
        write_marker(tmp, MARKER, "chunklab-evaluate")  # what core.output_dirs lets the next run replace

    replace_folder(out, fill, tmp_tag="", old_tag="old.")
    return out
