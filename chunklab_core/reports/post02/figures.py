"""Figures of post 02: each cell in the measure its corpus is read by, and each strategy's score
within a context budget, every point with its 95% interval.

Handles: :func:`plot_matrix_by_measure` (figure ``02_matrix``: one panel per corpus, strategies
as rows, one marker per retriever with its interval, the axis naming the corpus's measure,
``post02.intervals.read_by_intervals``) and :func:`plot_budget_curves` (figure
``02_recall_vs_tokens``: the corpus's declared measure against the context budget, one row per
kind of document and one column per retriever, ``post02.intervals.budget_intervals``). Text is
8 points or more at 8.5 inches wide, so about 11 px at the site's column width
(``reports.plots.smallest_text_px``). Each panel names its sample by the label the notebook passes
(``reports.samples``). Saving (without volatile metadata) is
:func:`chunklab_core.reports.plots.show_figure`. Not handled: computing the intervals
(``post02.intervals``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from chunklab_core.chunking import strategy_label
from chunklab_core.decision.engine import FIT_SHARE
from chunklab_core.reports.plots import strategy_styles

__all__ = ["plot_matrix_by_measure", "plot_budget_curves", "panel_title"]


def panel_title(label: str, width: int | None = None) -> str:
    """A sample label on two lines, the data set above its counts (``SQuAD v1.1\\n2,000 questions from 48 articles``);
    with ``width``, the counts wrapped at that many characters."""
    head, _, rest = label.partition(", ")
    if width is None or not rest:
        return label.replace(", ", "\n", 1)
    import textwrap

    return "\n".join([head, *textwrap.wrap(rest, width)])


MARKS = (("o", "#1b9e77"), ("s", "#d95f02"), ("^", "#7570b3"), ("D", "#525252"))  # per retriever, in table order
MEASURE_WORDS = {"recall": "containment recall", "token_recall": "token span recall"}
TEXT = 8  # points: at the column's width (a figure of 8.5 inches shown at about 870 px) about 11 px high


def plot_matrix_by_measure(intervals: pd.DataFrame, k: int, labels: Mapping[str, str]):
    """One panel per corpus, in the measure the corpus is read by (``post02.intervals.read_by_intervals``):
    strategies as rows, the measure on the horizontal axis, one marker per retriever with its 95%
    interval (documents resampled where questions share them).

    Panels are laid out three to a row at the text column's width, each panel's axis naming its
    measure, so no axis mixes two measures; the legend names the retrievers once.
    """
    corpora = list(dict.fromkeys(intervals["corpus"]))
    strategies = list(dict.fromkeys(intervals["strategy"]))
    retrievers = list(dict.fromkeys(intervals["retriever"]))
    ncols = min(3, len(corpora))
    nrows = -(-len(corpora) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(8.5, (0.24 * len(strategies) + 1.3) * nrows), squeeze=False,
                             sharey=True)
    offsets = np.linspace(-0.25, 0.25, len(retrievers)) if len(retrievers) > 1 else np.zeros(1)
    rows = np.arange(len(strategies))
    for index, ax in enumerate(axes.flat):
        if index >= len(corpora):
            ax.set_axis_off()
            continue
        corpus = corpora[index]
        sub = intervals[intervals["corpus"] == corpus]
        for offset, retriever in zip(offsets, retrievers):
            cells = sub[sub["retriever"] == retriever].set_index("strategy").reindex(strategies)
            marker, colour = MARKS[retrievers.index(retriever) % len(MARKS)]
            shown = cells["mean"].notna().to_numpy()
            ax.errorbar(cells["mean"][shown], rows[shown] + offset,
                        xerr=[(cells["mean"] - cells["low"])[shown], (cells["high"] - cells["mean"])[shown]],
                        fmt=marker, color=colour, markersize=3.5, elinewidth=1, capsize=0, label=retriever)
        ax.set_yticks(rows, [strategy_label(s) for s in strategies])
        ax.tick_params(labelsize=TEXT)
        read_by = sub["read by"].iloc[0]
        ax.set_xlabel(f"{MEASURE_WORDS[read_by.split('@')[0]]}@{read_by.split('@')[1]}", fontsize=TEXT)
        ax.set_title(panel_title(labels.get(corpus, corpus), 26), fontsize=TEXT + 1)
    axes.flat[0].invert_yaxis()  # the first strategy on top (the axes share y)
    handles, names = axes.flat[0].get_legend_handles_labels()
    spare = list(axes.flat[len(corpora):])  # an empty panel holds the legend; else it goes below
    fig.tight_layout(rect=(0, 0 if spare else 0.6 / fig.get_figheight(), 1, 1))
    where = (dict(loc="center", bbox_to_anchor=spare[0].get_position().bounds) if spare
             else dict(loc="lower center"))
    fig.legend(handles, names, ncol=1, fontsize=TEXT, frameon=False, title="retriever, with its 95% interval",
               title_fontsize=TEXT, **where)
    return fig


def plot_budget_curves(intervals: pd.DataFrame, labels: Mapping[str, str]):
    """Each corpus's declared measure within a context budget (``post02.intervals.budget_intervals``),
    small multiples at the text column's width: one row per kind of document, one column per
    retriever, one line per strategy through the budgets (logarithmic axis), each point with its
    95% interval (points of one budget set slightly apart so the intervals do not hide each other).
    A budget where a strategy's first context overflows for more than the engine allows
    (``fits`` under ``decision.engine.FIT_SHARE``) is not drawn: the decision does not compare it there.
    Each row names its measure: containment recall or token span recall, as the corpus is read.
    """
    corpora = list(dict.fromkeys(intervals["corpus"]))
    retrievers = list(dict.fromkeys(intervals["retriever"]))
    strategies = list(dict.fromkeys(intervals["strategy"]))
    styles = strategy_styles(strategies)  # colour by family (plots.FAMILY_COLOURS)
    height = 2.2 * len(corpora) + 1.6
    fig, axes = plt.subplots(len(corpora), len(retrievers), figsize=(8.5, height), squeeze=False, sharey="row",
                             sharex=True)
    spread = np.linspace(-0.18, 0.18, len(strategies)) if len(strategies) > 1 else np.zeros(1)
    budgets = sorted(set(int(b) for b in intervals["budget"]))
    for i, corpus in enumerate(corpora):
        for j, retriever in enumerate(retrievers):
            ax = axes[i][j]
            panel = intervals[(intervals["corpus"] == corpus) & (intervals["retriever"] == retriever)]
            for shift, strategy in zip(spread, strategies):
                line = panel[(panel["strategy"] == strategy) & (panel["fits"] >= FIT_SHARE)].sort_values("budget")
                if line.empty:
                    continue
                x = line["budget"].to_numpy(dtype=float) * 2.0 ** shift
                style = {key: value for key, value in styles[strategy].items() if key != "markersize"}
                ax.errorbar(x, line["mean"], yerr=[line["mean"] - line["low"], line["high"] - line["mean"]],
                            markersize=2.5, linewidth=0.8, elinewidth=0.8, capsize=0,
                            label=strategy_label(strategy), **style)
            ax.set_xscale("log", base=2)
            ax.set_xticks(budgets, [f"{b:,}" for b in budgets])
            ax.xaxis.set_minor_formatter(plt.NullFormatter())
            ax.tick_params(labelsize=TEXT)
            if i == 0:
                ax.set_title(retriever, fontsize=TEXT + 2)
            if i == len(corpora) - 1:
                ax.set_xlabel("context budget (cl100k_base tokens)", fontsize=TEXT)
            if j == 0 and len(panel):
                ax.set_ylabel(f"{panel_title(labels.get(corpus, corpus)).split(chr(10))[0]}\n{panel['measure'].iloc[0]}",
                              fontsize=TEXT)
    handles, legend_labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, legend_labels, loc="lower center", ncol=3, fontsize=TEXT, frameon=False)
    fig.tight_layout(rect=(0, 1.0 / height, 1, 1))  # room for the legend below
    return fig
