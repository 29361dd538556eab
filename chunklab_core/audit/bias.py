"""Biases of the audit itself, measured or bounded: reference advantage, self-preference, sampling.

Handles:

* :func:`reference_advantage`: every grade is made against the reference answer (and its
  passage), which is also what the rule-based reference grader matches, so part of its
  agreement is built in. The rubric asks graders to tag a note ``[beyond reference]`` when
  the answer is graded correct by the passage although it does not give the reference
  (:data:`BEYOND_REFERENCE`); the function counts those items and, per judge, the binary
  agreement on them and on the rest. Few tagged items bound how much the rubric departs
  from the reference; they do not measure how a grader without the reference would grade.
* :func:`self_preference`: the 1.5B judge grades answers written by the 1.5B model itself;
  the 0.5B judge (same family) grades the same answers. The paired difference of their
  lenient shares (:func:`chunklab_core.audit.paired.lenient_contrast`) is what one model
  family can show.
* :func:`replayed_retest`: the temperature > 0 retest of :mod:`chunklab_core.audit.retest`,
  replayed from its records for the sample at hand (``None`` when nothing is recorded), as a
  :class:`Retest` that keeps how many items the seeded subset drew beside how many replayed
  (the replay stops at the first item without a record, so it may cover fewer).

Not handled: self-preference across model families (one family is recorded), graders who
never saw the reference.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pandas as pd

from chunklab_core.answers.verdicts import binary_labels, grader_name
from chunklab_core.audit.loading import AuditData
from chunklab_core.audit.paired import lenient_contrast
from chunklab_core.audit.retest import (RETEST_JUDGES, retest_items, retest_models, retest_summary, run_retest,
                                         verdict_column)

BEYOND_REFERENCE = "[beyond reference]"


def reference_advantage(data: AuditData) -> tuple[int, pd.DataFrame]:
    """``(tagged items, table)``: per judge, binary agreement on the tagged items and on the rest."""
    tagged = data.graded["note"].str.contains(BEYOND_REFERENCE, regex=False).to_numpy()
    grader = binary_labels(data.graded["grade"])
    rows = []
    for column in data.judge_columns:
        agree = binary_labels(data.graded[column]) == grader
        rows.append({"judge": grader_name(column),
                     "tagged items": int(tagged.sum()),
                     "agree on tagged": int(agree[tagged].sum()),
                     "other items": int((~tagged).sum()),
                     "agree on others": int(agree[~tagged].sum()),
                     "agreement on others": float(agree[~tagged].mean()) if (~tagged).any() else np.nan})
    return int(tagged.sum()), pd.DataFrame(rows)


def self_preference(data: AuditData, own: str = "judge_qwen15_3way",
                    other: str = "judge_qwen05_3way", resamples: int = 10_000,
                    seed: int = 0) -> dict | None:
    """Lenient share of the answerer's own model as judge minus the other judge's (None if absent)."""
    if own not in data.judge_columns or other not in data.judge_columns:
        return None
    return lenient_contrast(data, own, other, resamples, seed)


class Retest(NamedTuple):
    """A replayed retest: the ``items`` replayed, their ``verdicts``, the per-judge ``summary``
    (judges by display name) and how many items the seeded subset ``drew``."""

    items: pd.DataFrame
    verdicts: pd.DataFrame
    summary: pd.DataFrame
    drew: int


def replayed_retest(data: AuditData, n_items: int, samples: int, temperature: float,
                    seed: int, resamples: int = 10_000) -> Retest | None:
    """The retest replayed from ``judge_retest_*`` records (a :class:`Retest`), or ``None``.

    ``None`` when the key does not point at the columns a retest needs, or when no item of
    the seeded subset is recorded (e.g. on a synthetic or a new sample). The replay stops at
    the first item of the subset without a record, so ``items`` may be fewer than ``drew``.
    """
    needed = {verdict_column(judge) for judge in RETEST_JUDGES}
    if not needed <= set(data.population.columns) or n_items > len(data.key):
        return None
    items = retest_items(data.key, data.population, n_items, seed)
    verdicts = run_retest(items, retest_models("replay"), samples, temperature)
    if verdicts.empty:
        return None
    done = items[items["item_id"].isin(verdicts["item_id"])]
    summary = retest_summary(verdicts, done, resamples, seed)
    summary["judge"] = [grader_name(verdict_column(judge)) for judge in summary["judge"]]
    return Retest(done, verdicts, summary, len(items))
