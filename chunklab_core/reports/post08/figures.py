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
    fig, axes = plt.subplots(1, len(metrics), figsize=(2.0 * len(metrics) + 2.6, 0.32 * len(labels) + 2.0),
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
        ax.set_xlabel(f"{METRIC_NAMES.get(metric, metric)} (points),\n{depth} retrieved", fontsize=9)
        ax.tick_params(labelsize=9)
    axes[0][0].invert_yaxis()
    handles, names = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, names, loc="lower center", ncol=2, fontsize=9, frameon=False)
    fig.tight_layout(rect=(0, 0.12, 1, 1))
    return fig



RETRIEVER_MARKERS = ("o", "s", "^", "D", "v")


def plot_pool(table: pd.DataFrame, guide: pd.DataFrame):
    """One panel per kind of document (stacked, the column's full width): at the budget each
    retriever's setting is recommended at, every candidate that fits it with its ``leader − this``
    of the corpus's measure and paired 95% interval (the interval the verdict used), coloured by
    the verdict, one marker shape and row offset per retriever; the panel's title names the sample
    and, per retriever, the recommendation and its tokens, wrapped to the panel's width."""
    corpora = list(dict.fromkeys(guide["corpus"]))
    retrievers = list(dict.fromkeys(guide["retriever"]))
    names = list(dict.fromkeys(table["label"]))
    offsets = {r: (i - (len(retrievers) - 1) / 2) * 0.22 for i, r in enumerate(retrievers)}
    heights = [0.26 * len(names) + 0.5 + 0.32 * len(retrievers) for _ in corpora]
    fig, axes = plt.subplots(len(corpora), 1, figsize=(8.5, sum(heights) + 0.8), squeeze=False,
                             height_ratios=heights)
    for ax, corpus in zip(axes[:, 0], corpora):
        found = guide[guide["corpus"] == corpus]
        lines = [str(found["sample"].iloc[0])]
        shown = set()
        for retriever in retrievers:
            setting = found[found["retriever"] == retriever]
            if setting.empty:
                continue
            g = setting.iloc[0]
            lines.append(textwrap.fill(f"{retriever}: use {g['use']} at {int(g['tokens']):,} tokens "
                                       f"({g['verdict']})", 95, subsequent_indent="    "))
            part = table[(table["corpus"] == corpus) & (table["retriever"] == retriever)
                         & (table["budget"] == g["tokens"])]
            marker = RETRIEVER_MARKERS[retrievers.index(retriever) % len(RETRIEVER_MARKERS)]
            for _, row in part.iterrows():
                if row["verdict"] not in VERDICT_COLORS:  # too large for the budget: not compared there
                    continue
                y = names.index(row["label"]) + offsets[retriever]
                shown.add(row["label"])
                color = VERDICT_COLORS[row["verdict"]]
                if np.isnan(row["low"]):
                    ax.plot([0], [y], marker=marker, color=color, ms=5, ls="")
                    continue
                ax.errorbar([row["leader − this"]], [y], xerr=[[max(row["leader − this"] - row["low"], 0)],
                                                               [max(row["high"] - row["leader − this"], 0)]],
                            fmt=marker, color=color, ms=4, capsize=2, lw=1)
        rows = [n for n in names if n in shown]
        ax.set_yticks([names.index(n) for n in rows], rows)
        ax.set_ylim(len(names) - 0.5, -0.5)
        ax.axvline(0, color="#888888", lw=0.8)
        ax.set_title("\n".join(lines), fontsize=9)
        ax.xaxis.set_major_locator(MaxNLocator(nbins=6))
        ax.tick_params(labelsize=9)
        ax.grid(axis="y", visible=False)
    axes[-1, 0].set_xlabel("leader − this, at the recommended budget (paired 95% interval)", fontsize=9)
    handles = [plt.Line2D([], [], marker="o", ls="", color=color, label=word) for word, color in VERDICT_COLORS.items()]
    handles += [plt.Line2D([], [], marker=RETRIEVER_MARKERS[i % len(RETRIEVER_MARKERS)], ls="", color="#444444",
                           label=retriever) for i, retriever in enumerate(retrievers)]
    fig.legend(handles=handles, loc="lower center", ncol=3, fontsize=9, frameon=False)
    fig.tight_layout(rect=(0, 0.035, 1, 1))
    return fig


def overlapping_titles(fig) -> list[tuple[str, str]]:
    """Pairs of axes titles whose rendered text boxes intersect (drawn with the figure's renderer)."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    boxes = [(ax.title.get_text(), ax.title.get_window_extent(renderer)) for ax in fig.axes if ax.title.get_text()]
    return [(a, b) for i, (a, box_a) in enumerate(boxes) for b, box_b in boxes[i + 1:] if box_a.overlaps(box_b)]
