"""Post 06's prose: the values each paragraph needs, filled into the Markdown templates of ``reading.md``.

Handles: one Markdown paragraph per notebook section (design and graders, agreement between
graders, agreement with the grades, directions, judge-only against the accuracy by the audit's
grades, judges against each other) and the quoted items. The sentences live in
``reading.md`` (:mod:`chunklab_core.reports.templates`); this module computes the values
(numbers and intervals written by :mod:`chunklab_core.core.numbers`), picks which templates
apply, and joins lists. The words for the grades come from
:func:`chunklab_core.audit.graders.grader_words` (``GraderWords``): "hand grades" or "a
person" appear only when every grader is ``human``; a model's grades are called one model's
reading, never independent and never the truth. Comparisons follow one rule
(:func:`chunklab_core.audit.paired.reading_of`): a paired interval that excludes 0 is a
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
from chunklab_core.core import numbers
from chunklab_core.reports.templates import Templates

STRICT, GRADES, JUDGE, PPI = "strict", "grades only", "judge only", "PPI (judge + grades)"
PROSE = Templates(__file__, "reading.md")


def ci(estimate: float, low: float, high: float, percent: bool = False) -> str:
    """An estimate with its interval: shares as percent with one decimal, else two decimals."""
    if percent:
        return numbers.estimate(estimate, low, high, digits=1, scale="percent")
    return numbers.estimate(estimate, low, high, digits=2)


def points(estimate: float, low: float, high: float) -> str:
    """A difference of shares with its interval, in signed percentage points."""
    return numbers.estimate(estimate, low, high, digits=1, signed=True, scale="points")


def _ordered(row, verb: str, a_first: bool, value: str | None = None) -> str:
    """``the X <verb> the Y (+d points [low, high])`` with the larger one first, the interval signed to match.

    Without ``value`` (no point estimate in the row) only the interval is written.
    """
    first, second = (row["judge a"], row["judge b"]) if a_first else (row["judge b"], row["judge a"])
    low, high = (row["low"], row["high"]) if a_first else (-row["high"], -row["low"])
    if value is None:
        difference = "points " + numbers.interval(low, high, 1, True, "points")
    else:
        difference = points(row[value] if a_first else -row[value], low, high)
    return PROSE.fill("ordered", first=first, verb=verb, second=second, difference=difference)


def design_summary(data: AuditData, design: pd.DataFrame, words: GraderWords) -> str:
    """Population (per corpus), sheet, graded and ungraded counts, weights, disagreement share, graders."""
    n_all, n_graded, n_open = len(data.population), len(data.graded), len(data.ungraded)
    corpora = ""
    if "corpus" in data.population.columns:
        counts = data.population["corpus"].value_counts()
        corpora = " (" + ", ".join(f"{n} {name}" for name, n in counts.items()) + ")"
    split = design[design["judges disagree"]]
    weights = design["weight"].dropna()
    split_population, split_graded = int(split["population"].sum()), int(split["graded"].sum())
    text = [PROSE.fill(
        "design", items=n_all, corpora=corpora, patterns=len(design), sheet=n_graded + n_open,
        graded=n_graded,
        ungraded=(" " + PROSE.fill("design.ungraded", open=n_open)) if n_open else "",
        weight_low=numbers.number(weights.min(), 1), weight_high=numbers.number(weights.max(), 1),
        split=numbers.count(len(split), "pattern"), split_population=split_population,
        split_population_share=f"{split_population / n_all:.0%}", split_graded=split_graded,
        split_graded_share=f"{split_graded / n_graded:.0%}" if n_graded else "n/a")]
    if data.empty_strata:
        text.append(PROSE.fill("design.empty_strata",
                               empty=numbers.count(len(data.empty_strata), "pattern")))
    text.append(PROSE.fill("design.graders", who=words.who))
    if not words.any_human:
        text.append(PROSE.fill("design.model_grader"))
    return " ".join(text)


def coverage_summary(check: pd.DataFrame | None) -> str:
    """Whether the audit's population is the set of items post 05 publishes now."""
    if check is None:
        return PROSE.fill("coverage.unknown")
    drawn, published = check["in the audit population"].sum(), check["published by post 05"].sum()
    per = ", ".join(f"{r['corpus']} {r['in the audit population']} of {r['published by post 05']}"
                    for _, r in check.iterrows())
    if (check["in the audit population"] == check["published by post 05"]).all():
        return PROSE.fill("coverage.exact", published=published, per_corpus=per)
    return PROSE.fill("coverage.differs", drawn=drawn, published=published, per_corpus=per)


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
        return PROSE.fill("graders.one", who=words.who, graded=n,
                          questions=numbers.count(questions, "question"),
                          width_low=numbers.number(widths.min(), 2),
                          width_high=numbers.number(widths.max(), 2), total=total, more=more)
    binary = pairs[pairs["scale"] == "binary"]
    parts = [PROSE.fill("graders.pair", a=r["grader a"], b=r["grader b"], matches=r["matches"],
                        items=r["items"], kappa=ci(r["kappa"], r["kappa low"], r["kappa high"]))
             for _, r in binary.iterrows()]
    differing = int((data.graded["graders"] > 1).sum())
    return PROSE.fill("graders.several", graders=numbers.count(len(graders), "grader"),
                      who=words.who, pairs="; ".join(parts),
                      differing=numbers.count(differing, "item was", "items were"))


def agreement_summary(agreement: pd.DataFrame, contrasts: pd.DataFrame, words: GraderWords) -> str:
    """Each judge's population-weighted kappa and its sample kappa, with intervals, and which
    judges the paired contrasts can tell apart."""
    against = "adjudicated" if "adjudicated" in set(agreement["against"]) else agreement["against"].iloc[0]
    binary = agreement[(agreement["scale"] == "binary") & (agreement["against"] == against)]
    weighted = "; ".join(PROSE.fill("agreement.judge", judge=r["judge"], kappa=ci(
        r["weighted kappa"], r["weighted kappa low"], r["weighted kappa high"]))
        for _, r in binary.iterrows())
    sample = "; ".join(PROSE.fill("agreement.sample_judge", judge=r["judge"],
                                  kappa=ci(r["kappa"], r["kappa low"], r["kappa high"]),
                                  matches=r["matches"], graded=r["graded"])
                       for _, r in binary.iterrows())
    text = [PROSE.fill("agreement", grades=words.grades, weighted=weighted, sample=sample)]
    apart = contrasts[contrasts["reading"] != "cannot be told apart"]
    if apart.empty:
        text.append(PROSE.fill("agreement.none_apart"))
    else:
        told = "; ".join(_ordered(r, "agrees more than", r["reading"] == "a agrees more",
                                  "agreement a - agreement b" if "agreement a - agreement b" in r else None)
                         for _, r in apart.iterrows())
        text.append(PROSE.fill("agreement.apart", told=told))
    if binary["weighted agreement"].notna().all():
        text.append(PROSE.fill(
            "agreement.shares", sample_low=f"{binary['agreement'].min():.0%}",
            sample_high=f"{binary['agreement'].max():.0%}",
            weighted_low=f"{binary['weighted agreement'].min():.0%}",
            weighted_high=f"{binary['weighted agreement'].max():.0%}"))
    return " ".join(text)


def directions_summary(rates: pd.DataFrame, words: GraderWords) -> str:
    """Per judge: weighted lenient and strict shares with intervals, and the reading of their difference."""
    parts = [PROSE.fill("directions.judge", judge=r["judge"],
                        lenient=ci(r["lenient share"], r["lenient low"], r["lenient high"], True),
                        strict=ci(r["strict share"], r["strict low"], r["strict high"], True),
                        reading=r["reading"], lenient_items=r["lenient items"],
                        strict_items=r["strict items"], graded=r["graded"])
             for _, r in rates.iterrows()]
    return PROSE.fill("directions", grades=words.grades, judges="; ".join(parts))


def accuracy_not_estimated(audit: AuditData) -> str:
    """Why the accuracy by the audit's grades is not estimated: verdict patterns without a graded item."""
    empty = len(audit.empty_strata)
    return PROSE.fill("accuracy.not_estimated", patterns=numbers.count(empty, "verdict pattern"),
                      have="has" if empty == 1 else "have")


def accuracy_summary(accuracy: pd.DataFrame, paired: pd.DataFrame, words: GraderWords,
                     target: float, variant: str = STRICT) -> str:
    """Accuracy by the audit's grades, its precision against the target, each judge's paired difference."""
    rows = accuracy[accuracy["variant"] == variant]
    grades = rows[rows["estimator"] == GRADES].iloc[0]
    half = (grades["high"] - grades["low"]) / 2
    text = [PROSE.fill("accuracy", grades=words.grades,
                       share=ci(grades["accuracy"], grades["low"], grades["high"], True),
                       scoring=variant, half=numbers.number(half, 1, scale="points"),
                       target=numbers.number(target, 0, scale="points"),
                       met="met" if half <= target else "not met")]
    for _, judge in rows[rows["estimator"] == JUDGE].iterrows():
        diff = paired[(paired["judge"] == judge["judge"]) & (paired["variant"] == variant)].iloc[0]
        reading = {"judge-only too high": "is too high", "judge-only too low": "is too low"}.get(
            diff["reading"], "cannot be told apart from it")
        text.append(PROSE.fill("accuracy.judge", judge=sentence_start("the " + judge["judge"]),
                               share=f"{judge['accuracy']:.1%}",
                               difference=points(diff["difference"], diff["low"], diff["high"]),
                               reading=reading))
    lenient = paired[paired["variant"] == "lenient"]
    if variant == STRICT and len(lenient):
        parts = "; ".join(PROSE.fill("accuracy.lenient_judge", judge=r["judge"],
                                     difference=points(r["difference"], r["low"], r["high"]),
                                     reading=r["reading"])
                          for _, r in lenient.iterrows())
        text.append(PROSE.fill("accuracy.lenient", judges=parts))
    ppi = rows[rows["estimator"] == PPI]
    gap = float((ppi["accuracy"] - grades["accuracy"]).abs().max())
    if gap < 1e-9:
        text.append(PROSE.fill("accuracy.ppi_equal"))
    else:
        text.append(PROSE.fill("accuracy.ppi_differs", gap=numbers.number(gap, 1, scale="points")))
    return " ".join(text)


def contrasts_summary(contrasts: pd.DataFrame) -> str:
    """Which pairs of judges' biases (judge-only minus the grades' accuracy) differ on the same items."""
    apart = contrasts[contrasts["reading"] != "cannot be told apart"]
    if apart.empty:
        return PROSE.fill("contrasts.none")
    told = "; ".join(_ordered(r, "passes more answers than", r["reading"] == "a passes more",
                              "bias a - bias b") for _, r in apart.iterrows())
    return PROSE.fill("contrasts.apart", told=told)


def pairs_summary(pairs: pd.DataFrame, words: GraderWords) -> str:
    """Each pair of judges on the whole population (binary scale), with intervals."""
    binary = pairs[pairs["scale"] == "binary"]
    parts = "; ".join(PROSE.fill("pairs.pair", a=r["judge a"], b=r["judge b"],
                                 kappa=ci(r["kappa"], r["kappa low"], r["kappa high"]))
                      for _, r in binary.iterrows())
    return PROSE.fill("pairs", items=binary["items"].iloc[0], pairs=parts, grades=words.grades)


def escape_markdown(text: str) -> str:
    """``text`` safe inside Markdown: emphasis, code, link and HTML characters escaped, spaces collapsed."""
    text = " ".join(str(text).split())
    for char in "\\`*_[]#|":
        text = text.replace(char, "\\" + char)
    return text.replace("<", "&lt;").replace(">", "&gt;")


def quoted_items(table: pd.DataFrame, words: GraderWords, empty: str, total: int | None = None,
                 csv: str | None = None) -> str:
    """Items as Markdown blocks, every text in full (wrapped by the renderer, never cut).

    ``table`` is what to show; when it is a sample of ``total`` items written whole to ``csv``
    (:func:`chunklab_core.reports.post06.tables.readable_sample`), a closing line says so.
    """
    if table.empty:
        return empty
    e = escape_markdown
    blocks = []
    for _, row in table.iterrows():
        block = PROSE.fill("quote.item", item=row["item"], judges=e(row["judges"]),
                           grade_label=words.grade, grade=row["grade"], question=e(row["question"]),
                           reference=e(row["reference"]), answer=e(row["answer"]))
        if str(row.get("note", "")).strip():
            block += "\n" + PROSE.fill("quote.note", note=e(row["note"]))
        blocks.append(block)
    if total is not None and total > len(table):
        blocks.append(PROSE.fill("quote.shown", shown=len(table), total=total, csv=csv))
    return "\n\n".join(blocks)


def quoted_grader_differences(table: pd.DataFrame) -> str:
    """Items graded differently by the graders, every grade and note, texts in full."""
    e = escape_markdown
    blocks = []
    for _, r in table.iterrows():
        block = PROSE.fill("quote.grader_difference", item=r["item"], grades=e(r["grades"]),
                           question=e(r["question"]), reference=e(r["reference"]),
                           answer=e(r["answer"]))
        if str(r["notes"]).strip():
            block += "\n" + PROSE.fill("quote.grader_notes", notes=e(r["notes"]))
        blocks.append(block)
    return "\n\n".join(blocks)


def pilot_summary(pilot: AuditData, words: GraderWords) -> str:
    """The pilot sheet: its size, its population at the time, who graded it, and that it feeds no number."""
    return PROSE.fill("pilot", graded=len(pilot.graded), items=len(pilot.population), who=words.who)
