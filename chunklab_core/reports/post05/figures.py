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

from chunklab_core.answers.verdicts import REFERENCE_COLUMN, UNPARSED, grader_name, scale_of
# imported for its side effect too: the series' fixed figure style (rcParams)
from chunklab_core.reports import plots  # noqa: F401
from chunklab_core.reports.post05.judges import confusion
from chunklab_core.reports.post05.tables import grader_columns
from chunklab_core.reports.samples import DATASETS, sample_label


# the recorded stages' codes (a record file's stem) in words: what the stage does and with which model
STAGE_WORDS = {"answers": "answering", "judges": "judging", "questions": "writing questions"}
MODEL_WORDS = {"qwen15": "Qwen2.5-Coder 1.5B", "qwen05": "Qwen2.5-Coder 0.5B"}


def stage_words(code: str) -> str:
    """``answers_qwen15`` -> ``answering, Qwen2.5-Coder 1.5B``: a recorded stage's code in words."""
    stage, _, model = code.partition("_")
    return f"{STAGE_WORDS.get(stage, stage)}, {MODEL_WORDS.get(model, model)}" if model else STAGE_WORDS.get(stage, stage)


def plot_answer_table(answers: pd.DataFrame):
    """Share passed per strategy (one panel per corpus, stacked), one marker per grader, with intervals.

    Strategies are rows (their names read horizontally, never run together), graders are
    markers offset within a row; the legend sits below the panels.
    """
    corpora = list(dict.fromkeys(answers["corpus"]))
    measures = list(dict.fromkeys(answers["measure"]))
    n_rows = [answers.loc[answers["corpus"] == c, "strategy"].nunique() for c in corpora]
    fig, axes = plt.subplots(len(corpora), 1, figsize=(8, sum(1.0 + 0.75 * n for n in n_rows) + 0.8),
                             squeeze=False, height_ratios=[1.0 + 0.75 * n for n in n_rows])
    for ax, corpus in zip(axes[:, 0], corpora):
        part = answers[answers["corpus"] == corpus]
        strategies = list(dict.fromkeys(part["strategy"]))
        for m, measure in enumerate(measures):
            rows = part[part["measure"] == measure].set_index("strategy").loc[strategies]
            y = np.arange(len(strategies)) + (m - (len(measures) - 1) / 2) * 0.14
            ax.errorbar(rows["share"], y, xerr=[rows["share"] - rows["low"], rows["high"] - rows["share"]],
                        fmt="o", capsize=3, markersize=5, label=measure)
        ax.set_yticks(np.arange(len(strategies)), strategies)
        ax.invert_yaxis()
        ax.set_xlim(0, 1.02)
        ax.set_title(sample_label(corpus, int(part["questions"].iloc[0]), int(part["documents"].iloc[0])), fontsize=10)
        ax.grid(axis="y", visible=False)
    axes[-1, 0].set_xlabel("share of questions passed (95% interval)")
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=3, fontsize=9, frameon=False)
    fig.tight_layout(rect=(0, 0.1, 1, 1))  # the legend sits below the panels, off the markers
    return fig


def plot_confusions(table: pd.DataFrame, reference: str = REFERENCE_COLUMN):
    """One confusion matrix per LLM judge against ``reference`` (rows: reference labels).

    No gridlines cross the counts; the ``unparsed`` row or column is left out when no reply was
    unparsed (every other label stays, empty or not).
    """
    judges = [c for c in grader_columns(table) if c != reference]
    fig, axes = plt.subplots(1, len(judges), figsize=(3.1 * len(judges) + 0.6, 3.4), squeeze=False)
    for ax, judge in zip(axes[0], judges):
        counts = confusion(table, reference, judge)
        counts = counts.loc[(counts.sum(axis=1) > 0) | (counts.index != UNPARSED),
                            (counts.sum(axis=0) > 0) | (counts.columns != UNPARSED)]
        ax.imshow(counts.to_numpy(), cmap="Blues")
        peak = counts.to_numpy().max() or 1
        for (i, j), value in np.ndenumerate(counts.to_numpy()):
            ax.text(j, i, str(value), ha="center", va="center", fontsize=10,
                    color="white" if value > 0.6 * peak else "black")
        ax.grid(False)
        ax.set_xticks(range(counts.shape[1]), list(counts.columns))
        ax.set_yticks(range(counts.shape[0]), list(counts.index))
        ax.set_xlabel(grader_name(judge))
        ax.set_ylabel(grader_name(reference) if ax is axes[0][0] else "")
    fig.tight_layout()
    return fig


def plot_cost(medians: pd.DataFrame, runtime: str):
    """Stacked median seconds per item by stage, one bar per corpus and strategy (rows); stages named
    in words (:func:`stage_words`), the legend below the bars."""
    seconds = [c for c in medians.columns if c.endswith("_seconds")]
    labels = [f"{DATASETS.get(c, c)}: {s}" for c, s in zip(medians["corpus"], medians["strategy"])]
    fig, ax = plt.subplots(figsize=(8, 0.45 * len(labels) + 2.2))
    left = np.zeros(len(labels))
    y = np.arange(len(labels))
    for column in seconds:
        ax.barh(y, medians[column], left=left, label=stage_words(column.removesuffix("_seconds")))
        left += medians[column].to_numpy()
    ax.set_yticks(y, labels)
    ax.invert_yaxis()
    ax.set_xlabel("median seconds per item (descriptive, no interval)")
    ax.set_title(f"recorded with {runtime}", fontsize=9)
    ax.grid(axis="y", visible=False)
    ax.legend(fontsize=9, loc="upper center", bbox_to_anchor=(0.5, -0.18), ncol=2, frameon=False)
    fig.tight_layout()
    return fig
