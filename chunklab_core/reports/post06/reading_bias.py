"""Post 06's prose on the audit's own biases and its closing reading, filled into ``reading_bias.md``.

Handles: the reference-grader advantage (:func:`reference_summary`), judge self-preference
(:func:`self_preference_summary`), judge stability under sampling (:func:`stability_summary`)
and the closing bullet list (:func:`honest_reading`). The sentences live in
``reading_bias.md`` (:mod:`chunklab_core.reports.templates`); this module supplies the values.
Words for the grades come from :class:`chunklab_core.audit.graders.GraderWords`; comparisons
follow :func:`chunklab_core.audit.paired.reading_of`. Not handled: computing anything.
"""

from __future__ import annotations

import pandas as pd

from chunklab_core.answers.verdicts import REFERENCE_NAME, grader_name, sentence_start
from chunklab_core.audit.bias import BEYOND_REFERENCE, Retest
from chunklab_core.audit.loading import AuditData
from chunklab_core.audit.graders import GraderWords
from chunklab_core.core import numbers
from chunklab_core.reports.post06.reading import GRADES, JUDGE, STRICT, ci, points
from chunklab_core.reports.templates import Templates

PROSE = Templates(__file__, "reading_bias.md")


def reference_summary(tagged: int, table: pd.DataFrame, agreement: pd.DataFrame,
                      words: GraderWords) -> str:
    """What grading against the reference means for the rule-based reference grader's agreement."""
    text = [PROSE.fill("reference", grades=words.grades)]
    row = table[table["judge"] == REFERENCE_NAME]
    if tagged and not row.empty:
        r = row.iloc[0]
        text.append(PROSE.fill("reference.tagged", tagged=numbers.count(tagged, "item"),
                               tag=BEYOND_REFERENCE, agree_tagged=r["agree on tagged"],
                               agree_others=r["agree on others"], others=r["other items"]))
    elif not tagged:
        text.append(PROSE.fill("reference.untagged", tag=BEYOND_REFERENCE))
    binary = agreement[(agreement["scale"] == "binary") & (agreement["judge"] == REFERENCE_NAME)]
    if not binary.empty:
        r = binary.iloc[0]
        text.append(PROSE.fill("reference.kappa", kappa=ci(
            r["weighted kappa"], r["weighted kappa low"], r["weighted kappa high"])))
    return " ".join(text)


def self_preference_summary(contrast: dict | None) -> str:
    """The 1.5B judge on its own model's answers against the 0.5B judge, and what it can show."""
    if contrast is None:
        return PROSE.fill("self.unmeasured")
    reading = {"a more lenient": f"the {contrast['judge a']} is more lenient",
               "b more lenient": f"the {contrast['judge b']} is more lenient"}.get(
        contrast["reading"], "the two cannot be told apart")
    text = [PROSE.fill("self", a=contrast["judge a"], b=contrast["judge b"], reading=reading,
                       difference=points(contrast["lenient a - lenient b"], contrast["low"],
                                         contrast["high"]))]
    if contrast["reading"] == "b more lenient":
        text.append(PROSE.fill("self.less_lenient", b=contrast["judge b"]))
    text.append(PROSE.fill("self.limits"))
    return " ".join(text)


def _share_ci(row, name: str) -> str:
    """The bootstrap interval, or (nothing observed, where a bootstrap has no spread) the exact
    one-sided 97.5% upper bound ``1 - 0.025^(1/n)`` over the n items (Clopper & Pearson 1934)."""
    if row[name] == 0:
        return PROSE.fill("share.none_observed", bound=f"{1 - 0.025 ** (1 / row['items']):.1%}",
                          items=row["items"])
    return "95% interval " + numbers.interval(row[f"{name} low"], row[f"{name} high"], 1,
                                              scale="percent")


def stability_summary(retest: Retest | None, probes: pd.DataFrame | None, temperature: float) -> str:
    """Verdict changes at temperature > 0 (replayed records), beside post 05's temperature-0 retest.

    Says how many of the seeded subset's items were replayed ("3 of the 30 items"): the replay
    stops at the first item without a recorded call. Judges are named by
    :func:`chunklab_core.answers.verdicts.grader_name` (post 05's probe keys too).
    """
    text = []
    if retest is None:
        text.append(PROSE.fill("stability.unrecorded", temperature=temperature))
    else:
        summary, replayed = retest.summary, len(retest.items)
        covered = (PROSE.fill("stability.all", replayed=replayed) if replayed == retest.drew else
                   PROSE.fill("stability.part", replayed=replayed, drew=retest.drew))
        parts = [PROSE.fill("stability.judge", judge=r["judge"],
                            changed=f"{r['verdicts changed']:.1%}",
                            changed_ci=_share_ci(r, "verdicts changed"),
                            flipped=f"{r['items with a pass/fail flip']:.1%}",
                            flipped_ci=_share_ci(r, "items with a pass/fail flip"),
                            unparsed=r["unparsed"]) for _, r in summary.iterrows()]
        text.append(PROSE.fill("stability", temperature=temperature,
                               seeds=int(summary["samples per item"].max()), covered=covered,
                               judges=sentence_start("; ".join(parts))))
    if probes is not None and "retest_changed" in probes.columns:
        parts = ", ".join(PROSE.fill("stability.probe_judge", share=f"{r['retest_changed']:.0%}",
                                     judge=grader_name(r["judge"])) for _, r in probes.iterrows())
        text.append(PROSE.fill("stability.probes", judges=parts))
    text.append(PROSE.fill("stability.greedy"))
    return " ".join(text)


def honest_reading(data: AuditData, words: GraderWords, accuracy: pd.DataFrame | None,
                   paired: pd.DataFrame, contrasts: pd.DataFrame, target: float,
                   agreement: pd.DataFrame | None = None) -> str:
    """The closing bullet list: what was checked, by whom, every judge's population-weighted
    kappa (``agreement``: :func:`chunklab_core.reports.post06.tables.agreement_table`), the
    accuracy by the grades, the judge-only figures, and the limits."""
    graders = sorted(set(data.grades["grader"]))
    lines = [PROSE.fill("honest.checked", graded=len(data.graded), items=len(data.population),
                        who=words.who)]
    if agreement is not None:
        against = "adjudicated" if "adjudicated" in set(agreement["against"]) else agreement["against"].iloc[0]
        binary = agreement[(agreement["scale"] == "binary") & (agreement["against"] == against)]
        judges = "; ".join(PROSE.fill("honest.agreement_judge", judge=r["judge"], kappa=ci(
            r["weighted kappa"], r["weighted kappa low"], r["weighted kappa high"]))
            for _, r in binary.iterrows())
        lines.append(PROSE.fill("honest.agreement", grades=words.grades, judges=judges))
    if accuracy is not None:
        rows = accuracy[accuracy["variant"] == STRICT]
        grades = rows[rows["estimator"] == GRADES].iloc[0]
        half = (grades["high"] - grades["low"]) / 2
        lines.append(PROSE.fill("honest.accuracy", grades=words.grades,
                                share=ci(grades["accuracy"], grades["low"], grades["high"], True),
                                target=numbers.number(target, 0, scale="points"),
                                met="met" if half <= target else "not met"))
        strict = paired[paired["variant"] == STRICT]
        off = strict[strict["reading"] != "cannot be told apart"]
        naive = rows[rows["estimator"] == JUDGE].set_index("judge")["accuracy"]
        if off.empty:
            lines.append(PROSE.fill("honest.none_off"))
        else:
            told = "; ".join(PROSE.fill("honest.off_judge", judge=r["judge"],
                                        share=f"{naive[r['judge']]:.1%}", reading=r["reading"],
                                        difference=points(r["difference"], r["low"], r["high"]))
                             for _, r in off.iterrows())
            lines.append(PROSE.fill("honest.off", judges=told))
    else:
        lines.append(PROSE.fill("honest.accuracy_missing"))
    apart = contrasts[contrasts["reading"] != "cannot be told apart"]
    lines.append(PROSE.fill("honest.contrasts_none") if apart.empty else
                 PROSE.fill("honest.contrasts_some", apart=len(apart), pairs=len(contrasts)))
    several = len(graders) > 1
    kind = ("people" if several else "a person") if words.all_human else \
        ("all of them models" if several else "a model") if not words.any_human \
        else "people and models"
    lines.append(PROSE.fill("honest.limits", graders=numbers.count(len(graders), "grader"),
                            kind=kind,
                            one_grader=PROSE.fill("honest.one_grader") if len(graders) == 1 else ""))
    return "\n".join(lines)


def _binary_agreement(agreement: pd.DataFrame) -> pd.DataFrame:
    against = "adjudicated" if "adjudicated" in set(agreement["against"]) else agreement["against"].iloc[0]
    return agreement[(agreement["scale"] == "binary") & (agreement["against"] == against)]


def answer(data: AuditData, words: GraderWords, agreement: pd.DataFrame, accuracy: pd.DataFrame | None,
           paired: pd.DataFrame) -> str:
    """The post's answer (under 150 words): who graded what, each judge's design-weighted κ, the
    accuracy by the grades, and which judge-only accuracies the paired intervals separate from it."""
    binary = _binary_agreement(agreement)
    judges = "; ".join(PROSE.fill("honest.agreement_judge", judge=r["judge"], kappa=ci(
        r["weighted kappa"], r["weighted kappa low"], r["weighted kappa high"])) for _, r in binary.iterrows())
    share, off = "", ""
    if accuracy is not None:
        rows = accuracy[(accuracy["variant"] == STRICT) & (accuracy["estimator"] == GRADES)].iloc[0]
        share = PROSE.fill("answer.accuracy", share=ci(rows["accuracy"], rows["low"], rows["high"], True))
        strict = paired[paired["variant"] == STRICT]
        apart = strict[strict["reading"] != "cannot be told apart"]
        off = (PROSE.fill("answer.none_off") if apart.empty else
               PROSE.fill("answer.off", judges="; ".join(f"{r['judge']} ({r['reading']}, "
                                                         f"{points(r['difference'], r['low'], r['high'])})"
                                                         for _, r in apart.iterrows())))
    return PROSE.fill("answer", checked=PROSE.fill("answer.checked", graded=len(data.graded),
                                                   items=len(data.population), who=words.who),
                      judges=judges, accuracy=share, off=off)


def answer_table(agreement: pd.DataFrame, paired: pd.DataFrame) -> pd.DataFrame:
    """The answer's table, one row per judge: design-weighted κ (correct vs not) and judge-only
    accuracy minus the accuracy by the grades (strict, paired), each with its 95% interval and reading."""
    binary = _binary_agreement(agreement)
    strict = paired[paired["variant"] == STRICT].set_index("judge")
    rows = []
    for _, r in binary.iterrows():
        row = {"judge": r["judge"], "κ, all answers [95% CI]": ci(r["weighted kappa"], r["weighted kappa low"],
                                                                 r["weighted kappa high"])}
        if r["judge"] in strict.index:
            d = strict.loc[r["judge"]]
            row["judge-only − grades"] = points(d["difference"], d["low"], d["high"])
            row["reading"] = d["reading"]
        rows.append(row)
    return pd.DataFrame(rows)
