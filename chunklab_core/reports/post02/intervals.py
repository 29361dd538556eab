"""Post 02's figure data: each cell's mean in the measure its corpus is read by, with a 95% interval.

Handles:

* :func:`cell_intervals`: per group of cells that share their questions (one corpus and
  retriever), the mean of each cell and its 95% percentile interval, all cells from one draw of
  resamples (documents resampled where the questions share documents, ``stats.clustered``;
  questions otherwise, ``stats.bootstrap``), the design named in column ``design``;
* :func:`read_by_intervals`: at k chunks, each (corpus, strategy, retriever) in the measure the
  corpus is read by (``long_evidence.corpus_measures``: containment recall@k or token span
  recall@k), what figure ``02_matrix`` draws;
* :func:`budget_intervals`: within a context budget of B tokens (``decision.scores``: contexts in
  rank order until the next would overflow), each (corpus, strategy, retriever, budget) in the
  corpus's declared measure (``decision.candidates.MEASURES``), with ``fits``, the share of
  questions whose first context fits the budget: what figure ``02_recall_vs_tokens`` draws.

Not handled: the verdicts (paired intervals against a leader: ``decision``, ``post02.claims``),
drawing (``post02.figures``).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd

from chunklab_core.decision.candidates import COLUMNS, MEASURE_NAMES, measure_of
from chunklab_core.evaluation.matrix import MatrixResult
from chunklab_core.evaluation.measures import column
from chunklab_core.reports.verdict_tables import design_of
from chunklab_core.stats import bootstrap
from chunklab_core.stats.clustered import clustered_bootstrap_ci, shares_documents

__all__ = ["cell_intervals", "read_by_intervals", "budget_intervals"]


def cell_intervals(wide: pd.DataFrame, documents: Sequence, resamples: int, seed: int) -> pd.DataFrame:
    """``wide``: questions x cells (no missing value), ``documents``: each question's document.
    Returns one row per cell (the columns of ``wide``): ``mean``, ``low``, ``high`` (95%
    percentile interval, every cell resampled with the same draw), ``questions``, ``design``."""
    scores = wide.to_numpy(dtype=float)
    documents = np.asarray(documents)
    if shares_documents(documents) and len(set(documents)) > 1:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            interval = clustered_bootstrap_ci(scores, documents, resamples, seed)
        design = design_of(documents)
    else:
        interval = bootstrap.bootstrap_ci(scores, resamples, seed)
        design = "questions"
    return pd.DataFrame({"mean": np.atleast_1d(interval.mean), "low": np.atleast_1d(interval.low),
                         "high": np.atleast_1d(interval.high), "questions": len(wide), "design": design},
                        index=wide.columns)


def _grouped(per_question: pd.DataFrame, value: str, cells: list[str], resamples: int, seed: int) -> pd.DataFrame:
    frames = []
    for (corpus, retriever), group in per_question.groupby(["corpus", "retriever"], sort=False):
        wide = group.pivot_table(index="qid", columns=cells, values=value, aggfunc="first").dropna()
        order = list(dict.fromkeys(group[cells[0]]))  # the cells in the table's order, not sorted by name
        wide = wide[sorted(wide.columns, key=lambda c: (order.index(c[0] if isinstance(c, tuple) else c), c))]
        if wide.empty:
            continue
        documents = group.drop_duplicates("qid").set_index("qid")["doc_id"].reindex(wide.index)
        found = cell_intervals(wide, documents.to_numpy(), resamples, seed).reset_index()
        frames.append(found.assign(corpus=corpus, retriever=retriever))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def read_by_intervals(per_question: pd.DataFrame, k: int, measures: pd.DataFrame, resamples: int,
                      seed: int) -> pd.DataFrame:
    """Per (corpus, strategy, retriever) of ``per_question`` (``long_evidence.per_question_measures``:
    recall@k and token_recall@k per question, with ``doc_id``): the corpus's measure (``measures``:
    ``corpus``, ``measure``), its name (``read by``), mean and 95% interval."""
    frames = []
    for _, row in measures.iterrows():
        name = column("token_recall" if row["measure"] == "span" else "recall", k)
        part = per_question[per_question["corpus"] == row["corpus"]]
        found = _grouped(part, name, ["strategy"], resamples, seed)
        if len(found):
            frames.append(found.assign(**{"read by": name}))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def budget_intervals(matrix: MatrixResult, budgets: Sequence[int], model: str, resamples: int, seed: int,
                     strategies: Sequence[str] | None = None) -> pd.DataFrame:
    """Per (corpus, strategy, retriever, budget) of ``matrix`` under ``model`` (BM25 under none):
    the corpus's declared measure within the budget (``measure``), mean and 95% interval, and
    ``fits``: the share of questions that read at least one context within the budget."""
    from chunklab_core.decision.scores import budget_per_question

    scores = budget_per_question(matrix, model, budgets, strategies=strategies)
    frames = []
    for corpus, part in scores.groupby("corpus", sort=False):
        kind = measure_of(corpus)
        found = _grouped(part, COLUMNS[kind], ["strategy", "budget"], resamples, seed)
        if len(found):
            reads = (part.assign(reads=part["contexts_read"] > 0)
                     .groupby(["retriever", "strategy", "budget"], sort=False)["reads"].mean().rename("fits"))
            found = found.merge(reads.reset_index(), on=["retriever", "strategy", "budget"], how="left")
            frames.append(found.assign(measure=MEASURE_NAMES[kind]))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
