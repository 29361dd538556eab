"""Post 02: the notebook's tables, one call each, over a ``evaluation.matrix.MatrixResult``.

Handles: chunk health per corpus, cell summaries with intervals, the recall matrix as a table,
paired retriever comparisons, the two-model comparison, the balanced ranking normalised on each
corpus's cheapest cell, token-budget tables, span metrics and ranking stability. A table shown
in the post names each corpus by its sample label (``labels``: data set, n and documents,
:func:`chunklab_core.reports.samples.labels_for`; :func:`labelled` for the tables that keep the
corpus key in ``data/``) and is at most a dozen columns wide: wider grids are shown as one row
per (corpus, strategy). Not handled: running retrieval (``evaluation.matrix``), the formulas,
the prose (``post02.prose`` and the topic modules), the figures (``post02.figures``).
"""

from __future__ import annotations

from itertools import combinations
from typing import Sequence

from collections.abc import Mapping

import numpy as np
import pandas as pd

from chunklab_core.stats import claims, bootstrap as stats
from chunklab_core.reports.verdict_tables import design_of, paired_interval, question_documents
from chunklab_core.core import numbers
from chunklab_core.evaluation.budget import recall_at_budget
from chunklab_core.chunking.health import chunk_health_table
from chunklab_core.chunking import strategy_label
from chunklab_core.data.gold_advice import located_evidence
from chunklab_core.stats.rank_stability import kendall_tau_ci, strategy_scores
from chunklab_core.evaluation.matrix import MatrixResult, cell_summary, corpus_table
from chunklab_core.evaluation.span_metrics import SPAN_MEASURES
from chunklab_core.evaluation.measures import column, depth_columns, interval_columns, largest_k, require_columns
from chunklab_core.retrieval.registry import BASELINE, EMBEDDER, compared_with, needs_model, rows_of_model, spec

KEYS = ["corpus", "model", "strategy", "retriever"]


def _model_rows(per_question: pd.DataFrame, model: str) -> pd.DataFrame:
    """Rows of ``model`` plus BM25 (which has no model)."""
    return rows_of_model(per_question, model)


def corpus_overview(corpora: Mapping, labels: Mapping[str, str]) -> pd.DataFrame:
    """``evaluation.matrix.corpus_table`` (documents, questions, characters, gold) with each corpus
    named by its sample label."""
    return corpus_table(corpora).assign(corpus=[labels[name] for name in corpora])


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
    groups = per_question.groupby(KEYS, sort=False).indices  # each cell's rows, in table order
    for _, cell in summary.iterrows():
        rows = per_question.iloc[groups.get(tuple(cell[KEYS].values), [])]
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


def labelled(table: pd.DataFrame, labels: Mapping[str, str], column_name: str = "corpus") -> pd.DataFrame:
    """``table`` with its corpus keys replaced by their sample labels, for display."""
    return table.assign(**{column_name: table[column_name].map(lambda key: labels.get(key, key))})


def matrix_table(summary: pd.DataFrame, k: int, model: str, labels: Mapping[str, str]) -> pd.DataFrame:
    """recall@k with its interval as text, one row per (corpus, strategy), one column per retriever."""
    table = rows_of_model(summary, model).copy()
    recall = column("recall", k)
    low, high = interval_columns(recall)
    # a strategy renamed for what it did on a corpus (``structure.label_fallbacks``) keeps its row,
    # and its cells there say so
    base = table["strategy"].map(strategy_label)
    note = np.where(table["label"] != base, " (paragraphs)", "")
    table["cell"] = [numbers.estimate(r[recall], r[low], r[high]) + n for (_, r), n in zip(table.iterrows(), note)]
    table["row"] = base
    table["sample"] = table["corpus"].map(labels)
    wide = table.pivot(index=["sample", "row"], columns="retriever", values="cell")
    wide.index.names = ["corpus", "label"]
    wide.columns.name = None
    order = list(dict.fromkeys(zip(table["sample"], table["row"])))
    return wide.reindex(pd.MultiIndex.from_tuples(order, names=wide.index.names))[
        list(dict.fromkeys(table["retriever"]))]


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


def model_coverage(corpora: Mapping, model: str, strategies: Sequence[str], store=None) -> pd.DataFrame:
    """Per corpus sample: how many of ``strategies`` × the stored retrievers that use a model have
    ``model``'s ranking recorded in the run store (``recorded`` of ``cells``), in the scope the corpus is
    searched in: where a second model is read, and where it is still being recorded. Asks the store for
    the files only; loads nothing."""
    from chunklab_core.retrieval.recorded_runs import Cell, corpus_sample_label, default_store
    from chunklab_core.retrieval.registry import stored_retrievers

    store = store if store is not None else default_store()
    retrievers = [r for r in stored_retrievers() if needs_model(r)]
    rows = []
    for name, corpus in corpora.items():
        sample = corpus_sample_label(corpus)
        scope = getattr(corpus, "scope", "corpus")  # the scope it is searched in (retrieval.scope)
        cells = [Cell(sample, s, r, model, scope) for s in strategies for r in retrievers]
        rows.append({"corpus": name, "recorded": sum(store.path(c).exists() for c in cells), "cells": len(cells)})
    return pd.DataFrame(rows, columns=["corpus", "recorded", "cells"])


def read_model_corpora(coverage: pd.DataFrame | None, wanted: Sequence[str], mode: str | None = None) -> list[str]:
    """The corpora of ``wanted`` the second model is read on: in a replay (``mode``, default the
    run store's current mode), only those whose every cell is recorded (:func:`model_coverage`),
    so a corpus still being recorded is named as such instead of stopping the post; a live or
    recording run computes every wanted corpus."""
    from chunklab_core.retrieval.recorded_runs import current_mode

    if coverage is None:
        return []
    if (mode or current_mode()) != "replay":
        return list(wanted)
    complete = set(coverage.loc[coverage["recorded"] == coverage["cells"], "corpus"])
    return [c for c in wanted if c in complete]


def compare_models(per_question: pd.DataFrame, k: int, models: Sequence[str], resamples: int, seed: int):
    """Dense recall@k per strategy under each model, and per corpus each model's decision at k chunks.

    Returns ``(table, comparisons)``: ``comparisons`` holds, per corpus where two models ran,
    ``corpus``, ``strategies`` (how many both ran) and ``verdicts`` (model -> the decision engine's
    ``decision.compare.Comparison`` on recall@k: both designs, equivalence within the pool's δ, the
    simplest of the leader and its equivalents as the pick), worded by
    :func:`chunklab_core.reports.post02.prose.models_text`. The same engine as the pool, not another rule.
    """
    from chunklab_core.decision.candidates import simplicity
    from chunklab_core.decision.compare import compare, document_clusters

    if len(models) < 2:
        return pd.DataFrame(), []
    dense = per_question[per_question["retriever"].map(lambda r: spec(r).stored and needs_model(r))]
    rows, comparisons = [], []
    for corpus in dict.fromkeys(dense["corpus"]):
        sub = dense[dense["corpus"] == corpus]
        if sub["model"].nunique() < 2:
            continue
        winners = {}
        common = set.intersection(*(set(sub.loc[sub["model"] == m, "strategy"]) for m in models))
        ordered = [s for s in dict.fromkeys(sub["strategy"]) if s in common]  # both models, same candidates
        for model in models:
            mine = sub[sub["model"] == model]
            wide = mine.pivot(index="qid", columns="strategy", values=column("recall", k))
            wide = wide[ordered].dropna()
            if wide.empty:
                continue
            tokens = column("tokens", k)
            per_context = (mine.groupby("strategy")[tokens].mean() / k if tokens in mine
                           else pd.Series(float("nan"), index=ordered))
            documents = question_documents(mine)
            clusters = (document_clusters(documents.reindex(wide.index).tolist(), wide.index.tolist())
                        if documents is not None else None)
            labels = {s: strategy_label(s) for s in wide.columns}
            by_label = {label: s for s, label in labels.items()}
            verdict = compare(wide.rename(columns=labels), resamples, seed, clusters=clusters,
                              simple=lambda n: simplicity(by_label[n], float(per_context.get(by_label[n], float("nan")))))
            winners[model] = verdict
            for strategy, value in wide.mean().items():
                rows.append({"corpus": corpus, "model": model, "strategy": strategy_label(strategy),
                             column("recall", k): value})
        if len(winners) == 2:
            comparisons.append({"corpus": corpus, "strategies": len(ordered), "verdicts": winners})
    table = pd.DataFrame(rows)
    if not table.empty:
        table = table.pivot(index="strategy", columns=["corpus", "model"], values=column("recall", k))
    return table, comparisons


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


def budget_view(budget: pd.DataFrame, labels: Mapping[str, str]) -> pd.DataFrame:
    """The budget table as a reader scans it: one row per (corpus, strategy), columns retriever x
    budget, cells 'recall [low, high]'.

    † marks a cell where the recorded depth ended the reading of some question before its budget.
    """
    cells = budget.assign(cell=[numbers.estimate(mean, low, high, 2) + (" †" if binds > 0 else "")
                                for mean, low, high, binds in zip(budget["recall"], budget["low"], budget["high"],
                                                                  budget["depth binds"])],
                          sample=budget["corpus"].map(labels))
    wide = cells.pivot(index=["sample", "strategy"], columns=["retriever", "budget"], values="cell")
    wide.index.names = ["corpus", "strategy"]
    rows = pd.MultiIndex.from_tuples(list(dict.fromkeys(zip(cells["sample"], cells["strategy"]))),
                                     names=wide.index.names)
    columns = pd.MultiIndex.from_tuples(list(dict.fromkeys(zip(cells["retriever"], cells["budget"]))),
                                        names=["retriever", "budget"])
    return wide.reindex(index=rows, columns=columns)


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
            a, b = wide(corpus, EMBEDDER, m_a), wide(corpus, EMBEDDER, m_b)
            if not a.empty and not b.empty:
                add("embedding models", f"{corpus} · {m_a}", f"{corpus} · {m_b}", a, b)
        lo, hi = min(ks), max(ks)
        add("k", f"{corpus} · {BASELINE} · recall@{lo}", f"{corpus} · {BASELINE} · recall@{hi}",
            wide(corpus, BASELINE, measure_column=column("recall", lo)),
            wide(corpus, BASELINE, measure_column=column("recall", hi)))
    for c_a, c_b in combinations(corpora, 2):
        add("corpora", f"{c_a} · {BASELINE}", f"{c_b} · {BASELINE}", wide(c_a, BASELINE), wide(c_b, BASELINE))
    return pd.DataFrame(rows)
