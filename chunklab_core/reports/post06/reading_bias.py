"""Post 06's prose on the audit's own biases and its closing reading, generated from the tables.

Handles: the reference-grader advantage (:func:`reference_summary`), judge self-preference
(:func:`self_preference_summary`), judge stability under sampling (:func:`stability_summary`)
and the closing bullet list (:func:`honest_reading`). Words for the grades come from
:class:`chunklab_core.audit.graders.GraderWords`; comparisons follow
:func:`chunklab_core.audit.paired.reading_of`. Not handled: computing anything.
"""

from __future__ import annotations

import pandas as pd

from chunklab_core.answers.verdicts import REFERENCE_NAME, grader_name, sentence_start
from chunklab_core.audit.bias import BEYOND_REFERENCE, Retest
from chunklab_core.audit.loading import AuditData
from chunklab_core.audit.graders import GraderWords
from chunklab_core.reports.post06.reading import GRADES, JUDGE, STRICT, ci, points


def reference_summary(tagged: int, table: pd.DataFrame, agreement: pd.DataFrame,
                      words: GraderWords) -> str:
    """What grading against the reference means for the rule-based reference grader's agreement."""
    text = ["Every grade was made with the reference answer and its passage in view, and the "
            "rubric grades against the reference. The rule-based reference grader matches "
            "answers against the same reference, so part of its agreement with "
            f"{words.grades} is built in by construction."]
    row = table[table["judge"] == REFERENCE_NAME]
    if tagged and not row.empty:
        r = row.iloc[0]
        text.append(f"The grader tagged {tagged} item(s) `{BEYOND_REFERENCE}` (graded correct by "
                    "the passage although the answer does not give the reference); the reference "
                    f"grader agrees with the grade on {r['agree on tagged']} of them, against "
                    f"{r['agree on others']} of {r['other items']} on the other items.")
    elif not tagged:
        text.append(f"No item is tagged `{BEYOND_REFERENCE}`: the grades never depart from the "
                    "reference, so this audit cannot show answers the reference misses.")
    binary = agreement[(agreement["scale"] == "binary") & (agreement["judge"] == REFERENCE_NAME)]
    if not binary.empty:
        r = binary.iloc[0]
        text.append(f"The reference grader's κ of {r['kappa']:.2f} "
                    f"({ci(r['kappa low'], r['kappa high'])}, binary scale) is "
                    "therefore an upper bound on how well it would agree with a grader who judged "
                    "answers on their own merits; it is not evidence that string matching "
                    "grades as well as a reader.")
    return " ".join(text)


def self_preference_summary(contrast: dict | None) -> str:
    """The 1.5B judge on its own model's answers against the 0.5B judge, and what it can show."""
    if contrast is None:
        return "Self-preference is not measured: the sample lacks one of the two three-way judges."
    reading = {"a more lenient": f"the {contrast['judge a']} is more lenient",
               "b more lenient": f"the {contrast['judge b']} is more lenient"}.get(
        contrast["reading"], "the two cannot be told apart")
    return (f"The answers were written by Qwen2.5-Coder-1.5B, the model behind the "
            f"{contrast['judge a']}; the {contrast['judge b']} is Qwen2.5-Coder-0.5B, "
            f"the same family. On the same graded items, the lenient share of the {contrast['judge a']} "
            f"minus that of the {contrast['judge b']} is {100 * contrast['lenient a - lenient b']:+.1f} "
            f"points ({points(contrast['low'], contrast['high'])}): {reading}. "
            + (f"The answerer's own model is the less lenient judge here, which shows no "
               f"preference for its own answers relative to the {contrast['judge b']}, and cannot "
               "show one the two share. " if contrast["reading"] == "b more lenient" else "")
            + "A more lenient "
            "1.5B judge would be consistent with self-preference but also with any other "
            "difference between the two models (size, calibration); no difference does not rule "
            "self-preference out, because the 0.5B judge shares the family and may share its "
            "taste for the family's answers. Telling them apart needs a judge of another family, "
            "or answers written by another model; this audit has one family.")


def _share_ci(row, name: str) -> str:
    """The bootstrap interval, or (nothing observed, where a bootstrap has no spread) the exact
    one-sided 97.5% upper bound ``1 - 0.025^(1/n)`` over the n items (Clopper & Pearson 1934)."""
    if row[name] == 0:
        return f"at most {1 - 0.025 ** (1 / row['items']):.1%} at 97.5% confidence, none of {row['items']} items"
    return ci(row[f"{name} low"], row[f"{name} high"], True)


def stability_summary(retest: Retest | None, probes: pd.DataFrame | None, temperature: float) -> str:
    """Verdict changes at temperature > 0 (replayed records), beside post 05's temperature-0 retest.

    Says how many of the seeded subset's items were replayed ("3 of the 30 items"): the replay
    stops at the first item without a recorded call. Judges are named by
    :func:`chunklab_core.answers.verdicts.grader_name` (post 05's probe keys too).
    """
    text = []
    if retest is None:
        text.append(f"No retest at temperature {temperature} is recorded for this sample "
                    "(`chunklab-judge-retest` records one).")
    else:
        summary, replayed = retest.summary, len(retest.items)
        covered = (f"all {replayed} items of a seeded subset of the sample's first wave (recorded calls, replayed here)"
                   if replayed == retest.drew else
                   f"{replayed} of the {retest.drew} items of a seeded subset of the sample's first wave (recorded "
                   f"calls, replayed here; the replay stops at the first item without a recorded call, "
                   f"and `chunklab-judge-retest` records the missing ones)")
        parts = [f"the {r['judge']}: {r['verdicts changed']:.1%} of sampled verdicts differ from its "
                 f"temperature-0 verdict ({_share_ci(r, 'verdicts changed')}), "
                 f"{r['items with a pass/fail flip']:.1%} of items flip between pass and fail in "
                 f"at least one sample ({_share_ci(r, 'items with a pass/fail flip')}), "
                 f"{r['unparsed']} unparsed" for _, r in summary.iterrows()]
        text.append(f"Re-asked at temperature {temperature} with "
                    f"{int(summary['samples per item'].max())} sampling seeds on {covered}. "
                    + sentence_start("; ".join(parts)) + ".")
    if probes is not None and "retest_changed" in probes.columns:
        parts = ", ".join(f"{r['retest_changed']:.0%} of the {grader_name(r['judge'])}'s verdicts"
                          for _, r in probes.iterrows())
        text.append(f"Post 05's retest at temperature 0 (a second call on the same input) "
                    f"changed {parts}: that measures the runtime's determinism, this "
                    "one how much a verdict depends on decoding.")
    text.append("Post 05's verdicts are greedy (temperature 0), so they are one fixed draw; "
                "the changes above say how much a different but equally plausible decoding "
                "would move them.")
    return " ".join(text)


def honest_reading(data: AuditData, words: GraderWords, accuracy: pd.DataFrame | None,
                   paired: pd.DataFrame, contrasts: pd.DataFrame, target: float) -> str:
    """The closing bullet list: what was checked, by whom, what it shows, and its limits."""
    graders = sorted(set(data.grades["grader"]))
    lines = [f"- **What was checked.** {len(data.graded)} of {len(data.population)} answers, "
             f"drawn blind and stratified by the judges' verdicts, graded by {words.who}."]
    if accuracy is not None:
        rows = accuracy[accuracy["variant"] == STRICT]
        grades = rows[rows["estimator"] == GRADES].iloc[0]
        half = (grades["high"] - grades["low"]) / 2
        lines.append(f"- **Accuracy.** {grades['accuracy']:.1%} correct by {words.grades} "
                     f"({ci(grades['low'], grades['high'], True)}); precision target ±"
                     f"{100 * target:.0f} points {'met' if half <= target else 'not met'}.")
        strict = paired[paired["variant"] == STRICT]
        off = strict[strict["reading"] != "cannot be told apart"]
        naive = rows[rows["estimator"] == JUDGE].set_index("judge")["accuracy"]
        if off.empty:
            lines.append("- **Judge-only figures.** No judge's figure can be told apart from the "
                         "corrected one (paired intervals contain 0).")
        else:
            told = "; ".join(f"{r['judge']} ({naive[r['judge']]:.1%}, {r['reading']}, "
                             f"{points(r['low'], r['high'])})" for _, r in off.iterrows())
            lines.append(f"- **Judge-only figures.** Off the corrected figure: {told}.")
    else:
        lines.append("- **Accuracy.** Not estimated: some verdict patterns have no graded item.")
    apart = contrasts[contrasts["reading"] != "cannot be told apart"]
    lines.append("- **Judges against each other.** " + (
        "No two judges' biases can be told apart on these items." if apart.empty else
        f"{len(apart)} of {len(contrasts)} pairs differ in bias (listed above); the rest cannot "
        "be told apart."))
    several = len(graders) > 1
    kind = ("people" if several else "a person") if words.all_human else \
        ("all of them models" if several else "a model") if not words.any_human \
        else "people and models"
    lines.append(f"- **Limits.** {len(graders)} grader{'s' if several else ''}, {kind}"
                 + ("; with one grader no grader-to-grader agreement exists, so the grades' own "
                    "noise is not in any interval above" if len(graders) == 1 else "")
                 + "; grades made against the reference favour the reference grader; one model "
                 "family answers and judges, so self-preference is bounded, not measured; the "
                 "κ and paired intervals resample questions, the stratified accuracy intervals "
                 "treat items within a stratum as independent and are somewhat too narrow.")
    return "\n".join(lines)
