"""Post 06's prose that states numbers, generated from the computed tables (never typed by hand).

Handles: one Markdown paragraph per notebook section (design, agreement, directions, judges
against each other, corrected accuracy) and the closing "honest reading", each built from
the tables of :mod:`chunklab_core.audit_report`. Statements compare numbers only in ways the
tables support (which estimate is larger, whether an interval contains a value, whether two
intervals overlap); overlapping intervals are reported as such, never as "no difference".
Not handled: computing the tables, figures.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .audit_data import AuditData

STRICT, HAND, JUDGE, PPI = "strict", "hand grades only", "judge only", "PPI (judge + hand grades)"


def _ci(low: float, high: float, percent: bool = False) -> str:
    if percent:
        return f"95% interval {low:.1%} to {high:.1%}"
    return f"95% interval {low:.2f} to {high:.2f}"


def _people(count: int) -> str:
    return f"{count} person" if count == 1 else f"{count} people"


def design_summary(data: AuditData, design: pd.DataFrame, graders: pd.DataFrame) -> str:
    """Population, sheet, graded and ungraded counts, weights, disagreement share, graders."""
    n_all, n_graded, n_open = len(data.population), len(data.graded), len(data.ungraded)
    split = design[design["judges disagree"]]
    weights = design["weight"].dropna()
    text = [f"The population holds {n_all} answered items in {len(design)} verdict patterns "
            f"(strata). The sheet has {n_graded + n_open} items, {n_graded} graded"
            + (f" and {n_open} not graded yet (left out of every number below)" if n_open else "")
            + f". Design weights (population items per graded item) run from {weights.min():.1f} "
            f"to {weights.max():.1f}. The {len(split)} patterns where the judges disagree on "
            f"correct-vs-not hold {split['population'].sum()} of the {n_all} items "
            f"({split['population'].sum() / n_all:.0%}) and {split['graded'].sum()} of the "
            f"{n_graded} graded ones ({split['graded'].sum() / n_graded:.0%})."]
    if data.empty_strata:
        text.append(f"**{len(data.empty_strata)} pattern(s) have no graded item yet**, so the "
                    "population-weighted estimates below are left empty until they are graded.")
    who = ", ".join(f"{row['grader']} ({row['items graded']} items, {row['first']} to {row['last']})"
                    for _, row in graders.iterrows())
    text.append(f"Graded by {_people(len(graders))}: {who}.")
    return " ".join(text)


def _overlap(a: pd.Series, b: pd.Series, low: str, high: str) -> bool:
    return bool(a[low] <= b[high] and b[low] <= a[high])


def agreement_summary(agreement: pd.DataFrame) -> str:
    """Best and worst judge on the binary scale, their kappa intervals, sample vs weighted agreement."""
    binary = agreement[agreement["scale"] == "binary"].sort_values("kappa", ascending=False)
    best, worst = binary.iloc[0], binary.iloc[-1]
    text = [f"On correct-vs-not, {best['judge']} agrees best with the hand grades: κ = "
            f"{best['kappa']:.2f} ({_ci(best['kappa low'], best['kappa high'])}), "
            f"{best['matches']} of {best['graded']} items. {worst['judge']} agrees least: κ = "
            f"{worst['kappa']:.2f} ({_ci(worst['kappa low'], worst['kappa high'])})."]
    if len(binary) > 1:
        second = binary.iloc[1]
        text.append(f"The two best intervals ({best['judge']}, {second['judge']}) "
                    + ("overlap, so these items do not rank them with confidence."
                       if _overlap(best, second, "kappa low", "kappa high") else "do not overlap."))
    if binary["weighted agreement"].notna().all():
        gaps = binary["weighted agreement"] - binary["agreement"]
        text.append(f"The graded items are not a plain random sample (strata are drawn at "
                    f"different rates), so agreement on them "
                    f"({binary['agreement'].min():.0%} to {binary['agreement'].max():.0%}) "
                    f"{'understates' if gaps.mean() > 0 else 'overstates'} the population-"
                    f"weighted agreement ({binary['weighted agreement'].min():.0%} to "
                    f"{binary['weighted agreement'].max():.0%}).")
    return " ".join(text)


def _leaders(table: pd.DataFrame, column: str) -> tuple[str, int, str]:
    """The judge(s) with the largest ``column`` (ties all named), that value, and ", each" on ties."""
    top = int(table[column].max())
    names = list(table.loc[table[column] == top, "judge"])
    if len(names) == 1:
        return names[0], top, ""
    return ", ".join(names[:-1]) + " and " + names[-1], top, ", each"


def directions_summary(directions: pd.DataFrame) -> str:
    """Per judge: lenient, strict and unparsed counts; the most lenient and most strict judge(s)."""
    parts = [f"{row['judge']}: {row['lenient']} lenient, {row['strict']} strict, "
             f"{row['unparsed']} unparsed" for _, row in directions.iterrows()]
    lenient, n_lenient, each_lenient = _leaders(directions, "lenient")
    strict, n_strict, each_strict = _leaders(directions, "strict")
    graded = int(directions["graded"].iloc[0])
    return (f"Of the {graded} graded items — " + "; ".join(parts) + f". Most lenient: {lenient} "
            f"({n_lenient} passes the person failed{each_lenient}); most strict: {strict} "
            f"({n_strict} fails the person passed{each_strict}).")


def pairs_summary(pairs: pd.DataFrame) -> str:
    """The most and least concordant pair of judges on the binary scale (whole population)."""
    binary = pairs[pairs["scale"] == "binary"].sort_values("kappa", ascending=False)
    top, bottom = binary.iloc[0], binary.iloc[-1]
    return (f"On all {top['items']} items, {top['judge a']} and {top['judge b']} agree most "
            f"(κ = {top['kappa']:.2f}, {_ci(top['kappa low'], top['kappa high'])}); "
            f"{bottom['judge a']} and {bottom['judge b']} least (κ = {bottom['kappa']:.2f}, "
            f"{_ci(bottom['kappa low'], bottom['kappa high'])}). Judges that agree with each "
            "other can still share the same bias; only the hand grades show it.")


def accuracy_summary(accuracy: pd.DataFrame, variant: str = STRICT) -> str:
    """Hand-graded accuracy against each judge's own estimate, and PPI against the hand grades."""
    rows = accuracy[accuracy["variant"] == variant]
    hand = rows[rows["estimator"] == HAND].iloc[0]
    text = [f"From the hand grades alone (weighted), {hand['accuracy']:.1%} of the answers are "
            f"correct ({_ci(hand['low'], hand['high'], percent=True)})."]
    for _, judge in rows[rows["estimator"] == JUDGE].iterrows():
        inside = judge["low"] <= hand["accuracy"] <= judge["high"]
        text.append(f"{judge['judge']} alone says {judge['accuracy']:.1%} "
                    f"({100 * (judge['accuracy'] - hand['accuracy']):+.1f} points against the "
                    "hand grades; its "
                    f"interval {'contains' if inside else 'misses'} the hand-graded estimate).")
    ppi = rows[rows["estimator"] == PPI]
    gap = float(np.max(np.abs(ppi["accuracy"].to_numpy() - hand["accuracy"])))
    widths = (ppi["high"] - ppi["low"]).to_numpy()
    if gap < 1e-9:
        text.append("Every PPI estimate equals the hand-graded one (up to rounding): the "
                    "sample was stratified by the judges' own verdicts, so each judge is constant "
                    "within a stratum and its correction reproduces the stratified hand-graded "
                    "mean. The judges help here by deciding where to look, not by the correction.")
    else:
        text.append(f"The PPI estimates differ from the hand-graded one by up to "
                    f"{100 * gap:.1f} points.")
    text.append(f"PPI intervals are {100 * widths.min():.1f} to {100 * widths.max():.1f} points "
                f"wide, against {100 * (hand['high'] - hand['low']):.1f} for the hand grades alone.")
    return " ".join(text)


def honest_reading(data: AuditData, agreement: pd.DataFrame, directions: pd.DataFrame,
                   accuracy: pd.DataFrame | None) -> str:
    """The closing paragraph: what the audit shows, with its sizes and its limits."""
    binary = agreement[agreement["scale"] == "binary"].sort_values("kappa", ascending=False)
    best = binary.iloc[0]
    graders = sorted(set(data.graded["grader"]))
    lines = [f"- **What was checked.** {len(data.graded)} answers graded by hand out of "
             f"{len(data.population)}, drawn blind and stratified by the judges' verdicts."]
    lines.append(f"- **Best judge.** {best['judge']}, κ = {best['kappa']:.2f} "
                 f"({_ci(best['kappa low'], best['kappa high'])}) on correct-vs-not.")
    net = directions["lenient"] - directions["strict"]
    leaning = directions.loc[net.idxmax()]
    if net.max() > 0:
        lines.append(f"- **Direction.** {leaning['judge']} leans most towards passing: "
                     f"{leaning['lenient']} lenient against {leaning['strict']} strict calls "
                     "on the graded items.")
    else:
        lines.append("- **Direction.** No judge makes more lenient than strict calls on the "
                     "graded items.")
    if accuracy is not None:
        rows = accuracy[accuracy["variant"] == STRICT]
        hand = rows[rows["estimator"] == HAND].iloc[0]
        naive = rows[rows["estimator"] == JUDGE]
        far = naive.loc[(naive["accuracy"] - hand["accuracy"]).abs().idxmax()]
        lines.append(f"- **Accuracy.** {hand['accuracy']:.1%} correct by the hand grades "
                     f"({_ci(hand['low'], hand['high'], percent=True)}); the judge-only figure "
                     f"furthest from it is {far['judge']}'s {far['accuracy']:.1%}.")
    else:
        lines.append("- **Accuracy.** Not estimated: some verdict patterns have no graded item.")
    single = "so no person-to-person agreement" if len(graders) == 1 else \
        "each item graded once, so no person-to-person agreement"
    lines.append(f"- **Limits.** Graded by {_people(len(graders))} ({', '.join(graders)}), "
                 f"{single}; the answers of one question under several strategies are "
                 "correlated: the κ intervals resample questions for that, but the stratified "
                 "estimates (weighted agreement, accuracy) treat items as independent within a "
                 "stratum, so their intervals are somewhat too narrow; κ on the graded items "
                 "over-weights the hard cases (the weighted columns correct for that).")
    return "\n".join(lines)
