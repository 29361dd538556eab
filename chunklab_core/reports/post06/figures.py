"""Figures of post 06 (the judge audit), drawn from the tables of :mod:`chunklab_core.reports.post06.tables`.

Handles: kappa with intervals per judge and scale, the confusion tables as annotated count
grids, the judges' pairwise kappa on the whole population, and the accuracy estimates with
their intervals. Saving (without volatile metadata) is :func:`chunklab_core.reports.plots.save_figure`.
Not handled: computing anything.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from chunklab_core.reports.plots import plt

SCALE_MARKERS = {"three-way": "o", "binary": "s"}
ESTIMATOR_COLORS = {"judge only": "tab:red", "grades only": "tab:gray",
                    "PPI (judge + grades)": "tab:blue"}


def _judge_intervals(ax, table: pd.DataFrame, judges: list, by: str, value: str, offset, fmt,
                     scale: float = 1.0, color=None) -> None:
    """One errorbar series per ``by`` group (in order of appearance): ``value`` of each judge
    (row ``judges.index(judge)``, shifted by ``offset(group)``) with its [low, high] interval,
    times ``scale``; ``low``/``high`` are the columns ``low`` and ``high`` or ``<value> low`` /
    ``<value> high``."""
    low, high = (f"{value} low", f"{value} high") if f"{value} low" in table.columns else ("low", "high")
    for group, rows in table.groupby(by, sort=False):
        y = np.array([judges.index(j) for j in rows["judge"]]) + offset(group)
        ax.errorbar(scale * rows[value], y, xerr=[scale * (rows[value] - rows[low]), scale * (rows[high] - rows[value])],
                    fmt=fmt(group), capsize=3, label=group, **({} if color is None else {"color": color(group)}))


def _judge_axis(ax, judges: list, xlabel: str, zero_line: bool) -> None:
    """Judges as rows top to bottom, the x label, the legend beside the axes (and a line at 0)."""
    if zero_line:
        ax.axvline(0, color="black", linewidth=0.8)
    ax.set_yticks(range(len(judges)), judges)
    ax.invert_yaxis()
    ax.set_xlabel(xlabel)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))


def plot_kappa(agreement: pd.DataFrame, grades: str = "the grades", against: str | None = None):
    """Cohen's kappa of every judge against ``grades`` (one reference), with intervals: per scale,
    the design-weighted kappa for the population (filled markers) and, when the table has it
    (:func:`chunklab_core.reports.post06.tables.agreement_table`), the kappa of the sheet as
    drawn (open markers), which over-represents the disagreement strata.

    ``grades`` is the wording of :func:`chunklab_core.audit.graders.grader_words`; ``against``
    picks the reference (default: ``adjudicated`` when present, else the only grader).
    """
    if "against" in agreement.columns:
        names = set(agreement["against"])
        against = against or ("adjudicated" if "adjudicated" in names else sorted(names)[0])
        agreement = agreement[agreement["against"] == against]
    judges = list(dict.fromkeys(agreement["judge"]))
    fig, ax = plt.subplots(figsize=(7, 0.8 * len(judges) + 1.4))
    if "weighted kappa" not in agreement.columns:
        offsets = {"three-way": 0.12, "binary": -0.12}
        _judge_intervals(ax, agreement, judges, "scale", "kappa", lambda s: offsets.get(s, 0.0),
                         lambda s: SCALE_MARKERS.get(s, "o"))
    else:
        parts = []
        for prefix, what in (("weighted kappa", "for the population (weighted)"), ("kappa", "sheet as drawn")):
            parts.append(pd.DataFrame({"judge": agreement["judge"],
                                       "series": agreement["scale"] + ", " + what,
                                       "value": agreement[prefix], "low": agreement[f"{prefix} low"],
                                       "high": agreement[f"{prefix} high"]}))
        long = pd.concat(parts, ignore_index=True)
        order = list(dict.fromkeys(long["series"]))
        step = 0.6 / max(len(order), 1)
        offsets = {name: (k - (len(order) - 1) / 2) * step for k, name in enumerate(order)}
        _judge_intervals(ax, long, judges, "series", "value", lambda s: offsets[s],
                         lambda s: SCALE_MARKERS.get(s.split(",")[0], "o"))
        for line in ax.get_lines():
            if "sheet" in str(line.get_label()):
                line.set_markerfacecolor("white")
        for container in ax.containers:
            if "sheet" in str(container.get_label()):
                container.lines[0].set_markerfacecolor("white")
    _judge_axis(ax, judges, f"Cohen's kappa with {grades} (95% bootstrap interval, resampling questions)", True)
    return fig


def plot_confusions(tables: dict[str, pd.DataFrame]):
    """One grid of counts per judge: its verdict (rows, labelled) against the grade (columns).

    Axis titles come from the tables' index and column names (``reports.post06.tables.confusion_tables``).
    """
    columns = min(2, len(tables))
    rows = math.ceil(len(tables) / columns)
    fig, axes = plt.subplots(rows, columns, figsize=(3.6 * columns, 2.9 * rows), squeeze=False)
    for ax, (name, table) in zip(axes.ravel(), tables.items()):
        counts = table.to_numpy()
        ax.imshow(counts, cmap="Blues", vmin=0, vmax=max(1, counts.max()))
        ax.grid(False)
        for (i, j), value in np.ndenumerate(counts):
            ax.text(j, i, str(value), ha="center", va="center",
                    color="white" if value > counts.max() / 2 else "black")
        ax.set_xticks(range(counts.shape[1]), table.columns)
        ax.set_yticks(range(counts.shape[0]), table.index)
        ax.set_title(name, fontsize=10)
        ax.set_xlabel(table.columns.name or "grade")
        ax.set_ylabel(table.index.name or "judge verdict")
    for ax in axes.ravel()[len(tables):]:
        ax.set_visible(False)
    fig.tight_layout()
    return fig


def plot_judge_pairs(pairs: pd.DataFrame, scale: str = "binary"):
    """The judges' kappa with each other on one scale (whole population): one row per pair, the
    estimate with its 95% interval, highest first."""
    chosen = pairs[pairs["scale"] == scale].sort_values("kappa").reset_index(drop=True)
    fig, ax = plt.subplots(figsize=(8, 0.5 * len(chosen) + 1.4))
    y = np.arange(len(chosen))
    ax.errorbar(chosen["kappa"], y, xerr=[chosen["kappa"] - chosen["kappa low"], chosen["kappa high"] - chosen["kappa"]],
                fmt="o", capsize=3, color="#08306b")
    ax.set_yticks(y, [f"{a} vs {b}" for a, b in zip(chosen["judge a"], chosen["judge b"])])
    ax.set_xlim(min(0.0, float(chosen["kappa low"].min())) - 0.02, 1.0)
    ax.axvline(0, color="#888", linewidth=0.8)
    ax.grid(axis="y", visible=False)
    ax.set_xlabel(f"Cohen's kappa between two judges, {scale} scale, every item (95% interval)")
    fig.tight_layout()
    return fig


def plot_accuracy(accuracy: pd.DataFrame, variant: str = "strict"):
    """Accuracy per judge by estimator (judge only, grades only, PPI), with 95% intervals."""
    chosen = accuracy[accuracy["variant"] == variant]
    judges = list(dict.fromkeys(chosen["judge"]))
    estimators = list(dict.fromkeys(chosen["estimator"]))
    fig, ax = plt.subplots(figsize=(7, 0.8 * len(judges) + 1.4))
    step = 0.22
    _judge_intervals(ax, chosen, judges, "estimator", "accuracy",
                     lambda e: (estimators.index(e) - (len(estimators) - 1) / 2) * step, lambda e: "o",
                     color=ESTIMATOR_COLORS.get)
    _judge_axis(ax, judges, f"share of answers graded correct ({variant}), 95% interval", False)
    return fig


def plot_paired_differences(paired: pd.DataFrame, grades: str = "the grades"):
    """Judge-only minus the accuracy by the audit's grades per judge and variant, paired, with 95% intervals."""
    judges = list(dict.fromkeys(paired["judge"]))
    fig, ax = plt.subplots(figsize=(7, 0.7 * len(judges) + 1.4))
    offsets = {"strict": -0.12, "lenient": 0.12}
    _judge_intervals(ax, paired, judges, "variant", "difference", lambda v: offsets.get(v, 0.0),
                     lambda v: "o" if v == "strict" else "s", scale=100)
    _judge_axis(ax, judges, f"judge-only minus accuracy by {grades} (points; paired, 95% interval)", True)
    return fig
