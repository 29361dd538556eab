"""The report of a run on your own documents: the notebook's sections, one call each.

Handles: the run's settings in one sentence (``config_text``), approximate gold matches as a table (snippet, score, the text it matched), the
recall@k table with 95% intervals, a figure of recall@k with its interval per strategy and
retriever, recall against returned tokens (one line per strategy, colours and markers
distinguishable, legend outside the axes), where the results are written (CSV and JSON in
the output folder, never a tracked file), and console progress from inside a papermill
kernel (``progress_to_console``: tqdm bars go to the kernel's own stderr, which is the
terminal of ``python -m chunklab_core.own.cli run``, instead of into the notebook).

Not handled: the verdicts (``own.recommendation``), running retrieval (``evaluation.matrix``).
"""

from __future__ import annotations

import contextlib
import json
import sys
import warnings
from pathlib import Path

import matplotlib.pyplot as plt
import matplotlib.ticker as ticker
import numpy as np
import pandas as pd

from chunklab_core.chunking import strategy_label
from chunklab_core.core.csv_cells import frame_csv
from chunklab_core.evaluation.measures import column, interval_columns
from chunklab_core.retrieval.registry import setting_name

LINE_STYLES = ("-", "--", ":", "-.")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">")


def config_text(config, config_path: str, loader_notes: str) -> str:
    """The run's settings in one sentence: config file, strategies, retrievers, models, k, target, resamples."""
    return (f"Config: {'`' + config_path + '`' if config_path else 'the defaults'}; strategies: "
            f"{', '.join(config.strategies)}; retrievers: {', '.join(config.retrievers)}; embedding models: "
            f"{', '.join(config.models)} ({config.embedding_backend}); k = {config.k}; recall target {config.recall_target:.2f}; "
            f"{config.resamples:,} paired resamples, seed {config.seed}."
            + (f" Loader notes: {loader_notes}" if loader_notes else ""))


def progress_to_console(enabled: bool):
    """A context in which tqdm bars (written to ``sys.stderr``) reach the terminal, not the notebook."""
    return contextlib.redirect_stderr(sys.__stderr__) if enabled and sys.__stderr__ is not None \
        else contextlib.nullcontext()


def load_with_notes(docs: str, questions: str):
    """``(corpus, approximate-match table, skipped-files note)`` of the user's folder and questions.

    The loader's warnings are caught: each approximate gold match becomes a row with its score.
    Its advice (``gold_advice.GoldAdvice``: headings, short gold, gold in several documents) is
    left out of the notes: :func:`advice_section` shows it in a section of its own.
    """
    from chunklab_core.data.gold_advice import GoldAdvice
    from chunklab_core.data.loaders import load_user_corpus

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        corpus = load_user_corpus(docs, questions)
    messages = [str(w.message) for w in caught if not issubclass(w.category, GoldAdvice)]
    return corpus, *approximate_matches(messages)


def advice_section(corpus) -> tuple[str, pd.DataFrame]:
    """Markdown advice on the user's corpus and the per-document heading table.

    The advice lines are ``gold_advice.corpus_advice`` (documents without headings, where
    structure-aware chunking falls back to paragraphs; gold of one short word or a bare number;
    gold found in several documents); the table is ``headings.heading_report``.
    """
    from chunklab_core.data.gold_advice import corpus_advice
    from chunklab_core.core.headings import heading_report

    lines = corpus_advice(corpus)
    text = ("No advice: every document has headings, and no gold snippet is a single short word, a bare "
            "number or found in several documents." if not lines
            else f"{len(lines)} piece(s) of advice:\n\n" + "\n".join(f"- {line}" for line in lines))
    return text, heading_report(corpus.documents)


def approximate_matches(messages: list[str]) -> tuple[pd.DataFrame, str]:
    """Rows (question, snippet, score, matched text) from the loader's warning messages; other notes."""
    import re

    pattern = re.compile(r'^(?P<file>[^:]+): id (?P<qid>.+?): gold snippet "(?P<snippet>.*)" found only '
                         r'approximately \(score (?P<score>[0-9.]+)\): "(?P<region>.*)"$')
    rows, other = [], []
    for message in messages:
        lines = message.splitlines()
        if lines and lines[0].startswith("gold snippets matched only approximately"):
            for line in lines[1:]:
                match = pattern.match(line.strip())
                if match:
                    rows.append({"question": match["qid"], "gold snippet": match["snippet"],
                                 "score": float(match["score"]), "matched text": match["region"]})
                else:
                    other.append(line)
        else:
            other.append(message)
    table = pd.DataFrame(rows, columns=["question", "gold snippet", "score", "matched text"])
    return table.sort_values("score", kind="stable").reset_index(drop=True), "\n".join(other)


def interval_table(summary: pd.DataFrame, k: int) -> pd.DataFrame:
    """recall@k [95% interval] and tokens@k, strategies x (retriever, model)."""
    table = summary.copy()
    recall = column("recall", k)
    low, high = interval_columns(recall)
    table["cell"] = [f"{r[recall]:.3f} [{r[low]:.3f}, {r[high]:.3f}]" for _, r in table.iterrows()]
    table["column"] = [setting_name(r["retriever"], r["model"])
                       for _, r in table.iterrows()]
    wide = table.pivot(index="label", columns="column", values="cell")
    return wide.reindex(list(dict.fromkeys(table["label"])))


def plot_intervals(summary: pd.DataFrame, k: int):
    """recall@k with its 95% interval: one panel per retriever (x model), strategies on the y axis."""
    columns = list(dict.fromkeys((r, m) for r, m in zip(summary["retriever"], summary["model"])))
    labels = list(dict.fromkeys(summary["label"]))
    fig, axes = plt.subplots(1, len(columns), figsize=(2.6 * len(columns) + 2.4, 0.32 * len(labels) + 1.4),
                             squeeze=False, sharey=True, sharex=True)
    for ax, (retriever, model) in zip(axes[0], columns):
        panel = summary[(summary["retriever"] == retriever) & (summary["model"] == model)].set_index("label")
        panel = panel.reindex(labels)
        y = np.arange(len(labels))
        recall = column("recall", k)
        low_column, high_column = interval_columns(recall)
        mean = panel[recall].to_numpy(dtype=float)
        low, high = panel[low_column].to_numpy(dtype=float), panel[high_column].to_numpy(dtype=float)
        ax.errorbar(mean, y, xerr=[mean - low, high - mean], fmt="o", color="#1f77b4", ecolor="#555555",
                    capsize=2, markersize=4)
        best = np.nanargmax(mean)
        ax.plot(mean[best], y[best], "o", color="#d62728", markersize=6)
        ax.set_title(setting_name(retriever, model, sep="\n"), fontsize=8)
        ax.set_xlim(-0.02, 1.02)
        ax.set_xlabel(f"recall@{k} (95% CI)", fontsize=8)
        ax.grid(axis="x", alpha=0.3)
    axes[0][0].set_yticks(range(len(labels)), labels, fontsize=8)
    axes[0][0].invert_yaxis()
    fig.tight_layout()
    return fig


def plot_recall_tokens(curves: pd.DataFrame, recall_target: float):
    """Mean slot recall against mean returned tokens (k = 1..10), a panel per retriever (x model).

    Strategies are told apart by colour (tab10) and by marker and line style together, so
    more than ten strategies stay distinguishable; the legend sits below the panels.
    """
    curves = curves.copy()
    curves["panel"] = [setting_name(r, m) for r, m in zip(curves["retriever"], curves["model"])]
    panels = list(dict.fromkeys(curves["panel"]))
    strategies = list(dict.fromkeys(curves["strategy"]))
    fig, axes = plt.subplots(1, len(panels), figsize=(3.6 * len(panels), 3.3), squeeze=False, sharey=True)
    colors = plt.get_cmap("tab10")
    for ax, panel in zip(axes[0], panels):
        data = curves[curves["panel"] == panel]
        for i, strategy in enumerate(strategies):
            line = data[data["strategy"] == strategy]
            if len(line):
                ax.plot(line["mean_tokens"], line["recall"], color=colors(i % 10), marker=MARKERS[i % len(MARKERS)],
                        linestyle=LINE_STYLES[(i // 10) % len(LINE_STYLES)], markersize=3.5, linewidth=1.2,
                        label=strategy_label(strategy))
        ax.axhline(recall_target, color="black", linewidth=0.8, linestyle=":")
        ax.set_xscale("log")
        ax.xaxis.set_major_formatter(ticker.FuncFormatter(lambda value, _: f"{value:,.0f}"))
        ax.xaxis.set_minor_formatter(ticker.NullFormatter())
        ax.set_title(panel, fontsize=9)
        ax.set_xlabel("mean returned tokens (k = 1..10)", fontsize=8)
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("mean slot recall")
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.tight_layout()
    fig.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=min(4, len(labels)),
               fontsize=7, frameon=False)
    return fig


def recall_curves(runs: dict) -> pd.DataFrame:
    """``budget.recall_token_curve`` of every run, with its model."""
    from chunklab_core.evaluation.budget import recall_token_curve

    frames = []
    for (_, model, _, _), run in runs.items():
        try:
            frames.append(recall_token_curve(run).assign(model=model))
        except ValueError:
            continue
    return pd.concat(frames, ignore_index=True)


def write_outputs(folder: str | Path, tables: dict[str, pd.DataFrame], record: dict) -> list[str]:
    """Write each table as ``<name>.csv`` and ``record`` as ``recommendation.json`` into ``folder``."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, table in tables.items():
        (folder / f"{name}.csv").write_text(frame_csv(table, index=not isinstance(table.index, pd.RangeIndex), float_format="%.5f"), encoding="utf-8", newline="")
        written.append(f"{name}.csv")
    (folder / "recommendation.json").write_text(json.dumps(record, indent=2, ensure_ascii=False, default=str) + "\n",
                                                encoding="utf-8")
    return [*written, "recommendation.json"]


def figure_png(fig) -> bytes:
    """The PNG of ``fig`` without timestamps (drawn once: the file and the page embed the same bytes)."""
    import io

    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=120, bbox_inches="tight", metadata={"Software": None})
    return buffer.getvalue()


def save_figure(fig, folder: str | Path, name: str) -> str:
    """``<folder>/<name>.png`` without timestamps (``fig``: a figure or its ``figure_png`` bytes); the file name."""
    (Path(folder) / f"{name}.png").write_bytes(fig if isinstance(fig, bytes) else figure_png(fig))
    return f"{name}.png"
