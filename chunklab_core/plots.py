"""Figures of the series, saved deterministically.

Handles: a fixed style, one function per figure kind, ``show_figure`` (display in a notebook
cell, optionally saving), and ``save_figure`` which writes PNG
(and optionally SVG) under ``paths.FIGURES_DIR`` with volatile metadata removed
(``svg.hashsalt`` fixed, no creation date, no software string), so re-execution produces
byte-identical files. Not handled: computing what is plotted (the tables come in ready).
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from . import paths

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


def save_figure(fig, name: str, folder: Path | None = None, svg: bool = False) -> Path:
    """Write ``fig`` as ``<name>.png`` (and ``.svg``) without volatile metadata; return the PNG path."""
    folder = folder or paths.FIGURES_DIR
    folder.mkdir(parents=True, exist_ok=True)
    png = folder / f"{name}.png"
    fig.savefig(png, bbox_inches="tight", metadata={"Software": None})
    if svg:
        fig.savefig(folder / f"{name}.svg", bbox_inches="tight", metadata={"Date": None, "Creator": None})
    return png


def show_figure(fig, name: str, write: bool = True, folder: Path | None = None) -> None:
    """Display ``fig`` in the notebook here, then close it; with ``write`` also :func:`save_figure` it.

    Closing keeps the inline backend from showing the figure a second time at the end of the
    cell, so a figure sits where the cell displays it, between its tables and prose.
    """
    from IPython.display import display

    if write:
        save_figure(fig, name, folder)
    display(fig)
    plt.close(fig)


def plot_metric_at_k(summary: pd.DataFrame, ks: Sequence[int], metric: str = "hit", label_col: str = "label",
                     ylabel: str = "recall@k (hit rate)", ci: pd.DataFrame | None = None):
    """One line per strategy: ``metric@k`` against k (with interval bars when ``ci`` is given)."""
    fig, ax = plt.subplots(figsize=(7, 4.2))
    for _, row in summary.iterrows():
        values = [row[f"{metric}@{k}"] for k in ks]
        line, = ax.plot(ks, values, marker="o", label=row[label_col])
        if ci is not None:
            lows = [ci.loc[row["strategy"], f"{metric}@{k}_low"] for k in ks]
            highs = [ci.loc[row["strategy"], f"{metric}@{k}_high"] for k in ks]
            ax.fill_between(ks, lows, highs, color=line.get_color(), alpha=0.12, linewidth=0)
    ax.set_xticks(list(ks))
    ax.set_xlabel("k (contexts returned)")
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=8, loc="lower right")
    return fig


def plot_recall_vs_tokens(summary: pd.DataFrame, ks: Sequence[int], label_col: str = "label"):
    """Hit rate against mean returned tokens, one curve per strategy through k = ks."""
    fig, ax = plt.subplots(figsize=(7, 4.2))
    for _, row in summary.iterrows():
        x = [row[f"tokens@{k}"] for k in ks]
        y = [row[f"hit@{k}"] for k in ks]
        ax.plot(x, y, marker="o", label=row[label_col])
        ax.annotate(f"k={ks[-1]}", (x[-1], y[-1]), fontsize=7, xytext=(3, -8), textcoords="offset points")
    ax.set_xscale("log")
    ax.set_xlabel("mean returned tokens (cl100k_base, log scale)")
    ax.set_ylabel("recall@k (hit rate)")
    ax.legend(fontsize=8, loc="lower right")
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
