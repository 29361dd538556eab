"""Figures of the series, saved deterministically.

Handles: a fixed style, one function per figure kind, ``show_figure`` (display in a notebook
cell with its caption and alt text, optionally saving), and ``save_figure`` which writes PNG
(and optionally SVG) under ``paths.FIGURES_DIR`` with volatile metadata removed
(``svg.hashsalt`` fixed, no creation date, no software string), so re-execution produces
byte-identical files. Every PNG carries the height in pixels of its smallest text
(:data:`MIN_TEXT_KEY`, a PNG text chunk: :func:`smallest_text_px`), so a page can check that its
figures' text stays legible at the width it shows them (``scripts/check_site.py``). Captions and
alt texts live in :mod:`chunklab_core.reports.figure_text`, one entry per figure name.
Not handled: computing what is plotted (the tables come in ready).
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from chunklab_core.core import paths
from chunklab_core.core.atomic_files import atomic_write
from chunklab_core.evaluation.measures import column, interval_columns

plt.rcParams.update(
    {
        "svg.hashsalt": "chunklab",
        "figure.dpi": 110,
        "savefig.dpi": 110,
        "axes.spines.top": False,
        "axes.spines.right": False,
        "axes.grid": True,
        "grid.alpha": 0.3,
        "font.size": 10,
    }
)


MIN_TEXT_KEY = "chunklab:smallest-text-px"  # PNG text chunk: the smallest text's height in the PNG's pixels


def smallest_text_px(fig, dpi: float | None = None) -> float:
    """The font size, in pixels of the saved PNG, of the smallest visible non-empty text of ``fig``.

    Font size in points × dpi / 72 (a point is 1/72 inch): what a reader sees at the PNG's natural
    size; a page that shows the PNG at a fraction of its width scales it by that fraction.
    """
    from matplotlib.text import Text

    dpi = dpi or plt.rcParams["savefig.dpi"]
    if dpi == "figure":
        dpi = fig.dpi
    sizes = [t.get_fontsize() for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]
    return round(min(sizes, default=plt.rcParams["font.size"]) * float(dpi) / 72, 2)


def png_bytes(fig) -> bytes:
    """``fig`` as PNG bytes: tight bounding box, no software string, the smallest text's size recorded."""
    import io

    buffer = io.BytesIO()
    fig.canvas.draw()  # tick labels exist only once drawn
    fig.savefig(buffer, format="png", bbox_inches="tight",
                metadata={"Software": None, MIN_TEXT_KEY: f"{smallest_text_px(fig):.2f}"})
    return buffer.getvalue()


def save_figure(fig, name: str, folder: Path | None = None, svg: bool = False) -> Path:
    """Write ``fig`` as ``<name>.png`` (and ``.svg``) without volatile metadata; return the PNG path."""
    folder = folder or paths.FIGURES_DIR
    folder.mkdir(parents=True, exist_ok=True)
    png = folder / f"{name}.png"
    data = png_bytes(fig)
    atomic_write(png, lambda tmp: tmp.write_bytes(data))
    if svg:
        fig.savefig(folder / f"{name}.svg", bbox_inches="tight", metadata={"Date": None, "Creator": None})
    return png


def show_figure(fig, name: str, write: bool = True, folder: Path | None = None) -> None:
    """Display ``fig`` in the notebook here with its caption, then close it; with ``write`` also save it.

    The PNG shown is the one saved (:func:`png_bytes`), its alt text in the output's metadata
    (the website writes it into ``<img alt>``), its caption as a Markdown line under it; both
    come from :func:`chunklab_core.reports.figure_text.figure_text` (``KeyError`` for a figure
    without an entry). Closing keeps the inline backend from showing the figure a second time.
    """
    from IPython.display import Image, Markdown, display

    from chunklab_core.reports.figure_text import figure_text

    text = figure_text(name)
    data = png_bytes(fig)
    if write:
        folder = folder or paths.FIGURES_DIR
        folder.mkdir(parents=True, exist_ok=True)
        atomic_write(folder / f"{name}.png", lambda tmp: tmp.write_bytes(data))
    display(Image(data=data, format="png", metadata={"alt": text.alt}))
    display(Markdown(f"*Figure: {text.caption}*"))
    plt.close(fig)


# Strategy families share a hue; members differ by shade, line style and marker, so eleven
# strategies stay distinguishable in one panel (and in grey print, by style and marker).
FAMILY_COLOURS = {
    "fixed": ("#08306b", "#2171b5", "#6baed6", "#4292c6", "#084594"),
    "tokens": ("#00441b", "#41ab5d"),
    "recursive": ("#e7298a",),
    "sentence": ("#d94801",),
    "structure": ("#6a51a3",),
    "parent": ("#b8860b",),
    "semantic": ("#a50f15", "#ef3b2c", "#fc9272"),
    "other": ("#525252",),
}
FAMILY_OF = {"fixed_tokens": "tokens", "fixed": "fixed", "recursive": "recursive", "sentence": "sentence",
             "structure": "structure", "parent": "parent", "semantic": "semantic"}
LINE_STYLES = ("-", "--", ":", "-.")
MARKERS = ("o", "s", "^", "D", "v")


def strategy_family(strategy: str) -> str:
    """The family a registered strategy name belongs to (by its prefix), else "other"."""
    for prefix, family in FAMILY_OF.items():
        if strategy.startswith(prefix):
            return family
    return "other"


def strategy_styles(strategies: Sequence[str]) -> dict[str, dict]:
    """Matplotlib keyword arguments per strategy: colour by family, shade/line style/marker within it."""
    seen: dict[str, int] = {}
    styles = {}
    for strategy in strategies:
        family = strategy_family(strategy)
        index = seen.get(family, 0)
        seen[family] = index + 1
        colours = FAMILY_COLOURS[family]
        styles[strategy] = {"color": colours[index % len(colours)], "linestyle": LINE_STYLES[index % len(LINE_STYLES)],
                            "marker": MARKERS[index % len(MARKERS)]}
    return styles


def plot_metric_at_k(summary: pd.DataFrame, ks: Sequence[int], metric: str = "hit", label_col: str = "label",
                     ylabel: str = "recall@k (hit rate)", ci: pd.DataFrame | None = None):
    """One line per strategy: ``metric@k`` against k (with interval bars when ``ci`` is given)."""
    fig, ax = plt.subplots(figsize=(7, 4.2))
    for _, row in summary.iterrows():
        values = [row[column(metric, k)] for k in ks]
        line, = ax.plot(ks, values, marker="o", label=row[label_col])
        if ci is not None:
            bounds = [interval_columns(column(metric, k)) for k in ks]
            lows = [ci.loc[row["strategy"], low] for low, _ in bounds]
            highs = [ci.loc[row["strategy"], high] for _, high in bounds]
            ax.fill_between(ks, lows, highs, color=line.get_color(), alpha=0.12, linewidth=0)
    ax.set_xticks(list(ks))
    ax.set_xlabel("k (contexts returned)")
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=8, loc="lower right")
    return fig


def plot_recall_vs_tokens(summary: pd.DataFrame, ks: Sequence[int], label_col: str = "label"):
    """Hit rate against mean returned tokens, one curve per strategy through k = ks."""
    fig, ax = plt.subplots(figsize=(8.5, 4.2))
    styles = strategy_styles(list(summary["strategy"])) if "strategy" in summary else {}
    for _, row in summary.iterrows():
        x = [row[column("tokens", k)] for k in ks]
        y = [row[column("hit", k)] for k in ks]
        ax.plot(x, y, label=row[label_col], markersize=4, **styles.get(row.get("strategy"), {"marker": "o"}))
    ax.set_xscale("log")
    ax.set_xlabel("mean returned tokens (cl100k_base, log scale)")
    ax.set_ylabel("recall@k (hit rate)")
    ax.set_title(f"each curve runs through k = {', '.join(str(k) for k in ks)} (left to right)", fontsize=9)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))  # beside the curves, not over them
    fig.tight_layout()
    return fig


def plot_size_distributions(sizes: dict[str, np.ndarray], xlabel: str = "tokens per chunk (cl100k_base)"):
    """Horizontal box plots of chunk sizes, one row per strategy label."""
    labels = list(sizes)
    fig, ax = plt.subplots(figsize=(7, 0.45 * len(labels) + 1.2))
    ax.boxplot([sizes[label] for label in labels], vert=False, showfliers=True,
               flierprops={"markersize": 2, "alpha": 0.4})
    ax.set_yticks(range(1, len(labels) + 1), labels)
    ax.set_xscale("log")
    ax.set_xlabel(xlabel)
    return fig


def plot_intervals(table: pd.DataFrame, value: str, low: str, high: str, label_col: str = "label",
                   xlabel: str = ""):
    """Dot-and-whisker plot of one metric with its interval, sorted by the value."""
    ordered = table.sort_values(value)
    fig, ax = plt.subplots(figsize=(7, 0.42 * len(ordered) + 1.2))
    y = np.arange(len(ordered))
    ax.errorbar(ordered[value], y, xerr=[ordered[value] - ordered[low], ordered[high] - ordered[value]],
                fmt="o", capsize=3)
    ax.set_yticks(y, ordered[label_col])
    ax.set_xlabel(xlabel or value)
    return fig
