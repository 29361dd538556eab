"""Post 08's figures: the report's rows beside the published values, and the library defaults against each leader.

Handles: :func:`plot_report` (our mean per report row and depth, the published value as a
cross where known) and :func:`plot_builder` (one panel per corpus × retriever: each library
default's and the series' best's ``leader − this`` with its paired interval, coloured by its
verdict; the leader at 0). Strategies are named by their labels, samples by
:func:`chunklab_core.reports.post08.builder.sample_of`.

Not handled: computing the tables (``post08.tables``, ``post08.builder``), saving the figures
(``reports.plots.show_figure``).
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.ticker import MaxNLocator

from chunklab_core.reports.post08.builder import SERIES_BEST, sample_of
from chunklab_core.stats import claims

VERDICT_COLORS = {claims.RULED_OUT: "#C44E52", claims.NOT_RULED_OUT: "#4C72B0", claims.WINNER: "#55A868"}


def plot_report(table: pd.DataFrame, metric: str = "recall"):
    """Our mean (points) per report row and depth, with the published value as a cross where known."""
    import matplotlib.pyplot as plt

    depths = sorted(table["retrieved"].unique())
    fig, axes = plt.subplots(1, len(depths), figsize=(6 * len(depths), 0.35 * table["strategy"].nunique() + 1.5),
                             sharey=True, squeeze=False)
    for ax, k in zip(axes[0], depths):
        part = table[table["retrieved"] == k].reset_index(drop=True)
        y = np.arange(len(part))
        ax.barh(y, part[f"{metric} mean"], color="#4C72B0", label="this run (mean)")
        ax.scatter(part[f"{metric} published"], y, marker="x", color="#C44E52", zorder=3, label="report (published)")
        ax.set_yticks(y, part["label"])
        ax.invert_yaxis()
        ax.set_xlabel(f"{metric} (points), {k} retrieved")
        ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    return fig


def plot_builder(builder: pd.DataFrame, k: int, metric: str = "recall"):
    """Per corpus (columns) and retriever (rows): ``leader − this`` of ``metric@k`` with its
    paired 95% interval for the series' best and every library default; red: ruled out, blue:
    cannot be ruled out, the leader drawn at 0 and named in the panel's title."""
    corpora = list(dict.fromkeys(builder["corpus"]))
    retrievers = list(dict.fromkeys(builder["retriever"]))
    libraries = list(dict.fromkeys(builder.loc[builder["library"], "label"]))
    names = [SERIES_BEST, *libraries]
    fig, axes = plt.subplots(len(retrievers), len(corpora), figsize=(3.3 * len(corpora) + 2.2,
                                                                     (0.28 * len(names) + 1.2) * len(retrievers)),
                             sharey=True, squeeze=False)
    for r, retriever in enumerate(retrievers):
        for c, corpus in enumerate(corpora):
            ax = axes[r][c]
            part = builder[(builder["corpus"] == corpus) & (builder["retriever"] == retriever)]
            ax.axvline(0, color="#888888", lw=0.8)
            ax.set_yticks(np.arange(len(names)), names)
            if part.empty:
                continue
            for y, name in enumerate(names):
                found = part[part["label"] == part[SERIES_BEST]] if name == SERIES_BEST else part[part["label"] == name]
                if found.empty:
                    continue
                row = found.iloc[0]
                if row["label"] == row["leader"]:
                    ax.plot([0], [y], marker="D", color=VERDICT_COLORS[row["verdict"]])
                    continue
                color = VERDICT_COLORS[row["verdict"]]
                ax.errorbar([row["leader − this"]], [y], xerr=[[row["leader − this"] - row["diff low"]],
                                                               [row["diff high"] - row["leader − this"]]],
                            fmt="o", color=color, ms=4, capsize=2)
            ax.set_title(f"{sample_of(part)}\n{retriever}; leader: {part['leader'].iloc[0]}", fontsize=8)
            if r == len(retrievers) - 1:
                ax.set_xlabel(f"leader − this, {metric}@{k}", fontsize=8)
            ax.xaxis.set_major_locator(MaxNLocator(nbins=4))
            ax.tick_params(labelsize=8)
    axes[0][0].invert_yaxis()
    handles = [plt.Line2D([], [], marker="o", ls="", color=color, label=word) for word, color in VERDICT_COLORS.items()]
    fig.legend(handles=handles, loc="lower center", ncol=3, fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    return fig


def plot_pool(table: pd.DataFrame, guide: pd.DataFrame):
    """Per setting (rows: retrievers, columns: corpora): at the budget the setting is recommended
    at, every candidate's ``leader − this`` of the corpus's measure with its paired interval (the
    interval the verdict used), coloured by the verdict; each panel's title names the setting, the
    recommendation and its tokens, on lines short enough not to reach the next panel."""
    corpora = list(dict.fromkeys(guide["corpus"]))
    retrievers = list(dict.fromkeys(guide["retriever"]))
    names = list(dict.fromkeys(table["label"]))
    fig, axes = plt.subplots(len(retrievers), len(corpora), figsize=(3.6 * len(corpora) + 2.6,
                                                                     (0.22 * len(names) + 1.6) * len(retrievers)),
                             sharey=True, squeeze=False)
    for r, retriever in enumerate(retrievers):
        for c, corpus in enumerate(corpora):
            ax = axes[r][c]
            ax.set_yticks(np.arange(len(names)), names)
            found = guide[(guide["corpus"] == corpus) & (guide["retriever"] == retriever)]
            if found.empty:
                ax.set_axis_off()
                continue
            g = found.iloc[0]
            part = table[(table["corpus"] == corpus) & (table["retriever"] == retriever)
                         & (table["budget"] == g["tokens"])]
            ax.axvline(0, color="#888888", lw=0.8)
            for _, row in part.iterrows():
                y = names.index(row["label"])
                color = VERDICT_COLORS[row["verdict"]]
                if np.isnan(row["low"]):
                    ax.plot([0], [y], marker="D", color=color)
                    continue
                ax.errorbar([row["leader − this"]], [y], xerr=[[max(row["leader − this"] - row["low"], 0)],
                                                               [max(row["high"] - row["leader − this"], 0)]],
                            fmt="o", color=color, ms=3, capsize=2)
            short = str(g["sample"]).split(",")[0]
            ax.set_title(f"{short}, {retriever}\nuse: {g['use']}\nat {int(g['tokens']):,} tokens ({g['verdict']})",
                         fontsize=7, wrap=False)
            if r == len(retrievers) - 1:
                ax.set_xlabel("leader − this (leader: best at any budget)", fontsize=8)
            ax.xaxis.set_major_locator(MaxNLocator(nbins=4))
            ax.tick_params(labelsize=7)
    axes[0][0].invert_yaxis()
    handles = [plt.Line2D([], [], marker="o", ls="", color=color, label=word) for word, color in VERDICT_COLORS.items()]
    fig.legend(handles=handles, loc="lower center", ncol=3, fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    return fig


def overlapping_titles(fig) -> list[tuple[str, str]]:
    """Pairs of axes titles whose rendered text boxes intersect (drawn with the figure's renderer)."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    boxes = [(ax.title.get_text(), ax.title.get_window_extent(renderer)) for ax in fig.axes if ax.title.get_text()]
    return [(a, b) for i, (a, box_a) in enumerate(boxes) for b, box_b in boxes[i + 1:] if box_a.overlaps(box_b)]
