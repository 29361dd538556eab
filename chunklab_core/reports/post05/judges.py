"""Post 05: how far the graders agree, and how the LLM judges react to the reliability probes.

Handles: agreement between every pair of graders (the rule-based reference grader and the
LLM judges) on the three-way scale where both are three-way and on the binary "passed or
not" scale for every pair (:func:`chunklab_core.answers.verdicts.pass_or_fail`: ``unparsed``
fails), with Cohen's kappa and a bootstrap interval; the confusion matrices
(:func:`chunklab_core.answers.verdicts.verdict_confusion`); the probe summary with counts and
the probe cases a judge got wrong. On the three-way scale labels are compared as given:
``unparsed`` is a label of its own and is never dropped.
The coverage sentence lives in ``judges.md`` beside this module (:mod:`chunklab_core.reports.templates`).
Not handled: the audit's grades (post 06), the formulas (``agreement``), the figures (``post05.figures``),
the post's closing reading (``post05.claims.reading``).
"""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pandas as pd

from chunklab_core.answers.verdicts import (FAIL, PASS, REFERENCE_COLUMN, THREE_WAY, grader_name, is_yesno,
                                            pass_or_fail, passes, scale_of, verdict_confusion)
from chunklab_core.stats.agreement import kappa_ci, percent_agreement
from chunklab_core.reports.post05.tables import clusters, grader_columns
from chunklab_core.reports.samples import DATASETS
from chunklab_core.reports.templates import Templates

PROSE = Templates(__file__, "judges.md")


def agreement_table(table: pd.DataFrame, resamples: int = 10_000, seed: int = 0) -> pd.DataFrame:
    """Every pair of graders: items, percent agreement and kappa [interval], per scale.

    The interval resamples the items' documents (``reports.post05.tables.clusters``): the three strategies'
    answers to one question, and the questions of one article, are not independent items.
    """
    rows = []
    columns = grader_columns(table)
    units = clusters(table)
    for a, b in combinations(columns, 2):
        scales = [("pass/fail", pass_or_fail(table[a]), pass_or_fail(table[b]), [PASS, FAIL])]
        if not is_yesno(a) and not is_yesno(b):
            scales.insert(0, ("three-way", table[a].to_numpy(object), table[b].to_numpy(object), list(THREE_WAY)))
        for scale, x, y, labels in scales:
            k = kappa_ci(x, y, resamples, seed, labels=labels, clusters=units)
            rows.append({"grader A": grader_name(a), "grader B": grader_name(b), "scale": scale, "items": len(x),
                         "agree": int((x == y).sum()), "percent agreement": percent_agreement(x, y),
                         "kappa": k.kappa, "low": k.low, "high": k.high})
    return pd.DataFrame(rows)


def confusion(table: pd.DataFrame, a: str, b: str) -> pd.DataFrame:
    """Counts per (label of ``a``, label of ``b``), each axis on its grader's own labels
    (:func:`chunklab_core.answers.verdicts.scale_of`), axes named by the graders' display names.

    Raises ``ValueError`` for a label outside them: nothing is dropped silently.
    """
    return verdict_confusion(table[a], table[b], scale_of(a), scale_of(b), (grader_name(a), grader_name(b)))


def probe_counts(verdicts: pd.DataFrame) -> pd.DataFrame:
    """Per judge: the probe summary as counts out of n (``answers.probes.probe_summary``)."""
    from chunklab_core.answers.probes import probe_summary

    summary = probe_summary(verdicts)
    out = summary[["judge", "n"]].assign(judge=summary["judge"].map(grader_name))
    for column in ["plain_pass", "padded_flip", "wrong_figure_caught", "retest_changed"]:
        out[column] = [f"{round(share * n)} of {n}" for share, n in zip(summary[column], summary["n"])]
    out["unparsed"] = summary["unparsed"]
    return out


def probe_failures(verdicts: pd.DataFrame, n: int = 6) -> pd.DataFrame:
    """Probe inputs a judge got wrong (verdict differs from the known one), first ``n``."""
    ok = [passes(label) == passes(expected) for label, expected in zip(verdicts["label"], verdicts["expected"])]
    wrong = verdicts[~np.array(ok)]
    shown = wrong[["judge", "probe", "question", "reference", "answer", "label"]].head(n).reset_index(drop=True)
    return shown.assign(judge=shown["judge"].map(grader_name))


def coverage_text(coverage: pd.DataFrame) -> str:
    """One Markdown sentence per corpus on how much of the planned study is recorded."""
    parts = [PROSE.fill("coverage.corpus", corpus=DATASETS.get(r.corpus, r.corpus), recorded=r.questions_recorded,
                        planned=r.questions_planned, items=r.items) for r in coverage.itertuples()]
    partial = any(r.questions_recorded < r.questions_planned for r in coverage.itertuples())
    return PROSE.fill("coverage", corpora="; ".join(parts),
                      partial=" " + PROSE.fill("coverage.partial") if partial else "")


def judge_pair_confusions(table: pd.DataFrame, reference: str = REFERENCE_COLUMN) -> list[pd.DataFrame]:
    """The confusion table of every pair of LLM judges (the reference grader's are plotted)."""
    judges = [c for c in grader_columns(table) if c != reference]
    return [confusion(table, a, b) for a, b in combinations(judges, 2)]
