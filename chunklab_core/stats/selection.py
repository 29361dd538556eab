"""When is a winner really a winner? A selection verdict over a per-question score matrix.

One pass of paired bootstrap resamples (:mod:`chunklab_core.stats.bootstrap`) over all candidates gives
each candidate's paired interval against the leader and its probability of being best. The
verdict words come from the series' one rule, :func:`chunklab_core.stats.claims.candidate_verdicts`:

* the leader is the **winner** only when every paired 95% interval ``leader − other`` lies
  above 0; a candidate whose interval lies above 0 is **ruled out**; the others (and a leader
  that is no winner) **cannot be ruled out**;
* probability of being best is reported, never the basis of a verdict (post 03's simulation
  shows it is overconfident); with ``calibration`` (post 03's table) the headline words it
  with how often such picks were truly best;
* the minimal 95% confidence set (the smallest set of candidates whose probabilities of being
  best add up to 0.95, cf. the "model confidence set" of Hansen, Lunde & Nason, Econometrica
  2011, in a simple bootstrap form) and each candidate's share of resamples scoring at least
  as well as the leader are reported alongside;
* the number of questions that would separate the top two by mean comes from
  :func:`chunklab_core.stats.bootstrap.questions_needed` on their paired difference interval.

The leader is the candidate with the highest mean (ties: higher probability of being best, then
the earlier column); the "top two" are the first two in that same order, so they always begin
with the leader. ``winner_threshold`` is kept for callers of the earlier API and is only
reported. Fewer than 15 questions trigger a warning. Not handled: multiple metrics at once,
sequential testing across looks at the data, weighted questions.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from chunklab_core.stats import claims
from chunklab_core.stats.bootstrap import (
    TIE_TOLERANCE,
    Interval,
    Sampler,
    best_shares,
    as_score_matrix,
    percentile_interval,
    questions_needed,
    resampled_means,
)

MIN_QUESTIONS = 15


def minimal_confidence_set(probabilities, level: float = 0.95) -> list[int]:
    """Smallest set of candidates whose probabilities of being best add up to ``level``.

    Candidates are taken by probability, highest first, ties broken by the lower index; the
    returned indices are in that order. A 1e-12 slack absorbs float noise in the running sum
    (so [.5, .45, .04, .01] at 0.95 gives [0, 1]).
    """
    probs = np.asarray(probabilities, dtype=float)
    if probs.ndim != 1 or probs.size == 0:
        raise ValueError(f"probabilities must be a non-empty 1-D array, got shape {probs.shape}")
    if np.any(probs < 0) or abs(probs.sum() - 1.0) > 1e-6:
        raise ValueError(f"probabilities must be non-negative and sum to 1, got sum {probs.sum():.6g}")
    if not 0.0 < level <= 1.0:
        raise ValueError(f"level must lie in (0, 1], got {level!r}")
    order = np.argsort(-probs, kind="stable")
    reached = np.cumsum(probs[order]) >= level - 1e-12
    size = int(np.argmax(reached)) + 1 if reached.any() else len(order)
    return [int(i) for i in order[:size]]


def _percent(p: float) -> str:
    if 0.999 < p < 1.0:
        return ">99.9%"
    if 0.0 < p < 0.001:
        return "<0.1%"
    return f"{100 * p:.1f}%"


@dataclass
class SelectionVerdict:
    """Outcome of :func:`select_winner`; arrays follow the column order of ``names``."""

    names: list[str]
    means: np.ndarray
    probabilities: np.ndarray  # probability of being best
    share_at_least_leader: np.ndarray  # share of resamples scoring >= the leader
    leader: str
    winner: str | None
    candidates: list[str]  # cannot be ruled out, by probability descending
    ruled_out: list[str]
    confidence_set: list[str]
    top_two: tuple[str, str]
    top_two_difference: Interval  # mean(first) - mean(second) with its paired interval
    questions_needed: int | None
    n_questions: int
    resamples: int
    seed: object
    winner_threshold: float = 0.90
    set_level: float = 0.95
    tail_alpha: float = 0.025
    confidence: float = 0.95
    warnings: list[str] = field(default_factory=list)
    against_leader: dict = field(default_factory=dict)  # name -> Interval of leader - name
    verdicts: dict = field(default_factory=dict)  # name -> claims verdict word
    calibration: pd.DataFrame | None = None

    def to_frame(self) -> pd.DataFrame:
        """One row per candidate, by probability of being best descending."""
        status = [self.verdicts[n] for n in self.names]
        gap = [self.against_leader.get(n) for n in self.names]
        frame = pd.DataFrame({
            "mean": self.means,
            "leader_minus_low": [np.nan if g is None else g.low for g in gap],
            "leader_minus_high": [np.nan if g is None else g.high for g in gap],
            "probability_best": self.probabilities,
            "share_at_least_leader": self.share_at_least_leader,
            "in_confidence_set": [n in self.confidence_set for n in self.names],
            "status": status,
        }, index=pd.Index(self.names, name="candidate"))
        return frame.iloc[np.argsort(-self.probabilities, kind="stable")]

    def headline(self) -> str:
        """The verdict in one or two sentences."""
        basis = f"{self.resamples:,} paired resamples of {self.n_questions} questions"
        leader_p = claims.probability_best_text(self.probabilities[self.names.index(self.leader)],
                                                self.calibration)
        if self.winner is not None:
            text = (f"Winner: {self.winner}: every paired {self.confidence:.0%} interval against it lies "
                    f"above 0 ({basis}; {leader_p}).")
        else:
            kept = [n for n in self.candidates if n != self.leader]
            text = (f"No winner: the leader {self.leader} cannot be told apart from {', '.join(kept)} "
                    f"(paired {self.confidence:.0%} intervals contain 0; {basis}; {leader_p}). "
                    f"Cannot be ruled out: {', '.join(self.candidates)}.")
            if self.ruled_out:
                text += f" Ruled out: {', '.join(self.ruled_out)}."
        first, second = self.top_two
        diff = self.top_two_difference
        text += (f" {first} - {second} = {diff.mean:+.3f} "
                 f"({self.confidence:.0%} CI {diff.low:+.3f} to {diff.high:+.3f});")
        if claims.excludes_zero(diff.low, diff.high) and f"{min(abs(diff.low), abs(diff.high)):.3f}" == "0.000":
            text += (" the interval excludes zero only by less than the precision shown, so they are separated "
                     "by a hair, not at the precision shown.")
        elif claims.excludes_zero(diff.low, diff.high):
            text += " the interval excludes zero, so they are already separated."
        elif self.questions_needed is not None:
            text += f" separating them would take about {self.questions_needed:,} questions."
        elif abs(diff.mean) < 1e-9:
            text += " their means are equal, so no number of questions would separate them."
        else:
            text += " separating them would take more than 100,000 questions."
        return text

    def __str__(self) -> str:
        lines = [self.headline(), ""]
        lines += [f"warning: {w}" for w in self.warnings]
        lines.append(self.to_frame().to_string(float_format=lambda v: f"{v:.3f}"))
        return "\n".join(lines)

    def to_markdown(self) -> str:
        """Headline, warnings and the candidate table as Markdown (renders in notebooks)."""
        frame = self.to_frame()
        header = "| candidate | mean | leader − candidate (95% CI) | P(best) | P(>= leader) | in 95% set | verdict |"
        def gap(r):
            return "—" if np.isnan(r["leader_minus_low"]) else \
                f"[{r['leader_minus_low']:+.3f}, {r['leader_minus_high']:+.3f}]"
        rows = [f"| {name} | {r['mean']:.3f} | {gap(r)} | {_percent(r['probability_best'])} | "
                f"{_percent(r['share_at_least_leader'])} | {'yes' if r['in_confidence_set'] else 'no'} | "
                f"{r['status']} |" for name, r in frame.iterrows()]
        notes = [f"> **Warning:** {w}" for w in self.warnings]
        return "\n".join([self.headline(), "", *notes, *([""] if notes else []),
                          header, "|---|---:|---:|---:|---:|:---:|---|", *rows])

    _repr_markdown_ = to_markdown


def select_winner(matrix, names=None, resamples: int = 100_000, seed=0, *,
                  winner_threshold: float = 0.90, set_level: float = 0.95, tail_alpha: float = 0.025,
                  confidence: float = 0.95, sampler: Sampler = "indices",
                  calibration: pd.DataFrame | None = None) -> SelectionVerdict:
    """Decide whether one candidate (column of ``matrix``) is the winner; see the module docstring.

    All quantities come from the same ``resamples`` paired resamples (so the verdict's
    probabilities equal ``probability_best(matrix, resamples, seed)``). Memory is
    ``resamples x n_candidates`` floats (19 MB for 100,000 x 24).
    """
    scores = as_score_matrix(matrix, "matrix")
    n_questions, n_candidates = scores.shape
    names = [str(i) for i in range(n_candidates)] if names is None else [str(n) for n in names]
    if len(names) != n_candidates:
        raise ValueError(f"got {len(names)} names for {n_candidates} candidates (columns)")
    if len(set(names)) != len(names):
        raise ValueError(f"candidate names must be unique, got {names}")
    if n_candidates < 2:
        raise ValueError("select_winner needs at least two candidates (columns) to compare")
    notes = []
    if n_questions < MIN_QUESTIONS:
        notes.append(f"only {n_questions} questions scored (fewer than {MIN_QUESTIONS}): bootstrap "
                     "intervals and probabilities are unreliable with so few questions")
        warnings.warn(notes[-1], UserWarning, stacklevel=2)

    means = scores.mean(axis=0)
    scale = float(np.max(np.abs(scores)))
    resampled = resampled_means(scores, resamples, seed, sampler)
    probabilities = np.zeros(n_candidates)
    for start in range(0, len(resampled), 8192):
        probabilities += best_shares(resampled[start:start + 8192], scale).sum(axis=0)
    probabilities /= len(resampled)

    order = np.lexsort((np.arange(n_candidates), -probabilities, -means))  # the leader first, then its nearest
    leader = int(order[0])
    tolerance = TIE_TOLERANCE * max(1.0, scale)
    at_least_leader = (resampled >= resampled[:, [leader]] - tolerance).mean(axis=0)
    confidence_set = minimal_confidence_set(probabilities, set_level)
    against_leader = {}
    for j in range(n_candidates):
        if j != leader:
            low, high = percentile_interval(resampled[:, leader] - resampled[:, j], confidence)
            against_leader[names[j]] = Interval(float(means[leader] - means[j]), float(low), float(high))
    words = claims.candidate_verdicts(names[leader], {n: (g.low, g.high) for n, g in against_leader.items()})
    ruled_out = [j for j in range(n_candidates) if words[names[j]] == claims.RULED_OUT]
    by_probability = np.argsort(-probabilities, kind="stable")

    first, second = int(order[0]), int(order[1])  # the top two always begin with the leader (ties too)
    diff_low, diff_high = percentile_interval(resampled[:, first] - resampled[:, second], confidence)
    diff = Interval(float(means[first] - means[second]), float(diff_low), float(diff_high))
    return SelectionVerdict(
        names=names, means=means, probabilities=probabilities, share_at_least_leader=at_least_leader,
        leader=names[leader],
        winner=names[leader] if words[names[leader]] == claims.WINNER else None,
        candidates=[names[j] for j in by_probability if j not in ruled_out],
        ruled_out=[names[j] for j in by_probability if j in ruled_out],
        confidence_set=[names[j] for j in confidence_set],
        top_two=(names[first], names[second]), top_two_difference=diff,
        questions_needed=questions_needed(n_questions, diff.mean, (diff.low, diff.high)),
        n_questions=n_questions, resamples=len(resampled), seed=seed,
        winner_threshold=winner_threshold, set_level=set_level, tail_alpha=tail_alpha,
        confidence=confidence, warnings=notes, against_leader=against_leader, verdicts=words,
        calibration=calibration,
    )
