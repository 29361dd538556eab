"""Who graded the audit: several graders of one sample, their agreement, the adjudicated label, the words.

Handles:

* :func:`adjudicate`: one label per item from every grader who graded it. Rule: the label
  most graders gave; on a tie, the lowest of the tied labels on the order
  ``wrong < partial < correct`` (an answer counts as correct only when no tied grader graded
  it lower). With one grader the adjudicated label is that grader's.
* :func:`grader_agreement`: every pair of graders on the items both graded: matches, percent
  agreement, Cohen's kappa with a bootstrap interval that resamples questions
  (:func:`chunklab_core.stats.agreement.kappa_ci`), on the three-way and the binary scale.
* :func:`grader_disagreements`: the items two graders graded differently, with both grades
  and notes (quoted in full).
* :func:`grader_words`: the words the post and its tables use for the graders, generated from
  their kinds: "hand grades", "a person", "people" only when every grader is ``human``;
  "grades by a model" when every grader is a model; both named when they are mixed.

Not handled: reading the sheets (:func:`chunklab_core.audit.loading.load_audit` reads several),
judge statistics (:mod:`chunklab_core.reports.post06.tables`, :mod:`chunklab_core.audit.paired`).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import numpy as np
import pandas as pd

from chunklab_core.answers.verdicts import BINARY_GRADES, CORRECT, GRADE_LABELS, PARTIAL, WRONG, binary_labels
from chunklab_core.stats.agreement import kappa_ci
from chunklab_core.audit.sheets import is_human

ORDER = {WRONG: 0, PARTIAL: 1, CORRECT: 2}  # the tie-break: lower wins


def adjudicate(labels: pd.DataFrame) -> pd.Series:
    """One label per row of ``labels`` (items x graders, blank/None = not graded); rule above.

    Rows where no grader gave a label get ``None``.
    """
    def one(row) -> str | None:
        given = [v for v in row if isinstance(v, str) and v]
        unknown = set(given) - set(GRADE_LABELS)
        if unknown:
            raise ValueError(f"unknown grade(s) {sorted(unknown)}")
        if not given:
            return None
        counts = pd.Series(given).value_counts()
        tied = counts[counts == counts.max()].index
        return min(tied, key=ORDER.__getitem__)

    return pd.Series([one(row) for row in labels.itertuples(index=False)], index=labels.index,
                     dtype=object)


@dataclass(frozen=True)
class GraderWords:
    """Words for the graders, from their kinds (see :func:`grader_words`)."""

    grades: str  # "hand grades" | "the model grader's grades" | "the graders' grades"
    grade: str  # column label for one item's grade: "hand grade" | "grade (model:claude)" ...
    who: str  # "1 person (ana)" | "1 model grader (claude-audit, model:claude)" | ...
    all_human: bool
    any_human: bool


def grader_words(graders: pd.DataFrame) -> GraderWords:
    """Words generated from ``graders`` (columns ``grader``, ``grader_kind``): the module rule."""
    kinds = list(graders["grader_kind"])
    humans = [k for k in kinds if is_human(k)]
    models = [k for k in kinds if not is_human(k)]
    listed = ", ".join(f"{g} ({k})" for g, k in zip(graders["grader"], kinds))
    if kinds and len(humans) == len(kinds):
        count = "1 person" if len(humans) == 1 else f"{len(humans)} people"
        return GraderWords("hand grades", "hand grade", f"{count}: {listed}", True, True)
    if not humans:
        count = "1 model grader" if len(models) == 1 else f"{len(models)} model graders"
        model_kinds = ", ".join(sorted(set(models)))
        grades = "the model grader's grades" if len(models) == 1 else "the model graders' grades"
        return GraderWords(grades, f"grade ({model_kinds})", f"{count}: {listed}", False, False)
    return GraderWords("the graders' grades", "adjudicated grade",
                       f"{len(humans)} human and {len(models)} model grader(s): {listed}",
                       False, True)


def grader_agreement(grades: pd.DataFrame, resamples: int = 10_000, seed: int = 0,
                     confidence: float = 0.95) -> pd.DataFrame:
    """Every pair of graders on their common items; ``grades`` is the long table of graded rows.

    ``grades`` columns: ``item_id``, ``grader``, ``grade`` and ``qid`` (the resampling unit;
    without it items are resampled). Empty when there are fewer than two graders.
    """
    columns = ["grader a", "grader b", "scale", "items", "matches", "agreement", "kappa",
               "kappa low", "kappa high"]
    wide = grades.pivot(index="item_id", columns="grader", values="grade")
    units = grades.drop_duplicates("item_id").set_index("item_id")
    rows = []
    for a, b in combinations(sorted(wide.columns), 2):
        both = wide[[a, b]].dropna()
        if len(both) < 2:
            continue
        clusters = units.loc[both.index, "qid"].astype(str).to_numpy() \
            if "qid" in units.columns else None
        for scale, x, y, labels in (
                ("three-way", both[a].to_numpy(dtype=object), both[b].to_numpy(dtype=object),
                 list(GRADE_LABELS)),
                ("binary", binary_labels(both[a]), binary_labels(both[b]), list(BINARY_GRADES))):
            kappa = kappa_ci(x, y, resamples=resamples, seed=seed, confidence=confidence,
                             labels=labels, clusters=clusters)
            rows.append({"grader a": a, "grader b": b, "scale": scale, "items": len(both),
                         "matches": int((x == y).sum()), "agreement": float(np.mean(x == y)),
                         "kappa": kappa.kappa, "kappa low": kappa.low, "kappa high": kappa.high})
    return pd.DataFrame(rows, columns=columns)


def grader_disagreements(grades: pd.DataFrame, texts: pd.DataFrame) -> pd.DataFrame:
    """Items graded differently by two or more graders: every grader's grade and note, and the texts.

    ``texts``: one row per item_id with ``question``, ``reference``, ``answer``.
    """
    rows = []
    for item_id, group in grades.groupby("item_id", sort=True):
        if group["grade"].nunique() < 2:
            continue
        text = texts.loc[item_id]
        rows.append({"item": item_id,
                     "grades": "; ".join(f"{g}: {v}" for g, v in zip(group["grader"], group["grade"])),
                     "question": text["question"], "reference": text["reference"],
                     "answer": text["answer"],
                     "notes": " / ".join(f"{g}: {n}" for g, n in zip(group["grader"], group["note"])
                                         if str(n).strip())})
    return pd.DataFrame(rows, columns=["item", "grades", "question", "reference", "answer", "notes"])
