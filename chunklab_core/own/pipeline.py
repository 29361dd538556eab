"""A run on your own documents, computed in one call: every table, figure and verdict of the report.

Handles: loading the config and the corpus (the loader's approximate-match notes kept as a
table, its advice as lines), the matrix (``evaluation.matrix.run_matrix``), the cell summary
with 95% intervals on recall@k (``stats.bootstrap.bootstrap_ci`` per cell, as post 02's
summary), chunk health with the first model's truncation share, the recommendations and the
box (``own.recommendation``), tokens at the recall target, recall at the token budgets, the
two figures, and the JSON record. Warnings raised while computing (the few-questions warning,
library deprecations) are caught and kept in ``OwnResult.notes``: shown in the report and the JSON
record, and printed on the terminal after the recommendation (``own.cli.console_notes``), never
interleaved with the progress bars.

Not handled: writing files (``own.report.write_outputs``, ``own.html_report``), the command
line (``own.cli``), several corpora at once.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from chunklab_core.chunking import strategy_label
from chunklab_core.chunking.health import chunk_health_table
from chunklab_core.data.gold_advice import located_evidence
from chunklab_core.evaluation.budget import recall_at_budget
from chunklab_core.evaluation.matrix import cell_summary, corpus_table, run_matrix
from chunklab_core.evaluation.measures import column, depth_columns, interval_columns, largest_k, require_columns
from chunklab_core.own import config as own_config
from chunklab_core.own import held_out as own_held_out
from chunklab_core.own import recommendation as own_recommendation
from chunklab_core.own import report as own_report
from chunklab_core.stats import bootstrap
from chunklab_core.retrieval.registry import needs_model

KEYS = ["corpus", "model", "strategy", "retriever"]
BASIS_LINES = (("generated questions", "questions", ("decision", "verdict")),
               ("questions at margin", "to decide", ("decision", "verdict")),
               ("held out", "held out", ("verdict at k chunks", "verdict")))  # (record key, box label, after which line)


def scope_matrix(per_question: pd.DataFrame, rec, metric: str) -> pd.DataFrame:
    """Questions x candidates of one recommendation's scope (as ``own.recommendation`` compares them)."""
    data = per_question.assign(model=per_question["model"].astype(str))
    frame = data.set_index(["strategy", "retriever", "model", "qid"])[metric].sort_index()
    return pd.concat([frame.loc[key] for key in rec.cells.values()], axis=1, keys=list(rec.cells)).dropna()


def _decision_size(rec) -> tuple[int | None, str, int]:
    """(questions that would settle it, verdict, n) of the box's decision: the matched-cost one when
    there is one, else the at-k one -- both the decision engine's figures."""
    matched = rec.matched
    if matched and isinstance(matched.get("verdict"), str):
        needed = str(matched.get("what would decide", "")).replace(",", "")
        return (int(needed) if needed.isdigit() else None), matched["verdict"], int(matched["questions"])
    v = rec.verdict
    return v.what_would_decide, v.verdict, v.n_questions


def basis(corpus, per_question: pd.DataFrame, recommendations, k: int, resamples: int, seed: int) -> dict:
    """What the recommendation rests on (``own.held_out``): the generated questions and the held-out
    check of the at-k pick (only when some questions are generated), and the questions that would
    settle the box's decision at delta."""
    if not recommendations:
        return {}
    rec = own_recommendation.primary(recommendations)
    needed, verdict, n = _decision_size(rec)
    out = {"questions at margin": own_held_out.questions_at_margin(needed, verdict, n, len(corpus.documents))}
    generated = sum(q.source == "generated" for q in corpus.questions)
    if generated:
        out["generated questions"] = {"generated": generated, "questions": len(corpus.questions),
                                      "text": own_held_out.generated_line(generated, len(corpus.questions),
                                                                          own_held_out.post04_measure())}
        wide = scope_matrix(per_question, rec, column("recall", k))
        out["held out"] = own_held_out.held_out_check(wide, rec.verdict.pick, resamples, seed,
                                                      simple=own_recommendation.simplicity_key(rec, per_question, k))
    return out


@dataclass
class OwnResult:
    """Everything the report shows, computed once."""

    docs: str
    questions: str
    config_path: str
    config: own_config.OwnConfig
    corpus: object
    corpus_table: pd.DataFrame
    approximate: pd.DataFrame
    loader_notes: str
    advice: list[str]
    headings: pd.DataFrame
    per_question: pd.DataFrame
    summary: pd.DataFrame
    health: pd.DataFrame
    recommendations: list
    targets: pd.DataFrame
    curves: pd.DataFrame
    budget: pd.DataFrame
    versions: dict
    notes: list[str] = field(default_factory=list)
    basis: dict = field(default_factory=dict)  # own.held_out: generated questions, held-out check, questions at delta

    @property
    def box(self) -> list[tuple[str, str]]:
        """The recommendation box (``recommendation.box``; ``single_cell_box`` for a one-cell run)."""
        if not self.recommendations:
            return own_recommendation.single_cell_box(self.summary, self.targets, self.config.k,
                                                      self.config.recall_target)
        lines = own_recommendation.box(self.recommendations, self.config.k, self.config.recall_target)
        for key, label, after in BASIS_LINES:  # each basis line right after the line it qualifies
            if key not in self.basis:
                continue
            labels = [name for name, _ in lines]
            anchor = next((len(labels) - labels[::-1].index(name) for name in after if name in labels), 2)
            if after[0] == "decision":  # after the decision's earlier basis lines, in BASIS_LINES order
                while anchor < len(lines) and lines[anchor][0] in ("questions", "to decide"):
                    anchor += 1
            lines = lines[:anchor] + [(label, self.basis[key]["text"])] + lines[anchor:]
        return lines

    @property
    def recommendation_table(self) -> pd.DataFrame:
        return own_recommendation.recommendation_table(self.recommendations, self.config.recall_target)

    def record(self) -> dict:
        """``recommendation.json``: the box first, then each scope's record, corpus, config, versions."""
        return {"box": [{"label": label, "text": text} for label, text in self.box],
                "corpus": {"docs": self.docs, "questions": self.questions, "documents": len(self.corpus.documents),
                           "questions": len(self.corpus.questions)},
                "config": {**self.config.as_parameters(), "recall_target": self.config.recall_target,
                           "k": self.config.k, "seed": self.config.seed, "config_file": self.config_path or None},
                "recommendations": [r.to_record(self.config.recall_target) for r in self.recommendations],
                "notes": list(self.notes), "versions": self.versions,
                **{key: value for key, value in self.basis.items()}}

    def tables(self) -> dict[str, pd.DataFrame]:
        """The CSV tables of the output folder, by file stem."""
        return {"recommendation": self.recommendation_table, "per_question": self.per_question,
                "matrix": self.summary, "chunk_health": self.health, "tokens_at_target": self.targets,
                "budget": self.budget, "approximate_gold": self.approximate, "headings": self.headings}


def summary_with_intervals(per_question: pd.DataFrame, k: int, resamples: int, seed: int) -> pd.DataFrame:
    """Cell means of recall, complete and hit at ``k``, the rank measures at the table's depth,
    tokens and context efficiency at ``k``; a percentile-bootstrap 95% interval on recall@k
    (``stats.bootstrap.bootstrap_ci``, the same seed for every cell) -- post 02's summary."""
    recall = column("recall", k)
    wanted = [recall, column("complete", k), column("hit", k), *depth_columns(largest_k(per_question.columns)),
              column("tokens", k), column("context_efficiency", k)]
    summary = cell_summary(per_question, require_columns(list(per_question.columns), wanted, "the per-question table"))
    groups = {key: frame[recall].dropna().to_numpy() for key, frame in per_question.groupby(KEYS, sort=False)}
    lows, highs = [], []
    for _, cell in summary.iterrows():
        values = groups.get(tuple(cell[KEYS]), np.zeros(0))
        interval = bootstrap.bootstrap_ci(values, resamples=resamples, seed=seed) if len(values) else None
        lows.append(np.nan if interval is None else interval.low)
        highs.append(np.nan if interval is None else interval.high)
    low, high = interval_columns(recall)
    summary[low], summary[high] = lows, highs
    return summary


def chunk_health(matrix, name: str, corpus, strategies) -> pd.DataFrame:
    """Chunk-health rows per strategy (``chunking.health.chunk_health_table``), with the first
    embedding model's share of chunks longer than it reads (``share truncated``)."""
    evidence = located_evidence(corpus)
    health = chunk_health_table(corpus.documents, {s: matrix.chunks[(name, s)] for s in strategies},
                                evidence=evidence or None)
    health.insert(0, "corpus", name)
    if matrix.truncated is not None and len(matrix.truncated):
        first = matrix.truncated.drop_duplicates(["corpus", "strategy"])
        health = health.merge(first[["corpus", "strategy", "share truncated"]], how="left", on=["corpus", "strategy"])
    return health


def budget_table(runs: dict, budgets, model: str) -> pd.DataFrame:
    """Mean slot recall at each token budget (``evaluation.budget.recall_at_budget``), one row
    per strategy, one column per (retriever, budget); dense and hybrid under ``model``."""
    frames = [recall_at_budget(run, budgets) for (_, run_model, _, retriever), run in runs.items()
              if run_model == model or not needs_model(retriever)]
    tidy = pd.concat(frames, ignore_index=True)
    means = tidy.groupby(["strategy", "retriever", "budget"], sort=False)["recall"].mean().reset_index()
    means["strategy"] = means["strategy"].map(strategy_label)
    wide = means.pivot(index="strategy", columns=["retriever", "budget"], values="recall")
    wide.columns = [f"{retriever} @ {budget:,} tokens" for retriever, budget in wide.columns]
    return wide.reindex(list(dict.fromkeys(means["strategy"])))


def compute(docs: str, questions: str, config_path: str = "", resamples: int = 0, progress: bool = False,
            loaded=None) -> OwnResult:
    """The whole run (see the module docstring); ``resamples`` > 0 overrides the config's; ``loaded``: the
    ``own.report.load_with_notes`` triple of these documents and questions when the caller has read them."""
    from chunklab_core.core.versions import package_versions
    from chunklab_core.core.headings import heading_report
    from chunklab_core.data.gold_advice import corpus_advice

    config = own_config.load_config(config_path)
    if resamples:
        config.resamples = resamples
    corpus, approximate, loader_notes = loaded or own_report.load_with_notes(docs, questions)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        matrix = run_matrix({"own": corpus}, config.strategies, config.retrievers, config.models, None, config.ks,
                            config.threshold, progress=progress, backend=config.embedding_backend)
        summary = summary_with_intervals(matrix.per_question, config.k, config.resamples, config.seed)
        health = chunk_health(matrix, "own", corpus, config.strategies)
        targets = own_recommendation.tokens_at_target(matrix.runs, config.recall_target)
        recommendations = own_recommendation.recommend(matrix.per_question, matrix.runs, health, config.k,
                                                       config.recall_target, config.resamples, config.seed,
                                                       progress=progress, targets=targets.copy())
        targets.insert(0, "label", targets["strategy"].map(strategy_label))
        curves = own_report.recall_curves(matrix.runs)
        budget = budget_table(matrix.runs, config.budgets, config.models[0])
        rests_on = basis(corpus, matrix.per_question, recommendations, config.k, config.resamples, config.seed)
    notes = list(dict.fromkeys(f"{w.category.__name__}: {w.message}" for w in caught))
    return OwnResult(
        docs=str(docs), questions=str(questions), config_path=str(config_path or ""), config=config, corpus=corpus,
        corpus_table=corpus_table({"own": corpus}), approximate=approximate, loader_notes=loader_notes,
        advice=corpus_advice(corpus), headings=heading_report(corpus.documents), per_question=matrix.per_question,
        summary=summary, health=health, recommendations=recommendations, targets=targets, curves=curves,
        budget=budget, versions=package_versions().iloc[0].to_dict(), notes=notes, basis=rests_on)
