"""Calibration by simulation: when the bootstrap says "best with probability p", how often is it?

Each simulated comparison draws true success rates for 3-5 candidates, then 0/1 outcomes on
n questions with a shared per-question difficulty: candidate j answers question q when

    sqrt(rho) * z_q + sqrt(1 - rho) * e_qj < Phi^-1(p_j),   z_q, e_qj ~ N(0, 1) independent,

so P(success) = p_j exactly and outcomes on the same question are positively correlated
(a Gaussian-copula / liability-threshold model; rho = ``question_effect``). The named pick is
the candidate with the highest bootstrap probability of being best; it is correct when it has
the highest *true* rate. Grouping comparisons by the reported probability gives a reliability
table (does 0.9 mean 90%?).

Speed: the simulation uses 2,000 resamples per comparison (not the 100,000 of
:func:`chunklab_core.stats.selection.select_winner`) and the exact ``sampler="patterns"`` shortcut
(0/1 outcomes of <= 5 candidates have at most 32 distinct rows), so the default 1,500
comparisons take about ten seconds on one core. Everything derives from one seed through
``np.random.SeedSequence``. Not simulated: graded (non-binary) scores, clustered questions,
rates drawn from the reader's own data.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.special import ndtri
from scipy.stats import binomtest

from chunklab_core.stats.bootstrap import probability_best

DEFAULT_BANDS = (0.0, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


def correlated_outcomes(rates, n_questions: int, question_effect: float, rng: np.random.Generator) -> np.ndarray:
    """0/1 outcomes (n_questions, n_candidates) with marginal rates ``rates`` and a shared question effect."""
    rates = np.asarray(rates, dtype=float)
    if np.any((rates <= 0) | (rates >= 1)):
        raise ValueError(f"true rates must lie strictly between 0 and 1, got {rates}")
    if not 0.0 <= question_effect < 1.0:
        raise ValueError(f"question_effect (rho) must lie in [0, 1), got {question_effect!r}")
    shared = rng.standard_normal((n_questions, 1))
    noise = rng.standard_normal((n_questions, len(rates)))
    latent = np.sqrt(question_effect) * shared + np.sqrt(1.0 - question_effect) * noise
    return (latent < ndtri(rates)).astype(float)


def simulate_comparisons(n_comparisons: int = 1_500, candidate_counts=(3, 4, 5),
                         question_counts=(18, 30, 60, 129), rate_range=(0.35, 0.85),
                         rate_spread: float = 0.06, question_effect: float = 0.5,
                         resamples: int = 2_000, seed=0) -> pd.DataFrame:
    """Simulate comparisons; one row each with the pick, its probability and whether it is truly best.

    Per comparison: k from ``candidate_counts`` and n from ``question_counts`` (uniformly),
    a base rate ~ U(rate_range) and candidate rates = base + N(0, rate_spread) clipped to
    [0.02, 0.98]. ``true_gap`` is the best minus the second-best true rate.

    Calibration depends on this prior: the smaller ``rate_spread`` (the more near-ties among
    the true rates), the more a reported 0.9 overstates how often the pick is truly best, so
    report the table for more than one spread.
    """
    children = np.random.SeedSequence(seed).spawn(n_comparisons)
    rows = []
    for index, child in enumerate(children):
        rng = np.random.default_rng(child)
        k = int(rng.choice(candidate_counts))
        n = int(rng.choice(question_counts))
        rates = np.clip(rng.uniform(*rate_range) + rng.normal(0.0, rate_spread, k), 0.02, 0.98)
        outcomes = correlated_outcomes(rates, n, question_effect, rng)
        probs = probability_best(outcomes, resamples, seed=child.spawn(1)[0], sampler="patterns")
        pick, best = int(np.argmax(probs)), int(np.argmax(rates))
        ordered = np.sort(rates)
        rows.append({"comparison": index, "n_questions": n, "n_candidates": k,
                     "pick": pick, "pick_probability": float(probs[pick]), "truly_best": best,
                     "correct": pick == best, "true_gap": float(ordered[-1] - ordered[-2])})
    return pd.DataFrame(rows)


def calibration_table(simulated: pd.DataFrame, bands=DEFAULT_BANDS, confidence: float = 0.95) -> pd.DataFrame:
    """Reliability table: per band of reported probability, how often the pick was truly best.

    Bands are left-closed ([0.8, 0.9)); the last one includes 1.0. ``ci_low``/``ci_high`` are
    Wilson score intervals for the share correct (``scipy.stats.binomtest``).
    """
    edges = np.asarray(bands, dtype=float)
    labels = [f"{lo:.1f}-{hi:.1f}" for lo, hi in zip(edges[:-1], edges[1:])]
    band = pd.cut(simulated["pick_probability"], np.r_[edges[:-1], edges[-1] + 1e-9],
                  right=False, labels=labels)
    rows = []
    for label in labels:
        group = simulated[band == label]
        count, correct = len(group), int(group["correct"].sum())
        ci = binomtest(correct, count).proportion_ci(confidence, "wilson") if count else None
        rows.append({"band": label, "comparisons": count,
                     "mean_reported": group["pick_probability"].mean() if count else np.nan,
                     "share_correct": correct / count if count else np.nan,
                     "ci_low": ci.low if ci else np.nan, "ci_high": ci.high if ci else np.nan})
    return pd.DataFrame(rows)


def leader_probability_curve(p_a: float = 0.60, p_b: float = 0.55,
                             ns=(20, 50, 100, 200, 400, 800, 1600), repetitions: int = 300,
                             question_effect: float = 0.5, resamples: int = 2_000, seed=0) -> pd.DataFrame:
    """Mean probability of being best of the truly better candidate A, per question count.

    For each n, ``repetitions`` data sets of two candidates with true rates p_a > p_b are drawn
    as in :func:`correlated_outcomes`; columns: n_questions, mean_probability_best,
    median_probability_best, share_named (A has the higher probability of being best).
    """
    if not p_a > p_b:
        raise ValueError(f"p_a must be the truly better rate (p_a > p_b), got {p_a} and {p_b}")
    rows = []
    for n, child in zip(ns, np.random.SeedSequence(seed).spawn(len(ns))):
        rng = np.random.default_rng(child)
        probs = np.array([
            probability_best(correlated_outcomes([p_a, p_b], int(n), question_effect, rng), resamples,
                             seed=int(rng.integers(2**63)), sampler="patterns")[0]
            for _ in range(repetitions)])
        rows.append({"n_questions": int(n), "mean_probability_best": probs.mean(),
                     "median_probability_best": float(np.median(probs)), "share_named": (probs > 0.5).mean()})
    return pd.DataFrame(rows)
