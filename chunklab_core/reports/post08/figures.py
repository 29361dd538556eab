"""Post 08's figures: the report's rows beside the published values, and the library defaults against each leader.

Handles: :func:`plot_report` (at the report's depth, the re-run's mean per row beside both
published tables, ``tables.comparison_table``) and :func:`plot_pool` (one panel per corpus × retriever of the
candidate pool, ``reports.pool``: every candidate's ``leader − this`` at the recommended budget with its
paired interval, coloured by its verdict). Strategies are named by their labels.

Not handled: computing the tables (``post08.tables``, ``post08.builder``), saving the figures
(``reports.plots.show_figure``).
"""

from __future__ import annotations

import textwrap

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.ticker import MaxNLocator

from chunklab_core.stats import claims

METRIC_NAMES = {"recall": "recall", "precision_omega": "precision_Ω", "iou": "IoU", "precision": "precision"}
VERDICT_COLORS = {claims.RULED_OUT: "#C44E52", claims.NOT_RULED_OUT: "#4C72B0", claims.WINNER: "#55A868"}


def plot_report(comparison: pd.DataFrame, metrics=("recall", "precision_omega", "iou")):
    """At the report's depth, one panel per metric: the re-run's mean (bars, with ±1.96 standard
    errors over the questions: a question-level interval, narrower than the corpus-clustered one
    the verdicts use) per re-run row, the
    MiniLM table's published value (red cross) and text-embedding-3-large's (grey circle, open
    where the value depends on the retrieval model or on chunks cut with that model)."""
    part = comparison[comparison["re-run mean"].notna()]
    labels = list(dict.fromkeys(part["label"]))
    y = {label: i for i, label in enumerate(labels)}
    fig, axes = plt.subplots(1, len(metrics), figsize=(4.2 * len(metrics) + 2, 0.32 * len(labels) + 1.6),
                             sharey=True, squeeze=False)
    depth = int(part["retrieved"].iloc[0]) if "retrieved" in part and len(part) else 5
    for ax, metric in zip(axes[0], metrics):
        rows = part[part["metric"] == metric]
        rerun = rows.drop_duplicates("label")
        half = 1.96 * rerun["re-run sd"] / np.sqrt(rerun["questions"])  # ±1.96 standard errors over the questions
        ax.barh([y[l] for l in rerun["label"]], rerun["re-run mean"], xerr=half, color="#4C72B0",
                error_kw={"elinewidth": 0.8, "capsize": 2, "ecolor": "#1f2328"},
                label="this re-run (MiniLM), ±1.96 SE over questions")
        for table, marker, color in (("all-MiniLM-L6-v2", "x", "#C44E52"), ("text-embedding-3-large", "o", "#555555")):
            pub = rows[rows["table"] == table]
            if pub.empty:
                continue
            filled = pub["basis"].isin(("same model", "chunks only"))
            ys = [y[l] for l in pub["label"]]
            if marker == "x":
                ax.scatter(pub["published mean"], ys, marker="x", color=color, zorder=3, label=f"report, {table}")
            else:
                ax.scatter(pub["published mean"][filled], np.asarray(ys)[filled.to_numpy()], marker="o", color=color,
                           zorder=3, label=f"report, {table}")
                ax.scatter(pub["published mean"][~filled], np.asarray(ys)[~filled.to_numpy()], marker="o",
                           facecolors="none", edgecolors=color, zorder=3, label=f"report, {table} (not comparable)")
        ax.set_yticks(range(len(labels)), labels)
        ax.set_xlabel(f"{METRIC_NAMES.get(metric, metric)} (points), {depth} retrieved")
        ax.tick_params(labelsize=8)
    axes[0][0].invert_yaxis()
    handles, names = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, names, loc="lower center", ncol=len(names), fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    return fig



def plot_pool(table: pd.DataFrame, guide: pd.DataFrame):
    """Per setting (rows: retrievers, columns: corpora): at the budget the setting is recommended
    at, every candidate that fits it with its ``leader − this`` of the corpus's measure and paired
    interval (the interval the verdict used, among the candidates at that budget), coloured by the verdict; each panel's title names the setting, the
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
                if row["verdict"] not in VERDICT_COLORS:  # too large for the budget: not compared there
                    continue
                y = names.index(row["label"])
                color = VERDICT_COLORS[row["verdict"]]
                if np.isnan(row["low"]):
                    ax.plot([0], [y], marker="D", color=color)
                    continue
                ax.errorbar([row["leader − this"]], [y], xerr=[[max(row["leader − this"] - row["low"], 0)],
                                                               [max(row["high"] - row["leader − this"], 0)]],
                            fmt="o", color=color, ms=3, capsize=2)
            short = str(g["sample"]).split(",")[0]
            use = textwrap.fill(f"use: {g['use']}", 34)
            ax.set_title(f"{short}, {retriever}\n{use}\nat {int(g['tokens']):,} tokens ({g['verdict']})",
                         fontsize=7, wrap=False)
            if r == len(retrievers) - 1:
                ax.set_xlabel("leader − this, at that budget", fontsize=8)
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
