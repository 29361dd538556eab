"""Verdicts on a questions x candidates score matrix: a leader's paired intervals against every
other candidate, under the question-level and (where questions share documents) the
document-clustered design, worded by one rule.

Handles: :func:`leader_verdicts` on any score matrix, :func:`robust_verdicts` (a candidate is
ruled out only when both designs' intervals clear 0 at the precision shown), the paired interval
of the design the questions call for (:func:`paired_interval`), :func:`identical_columns`
(ties). Intervals are paired percentile bootstraps over questions
(:func:`chunklab_core.stats.bootstrap.paired_difference_ci`, one seed for every pair) or over
documents (:func:`chunklab_core.stats.clustered.paired_difference_clustered_ci`: questions of one
document are not independent draws, post 03); verdict words come from
:func:`chunklab_core.stats.claims.candidate_verdicts`. Column ``design`` says which design's
interval is shown; the ``verdict`` is the weaker of the two designs' verdicts.

Not handled: equivalence at a margin (``decision.engine`` with ``decision.margin``), balanced
scores and sentences (``reports.verdict_tables``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from chunklab_core.decision.margin import DIGITS, clears_zero
from chunklab_core.stats import claims
from chunklab_core.stats.bootstrap import paired_difference_ci
from chunklab_core.stats.clustered import paired_difference_clustered_ci, shares_documents

__all__ = ["DIGITS", "clears_zero", "question_documents", "design_of", "paired_interval", "leader_verdicts",
           "weaker_verdicts", "identical_columns", "robust_verdicts"]

def question_documents(per_question: pd.DataFrame) -> pd.Series | None:
    """The document of each question (qid -> doc_id) of a per-question table (None without doc_id)."""
    if "doc_id" not in per_question:
        return None
    return per_question.drop_duplicates("qid").set_index("qid")["doc_id"]


def design_of(clusters) -> str:
    """``documents (n)`` when the questions share documents, else ``questions``."""
    if clusters is None or not shares_documents(clusters):
        return "questions"
    return f"documents ({len(np.unique(np.asarray(clusters)))})"


def paired_interval(a, b, resamples: int, seed: int, clusters=None):
    """The design-respecting paired interval of mean(a) − mean(b): clustered when questions share documents."""
    if clusters is not None and shares_documents(clusters):
        import warnings

        with warnings.catch_warnings():  # few documents: the post says so where it matters
            warnings.simplefilter("ignore", UserWarning)
            return paired_difference_clustered_ci(a, b, clusters, resamples, seed)
    return paired_difference_ci(a, b, resamples, seed)


def leader_verdicts(scores: pd.DataFrame, metric: str, resamples: int, seed: int, clusters=None) -> pd.DataFrame:
    """Paired intervals of the leader (highest mean) against every other column, with verdict words.

    ``scores`` is a questions x candidates frame of ``metric``; ``clusters`` (optional) the
    document of each question, a Series indexed like ``scores`` or an array in its row order.
    Rows, leader first: strategy, mean, ``leader − strategy`` with its 95% interval (NaN for the
    leader), verdict, metric, questions, design; with clusters also the question-level interval
    and verdict.
    """
    if scores.shape[1] < 2 or len(scores) == 0:
        raise ValueError(f"need at least two candidates and one question, got shape {scores.shape}")
    if clusters is not None:
        clusters = (clusters.reindex(scores.index) if isinstance(clusters, pd.Series) else pd.Series(
            np.asarray(clusters), index=scores.index)).to_numpy()
        if pd.isna(clusters).any():
            raise ValueError("every question needs its document in clusters")
    design = design_of(clusters)
    clustered = design != "questions"
    means = scores.mean()
    leader = means.idxmax()
    rows, intervals, plain_intervals = [], {}, {}
    for name in scores.columns:
        if name == leader:
            continue
        a, b = scores[leader].to_numpy(), scores[name].to_numpy()
        diff, low, high = paired_interval(a, b, resamples, seed, clusters)
        intervals[name] = (float(low), float(high))
        row = {"strategy": name, "mean": means[name], "leader − strategy": float(diff),
               "low": float(low), "high": float(high)}
        if clustered:
            _, q_low, q_high = paired_difference_ci(a, b, resamples, seed)
            plain_intervals[name] = (float(q_low), float(q_high))
            row.update({"question low": float(q_low), "question high": float(q_high)})
        rows.append(row)
    words = claims.candidate_verdicts(leader, intervals)
    rows.sort(key=lambda r: r["leader − strategy"])
    first = {"strategy": leader, "mean": means[leader], "leader − strategy": 0.0, "low": np.nan, "high": np.nan}
    if clustered:
        first.update({"question low": np.nan, "question high": np.nan})
    table = pd.DataFrame([first, *rows])
    table = table.assign(verdict=table["strategy"].map(words), metric=metric, questions=len(scores), design=design)
    if clustered:
        question_words = claims.candidate_verdicts(leader, plain_intervals)
        table["question verdict"] = table["strategy"].map(question_words)
        table["verdict"] = table["strategy"].map(weaker_verdicts(leader, words, question_words))
    return table


def weaker_verdicts(leader: str, clustered: dict[str, str], plain: dict[str, str]) -> dict[str, str]:
    """One rule for both designs: a candidate is ruled out only when both the clustered and the
    question-level verdict rule it out (the clustered interval never makes a claim stronger than
    the question-level one); the leader is the winner only when every other is ruled out so."""
    words = {name: claims.RULED_OUT if clustered[name] == plain[name] == claims.RULED_OUT else claims.NOT_RULED_OUT
             for name in clustered if name != leader}
    return {leader: claims.WINNER if words and all(w == claims.RULED_OUT for w in words.values())
            else claims.NOT_RULED_OUT, **words}


def identical_columns(scores: pd.DataFrame, name: str) -> list[str]:
    """The other columns of ``scores`` equal to column ``name`` on every question (ties, not
    just equal means)."""
    base = scores[name].to_numpy()
    return [other for other in scores.columns if other != name and np.array_equal(scores[other].to_numpy(), base)]


def robust_verdicts(scores: pd.DataFrame, metric: str, resamples: int, seed: int, clusters=None,
                    digits: int = DIGITS) -> pd.DataFrame:
    """:func:`leader_verdicts` with one rule for both resampling designs.

    A candidate is **ruled out** only when the question-level interval *and* (where questions
    share documents) the document-clustered interval of ``leader − candidate`` clear 0 at
    ``digits`` decimals (:func:`clears_zero`): the clustered interval never makes a claim stronger
    than the question-level one, nor the question-level one than the clustered. The leader is the
    **winner** only when every other candidate is ruled out so. Columns added: ``document
    verdict`` and ``question verdict`` (each design alone, same precision rule), ``designs agree``
    (the two words equal), ``ties leader`` (equal to the leader on every question). The leader is
    the first column with the highest mean: order the columns cheapest first so a tie goes to the
    cheaper candidate.
    """
    table = leader_verdicts(scores, metric, resamples, seed, clusters)
    clustered = "question low" in table
    q_low = table["question low"] if clustered else table["low"]
    q_high = table["question high"] if clustered else table["high"]
    others = table.index[1:]

    def words(lows, highs):
        out = [claims.RULED_OUT if clears_zero(lo, hi, digits) else claims.NOT_RULED_OUT
               for lo, hi in zip(lows[others], highs[others])]
        lead = claims.WINNER if out and all(w == claims.RULED_OUT for w in out) else claims.NOT_RULED_OUT
        return [lead, *out]

    document = words(table["low"], table["high"])
    question = words(q_low, q_high)
    combined = [claims.RULED_OUT if d == q == claims.RULED_OUT else claims.NOT_RULED_OUT
                for d, q in zip(document[1:], question[1:])]
    lead = claims.WINNER if combined and all(w == claims.RULED_OUT for w in combined) else claims.NOT_RULED_OUT
    ties = set(identical_columns(scores, table["strategy"].iloc[0]))
    return table.assign(**{
        "verdict": [lead, *combined], "document verdict": document if clustered else question,
        "question verdict": question, "designs agree": [d == q for d, q in zip(document, question)],
        "question low": q_low, "question high": q_high,
        "ties leader": [False, *[name in ties for name in table["strategy"].iloc[1:]]]})
