"""Reference results the series quotes, and the series' own figure for each, computed.

The reference values are *cited constants* from the published ChunkLab SQuAD benchmark (its
README's results table; SQuAD v1.1 dev, 800 questions from 40 articles, seed 20260729:
:data:`REFERENCE_SOURCE`, cited by :func:`citation`), not measured here; each function puts the series' own number beside
one of them, computed from the series' data, so a reader sees whether the reference is
reproduced, and if not, why:

* interval width at n = 80 — the reference's "±9 points" is a 95% half-width; the binomial
  half-width ``z·sqrt(p(1 − p)/n)`` (Wald) depends on the base rate p, so it is given for the
  series' own rates (:func:`half_width_at_n`);
* the MRR contrast (0.843 against 0.790) — the series' largest MRR@10 gap between two post 01
  strategies with its paired interval (:func:`mrr_contrast`);
* the calibration claim (picks at 90–100% right 96% of the time, 80–90% right 82%) against
  the series' simulation at each spread of true rates (:func:`calibration_against_reference`);
* the leader-probability curve (about 60% at n = 20, 99% at n = 1,600);
* generated against human question overlap (40.9% against 27.1%) beside the series' two overlap
  measures (:func:`overlap_text`).

Not handled: re-running the reference's own code or sample (not available).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import norm

from chunklab_core.core import numbers
from chunklab_core.stats import bootstrap as stats
from chunklab_core.chunking import strategy_label
from chunklab_core.evaluation.measures import column, interval_columns, parse
from chunklab_core.reports.samples import sample_label

# Where every REFERENCE value is published: the benchmark's README, its results table.
REFERENCE_SOURCE = {"name": "the published ChunkLab SQuAD benchmark",
                    "where": "its README's results table", "corpus": "squad",
                    "questions": 800, "articles": 40, "seed": 20260729}


def citation(capital: bool = False) -> str:
    """``the published ChunkLab SQuAD benchmark (its README's results table; SQuAD v1.1, 800
    questions from 40 articles, seed 20260729)``, from :data:`REFERENCE_SOURCE`."""
    source = REFERENCE_SOURCE
    text = (f"{source['name']} ({source['where']}; "
            f"{sample_label(source['corpus'], source['questions'], source['articles'])}, "
            f"seed {source['seed']})")
    return text[0].upper() + text[1:] if capital else text

REFERENCE = {
    "half_width_at_80": 0.09,        # "±9 points at n = 80"
    "mrr_pair": (0.843, 0.790),      # MRR of the reference's two strategies
    "calibration_top_band": 0.96,    # picks reported at 90–100% right 96% of the time
    "calibration_second_band": 0.82,  # picks reported at 80–90% right 82% of the time
    "leader_probability": ((20, 0.60), (1600, 0.99)),  # true 0.60 vs 0.55
    "question_overlap": (0.409, 0.271),  # generated vs human questions' word overlap (reference measure)
    "post01_questions": 800,          # the reference run's sample size (post 01's design)
}


def half_width_at_n(rate: float, n: int, confidence: float = 0.95) -> float:
    """Wald half-width of a 95% interval for a share: ``z · sqrt(p (1 − p) / n)``, z the normal quantile."""
    if not 0 <= rate <= 1 or n < 1:
        raise ValueError(f"need 0 <= rate <= 1 and n >= 1, got {rate}, {n}")
    return float(norm.ppf(0.5 + confidence / 2) * np.sqrt(rate * (1 - rate) / n))


def width_table(rates: dict[str, float], n: int = 80) -> pd.DataFrame:
    """Half-width at ``n`` questions for each named base rate, beside the reference's figure."""
    rows = [{"base rate of": name, "rate": rate, "questions": n, "half-width": half_width_at_n(rate, n),
             "reference half-width": REFERENCE["half_width_at_80"]} for name, rate in rates.items()]
    return pd.DataFrame(rows)


def width_text(table: pd.DataFrame) -> str:
    low, high = table.loc[table["half-width"].idxmin()], table.loc[table["half-width"].idxmax()]
    return (f"At n = {int(table['questions'].iloc[0])} a 95% interval is ±{100 * low['half-width']:.1f} points for "
            f"{low['base rate of']} (rate {low['rate']:.2f}) and ±{100 * high['half-width']:.1f} points for "
            f"{high['base rate of']} (rate {high['rate']:.2f}); the ±{100 * REFERENCE['half_width_at_80']:.0f} "
            f"points quoted by {citation()} "
            f"hold for a rate of {rate_for_half_width(REFERENCE['half_width_at_80'], 80):.2f} (or one minus it) "
            "— the width depends on the base rate, so quote it with the rate.")


def rate_for_half_width(half_width: float, n: int, confidence: float = 0.95) -> float:
    """The rate p >= 0.5 whose Wald half-width at n is ``half_width``: p(1 − p) = n·(h/z)²."""
    product = n * (half_width / norm.ppf(0.5 + confidence / 2)) ** 2
    if product > 0.25:
        raise ValueError(f"no rate has a half-width of {half_width} at n = {n} (the largest is at p = 0.5)")
    return float(0.5 + np.sqrt(0.25 - product))


def mrr_contrast(per_question: pd.DataFrame, resamples: int, seed: int, k: int = 10) -> dict:
    """The largest MRR@k gap between two strategies, with its paired interval, beside the reference's."""
    rr = per_question.pivot(index="qid", columns="strategy", values=column("rr", k))
    means = rr.mean()
    best, worst = means.idxmax(), means.idxmin()
    d = stats.paired_difference_ci(rr[best].to_numpy(), rr[worst].to_numpy(), resamples, seed)
    ref_a, ref_b = REFERENCE["mrr_pair"]
    return {"best": strategy_label(best), "worst": strategy_label(worst), "best_mrr": float(means[best]),
            "worst_mrr": float(means[worst]), "difference": d.mean, "low": d.low, "high": d.high,
            "questions": len(rr), "reference_gap": ref_a - ref_b}


def mrr_text(contrast: dict) -> str:
    ref_a, ref_b = REFERENCE["mrr_pair"]
    return (f"{citation(True)} reports MRR {ref_a:.3f} against {ref_b:.3f} (a gap of {contrast['reference_gap']:.3f}). "
            f"On these {contrast['questions']} questions the largest MRR@10 gap is {contrast['best']} "
            f"({contrast['best_mrr']:.3f}) − {contrast['worst']} ({contrast['worst_mrr']:.3f}) = "
            f"{numbers.estimate(contrast['difference'], contrast['low'], contrast['high'], signed=True)} (paired 95%); the benchmark "
            "does not say which pair it compared, so only the size of the gap can be set beside ours.")


def calibration_against_reference(calibration: pd.DataFrame) -> pd.DataFrame:
    """Per spread: the share truly best in the top two bands, with Wilson intervals, beside the reference's."""
    bands = list(dict.fromkeys(calibration["band"]))[-2:]
    reference = {bands[-1]: REFERENCE["calibration_top_band"], bands[0]: REFERENCE["calibration_second_band"]}
    table = calibration[calibration["band"].isin(bands)].copy()
    table["reference"] = table["band"].map(reference)
    table["reference inside our interval"] = (table["ci_low"] <= table["reference"]) & (table["reference"] <= table["ci_high"])
    return table[["rate spread", "band", "comparisons", "mean_reported", "share_correct", "ci_low", "ci_high",
                  "reference", "reference inside our interval"]].reset_index(drop=True)


def calibration_text(table: pd.DataFrame) -> str:
    top = table[table["band"] == table["band"].iloc[-1]]
    inside = top[top["reference inside our interval"]]
    text = (f"{citation(True)} found picks in the {top['band'].iloc[0]} band right {REFERENCE['calibration_top_band']:.0%} "
            "of the time. Our simulation gives " + ", ".join(
                f"{r['share_correct']:.0%} [{r['ci_low']:.0%}, {r['ci_high']:.0%}] at spread {r['rate spread']:g}"
                for _, r in top.iterrows()) + ". ")
    if len(inside):
        text += (f"The benchmark's figure is reproduced only at spread {', '.join(f'{s:g}' for s in inside['rate spread'])}: "
                 "when the true rates are well apart; with near-ties, probability of being best is overconfident.")
    else:
        text += ("No spread reproduces it: in this simulation probability of being best is overconfident whatever "
                 "the spread, so the series never uses it as the basis of a verdict.")
    return text


def leader_curve_text(curve: pd.DataFrame) -> str:
    (n_small, p_small), (n_large, p_large) = REFERENCE["leader_probability"]
    ours = curve.set_index("n_questions")["mean_probability_best"]
    parts = [f"{ours[n]:.0%} at n = {n:,} (benchmark {p:.0%})" for n, p in ((n_small, p_small), (n_large, p_large))
             if n in ours.index]
    return ("With a true gap of 0.60 against 0.55 the better candidate's mean probability of being best is "
            + " and ".join(parts) + f"; the benchmark figures are quoted from {citation()}.") if parts else \
        f"The curve does not reach the question counts of {citation()}."


def two_sample_reference(results: pd.DataFrame, reference_run: dict, n_reference: int = REFERENCE["post01_questions"],
                         confidence: float = 0.95) -> pd.DataFrame:
    """Ours − reference per quoted value, with a two-sample band: both are estimates from a sample.

    ``se_ours`` comes from our percentile interval ((high − low) / 2z). The reference's standard
    error: for a hit rate, the binomial ``sqrt(p(1 − p)/n_reference)``; for MRR or nDCG (not
    binomial) it is taken equal to ours (same design, same sample size — an assumption, stated
    in the ``reference se`` column). Band: ``z·sqrt(se_ours² + se_ref²)``; the verdict is
    "cannot be told apart" when |ours − reference| is inside it.
    """
    z = float(norm.ppf(0.5 + confidence / 2))
    ours = results.set_index("strategy")
    rows = []
    for strategy, values in reference_run.items():
        if strategy not in ours.index:
            continue
        for metric, reference in values.items():
            mean = float(ours.loc[strategy, metric])
            low, high = interval_columns(metric)
            se_ours = float(ours.loc[strategy, high] - ours.loc[strategy, low]) / (2 * z)
            binomial = parse(metric)[0] == "hit"
            se_ref = float(np.sqrt(reference * (1 - reference) / n_reference)) if binomial else se_ours
            band = z * float(np.hypot(se_ours, se_ref))
            diff = mean - reference
            rows.append({"strategy": strategy_label(strategy), "metric": metric, "ours": mean, "reference": reference,
                         "ours − reference": diff, "two-sample band (±)": band,
                         "reference se": "binomial" if binomial else "assumed equal to ours",
                         "verdict": "cannot be told apart" if abs(diff) <= band else
                         ("ours higher" if diff > 0 else "ours lower")})
    return pd.DataFrame(rows)


def two_sample_text(table: pd.DataFrame) -> str:
    apart = table[table["verdict"] != "cannot be told apart"]
    text = (f"{len(table) - len(apart)} of {len(table)} values quoted from {citation()} cannot be told apart "
            "from ours once both samples' noise is counted")
    if len(apart):
        text += ("; beyond the two-sample band: " + "; ".join(
            f"{r['strategy']} {r['metric']} (ours {r['ours']:.3f}, reference {r['reference']:.3f}, "
            f"difference {r['ours − reference']:+.3f}, band ±{r['two-sample band (±)']:.3f})" for _, r in apart.iterrows()))
    return text + "."


def overlap_text(measures: pd.DataFrame) -> str:
    """The reference's question-overlap pair beside the series' two measures, per corpus.

    The reference states its two shares without its exact definition, so the levels are not
    comparable; what can be compared is the direction and the ratio generated / human.
    """
    generated_ref, human_ref = REFERENCE["question_overlap"]
    parts = []
    for corpus, group in measures.groupby("corpus", sort=False):
        by_set = group.set_index("set")
        if not {"generated", "human"} <= set(by_set.index):
            continue
        g, h = by_set.loc["generated"], by_set.loc["human"]
        parts.append(f"{corpus}: content words {g['content words']:.2f} against {h['content words']:.2f} "
                     f"(ratio {g['content words'] / h['content words']:.2f}), bigrams {g['bigrams']:.2f} against "
                     f"{h['bigrams']:.2f} (ratio {g['bigrams'] / h['bigrams']:.2f})")
    return (f"{citation(True)} reports generated questions overlapping their passage {100 * generated_ref:.1f}% "
            f"against {100 * human_ref:.1f}% for human ones (ratio {generated_ref / human_ref:.2f}), without the exact "
            "definition of its measure, so its levels cannot be reproduced here. The series' content-word overlap "
            "counts topic words, which human questions share with their passage too; bigram overlap counts copied "
            "phrasing and sits at lower levels. Generated over human, per corpus (means over questions): "
            + "; ".join(parts) + ". Where the ratios agree in direction with the reference's, the finding that "
            "generated questions copy more of their passage is reproduced; the levels depend on the measure.")
