"""Post 03's two figures drawn from its tables: interval width against sample size, and the
leader's mean probability of being best against sample size.

Handles: drawing (log axes, readable ticks, labels). Not handled: computing the tables
(``post03.tables.width_by_sample_size``, ``stats.simulation.leader_probability_curve``) or
saving (``reports.plots.save_figure``). The figure is returned open, so the notebook shows it
at the end of the cell, after the cell's prose and table.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

# imported for its side effect too: the series' fixed figure style (rcParams)
from chunklab_core.reports import plots  # noqa: F401


def plot_width_vs_questions(widths: pd.DataFrame, metric: str):
    """Measured mean interval width and the square-root law against the number of questions (log-log)."""
    fig, ax = plt.subplots(figsize=(6.5, 4))
    ax.plot(widths["questions"], widths["mean width"], "o-", label="measured (mean over strategies)")
    ax.plot(widths["questions"], widths["square-root law"], "--", label="square-root law from the full sample")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xticks(widths["questions"], [f"{q:,}" for q in widths["questions"]])
    ax.minorticks_off()  # no colliding labels
    both = widths[["mean width", "square-root law"]]
    y_ticks = np.geomspace(both.min().min(), both.max().max(), 5)
    ax.set_yticks(y_ticks, [f"{v:.3f}" for v in y_ticks])
    ax.set_xlabel("questions")
    ax.set_ylabel(f"95% interval width of {metric}")
    ax.legend()
    return fig


def plot_leader_probability(curve: pd.DataFrame, true_rates: tuple[float, float] = (0.60, 0.55)):
    """Mean probability of being best of the truly better candidate against the number of questions."""
    fig, ax = plt.subplots(figsize=(6.5, 4))
    ax.plot(curve["n_questions"], curve["mean_probability_best"], "o-")
    ax.set_xscale("log")
    ax.set_ylim(0.45, 1.01)
    ax.set_xlabel("questions")
    ax.set_ylabel(f"mean probability of being best (true {true_rates[0]:.2f} vs {true_rates[1]:.2f})")
    return fig
