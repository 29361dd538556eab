"""Post 05's figures, drawn from its tables: the share passed per strategy and grader, the judges'
confusion matrices against the reference grader, and the median cost per item by stage.

Handles: drawing only (axes, labels, legends placed off the markers). Not handled: computing
the tables (``post05.tables.answer_table``, ``post05.judges.confusion``, ``post05.claims.cost_medians``)
or saving and showing a figure (``reports.plots.show_figure``).
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from chunklab_core.answers.verdicts import REFERENCE_COLUMN, THREE_WAY, grader_name, scale_of
# imported for its side effect too: the series' fixed figure style (rcParams)
from chunklab_core.reports import plots  # noqa: F401
from chunklab_core.reports.post05.judges import confusion
from chunklab_core.reports.post05.tables import grader_columns


def plot_answer_table(answers: pd.DataFrame):
    """Share passed per strategy (rows of panels: corpora), one marker per grader, with intervals."""
    corpora = list(dict.fromkeys(answers["corpus"]))
    fig, axes = plt.subplots(1, len(corpora), figsize=(6.5 * len(corpora), 4.2), squeeze=False)
    measures = list(dict.fromkeys(answers["measure"]))
    for ax, corpus in zip(axes[0], corpora):
        part = answers[answers["corpus"] == corpus]
        strategies = list(dict.fromkeys(part["strategy"]))
        for m, measure in enumerate(measures):
            rows = part[part["measure"] == measure].set_index("strategy").loc[strategies]
            x = np.arange(len(strategies)) + (m - (len(measures) - 1) / 2) * 0.13
            ax.errorbar(x, rows["share"], yerr=[rows["share"] - rows["low"], rows["high"] - rows["share"]],
                        fmt="o", capsize=3, label=measure)
        ax.set_xticks(np.arange(len(strategies)), strategies)
        ax.set_ylim(0, 1.02)
        ax.set_title(f"{corpus}: {int(part['questions'].iloc[0])} questions per strategy")
        ax.set_ylabel("share of questions")
        ax.grid(axis="y", alpha=0.3)
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(measures), fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0.08, 1, 1))  # the legend sits below the panels, off the markers
    return fig


def plot_confusions(table: pd.DataFrame, reference: str = REFERENCE_COLUMN):
    """One confusion matrix per LLM judge against ``reference`` (rows: reference labels)."""
    judges = [c for c in grader_columns(table) if c != reference]
    fig, axes = plt.subplots(1, len(judges), figsize=(4.2 * len(judges), 3.8), squeeze=False)
    for ax, judge in zip(axes[0], judges):
        labels = scale_of(judge)
        counts = confusion(table, reference, judge)
        ax.imshow(counts.to_numpy(), cmap="Blues")
        for (i, j), value in np.ndenumerate(counts.to_numpy()):
            ax.text(j, i, str(value), ha="center", va="center", fontsize=10)
        ax.set_xticks(range(len(labels)), labels)
        ax.set_yticks(range(len(THREE_WAY)), THREE_WAY)
        ax.set_xlabel(grader_name(judge))
        ax.set_ylabel(grader_name(reference))
    fig.tight_layout()
    return fig


def plot_cost(medians: pd.DataFrame, runtime: str):
    """Stacked median seconds per item by stage, one bar per corpus and strategy; legend beside the bars."""
    seconds = [c for c in medians.columns if c.endswith("_seconds")]
    labels = [f"{c}\n{s}" for c, s in zip(medians["corpus"], medians["strategy"])]
    fig, ax = plt.subplots(figsize=(1.6 * len(labels) + 3.5, 4.4))
    bottom = np.zeros(len(labels))
    for column in seconds:
        ax.bar(labels, medians[column], bottom=bottom, label=column.removesuffix("_seconds"))
        bottom += medians[column].to_numpy()
    ax.set_ylabel("median seconds per item")
    ax.set_title(f"recorded with {runtime}", fontsize=9)
    ax.tick_params(axis="x", labelsize=8)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    return fig
