"""Post 06's prose that states numbers, generated from the computed tables (never typed by hand).

Handles: one Markdown paragraph per notebook section (design and graders, agreement between
graders, agreement with the grades, directions, judge-only against grader-corrected accuracy,
judges against each other) and the quoted items as wrapped Markdown. The words for the
grades come from :func:`chunklab_core.audit.graders.grader_words` (``GraderWords``): "hand
grades" or "a person" appear only when every grader is ``human``. Comparisons follow one
rule (:func:`chunklab_core.audit.paired.reading_of`): a paired interval that excludes 0 is a
difference, one that contains 0 means the two cannot be told apart; nothing is ranked by a
point estimate alone. The bias paragraphs and the closing reading are in
:mod:`chunklab_core.reports.post06.reading_bias`.
Not handled: computing the tables, figures.
"""

from __future__ import annotations

import pandas as pd

from chunklab_core.answers.verdicts import sentence_start
from chunklab_core.audit.loading import AuditData
from chunklab_core.audit.graders import GraderWords
from chunklab_core.audit.sizing import items_to_halve_interval

STRICT, GRADES, JUDGE, PPI = "strict", "grades only", "judge only", "PPI (judge + grades)"


def ci(low: float, high: float, percent: bool = False) -> str:
    """``95% interval a to b`` (shares as percent, or two decimals)."""
    if percent:
        return f"95% interval {low:.1%} to {high:.1%}"
    return f"95% interval {low:.2f} to {high:.2f}"


def points(low: float, high: float) -> str:
    """An interval of a difference of shares, in percentage points."""
    return f"95% interval {100 * low:+.1f} to {100 * high:+.1f} points"


def _ordered(row, verb: str, a_first: bool, value: str | None = None) -> str:
    """``the X <verb> the Y (+d points, interval)`` with the larger one first, the interval signed to match."""
    first, second = (row["judge a"], row["judge b"]) if a_first else (row["judge b"], row["judge a"])
    low, high = (row["low"], row["high"]) if a_first else (-row["high"], -row["low"])
    estimate = "" if value is None else f"{100 * (row[value] if a_first else -row[value]):+.1f} points, "
    return f"the {first} {verb} the {second} ({estimate}{points(low, high)})"


def design_summary(data: AuditData, design: pd.DataFrame, words: GraderWords) -> str:
    """Population (per corpus), sheet, graded and ungraded counts, weights, disagreement share, graders."""
    n_all, n_graded, n_open = len(data.population), len(data.graded), len(data.ungraded)
    corpora = ""
    if "corpus" in data.population.columns:
        counts = data.population["corpus"].value_counts()
        corpora = " (" + ", ".join(f"{n} {name}" for name, n in counts.items()) + ")"
    split = design[design["judges disagree"]]
    weights = design["weight"].dropna()
    text = [f"The population is the {n_all} answered items{corpora} post 05 had recorded when the "
            f"sample was drawn, in {len(design)} verdict patterns (strata). The sheet has "
            f"{n_graded + n_open} items, {n_graded} graded"
            + (f" and {n_open} not graded yet (left out of every number below)" if n_open else "")
            + f". Design weights (population items per graded item) run from {weights.min():.1f} "
            f"to {weights.max():.1f}. The {len(split)} patterns where the judges disagree on "
            f"correct-vs-not hold {split['population'].sum()} of the {n_all} items "
            f"({split['population'].sum() / n_all:.0%}) and {split['graded'].sum()} of the "
            f"{n_graded} graded ones ({split['graded'].sum() / n_graded:.0%})."]
    if data.empty_strata:
        text.append(f"**{len(data.empty_strata)} pattern(s) have no graded item yet**, so the "
                    "population-weighted estimates below are left empty until they are graded.")
    text.append(f"Graded by {words.who}.")
    if not words.any_human:
        text.append("Every grade on this sheet is a model's: every number below compares the "
                    "judges with another model's reading of the answers.")
    return " ".join(text)


def coverage_summary(check: pd.DataFrame | None) -> str:
    """Whether the audit's population is the set of items post 05 publishes now."""
    if check is None:
        return "Post 05's published item counts are not available here, so the population is not checked against them."
    drawn, published = check["in the audit population"].sum(), check["published by post 05"].sum()
    per = ", ".join(f"{r['corpus']} {r['in the audit population']} of {r['published by post 05']}"
                    for _, r in check.iterrows())
    if (check["in the audit population"] == check["published by post 05"]).all():
        return (f"The population is exactly what post 05 publishes: {published} items ({per}).")
    return (f"**The population is not what post 05 publishes now**: {drawn} items were drawn "
            f"from, post 05 publishes {published} ({per}). Every estimate below describes the "
            "items recorded when the sample was drawn; the items recorded since are not "
            "covered until a sample of them is drawn and graded "
            "(`chunklab-audit-draw --name NEW`).")


def graders_summary(data: AuditData, pairs: pd.DataFrame, agreement: pd.DataFrame,
                    words: GraderWords) -> str:
    """Agreement between graders, or (one grader) what a second grader would add, computed."""
    graders = sorted(set(data.grades["grader"]))
    if len(graders) == 1:
        mine = agreement[agreement["scale"] == "binary"]
        widths = (mine["kappa high"] - mine["kappa low"]).dropna()
        n = len(data.graded)
        total, more = items_to_halve_interval(n)
        questions = data.graded["qid"].nunique() if "qid" in data.graded.columns else n
        return (f"One grader graded every item ({words.who}), so agreement between graders "
                f"cannot be measured here and no label is adjudicated. What a second grader "
                f"would add: a grader-to-grader κ on these {n} items ({questions} questions), "
                f"whose interval would be about as wide as the judges' κ intervals against this "
                f"grader (intervals {widths.min():.2f} to {widths.max():.2f} wide on the binary "
                f"scale). Such "
                f"widths shrink as 1/√n, so halving them takes about {total} graded items, "
                f"{more} more than this sheet holds.")
    binary = pairs[pairs["scale"] == "binary"]
    parts = [f"{r['grader a']} and {r['grader b']}: {r['matches']} of {r['items']} items agree, "
             f"κ = {r['kappa']:.2f} ({ci(r['kappa low'], r['kappa high'])})"
             for _, r in binary.iterrows()]
    differing = int((data.graded["graders"] > 1).sum())
    return (f"{len(graders)} graders ({words.who}). On correct-vs-not, " + "; ".join(parts)
            + f". {differing} items were graded by more than one grader. The *adjudicated* "
            "label is the grade most graders gave; on a tie, the lowest tied grade (wrong < "
            "partial < correct). The judges are measured against each grader and against "
            "the adjudicated label below.")


def agreement_summary(agreement: pd.DataFrame, contrasts: pd.DataFrame, words: GraderWords) -> str:
    """Each judge's kappa with its interval, and which judges the paired contrasts can tell apart."""
    against = "adjudicated" if "adjudicated" in set(agreement["against"]) else agreement["against"].iloc[0]
    binary = agreement[(agreement["scale"] == "binary") & (agreement["against"] == against)]
    listed = "; ".join(f"{r['judge']} κ = {r['kappa']:.2f} ({ci(r['kappa low'], r['kappa high'])}), "
                       f"{r['matches']} of {r['graded']} items" for _, r in binary.iterrows())
    text = [f"On correct-vs-not, against {words.grades}: {listed}."]
    apart = contrasts[contrasts["reading"] != "cannot be told apart"]
    if apart.empty:
        text.append("No two judges can be told apart on agreement: every paired difference "
                    "(same items, weighted, questions resampled) has an interval containing 0.")
    else:
        told = "; ".join(_ordered(r, "agrees more than", r["reading"] == "a agrees more")
                         for _, r in apart.iterrows())
        text.append(f"Paired on the same items, {told}; every other pair cannot be told apart.")
    if binary["weighted agreement"].notna().all():
        text.append(f"The graded items over-represent the disagreement patterns, so agreement on "
                    f"them ({binary['agreement'].min():.0%} to {binary['agreement'].max():.0%}) "
                    "differs from the population-weighted agreement "
                    f"({binary['weighted agreement'].min():.0%} to "
                    f"{binary['weighted agreement'].max():.0%}).")
    return " ".join(text)


def directions_summary(rates: pd.DataFrame, words: GraderWords) -> str:
    """Per judge: weighted lenient and strict shares with intervals, and the reading of their difference."""
    parts = [f"**{r['judge']}** lenient {r['lenient share']:.1%} ({ci(r['lenient low'], r['lenient high'], True)}), "
             f"strict {r['strict share']:.1%} ({ci(r['strict low'], r['strict high'], True)}): "
             f"{r['reading']} ({r['lenient items']} lenient and {r['strict items']} strict calls "
             f"among {r['graded']} graded items)" for _, r in rates.iterrows()]
    return (f"Population-weighted shares of all answers, against {words.grades}: "
            + "; ".join(parts) + ".")


def accuracy_summary(accuracy: pd.DataFrame, paired: pd.DataFrame, words: GraderWords,
                     target: float, variant: str = STRICT) -> str:
    """Grader-corrected accuracy, its precision against the target, each judge's paired difference."""
    rows = accuracy[accuracy["variant"] == variant]
    grades = rows[rows["estimator"] == GRADES].iloc[0]
    half = (grades["high"] - grades["low"]) / 2
    text = [f"Corrected by {words.grades} (weighted), {grades['accuracy']:.1%} of the answers are "
            f"correct ({ci(grades['low'], grades['high'], True)}; {variant} scoring). The interval's "
            f"half-width is {100 * half:.1f} points against a target of {100 * target:.0f} "
            f"({'met' if half <= target else 'not met'})."]
    for _, judge in rows[rows["estimator"] == JUDGE].iterrows():
        diff = paired[(paired["judge"] == judge["judge"]) & (paired["variant"] == variant)].iloc[0]
        reading = {"judge-only too high": "is too high", "judge-only too low": "is too low"}.get(
            diff["reading"], "cannot be told apart from the corrected figure")
        text.append(f"{sentence_start('the ' + judge['judge'])} alone says {judge['accuracy']:.1%}; judge-only minus "
                    f"corrected, paired on the same items: {100 * diff['difference']:+.1f} points "
                    f"({points(diff['low'], diff['high'])}), so its judge-only figure {reading}.")
    lenient = paired[paired["variant"] == "lenient"]
    if variant == STRICT and len(lenient):
        parts = "; ".join(f"{r['judge']} {100 * r['difference']:+.1f} points "
                          f"({points(r['low'], r['high'])}, {r['reading']})"
                          for _, r in lenient.iterrows())
        text.append(f"With lenient scoring (a partial counts as a pass), judge-only minus "
                    f"corrected: {parts}.")
    ppi = rows[rows["estimator"] == PPI]
    gap = float((ppi["accuracy"] - grades["accuracy"]).abs().max())
    if gap < 1e-9:
        text.append("Every PPI estimate equals the grades-only one: the strata are the judges' "
                    "own verdict patterns, so each judge is constant within a stratum and its "
                    "correction reproduces the stratified mean of the grades. The judges help "
                    "here by deciding where to look, not by the correction.")
    else:
        text.append(f"The PPI estimates differ from the grades-only one by up to {100 * gap:.1f} points.")
    return " ".join(text)


def contrasts_summary(contrasts: pd.DataFrame) -> str:
    """Which pairs of judges' biases (judge-only minus corrected) differ on the same items."""
    apart = contrasts[contrasts["reading"] != "cannot be told apart"]
    if apart.empty:
        return ("Compared with each other on the same items, no two judges' biases can be told "
                "apart: every paired interval contains 0, so no judge is named the most lenient "
                "or the most strict.")
    told = "; ".join(_ordered(r, "passes more answers than", r["reading"] == "a passes more",
                              "bias a - bias b") for _, r in apart.iterrows())
    return (f"Compared with each other on the same items, these pairs differ: {told}. Every "
            "other pair cannot be told apart.")


def pairs_summary(pairs: pd.DataFrame, words: GraderWords) -> str:
    """Each pair of judges on the whole population (binary scale), with intervals."""
    binary = pairs[pairs["scale"] == "binary"]
    parts = "; ".join(f"{r['judge a']} vs {r['judge b']}, κ = {r['kappa']:.2f} "
                      f"({ci(r['kappa low'], r['kappa high'])})" for _, r in binary.iterrows())
    return (f"On all {binary['items'].iloc[0]} items: {parts}. Judges that agree with each other "
            f"can still share the same bias; only {words.grades} show it.")


def escape_markdown(text: str) -> str:
    """``text`` safe inside Markdown: emphasis, code, link and HTML characters escaped, spaces collapsed."""
    text = " ".join(str(text).split())
    for char in "\\`*_[]#|":
        text = text.replace(char, "\\" + char)
    return text.replace("<", "&lt;").replace(">", "&gt;")


def quoted_items(table: pd.DataFrame, words: GraderWords, empty: str) -> str:
    """Items as Markdown blocks, every text in full (wrapped by the renderer, never cut)."""
    if table.empty:
        return empty
    blocks = []
    for _, row in table.iterrows():
        e = escape_markdown
        lines = [f"**{row['item']}** — {e(row['judges'])}; {words.grade}: **{row['grade']}**",
                 f"> **Question:** {e(row['question'])}  ",
                 f"> **Reference:** {e(row['reference'])}  ",
                 f"> **Answer:** {e(row['answer'])}"]
        if str(row.get("note", "")).strip():
            lines[-1] += "  "
            lines.append(f"> **Grader's note:** {e(row['note'])}")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def quoted_grader_differences(table: pd.DataFrame) -> str:
    """Items graded differently by the graders, every grade and note, texts in full."""
    e = escape_markdown
    blocks = [f"**{r['item']}** — {e(r['grades'])}\n> **Question:** {e(r['question'])}  \n"
              f"> **Reference:** {e(r['reference'])}  \n> **Answer:** {e(r['answer'])}"
              + (f"  \n> **Notes:** {e(r['notes'])}" if str(r["notes"]).strip() else "")
              for _, r in table.iterrows()]
    return "\n\n".join(blocks)


def pilot_summary(pilot: AuditData, words: GraderWords) -> str:
    """The pilot sheet: its size, its population at the time, who graded it, and that it feeds no number."""
    return (f"**The pilot.** An earlier sheet of {len(pilot.graded)} items, drawn the same way from the "
            f"{len(pilot.population)} items post 05 had recorded at the time, was graded by "
            f"{words.who}. Its population is not post 05's as published, so it feeds no number "
            "in this post; it served only to plan the size of the sample above.")
