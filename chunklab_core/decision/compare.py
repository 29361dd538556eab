"""One comparison by the engine's rule: a questions x candidates matrix, decided as one budget is.

Handles :func:`compare`: any score matrix whose candidates are compared on the same questions
(chunklab-own's secondary view, recall at k chunks, is one) gets exactly the per-budget step of
``decision.engine``: the **leader** (highest mean; an exact tie goes to the simplest by the key
given), the paired 95% interval of ``leader − candidate`` under the question-level design and,
where questions share documents, the document-clustered one (``engine._Intervals``, one seed), the
word of each candidate at margin δ (``engine.word``: **equivalent** when both intervals lie inside
(−δ, +δ) or the two are equal on every question, **ruled out** when both clear 0, else
**undecided**), the **pick** (the simplest of the leader and its equivalents) and the verdict of
the comparison as ``decision.guide`` words a budget (``decided``, ``undecided`` with the questions
that would settle the first open comparison at δ, ``margin.questions_to_settle``, or ``below
floor`` when the leader scores under ``engine.FLOOR``). A test feeds one matrix to this function
and to ``engine.setting_table`` at one budget and asserts the same leader, words and pick.

Also :func:`document_clusters`: the document of each question for the clustered design, a question
that names no document being its own cluster (it shares a document with no other as far as is known).

Not handled: budgets and the budget rule (``decision.engine``), which candidates fit a budget (all
are compared here), sentences beyond :meth:`Comparison.headline`.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np
import pandas as pd

from chunklab_core.decision.engine import (BELOW_FLOOR, DECIDED, EQUIVALENT, FLOOR, LEADER, RULED_OUT, UNDECIDED,
                                           _budget_decision, _Intervals)
from chunklab_core.decision.margin import DEFAULT_MARGIN, questions_to_settle
from chunklab_core.decision.verdicts import design_of

MIN_QUESTIONS = 15  # fewer questions: the comparison carries a caution (as every verdict of the series)


def document_clusters(doc_ids: Sequence, qids: Sequence) -> np.ndarray:
    """The cluster of each question: its document, or ``question:<qid>`` when it names none
    (empty or missing), so questions without a document are never pooled into one cluster."""
    out = []
    for doc, qid in zip(doc_ids, qids):
        known = doc is not None and not (isinstance(doc, float) and np.isnan(doc)) and str(doc).strip() != ""
        out.append(str(doc) if known else f"question:{qid}")
    return np.asarray(out, dtype=object)


@dataclass
class Comparison:
    """The engine's decision on one set of candidates (module docstring); dicts are keyed by candidate."""

    names: list[str]
    means: dict[str, float]
    leader: str
    pick: str
    words: dict[str, str]  # leader / equivalent / ruled out / undecided at ``margin``
    intervals: dict[str, dict]  # leader − candidate: diff, low, high (documents or questions), question low, high
    verdict: str  # decided / undecided / below floor
    what_would_decide: int | None  # questions that would settle the first undecided comparison (None: none needed or > cap)
    margin: float
    design: str
    n_questions: int
    n_documents: int
    resamples: int
    seed: int
    warnings: list[str] = field(default_factory=list)

    def of(self, word: str) -> list[str]:
        """The candidates with ``word``, highest mean first (the leader first for :data:`LEADER`)."""
        return sorted([n for n in self.names if self.words[n] == word], key=lambda n: -self.means[n])

    @property
    def equivalents(self) -> list[str]:
        """The leader's equivalents within ±δ (ties included), the pick left out."""
        return [n for n in [self.leader, *self.of(EQUIVALENT)] if n != self.pick]

    @property
    def first_open(self) -> str | None:
        """The undecided candidate with the highest mean (the comparison :attr:`what_would_decide` sizes)."""
        open_ = self.of(UNDECIDED)
        return open_[0] if open_ else None

    def interval_text(self, name: str) -> str:
        """``leader − name: +d [low, high]`` under the design shown (documents where questions share them)."""
        iv = self.intervals[name]
        return f"{self.leader} − {name}: {iv['diff']:+.3f} [{iv['low']:+.3f}, {iv['high']:+.3f}]"

    def headline(self, limit: int | None = None) -> str:
        """One sentence: the verdict, the pick, its equivalents and what is open, in the engine's words;
        ``limit``: name at most that many candidates per list, then "and N more"."""
        def names(items: list[str]) -> str:
            if limit is None or len(items) <= limit:
                return ", ".join(items)
            return f"{', '.join(items[:limit])} and {len(items) - limit} more"

        d = f"±{self.margin:g}"
        equal = f"; equivalent within {d}: {names(self.equivalents)}" if self.equivalents else ""
        head = f"{self.verdict}: use {self.pick}" + (f" (the leader is {self.leader})" if self.pick != self.leader else "")
        if self.verdict == UNDECIDED:
            open_ = self.of(UNDECIDED)
            needed = (f"about {self.what_would_decide:,} questions would settle it at {d}"
                      if self.what_would_decide is not None else f"more than 100,000 questions would settle it at {d}")
            return (f"{head}{equal}; undecided against it: {names(open_)} (closest, {self.interval_text(open_[0])}); "
                    f"{needed} (you have {self.n_questions:,})")
        if self.verdict == BELOW_FLOOR:
            return f"{head}{equal}; the leader scores under {FLOOR:g}: chunking is not what limits this setting"
        return head + equal + (f"; ruled out: {names(self.of(RULED_OUT))}" if self.of(RULED_OUT) else "")


def compare(wide: pd.DataFrame, resamples: int, seed: int, margin: float = DEFAULT_MARGIN, clusters=None,
            simple: Callable[[str], tuple] | None = None) -> Comparison:
    """The engine's per-budget decision on ``wide`` (questions x candidates, no missing value);
    ``clusters`` the document of each question in ``wide``'s row order (:func:`document_clusters`),
    ``simple(candidate)`` the simplicity key (smaller first; default: column order)."""
    if wide.shape[1] < 2 or wide.empty:
        raise ValueError(f"a comparison needs at least two candidates and one question, got shape {wide.shape}")
    if wide.isna().any().any():
        raise ValueError("every candidate needs a score on every question (drop the questions some lack)")
    names = [str(c) for c in wide.columns]
    wide = wide.set_axis(names, axis=1)
    order = {n: i for i, n in enumerate(names)}
    keys = {n: (simple(n) if simple is not None else (), order[n]) for n in names}
    if clusters is not None and len(np.unique(np.asarray(clusters))) < 2:
        clusters = None  # one document: only the question design exists (as the engine does)
    means = wide.mean()
    intervals = _Intervals(wide, clusters, resamples, seed)
    d = _budget_decision(names, {n: True for n in names}, means, keys, intervals, (round(margin, 6),))
    words = d["words"][round(margin, 6)]
    leader, pick = d["leader"], d["picks"][round(margin, 6)]
    open_ = sorted([n for n in names if words[n] == UNDECIDED], key=lambda n: -means[n])
    if means[leader] < FLOOR:
        verdict = BELOW_FLOOR
    else:
        verdict = UNDECIDED if open_ else DECIDED
    needed = None
    if verdict == UNDECIDED:
        iv = d["intervals"][open_[0]]
        needed = questions_to_settle(len(wide), iv["diff"], iv["low"], iv["high"], margin)
    notes = []
    if len(wide) < MIN_QUESTIONS:
        notes.append(f"only {len(wide)} questions scored (fewer than {MIN_QUESTIONS}): bootstrap intervals are "
                     "unreliable with so few questions")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        design = design_of(intervals.clusters)
    n_docs = len(np.unique(np.asarray(intervals.clusters))) if intervals.clusters is not None else len(wide)
    return Comparison(names=names, means={n: float(means[n]) for n in names}, leader=leader, pick=pick,
                      words=dict(words), intervals={n: dict(iv) for n, iv in d["intervals"].items()},
                      verdict=verdict, what_would_decide=needed, margin=margin, design=design,
                      n_questions=len(wide), n_documents=n_docs, resamples=resamples, seed=seed, warnings=notes)


__all__ = ["Comparison", "compare", "document_clusters", "LEADER", "EQUIVALENT", "RULED_OUT", "UNDECIDED",
           "DECIDED", "BELOW_FLOOR"]
