"""Post 04's figures: overlap distributions, paired retrieval differences, overlap vs advantage.

Handles: drawing tables that ``reports.post04.tables`` / ``questions.retrieval_comparison`` computed; saving is
``plots.save_figure`` (deterministic files). Not handled: computing anything plotted, except
the bin means of the last figure, which are plain averages of the plotted points.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from chunklab_core.chunking import strategy_label
from chunklab_core.reports.plots import plt

SET_COLORS = {"human": "#4c72b0", "generated": "#dd8452"}


def plot_overlap(overlaps: pd.DataFrame, human_labels: dict[str, str], corpus_labels: dict[str, str]):
    """One panel per corpus: overlap ECDF of the human and the generated questions."""
    corpora = list(dict.fromkeys(overlaps["corpus"]))
    fig, axes = plt.subplots(1, len(corpora), figsize=(5.2 * len(corpora), 3.8), sharey=True, squeeze=False)
    for ax, corpus in zip(axes[0], corpora):
        for set_name, color in SET_COLORS.items():
            values = np.sort(overlaps[(overlaps["corpus"] == corpus) & (overlaps["set"] == set_name)]["overlap"]
                             .dropna().to_numpy())
            if not len(values):
                continue
            label = human_labels[corpus] if set_name == "human" else "generated"
            ax.step(values, np.arange(1, len(values) + 1) / len(values), where="post", color=color,
                    label=f"{label} (n={len(values)})")
        ax.set_title(corpus_labels.get(corpus, corpus))
        ax.set_xlabel("share of the question's content words found in its passage")
        ax.set_xlim(-0.02, 1.02)
        ax.legend(fontsize=8, loc="upper left")
    axes[0][0].set_ylabel("share of questions at or below")
    return fig


def plot_set_differences(comparison: pd.DataFrame, metric: str, corpus_labels: dict[str, str]):
    """Paired difference generated − human of ``metric`` with its interval, one row per cell."""
    table = comparison.iloc[::-1].reset_index(drop=True)
    labels = [f"{corpus_labels.get(r.corpus, r.corpus)} · {strategy_label(r.strategy)} · {r.retriever}"
              for r in table.itertuples()]
    fig, ax = plt.subplots(figsize=(7.5, 0.38 * len(table) + 1.3))
    y = np.arange(len(table))
    diff = table["generated − human"].to_numpy()
    ax.errorbar(diff, y, xerr=[diff - table["low"], table["high"] - diff], fmt="o", capsize=3)
    ax.axvline(0, color="grey", linewidth=1)
    ax.set_yticks(y, labels, fontsize=8)
    ax.set_xlabel(f"{metric}: generated − human, paired by passage (95% interval)")
    return fig


def plot_overlap_vs_advantage(data: pd.DataFrame, bins: np.ndarray, corpus_labels: dict[str, str]):
    """Per corpus: each question's BM25 − dense advantage against its overlap (jittered points,
    coloured by set) and the mean advantage in each overlap bin."""
    corpora = list(dict.fromkeys(data["corpus"]))
    fig, axes = plt.subplots(1, len(corpora), figsize=(5.2 * len(corpora), 3.8), sharey=True, squeeze=False)
    jitter = np.random.default_rng(0).uniform(-0.04, 0.04, len(data))  # display only
    data = data.assign(jitter=jitter)
    for ax, corpus in zip(axes[0], corpora):
        group = data[data["corpus"] == corpus]
        for set_name, color in SET_COLORS.items():
            part = group[group["set"] == set_name]
            ax.scatter(part["overlap"], part["bm25 − dense"] + part["jitter"], s=10, alpha=0.5, color=color,
                       label=set_name)
        which = np.clip(np.digitize(group["overlap"], bins[1:-1]), 0, len(bins) - 2)
        means = group.groupby(which)["bm25 − dense"].mean()
        centers = (bins[:-1] + bins[1:]) / 2
        ax.plot(centers[means.index], means.to_numpy(), "k-o", label="bin mean")
        ax.axhline(0, color="grey", linewidth=1)
        ax.set_title(corpus_labels.get(corpus, corpus))
        ax.set_xlabel("word overlap with the passage")
        ax.legend(fontsize=8)
    axes[0][0].set_ylabel("BM25 − dense (mean over strategies)")
    return fig
