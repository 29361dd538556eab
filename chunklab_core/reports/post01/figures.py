"""Post 01's three figures, drawn from its tables: recall at k, recall against returned tokens, chunk sizes.

Handles: choosing what each figure shows (the results table with its interval bands; the
indexed spans' token counts per strategy, labelled by strategy name). The drawing itself is
the series' shared plotting code (:mod:`chunklab_core.reports.plots`), which also saves and
shows a figure (``plots.show_figure``). Not handled: computing the tables (``post01.tables``).
"""

from __future__ import annotations

from typing import Sequence

import pandas as pd

from chunklab_core.chunking import strategy_label
from chunklab_core.reports import plots
from chunklab_core.reports.post01.benchmark import BenchmarkResult


def recall_at_k(results: pd.DataFrame, ks: Sequence[int]):
    """Recall@k per strategy against k, each line with its 95% interval band."""
    return plots.plot_metric_at_k(results, ks, ci=results.set_index("strategy"))


def recall_vs_tokens(results: pd.DataFrame, ks: Sequence[int]):
    """Recall@k against the mean tokens returned at k, one curve per strategy."""
    return plots.plot_recall_vs_tokens(results, ks)


def chunk_sizes(result: BenchmarkResult):
    """The distribution of indexed-span sizes in tokens, one per strategy (log scale)."""
    return plots.plot_size_distributions({strategy_label(name): run.chunk_tokens for name, run in result.runs.items()})
