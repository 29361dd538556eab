"""Post 07's figures: reranking depth against its ceiling, and each strategy's index footprint.

Handles: :func:`plot_depth` (per sample and first stage: hit@k after reranking the first N, the
ceiling first-stage hit@N and hit@k before, by N) and :func:`plot_footprint` (chunks, indexed
tokens, duplication and index sizes per strategy, one row of panels per corpus). Samples are
named by the labels the notebook passes (:func:`chunklab_core.reports.post07.tables.sample_labels`,
:func:`chunklab_core.reports.samples.labels_for`); strategies by
:func:`chunklab_core.chunking.strategy_label`, never by id.

Not handled: computing the tables (``post07.tables``, ``retrieval.footprint``), saving the
figures (``reports.plots.show_figure``).
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.ticker import FuncFormatter, MaxNLocator

from chunklab_core.chunking import strategy_label
from chunklab_core.reports import samples

FOOTPRINT_COLUMNS = (("chunks", "chunks"), ("indexed_tokens", "indexed tokens (cl100k)"),
                     ("duplication", "duplication"), ("bm25_MB", "BM25 postings, MB"),
                     ("vectors_MB_all-mpnet-base-v2", "mpnet vectors, MB"))


def compact(value: float, _position=None) -> str:
    """A tick label of at most five characters: ``0``, ``0.5``, ``15``, ``4k``, ``1.2M``
    (thousands and millions abbreviated; no milli prefix for values below 1)."""
    size = abs(value)
    for limit, suffix in ((1e6, "M"), (1e3, "k")):
        if size >= limit:
            return f"{value / limit:.3g}{suffix}" if size / limit < 100 else f"{value / limit:.0f}{suffix}"
    return f"{value:.2g}" if size < 10 else f"{value:.0f}"


def plot_depth(table: pd.DataFrame, labels: dict | None = None):
    """Per sample and first stage: the ceiling (first-stage hit@N) and hit@k after reranking, by N.

    ``labels``: ``(corpus, scorer) -> sample label`` (``tables.sample_labels``); without it a
    panel is named by its data set."""
    panels = list(table.groupby(["corpus", "first_stage"], sort=False))
    fig, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels), 3.4), squeeze=False)
    colors = dict(zip(table["strategy"].unique(), plt.rcParams["axes.prop_cycle"].by_key()["color"]))
    k = int(table["k"].iloc[0])
    for ax, ((corpus, stage), group) in zip(axes[0], panels):
        for strategy, rows in group.groupby("strategy", sort=False):
            rows = rows.sort_values("depth")
            ax.plot(rows["depth"], rows["ceiling"], "--", color=colors[strategy], alpha=0.7)
            ax.plot(rows["depth"], rows["hit_after"], "o-", color=colors[strategy], label=strategy_label(strategy))
            ax.axhline(rows["hit_before"].iloc[0], color=colors[strategy], lw=0.8, alpha=0.4)
        ax.set_xscale("log")
        ax.minorticks_off()
        ax.set_xticks(sorted(group["depth"].unique()), [str(d) for d in sorted(group["depth"].unique())])
        name = (labels or {}).get((corpus, group["scorer"].iloc[0]), samples.DATASETS.get(corpus, corpus))
        ax.set_title(f"{name}\nfirst stage: {stage}", fontsize=9)
        ax.set_xlabel("reranking depth N")
        ax.set_ylim(0, 1.02)
    axes[0][0].set_ylabel(f"hit@{k} after reranking (solid)\nceiling: first-stage hit@N (dashed)")
    axes[0][-1].legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    return fig


def plot_footprint(table: pd.DataFrame, labels: dict | None = None):
    """Chunks, indexed tokens, duplication and index sizes per strategy, one row of panels per corpus.

    Strategies are named (:func:`chunklab_core.chunking.strategy_label`), not by id, on the
    first panel of each row in a legible size; each row is headed once by its sample
    (``labels``: corpus -> label, :func:`chunklab_core.reports.samples.labels_for`; without it
    the data set) and each panel by its measure alone, so no title runs into the next; the x
    tick labels are compact (:func:`compact`: ``4k``, ``1.2M``, ``0.5``), so they never overlap.
    """
    corpora = list(table["corpus"].unique())
    strategies = max(table.groupby("corpus").size().max(), 1)
    fig = plt.figure(figsize=(1.55 * len(FOOTPRINT_COLUMNS) + 2.6, (0.32 * strategies + 1.5) * len(corpora)),
                     layout="constrained")
    rows_of = fig.subfigures(len(corpora), 1, squeeze=False)[:, 0]
    for subfigure, corpus in zip(rows_of, corpora):
        subfigure.suptitle((labels or {}).get(corpus, samples.DATASETS.get(corpus, corpus)), fontsize=10,
                           fontweight="bold", x=0.01, ha="left")
        axes = subfigure.subplots(1, len(FOOTPRINT_COLUMNS), squeeze=False)[0]
        rows = table[table["corpus"] == corpus]
        names = [strategy_label(s) for s in rows["strategy"]]
        for c, (ax, (column, title)) in enumerate(zip(axes, FOOTPRINT_COLUMNS)):
            ax.barh(names, rows[column], color="#4c72b0")
            ax.invert_yaxis()
            ax.set_title(title, fontsize=9)
            if c:
                ax.set_yticklabels([])
            ax.xaxis.set_major_locator(MaxNLocator(nbins=3, min_n_ticks=2))
            ax.xaxis.set_major_formatter(FuncFormatter(compact))
            ax.tick_params(axis="y", labelsize=9)
            ax.tick_params(axis="x", labelsize=9)
    return fig
