"""Figures of post 02: the strategy x retriever heatmaps and recall against returned tokens.

Handles: :func:`plot_matrix` (recall@k per corpus, strategies x retrievers, first model for
dense and hybrid), :func:`plot_matrix_by_measure` (the same grid in the measure each corpus is
read by, ``reports.post02.long_evidence``) and :func:`plot_budget_curves` (recall against mean
returned tokens for k = 1..10, a panel per corpus x retriever). Each panel names its sample by
the label the notebook passes (``reports.samples``: data set, n and documents). Saving (without
volatile metadata) is :func:`chunklab_core.reports.plots.show_figure`. Not handled: computing the
tables (``post02.tables``, ``post02.long_evidence``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from chunklab_core.chunking import strategy_label
from chunklab_core.evaluation.budget import recall_token_curve
from chunklab_core.evaluation.matrix import MatrixResult
from chunklab_core.evaluation.measures import column
from chunklab_core.reports.plots import strategy_styles
from chunklab_core.retrieval.registry import needs_model, rows_of_model

__all__ = ["plot_matrix", "plot_matrix_by_measure", "plot_budget_curves", "panel_title"]


def panel_title(label: str) -> str:
    """A sample label on two lines, the data set above its counts (``SQuAD v1.1\\n2,000 questions from 48 articles``)."""
    return label.replace(", ", "\n", 1)


def _heatmap(ax, grid: np.ndarray, retrievers: Sequence[str]):
    image = ax.imshow(grid, aspect="auto", cmap="viridis", vmin=0, vmax=1)
    for (i, j), value in np.ndenumerate(grid):
        if not np.isnan(value):
            ax.text(j, i, f"{value:.2f}", ha="center", va="center", fontsize=7,
                    color="white" if value < 0.6 else "black")
    ax.set_xticks(range(len(retrievers)), retrievers)
    ax.grid(False)
    return image


def plot_matrix(summary: pd.DataFrame, k: int, model: str, labels: Mapping[str, str]):
    """One heatmap per corpus: strategies x retrievers, recall@k (first model for dense/hybrid)."""
    table = rows_of_model(summary, model)
    corpora = list(dict.fromkeys(table["corpus"]))
    strategies = list(dict.fromkeys(table["strategy"]))
    retrievers = list(dict.fromkeys(table["retriever"]))
    fig, axes = plt.subplots(1, len(corpora), figsize=(2.3 * len(corpora) + 2.6, 0.38 * len(strategies) + 1.6),
                             squeeze=False, sharey=True)
    for ax, corpus in zip(axes[0], corpora):
        grid = (table[table["corpus"] == corpus].pivot(index="strategy", columns="retriever",
                                                        values=column("recall", k))
                .reindex(index=strategies, columns=retrievers))
        image = _heatmap(ax, grid.to_numpy(dtype=float), retrievers)
        ax.set_title(panel_title(labels[corpus]), fontsize=8)
    axes[0][0].set_yticks(range(len(strategies)), [strategy_label(s) for s in strategies])
    fig.colorbar(image, ax=axes[0].tolist(), label=column("recall", k), shrink=0.8)
    return fig


MEASURE_MAPS = {"containment": "viridis", "span": "magma"}  # one colour scale per measure


def plot_matrix_by_measure(table: pd.DataFrame, k: int, labels: Mapping[str, str]):
    """One heatmap per corpus, strategies x retrievers, in the measure the corpus is read by.

    Panels are laid out three to a row at the text column's width; each panel has its own colour
    bar naming its measure, and each measure its own colour map (:data:`MEASURE_MAPS`), so no
    colour bar mixes two measures. Values are printed in the cells; their intervals are in the
    post's tables.
    """
    corpora = list(dict.fromkeys(table["corpus"]))
    strategies = list(dict.fromkeys(table["strategy"]))
    retrievers = list(dict.fromkeys(table["retriever"]))
    ncols = min(3, len(corpora))
    nrows = -(-len(corpora) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(8.5 if ncols == 3 else 3.2 * ncols + 2.4,
                                                    (0.3 * len(strategies) + 1.5) * nrows), squeeze=False)
    for index, ax in enumerate(axes.flat):
        if index >= len(corpora):
            ax.set_axis_off()
            continue
        corpus = corpora[index]
        sub = table[table["corpus"] == corpus]
        read_by = sub["read by"].iloc[0]
        kind = "span" if read_by.startswith("token") else "containment"
        grid = (sub.pivot(index="strategy", columns="retriever", values=read_by)
                .reindex(index=strategies, columns=retrievers)).to_numpy(dtype=float)
        image = ax.imshow(grid, aspect="auto", cmap=MEASURE_MAPS[kind], vmin=0, vmax=1)
        for (i, j), value in np.ndenumerate(grid):
            if not np.isnan(value):
                ax.text(j, i, f"{value:.2f}", ha="center", va="center", fontsize=8,
                        color="white" if value < 0.6 else "black")
        ax.set_xticks(range(len(retrievers)), retrievers, fontsize=8)
        ax.grid(False)
        ax.set_yticks(range(len(strategies)), [strategy_label(s) for s in strategies] if index % ncols == 0 else [],
                      fontsize=8)
        name = "token span recall" if kind == "span" else "recall (containment)"
        ax.set_title(panel_title(labels[corpus]), fontsize=9)
        bar = fig.colorbar(image, ax=ax, shrink=0.8, pad=0.03)
        bar.set_label(f"{name}@{k}", fontsize=8)
        bar.ax.tick_params(labelsize=8)
    fig.tight_layout()
    return fig


def _runs_for(matrix: MatrixResult, model: str):
    for (corpus, run_model, strategy, retriever), run in matrix.runs.items():
        if run_model == model or not needs_model(retriever):
            yield corpus, strategy, retriever, run


def plot_budget_curves(matrix: MatrixResult, model: str, labels: Mapping[str, str]):
    """Recall against mean returned tokens (k = 1..10): small multiples, one row per kind of
    document, one column per retriever, at the text column's width (8.5 inches, text at 8-9 pt).

    The y axis is the share of a question's gold slots found in the returned contexts by
    containment (``evaluation.budget.recall_token_curve``), named so on every corpus (CUAD's and
    QASPER's gold is contained, not a span measure). Each row shares its axes; the legend names
    the strategies once, below. Descriptive means: the intervals of the budget comparison are in
    post 02's budget tables.
    """
    curves = []
    for corpus, strategy, retriever, run in _runs_for(matrix, model):
        try:
            curves.append(recall_token_curve(run))
        except ValueError:
            continue
    data = pd.concat(curves, ignore_index=True)
    corpora = list(dict.fromkeys(data["corpus"]))
    retrievers = list(dict.fromkeys(data["retriever"]))
    fig, axes = plt.subplots(len(corpora), len(retrievers), figsize=(8.5, 2.3 * len(corpora) + 1.6),
                             squeeze=False, sharey="row", sharex="row")
    strategies = list(dict.fromkeys(data["strategy"]))
    styles = strategy_styles(strategies)  # colour by family (plots.FAMILY_COLOURS)
    for i, corpus in enumerate(corpora):
        for j, retriever in enumerate(retrievers):
            ax = axes[i][j]
            panel = data[(data["corpus"] == corpus) & (data["retriever"] == retriever)]
            for strategy in strategies:
                line = panel[panel["strategy"] == strategy]
                if len(line):
                    ax.plot(line["mean_tokens"], line["recall"], markersize=3, linewidth=1,
                            label=strategy_label(strategy), **styles[strategy])
            ax.set_xscale("log")
            ax.xaxis.set_minor_formatter(plt.NullFormatter())  # minor labels collide on short log ranges
            ax.tick_params(labelsize=8)
            if i == 0:
                ax.set_title(retriever, fontsize=10)
            if i == len(corpora) - 1:
                ax.set_xlabel("mean returned tokens", fontsize=9)
            if j == 0:
                ax.set_ylabel(f"{panel_title(labels[corpus]).split(chr(10))[0]}\ngold found", fontsize=9)
    handles, legend_labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, legend_labels, loc="lower center", ncol=3, fontsize=8, frameon=False)
    fig.supylabel("share of gold slots contained in the returned contexts", fontsize=9)
    fig.tight_layout(rect=(0, 0.12 * 7.0 / (2.3 * len(corpora) + 1.6), 1, 1))  # room for the legend below
    return fig
