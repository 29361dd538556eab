"""The tables post 00 reads, the post that writes each, and the key that cites one row of it.

Handles: :data:`SOURCES` (file name -> the post that commits it and the columns post 00 needs),
:func:`read_table` (one committed table; a missing file or a missing column is a
:class:`MissingTable` error naming the file, the columns and the post to re-execute, never a
silent empty table), :func:`key_text` / :func:`parse_key` (the citation of one source row as
``column=value; column=value``, so a test can look the row up BY KEY) and :func:`row_by_key`
(that look-up; zero or several matches are errors).

Not handled: what post 00 says about the rows (``tables``, ``findings``), running a post.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from chunklab_core.core.csv_cells import read_frame
from chunklab_core.core.paths import DATA_DIR
from chunklab_core.reports.posts import findings_tables

__all__ = ["SOURCES", "MissingTable", "read_table", "key_text", "parse_key", "row_by_key"]

VERDICT = ["low", "high", "verdict"]
COLUMNS: dict[str, list[str]] = {  # the columns post 00 needs of each table
    "01_full_set_verdicts.csv": ["strategy", "mean", "leader − strategy", *VERDICT, "metric", "questions",
                                        "design", "sample"],
    "02_recall_verdicts.csv": ["strategy", "mean", "leader − strategy", *VERDICT, "metric", "questions",
                                      "design", "question verdict", "corpus", "retriever"],
    "02_pool.csv": ["corpus", "retriever", "model", "strategy", "label", "budget", "measure", "score",
                           "leader − this", *VERDICT, "question verdict", "designs agree", "design", "questions",
                           "documents", "median chunk tokens", "tokens per context", "fits", "leader", "ties",
                           "sample", "gain", "gain low", "gain high", "beyond window", "settles",
                           "decision at δ=0.02", "pick at δ=0.02", "recommended at δ=0.02", "source", "key"],
    "02_pool_guide.csv": ["sample", "corpus", "retriever", "model", "measure", "use", "strategy", "tokens",
                                 "score", "equivalents", "ties", "verdict", "what would decide", "reads", "reads below",
                                 "below floor", "does not fit", "tokens per context", "last gain", "still rising",
                                 "candidates", "source", "key"],
    "02_chunk_health.csv": ["corpus", "strategy", "share truncated"],
    "02_stability.csv": ["across", "setting a", "setting b", "tau", "low", "high", "strategies"],
    "02_balanced_verdicts.csv": ["strategy", "mean", "leader − strategy", *VERDICT, "questions", "design",
                                        "question verdict", "lambda", "corpus"],
    "02_matrix.csv": ["corpus", "model", "strategy", "label", "retriever", "questions", "tokens@5",
                             "recall@5", "recall@5_low", "recall@5_high"],
    "02_paired_retrievers.csv": ["corpus", "strategy", "comparison", "difference", *VERDICT, "questions",
                                        "design"],
    "02_models.csv": ["corpus", "retriever", "strategy", "comparison", "difference", *VERDICT, "questions",
                             "design"],
    "03_paired_vs_leader.csv": ["strategy", "minus", "difference", "low", "high"],
    "03_clustered.csv": ["cell", "mean", "clustered_low", "clustered_high", "n_questions", "n_documents",
                                "width_ratio", "effective_questions"],
    "03_calibration.csv": ["rate spread", "band", "comparisons", "mean_reported", "share_correct", "ci_low",
                                  "ci_high"],
    "04_retrieval.csv": ["corpus", "strategy", "retriever", "passages", "generated − human", "low", "high"],
    "04_trend.csv": ["corpus", "questions", "passages", "slope", "low", "high"],
    "04_checks.csv": ["set", "corpus"],
    "05_answers.csv": ["corpus", "strategy", "measure", "questions", "documents", "share", "low", "high"],
    "05_strategy_differences.csv": ["corpus", "strategy A", "strategy B", "questions", "A - B", "low",
                                           "high"],
    "05_agreement.csv": ["grader A", "grader B", "scale", "items", "kappa", "low", "high"],
    "06_agreement.csv": ["judge", "against", "scale", "graded", "kappa", "kappa low", "kappa high",
                                "weighted kappa", "weighted kappa low", "weighted kappa high"],
    "06_accuracy.csv": ["judge", "variant", "estimator", "accuracy", "low", "high", "population", "graded"],
    "06_paired.csv": ["judge", "variant", "difference", "low", "high", "graded", "reading"],
    "07_stage.csv": ["corpus", "strategy", "first_stage", "scorer", "depth", "questions", "design", "d_ndcg",
                            "d_ndcg_low", "d_ndcg_high", "verdict", "tokens_read"],
    "07_depths.csv": ["corpus", "strategy", "first_stage", "scorer", "questions", "design", "difference",
                             *VERDICT],
    "07_slice_comparisons.csv": ["corpus", "strategy", "first_stage", "depth", "a", "b", "questions", "design",
                                        "difference", *VERDICT],
    "08_neighbours.csv": ["retrieved", "a", "b", "questions", "clusters", "recall a − b", "low", "high",
                                 "verdict"],
    "08_llm_pairs.csv": ["retrieved", "a", "b", "questions", "clusters", "recall a − b", "low", "high",
                                "verdict"],
}
# table -> (the post that writes it, from the one list of posts, reports.posts; its columns)
SOURCES: dict[str, tuple[str, list[str]]] = {name: (writer, COLUMNS[name])
                                             for name, writer in findings_tables().items()}


class MissingTable(FileNotFoundError):
    """A table post 00 reads is missing or lacks a column: the post that writes it must be re-executed."""


def _rerun(post: str) -> str:
    return f"re-execute post {post} (make notebooks/{post}_*.ipynb), then post 00"


def read_table(name: str, data_dir: Path | None = None) -> pd.DataFrame:
    """The committed table ``name`` (a key of :data:`SOURCES`) with every column post 00 needs."""
    if name not in SOURCES:
        raise KeyError(f"post 00 reads no table {name!r}; known: {', '.join(SOURCES)}")
    post, needed = SOURCES[name]
    path = Path(data_dir or DATA_DIR) / name
    if not path.exists():
        raise MissingTable(f"{path} is missing: {_rerun(post)}")
    table = read_frame(path)  # the writer's sheet-safe quotes removed
    missing = [c for c in needed if c not in table.columns]
    if missing:
        raise MissingTable(f"{path} lacks the column(s) {', '.join(missing)} (an older post {post}?): {_rerun(post)}")
    return table


def key_text(**key) -> str:
    """``column=value; column=value`` in the order given (a value may not hold ``;`` or ``=``)."""
    for column, value in key.items():
        if any(mark in f"{column}{value}" for mark in ";="):
            raise ValueError(f"a key may not hold ';' or '=': {column}={value}")
    return "; ".join(f"{column}={value}" for column, value in key.items())


def parse_key(text: str) -> dict[str, str]:
    """The inverse of :func:`key_text` (values come back as text)."""
    pairs = [part.split("=", 1) for part in str(text).split("; ")]
    if any(len(pair) != 2 for pair in pairs):
        raise ValueError(f"not a key: {text!r}")
    return dict(pairs)


def row_by_key(table: pd.DataFrame, key: dict[str, str], name: str = "table") -> pd.Series:
    """The one row of ``table`` whose columns equal ``key``'s values (compared as text)."""
    mask = pd.Series(True, index=table.index)
    for column, value in key.items():
        if column not in table.columns:
            raise KeyError(f"{name} has no column {column!r}")
        mask &= table[column].astype(str) == str(value)
    matches = table[mask]
    if len(matches) != 1:
        raise LookupError(f"{name}: {len(matches)} rows match {key_text(**key)}, expected 1")
    return matches.iloc[0]
