"""One verdict-wording rule for the whole series: the paired interval decides.

Every post that compares candidates (strategies, retrievers, judges) words the comparison with
the four verdicts below, computed here from paired difference intervals and nowhere else:

* **winner** — the leader, and only when *every* paired interval ``leader − other`` lies
  above 0 (all others ruled out);
* **ruled out** — a candidate whose paired interval ``leader − candidate`` lies above 0;
* **cannot be ruled out** — a candidate (the leader included, when it is no winner) whose
  paired interval against the leader contains 0;
* **cannot be told apart** — a pair of candidates whose paired interval ``a − b`` contains 0
  (:func:`pair_verdict`; a pair whose interval excludes 0 is "a ahead" or "b ahead").

An interval that touches 0 (``low == 0``) does not exclude it. Whether an interval excludes 0,
and on which side, is decided by :func:`interval_side` (and :func:`excludes_zero`) only: every
module that asks it calls these. Probability of being best is
never the basis of a verdict: post 03's simulation shows it is overconfident (picks reported at
90–100% are right less often than that), so :func:`probability_best_text` words it with that
calibration next to it. :func:`multiplicity_text` says what many paired tests at one level
would produce by chance alone (the expected count of false separations if nothing differed,
``m · α``; cf. Bonferroni's bound, Dunn 1961).

Not handled: one-sided tests, equivalence margins ("practically equal"), adjusting the
intervals themselves for multiplicity (the posts show unadjusted 95% intervals and say so).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

WINNER = "winner"
RULED_OUT = "ruled out"
NOT_RULED_OUT = "cannot be ruled out"
NOT_TOLD_APART = "cannot be told apart"
VERDICT_WORDS = (WINNER, NOT_RULED_OUT, RULED_OUT, NOT_TOLD_APART)


def interval_side(low: float, high: float) -> int:
    """Where the interval [low, high] lies: +1 above 0 (``low > 0``), -1 below (``high < 0``),
    0 when it contains or touches 0. The one test of "the interval excludes 0" in the package.

    Raises ``ValueError`` for a non-finite interval or ``high < low``.
    """
    low, high = float(low), float(high)
    if not np.isfinite(low) or not np.isfinite(high) or high < low:
        raise ValueError(f"an interval must be finite with low <= high, got [{low}, {high}]")
    return 1 if low > 0 else -1 if high < 0 else 0


def excludes_zero(low: float, high: float) -> bool:
    """True when the interval [low, high] lies strictly on one side of 0 (:func:`interval_side`)."""
    return interval_side(low, high) != 0


def pair_verdict(a: str, b: str, low: float, high: float) -> str:
    """Verdict on one paired interval of ``a − b``: "a ahead", "b ahead", or cannot be told apart."""
    return {1: f"{a} ahead", -1: f"{b} ahead", 0: NOT_TOLD_APART}[interval_side(low, high)]


def candidate_verdicts(leader: str, against_leader: Mapping[str, tuple[float, float]]) -> dict[str, str]:
    """Verdict word per candidate from the paired intervals ``leader − other`` (low, high).

    ``against_leader`` maps every other candidate to its interval. The leader is the
    **winner** only when every interval lies above 0; otherwise it is "cannot be ruled out".
    Raises ValueError when an interval lies below 0 (that candidate is ahead of the named
    leader: the caller named the wrong leader) or when the leader compares with itself.
    """
    if leader in against_leader:
        raise ValueError(f"the leader {leader!r} cannot be compared with itself")
    words = {}
    for name, (low, high) in against_leader.items():
        if interval_side(low, high) < 0:
            raise ValueError(f"{name!r} is ahead of the named leader {leader!r} "
                             f"(interval of leader − {name}: [{low:+.3f}, {high:+.3f}])")
        words[name] = RULED_OUT if interval_side(low, high) > 0 else NOT_RULED_OUT
    winner = bool(words) and all(w == RULED_OUT for w in words.values())
    return {leader: WINNER if winner else NOT_RULED_OUT, **words}


def verdict_table(frame: pd.DataFrame, leader: str, name_col: str = "strategy", low_col: str = "low",
                  high_col: str = "high", row_minus_leader: bool = False) -> pd.DataFrame:
    """``frame`` (one row per non-leader) with a ``verdict`` column from :func:`candidate_verdicts`.

    The intervals are ``leader − row``; with ``row_minus_leader=True`` they are ``row − leader``
    (as post 03's table of paired differences against the leader) and are negated first.
    """
    def interval(row):
        low, high = row[low_col], row[high_col]
        return (-high, -low) if row_minus_leader else (low, high)

    words = candidate_verdicts(leader, {row[name_col]: interval(row) for _, row in frame.iterrows()})
    return frame.assign(verdict=frame[name_col].map(words))


def summary_sentence(leader: str, words: Mapping[str, str], what: str = "") -> str:
    """One sentence stating the verdicts (``what`` names metric, corpus, model and n)."""
    basis = f" ({what})" if what else ""
    if words[leader] == WINNER:
        return (f"**{leader}** is the winner{basis}: every paired 95% interval against it lies above 0.")
    kept = [n for n, w in words.items() if w == NOT_RULED_OUT and n != leader]
    out = [n for n, w in words.items() if w == RULED_OUT]
    text = (f"No winner{basis}: the leader **{leader}** cannot be told apart from "
            f"{_names(kept)}, so {'they' if len(kept) > 1 else 'it'} cannot be ruled out")
    text += f"; ruled out: {_names(out)}." if out else "."
    return text


def _names(names) -> str:
    names = list(names)
    return ", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else (names[0] if names else "none")


def calibration_range(calibration: pd.DataFrame, probability: float) -> tuple[float, float] | None:
    """Range of ``share_correct`` over the spreads of post 03's calibration table, in p's band.

    ``calibration`` has columns ``band`` ("0.9-1.0") and ``share_correct`` (one row per band
    and rate spread, as ``data/03_calibration.csv``). None when no band holds ``probability``.
    """
    bounds = calibration["band"].str.split("-", expand=True).astype(float)
    last = bounds[1] >= bounds[1].max()
    inside = (bounds[0] <= probability) & ((probability < bounds[1]) | (last & (probability <= bounds[1])))
    shares = calibration.loc[inside, "share_correct"].dropna()
    return None if shares.empty else (float(shares.min()), float(shares.max()))


def probability_best_text(probability: float, calibration: pd.DataFrame | None = None,
                          source: str = "the calibration simulation") -> str:
    """P(best) worded with its calibration: never a verdict, always with how often it is right.

    ``source`` names where ``calibration`` comes from in the sentence (a post passes its own
    wording, e.g. post 03's simulation)."""
    text = f"probability of being best {100 * probability:.1f}%"
    span = None if calibration is None else calibration_range(calibration, probability)
    if span is None:
        return text + " (not a calibrated probability; the paired intervals decide)"
    low, high = span
    return (text + f" (overconfident: in {source}, picks reported in this band were "
            f"truly best {100 * low:.0f}–{100 * high:.0f}% of the time; the paired intervals decide)")


def expected_false_separations(n_tests: int, level: float = 0.95) -> float:
    """Expected number of intervals excluding 0 by chance when no pair differs: ``m · (1 − level)``."""
    if n_tests < 0 or not 0 < level < 1:
        raise ValueError(f"need n_tests >= 0 and 0 < level < 1, got {n_tests}, {level}")
    return n_tests * (1.0 - level)


def multiplicity_text(n_tests: int, n_separated: int, level: float = 0.95) -> str:
    """What ``n_separated`` of ``n_tests`` unadjusted intervals mean when read together."""
    expected = expected_false_separations(n_tests, level)
    return (f"These are {n_tests} paired tests, each at {level:.0%} and not adjusted for multiplicity: "
            f"if no pair differed at all, about {expected:.1f} would still exclude 0 by chance, so read "
            f"the {n_separated} separations as a pattern and any single one near 0 as tentative.")
