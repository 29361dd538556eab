"""Post 02: the notebook's sections, one call each, over a ``evaluation.matrix.MatrixResult``.

Handles: chunk health per corpus, cell summaries with intervals, the recall heatmaps, paired
retriever comparisons, the two-model comparison, the balanced ranking normalised on each
corpus's cheapest cell, token-budget tables and curves, span metrics and ranking stability.
Every sentence of prose it returns is built from the numbers it was given. Not handled:
running retrieval (``evaluation.matrix``), the formulas, the truncation section
(``reports.post02.truncation``).
"""

from __future__ import annotations

from itertools import combinations
from typing import Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from chunklab_core.stats import claims, bootstrap as stats
from chunklab_core.reports.verdict_tables import design_of, paired_interval, question_documents
from chunklab_core.evaluation.budget import recall_at_budget, recall_token_curve
from chunklab_core.chunking.health import chunk_health_table
from chunklab_core.chunking import strategy_label
from chunklab_core.data.gold_advice import located_evidence
from chunklab_core.stats.rank_stability import kendall_tau_ci, strategy_scores
from chunklab_core.data.corpora import CORPUS_LABELS
from chunklab_core.evaluation.matrix import MatrixResult, cell_summary
from chunklab_core.evaluation.span_metrics import SPAN_MEASURES
from chunklab_core.evaluation.measures import column, depth_columns, interval_columns, largest_k, require_columns
from chunklab_core.reports.plots import strategy_styles
from chunklab_core.stats.selection import select_winner
from chunklab_core.retrieval.registry import BASELINE, compared_with, needs_model, rows_of_model, spec, uses_no_model

KEYS = ["corpus", "model", "strategy", "retriever"]


def _model_rows(per_question: pd.DataFrame, model: str) -> pd.DataFrame:
    """Rows of ``model`` plus BM25 (which has no model)."""
    return rows_of_model(per_question, model)


def evidence_text(corpora) -> str:
    """How many questions over how many documents each corpus holds, and what that means for the
    intervals: documents are resampled, and a corpus with fewer than
    ``stats.clustered.MIN_RELIABLE_CLUSTERS`` documents gets a warning."""
    from chunklab_core.stats.clustered import MIN_RELIABLE_CLUSTERS

    parts, few = [], []
    for name, corpus in corpora.items():
        documents = len({q.doc_id for q in corpus.questions})
        parts.append(f"{CORPUS_LABELS.get(name, name)}: {len(corpus.questions):,} questions over {documents:,} "
                     f"documents (of {len(corpus.documents):,})")
        if documents < MIN_RELIABLE_CLUSTERS:
            few.append(f"{CORPUS_LABELS.get(name, name)} ({documents})")
    text = "; ".join(parts) + "."
    if few:
        text += (f" With fewer than {MIN_RELIABLE_CLUSTERS} documents a cluster bootstrap is unreliable "
                 f"(Cameron, Gelbach & Miller 2008): read the intervals of {', '.join(few)} as a rough guide.")
    return text


def chunk_health(matrix: MatrixResult, corpora, strategies: Sequence[str]) -> pd.DataFrame:
    """Chunk-health rows per (corpus, strategy), with the first model's truncation share."""
    frames = []
    for name, corpus in corpora.items():
        evidence = located_evidence(corpus)  # given spans, else gold located once (gold_advice)
        table = chunk_health_table(corpus.documents, {s: matrix.chunks[(name, s)] for s in strategies},
                                   evidence=evidence or None)
        table.insert(0, "corpus", name)
        frames.append(table)
    health = pd.concat(frames, ignore_index=True)
    if matrix.truncated is not None and len(matrix.truncated):
        first = matrix.truncated.drop_duplicates(["corpus", "strategy"])
        health = health.merge(first[["corpus", "strategy", "share truncated"]], how="left",
                              left_on=["corpus", "strategy"], right_on=["corpus", "strategy"])
    return health


def summary_metrics(columns: Sequence[str], k: int) -> list[str]:
    """The summary's metric columns: recall, complete and hit at ``k``, the rank measures (rr,
    nDCG) at the table's depth (its largest k), tokens and context efficiency at ``k``.

    Every one must be in ``columns``: a missing measure raises ``ValueError`` naming it, it is
    never left out of the summary silently.
    """
    recall, rank = column("recall", k), depth_columns(largest_k(columns))
    wanted = [recall, column("complete", k), column("hit", k), *rank, column("tokens", k),
              column("context_efficiency", k)]
    return require_columns(columns, wanted, "the per-question table")


def summary_with_intervals(per_question: pd.DataFrame, k: int, resamples: int, seed: int) -> pd.DataFrame:
    """Cell means of the main metrics (:func:`summary_metrics`), and a 95% interval on
    recall@k (questions with gold): documents resampled when the questions share documents
    (``stats.clustered``), questions otherwise; column ``design`` says which."""
    import warnings

    from chunklab_core.stats.clustered import clustered_bootstrap_ci, shares_documents

    recall = column("recall", k)
    summary = cell_summary(per_question, summary_metrics(list(per_question.columns), k))
    lows, highs, designs = [], [], []
    for _, cell in summary.iterrows():
        rows = per_question[(per_question[KEYS] == cell[KEYS].values).all(axis=1)]
        rows = rows[rows[recall].notna()]
        values = rows[recall].to_numpy()
        if len(values) == 0:
            lows.append(np.nan), highs.append(np.nan), designs.append("")
            continue
        documents = rows["doc_id"].to_numpy() if "doc_id" in rows else None
        if documents is not None and shares_documents(documents) and len(set(documents)) > 1:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)
                interval = clustered_bootstrap_ci(values, documents, resamples=resamples, seed=seed)
        else:
            interval = stats.bootstrap_ci(values, resamples=resamples, seed=seed)
        lows.append(interval.low), highs.append(interval.high), designs.append(design_of(documents))
    low, high = interval_columns(recall)
    summary[low] = lows
    summary[high] = highs
    summary["design"] = designs
    return summary


def plot_matrix(summary: pd.DataFrame, k: int, model: str):
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
        image = ax.imshow(grid.to_numpy(dtype=float), aspect="auto", cmap="viridis", vmin=0, vmax=1)
        for (i, j), value in np.ndenumerate(grid.to_numpy(dtype=float)):
            if not np.isnan(value):
                ax.text(j, i, f"{value:.2f}", ha="center", va="center", fontsize=7,
                        color="white" if value < 0.6 else "black")
        ax.set_xticks(range(len(retrievers)), retrievers)
        ax.set_title(CORPUS_LABELS.get(corpus, corpus), fontsize=9)
        ax.grid(False)
    axes[0][0].set_yticks(range(len(strategies)), [strategy_label(s) for s in strategies])
    fig.colorbar(image, ax=axes[0].tolist(), label=column("recall", k), shrink=0.8)
    return fig


def matrix_table(summary: pd.DataFrame, k: int, model: str) -> pd.DataFrame:
    """recall@k with its interval as text, strategies x (corpus, retriever)."""
    table = rows_of_model(summary, model).copy()
    recall = column("recall", k)
    low, high = interval_columns(recall)
    # a strategy renamed for what it did on a corpus (``structure.label_fallbacks``) keeps its row,
    # and its cells there say so
    base = table["strategy"].map(strategy_label)
    note = np.where(table["label"] != base, " (paragraphs)", "")
    table["cell"] = [f"{r[recall]:.3f} [{r[low]:.3f}, {r[high]:.3f}]{n}" for (_, r), n in zip(table.iterrows(), note)]
    table["row"] = base
    wide = table.pivot(index="row", columns=["corpus", "retriever"], values="cell")
    wide.index.name = "label"
    order = list(dict.fromkeys(table["row"]))
    return wide.reindex(order)


def paired_retrievers(per_question: pd.DataFrame, k: int, model: str, resamples: int, seed: int) -> pd.DataFrame:
    """Dense and hybrid minus BM25 on the same questions, per (corpus, strategy)."""
    rows = []
    data = _model_rows(per_question, model)
    for (corpus, strategy), group in data.groupby(["corpus", "strategy"], sort=False):
        wide = group.pivot(index="qid", columns="retriever", values=column("recall", k)).dropna()
        if BASELINE not in wide:
            continue
        documents = question_documents(group)
        documents = None if documents is None else documents.reindex(wide.index).to_numpy()
        for other in [r for r in compared_with(BASELINE) if r in wide]:
            a, b = wide[other].to_numpy(), wide[BASELINE].to_numpy()
            d = paired_interval(a, b, resamples, seed, documents)
            q = stats.paired_difference_ci(a, b, resamples, seed)
            rows.append({"corpus": corpus, "strategy": strategy_label(strategy), "comparison": f"{other} − {BASELINE}",
                         "difference": d.mean, "low": d.low, "high": d.high,
                         "verdict": claims.pair_verdict(other, BASELINE, d.low, d.high),
                         "questions": len(wide), "design": design_of(documents),
                         "question low": q.low, "question high": q.high,
                         "question verdict": claims.pair_verdict(other, BASELINE, q.low, q.high)})
    return pd.DataFrame(rows)


def paired_models(per_question: pd.DataFrame, k: int, models: Sequence[str], resamples: int,
                  seed: int) -> pd.DataFrame:
    """Recall@k of each later model minus ``models[0]``, on the same questions, per (corpus, retriever, strategy).

    Only the retrievers that use a model and the cells both models ran; the interval resamples
    documents where questions share them (column ``design``), the question-level one beside it.
    Post 00 cites these rows for its embedding-model advice.
    """
    columns = ["corpus", "retriever", "strategy", "comparison", "difference", "low", "high", "verdict", "questions",
               "design", "question low", "question high", "question verdict"]
    rows = []
    if len(models) < 2:
        return pd.DataFrame(rows, columns=columns)  # one model run: the table post 00 reads, empty
    first = models[0]
    data = per_question[per_question["retriever"].map(needs_model) & per_question["model"].isin(list(models))]
    for (corpus, retriever, strategy), group in data.groupby(["corpus", "retriever", "strategy"], sort=False):
        wide = group.pivot_table(index="qid", columns="model", values=column("recall", k), aggfunc="first").dropna()
        if first not in wide:
            continue
        documents = question_documents(group.drop_duplicates("qid"))
        documents = None if documents is None else documents.reindex(wide.index).to_numpy()
        for other in [m for m in models[1:] if m in wide]:
            a, b = wide[other].to_numpy(), wide[first].to_numpy()
            d = paired_interval(a, b, resamples, seed, documents)
            q = stats.paired_difference_ci(a, b, resamples, seed)
            rows.append({"corpus": corpus, "retriever": retriever, "strategy": strategy_label(strategy),
                         "comparison": f"{other} − {first}", "difference": d.mean, "low": d.low, "high": d.high,
                         "verdict": claims.pair_verdict(other, first, d.low, d.high), "questions": len(wide),
                         "design": design_of(documents), "question low": q.low, "question high": q.high,
                         "question verdict": claims.pair_verdict(other, first, q.low, q.high)})
    return pd.DataFrame(rows, columns=columns)


def describe_paired(paired: pd.DataFrame) -> str:
    """Counts of the series' pair verdicts (``claims.pair_verdict``) per corpus and comparison, as prose."""
    if paired.empty:
        return "No paired comparison (BM25 and another retriever are both needed)."
    parts = []
    for (corpus, comparison), group in paired.groupby(["corpus", "comparison"], sort=False):
        counts = group["verdict"].value_counts()
        other = comparison.split(" − ")[0]
        parts.append(f"**{CORPUS_LABELS.get(corpus, corpus)}**, {comparison}: {other} ahead in "
                     f"{counts.get(f'{other} ahead', 0)}, BM25 ahead in {counts.get('bm25 ahead', 0)}, "
                     f"{claims.NOT_TOLD_APART} in {counts.get(claims.NOT_TOLD_APART, 0)} "
                     f"of {len(group)} strategies (mean difference {group['difference'].mean():+.3f}).")
    return " ".join(parts)


def compare_models(per_question: pd.DataFrame, k: int, models: Sequence[str], resamples: int, seed: int):
    """Dense recall@k per strategy under each model, and each model's selection verdict."""
    if len(models) < 2:
        return pd.DataFrame(), "Only one embedding model was run."
    dense = per_question[per_question["retriever"].map(lambda r: spec(r).stored and needs_model(r))]
    rows, texts = [], []
    for corpus in dict.fromkeys(dense["corpus"]):
        sub = dense[dense["corpus"] == corpus]
        if sub["model"].nunique() < 2:
            continue
        winners = {}
        common = set.intersection(*(set(sub.loc[sub["model"] == m, "strategy"]) for m in models))
        ordered = [s for s in dict.fromkeys(sub["strategy"]) if s in common]  # both models, same candidates
        for model in models:
            wide = sub[sub["model"] == model].pivot(index="qid", columns="strategy", values=column("recall", k))
            wide = wide[ordered].dropna()
            if wide.empty:
                continue
            verdict = select_winner(wide.to_numpy(), [strategy_label(s) for s in wide.columns],
                                    resamples=resamples, seed=seed)
            winners[model] = verdict
            for strategy, value in wide.mean().items():
                rows.append({"corpus": corpus, "model": model, "strategy": strategy_label(strategy),
                             column("recall", k): value})
        if len(winners) == 2:
            (m1, v1), (m2, v2) = winners.items()
            same = v1.leader == v2.leader
            texts.append(f"On {CORPUS_LABELS.get(corpus, corpus)}, among the {len(ordered)} strategies both models ran, "
                         f"the dense leader is **{v1.leader}** with {m1} "
                         f"and **{v2.leader}** with {m2} ({'the same' if same else 'the winner changes'}). "
                         f"{m1}: {v1.headline()} {m2}: {v2.headline()}")
    table = pd.DataFrame(rows)
    if not table.empty:
        table = table.pivot(index="strategy", columns=["corpus", "model"], values=column("recall", k))
    return table, " ".join(texts) or "The second model was not run on any corpus."


def balanced_matrix(summary: pd.DataFrame, k: int, lam: float) -> pd.DataFrame:
    """balanced = recall@k − λ·(tokens@k/T_min − 1), T_min the cheapest cell of the corpus's matrix."""
    frames = []
    recall, tokens = column("recall", k), column("tokens", k)
    for corpus, group in summary.groupby("corpus", sort=False):
        group = group.dropna(subset=[recall, tokens]).copy()
        group = group[group[tokens] > 0]
        t_min = group[tokens].min()
        group["balanced"] = stats.balanced_score(group[recall].to_numpy(), group[tokens].to_numpy(),
                                                 lam=lam, t_min=t_min)
        group["tokens / T_min"] = group[tokens] / t_min
        group["recall rank"] = group[recall].rank(ascending=False, method="min").astype(int)
        group["balanced rank"] = group["balanced"].rank(ascending=False, method="min").astype(int)
        frames.append(group.sort_values("balanced", ascending=False))
    columns = ["corpus", "model", "label", "retriever", recall, tokens, "tokens / T_min", "balanced",
               "recall rank", "balanced rank"]
    return pd.concat(frames, ignore_index=True)[columns]


def _with_model(row) -> str:
    return row["retriever"] if uses_no_model(row["model"]) else f"{row['retriever']} ({row['model']})"


def describe_balanced(balanced: pd.DataFrame, k: int) -> str:
    parts = []
    recall = column("recall", k)
    for corpus, group in balanced.groupby("corpus", sort=False):
        best_recall = group.sort_values(recall, ascending=False).iloc[0]
        best = group.iloc[0]
        parts.append(f"**{CORPUS_LABELS.get(corpus, corpus)}**: recall@{k} is highest for {best_recall['label']} / "
                     f"{_with_model(best_recall)} ({best_recall[recall]:.3f} at {best_recall['tokens / T_min']:.1f}× "
                     f"the cheapest cell's tokens); the balanced leader is {best['label']} / {_with_model(best)} "
                     f"({best[recall]:.3f} at {best['tokens / T_min']:.1f}×).")
    return " ".join(parts)


def _runs_for(matrix: MatrixResult, model: str):
    for (corpus, run_model, strategy, retriever), run in matrix.runs.items():
        if run_model == model or not needs_model(retriever):
            yield corpus, strategy, retriever, run


def budget_table(matrix: MatrixResult, budgets: Sequence[int], model: str) -> pd.DataFrame:
    """Mean slot recall at each token budget, per (corpus, strategy, retriever)."""
    frames = []
    for corpus, strategy, retriever, run in _runs_for(matrix, model):
        table = recall_at_budget(run, budgets)
        frames.append(table)
    tidy = pd.concat(frames, ignore_index=True)
    means = tidy.groupby(["corpus", "strategy", "retriever", "budget"], sort=False)["recall"].mean().reset_index()
    means["strategy"] = means["strategy"].map(strategy_label)
    return means.pivot(index=["corpus", "strategy"], columns=["retriever", "budget"], values="recall")


def budget_intervals(matrix: MatrixResult, budgets: Sequence[int], model: str, resamples: int,
                     seed: int) -> pd.DataFrame:
    """Mean slot recall at each token budget with its 95% interval, per (corpus, strategy, retriever).

    Each question reads its recorded deep ranking (``evaluation.budget.budget_run``), so small
    chunks are not cut off at the fixed-k depth; ``depth binds`` is the share of questions whose
    recorded ranking ended before the budget was spent. Intervals resample documents when the
    questions share them (``stats.clustered``), questions otherwise (column ``design``).
    """
    import warnings

    from chunklab_core.stats.clustered import clustered_bootstrap_ci, shares_documents

    rows = []
    for corpus, strategy, retriever, run in _runs_for(matrix, model):
        table = recall_at_budget(run, budgets)
        documents = {q.qid: q.doc_id for q in run.corpus.questions}
        for budget, group in table.groupby("budget", sort=True):
            scored = group[group["recall"].notna()]
            if scored.empty:
                continue
            values = scored["recall"].to_numpy()
            docs = scored["qid"].map(documents).to_numpy()
            if shares_documents(docs) and len(set(docs)) > 1:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", UserWarning)
                    interval = clustered_bootstrap_ci(values, docs, resamples, seed)
            else:
                interval = stats.bootstrap_ci(values, resamples, seed)
            rows.append({"corpus": corpus, "strategy": strategy_label(strategy), "retriever": retriever,
                         "budget": int(budget), "recall": interval.mean, "low": interval.low, "high": interval.high,
                         "questions": len(values), "design": design_of(docs),
                         "mean tokens read": float(scored["tokens_used"].mean()),
                         "depth binds": float(scored["depth_binds"].mean())})
    return pd.DataFrame(rows)


def budget_view(budget: pd.DataFrame) -> pd.DataFrame:
    """The budget table as a reader scans it: strategies x (corpus, retriever, budget), 'recall [low, high]'.

    † marks a cell where the recorded depth ended the reading of some question before its budget.
    """
    cells = budget.assign(cell=[f"{mean:.2f} [{low:.2f}, {high:.2f}]" + (" †" if binds > 0 else "")
                                for mean, low, high, binds in zip(budget["recall"], budget["low"], budget["high"],
                                                                  budget["depth binds"])])
    wide = cells.pivot(index="strategy", columns=["corpus", "retriever", "budget"], values="cell")
    return wide.reindex(list(dict.fromkeys(budget["strategy"])))


def plot_budget_curves(matrix: MatrixResult, model: str, ks: Sequence[int]):
    """Recall against mean returned tokens (k = 1..10), a panel per corpus x retriever."""
    curves = []
    for corpus, strategy, retriever, run in _runs_for(matrix, model):
        try:
            curves.append(recall_token_curve(run))
        except ValueError:
            continue
    data = pd.concat(curves, ignore_index=True)
    corpora = list(dict.fromkeys(data["corpus"]))
    retrievers = list(dict.fromkeys(data["retriever"]))
    fig, axes = plt.subplots(len(corpora), len(retrievers), figsize=(3.4 * len(retrievers), 2.8 * len(corpora)),
                             squeeze=False, sharey="row")
    strategies = list(dict.fromkeys(data["strategy"]))
    styles = strategy_styles(strategies)  # colour by family (plots.FAMILY_COLOURS)
    for i, corpus in enumerate(corpora):
        for j, retriever in enumerate(retrievers):
            ax = axes[i][j]
            panel = data[(data["corpus"] == corpus) & (data["retriever"] == retriever)]
            for s_index, strategy in enumerate(strategies):
                line = panel[panel["strategy"] == strategy]
                if len(line):
                    ax.plot(line["mean_tokens"], line["recall"], markersize=3, linewidth=1,
                            label=strategy_label(strategy), **styles[strategy])
            ax.set_xscale("log")
            ax.xaxis.set_minor_formatter(plt.NullFormatter())  # minor labels collide on short log ranges
            ax.set_title(f"{CORPUS_LABELS.get(corpus, corpus)} · {retriever}", fontsize=8)
            if i == len(corpora) - 1:
                ax.set_xlabel("mean returned tokens")
            if j == 0:
                ax.set_ylabel("slot recall")
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=4, fontsize=7, bbox_to_anchor=(0.5, 0.0))
    fig.tight_layout(rect=(0, 0.035 + 0.3 / (2.8 * len(corpora)), 1, 1))  # room for the legend below the panels
    return fig


def span_table(per_question: pd.DataFrame, k: int, model: str) -> pd.DataFrame:
    """Span recall, precision, IoU and complete evidence at k, for corpora with character offsets."""
    columns = [column(name, k) for name in SPAN_MEASURES]
    data = _model_rows(per_question, model).dropna(subset=[columns[0]])
    if data.empty:
        return pd.DataFrame(columns=["corpus", "strategy", "retriever", *columns])
    table = data.groupby(["corpus", "strategy", "retriever"], sort=False)[columns].mean().reset_index()
    table["strategy"] = table["strategy"].map(strategy_label)
    return table


def stability(per_question: pd.DataFrame, k: int, ks: Sequence[int], models: Sequence[str], resamples: int,
              seed: int, drop: dict[str, set[str]] | None = None) -> pd.DataFrame:
    """Kendall τ (with interval) between strategy rankings across retrievers, models, corpora and k.

    ``drop`` maps a corpus to strategies left out of every ranking on it (e.g. the strategies whose
    chunks the embedding model cuts, from ``reports.post02.claims.heavily_truncated``).
    """
    rows = []
    metric = column("recall", k)
    first = models[0]
    drop = drop or {}

    def wide(corpus, retriever, model=None, measure_column=metric):
        sub = per_question[(per_question["corpus"] == corpus) & (per_question["retriever"] == retriever)]
        if model is not None and needs_model(retriever):
            sub = sub[sub["model"] == model]
        sub = sub[~sub["strategy"].isin(drop.get(corpus, set()))]
        return strategy_scores(sub, measure_column)

    corpora = list(dict.fromkeys(per_question["corpus"]))
    retrievers = list(dict.fromkeys(per_question["retriever"]))

    def add(kind, name_a, name_b, a, b):
        common = [c for c in a.columns if c in set(b.columns)]  # e.g. a second model run on fewer strategies
        a, b = a[common], b[common]
        if len(common) < 3 or a.empty or b.empty:
            return
        result = kendall_tau_ci(a, b, resamples, seed)
        rows.append({"across": kind, "setting a": name_a, "setting b": name_b, "tau": result.tau,
                     "low": result.low, "high": result.high, "strategies": result.strategies,
                     "paired": result.paired})

    for corpus in corpora:
        for r_a, r_b in combinations(retrievers, 2):
            add("retrievers", f"{corpus} · {r_a}", f"{corpus} · {r_b}", wide(corpus, r_a, first), wide(corpus, r_b, first))
        for m_a, m_b in combinations(models, 2):
            a, b = wide(corpus, "dense", m_a), wide(corpus, "dense", m_b)
            if not a.empty and not b.empty:
                add("embedding models", f"{corpus} · {m_a}", f"{corpus} · {m_b}", a, b)
        lo, hi = min(ks), max(ks)
        add("k", f"{corpus} · bm25 · recall@{lo}", f"{corpus} · bm25 · recall@{hi}",
            wide(corpus, "bm25", measure_column=column("recall", lo)),
            wide(corpus, "bm25", measure_column=column("recall", hi)))
    for c_a, c_b in combinations(corpora, 2):
        add("corpora", f"{c_a} · bm25", f"{c_b} · bm25", wide(c_a, "bm25"), wide(c_b, "bm25"))
    return pd.DataFrame(rows)


def describe_stability(table: pd.DataFrame) -> str:
    if table.empty:
        return "Not enough settings to compare rankings."
    parts = []
    for kind, group in table.groupby("across", sort=False):
        parts.append(f"across {kind}: mean τ {group['tau'].mean():.2f} (range {group['tau'].min():.2f} to "
                     f"{group['tau'].max():.2f}, {len(group)} comparisons)")
    return "Kendall's τ between strategy rankings — " + "; ".join(parts) + "."
