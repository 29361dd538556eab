"""Post 05: how far the graders agree, and how the LLM judges react to the reliability probes.

Handles: agreement between every pair of graders (the rule-based reference grader and the
LLM judges) on the three-way scale where both are three-way and on the binary "passed or
not" scale for every pair (:func:`chunklab_core.answers.verdicts.pass_or_fail`: ``unparsed``
fails), with Cohen's kappa and a bootstrap interval; the confusion matrices
(:func:`chunklab_core.answers.verdicts.verdict_confusion`); the probe summary with counts and
the probe cases a judge got wrong. On the three-way scale labels are compared as given:
``unparsed`` is a label of its own and is never dropped.
Not handled: the audit's grades (post 06), the formulas (``agreement``).
"""

from __future__ import annotations

from itertools import combinations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from chunklab_core.answers.verdicts import (FAIL, PASS, REFERENCE_COLUMN, REFERENCE_NAME, THREE_WAY, grader_name,
                                            is_yesno, sentence_start, pass_or_fail, passes, scale_of, verdict_confusion)
from chunklab_core.stats.agreement import kappa_ci, percent_agreement
from chunklab_core.reports.post05.tables import clusters, grader_columns
from chunklab_core.core import numbers


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


def plot_confusions(table: pd.DataFrame, reference: str = REFERENCE_COLUMN):
    """One confusion matrix per LLM judge against ``reference`` (rows: reference labels)."""
    judges = [c for c in grader_columns(table) if c != reference]
    fig, axes = plt.subplots(1, len(judges), figsize=(4.2 * len(judges), 3.8), squeeze=False)
    for ax, judge in zip(axes[0], judges):
        labels = scale_of(judge)
        counts = confusion(table, reference, judge)
        ax.imshow(counts.to_numpy(), cmap="Blues")
        for (i, j), value in np.ndenumerate(counts.to_numpy()):
            ax.text(j, i, str(value), ha="center", va="center", fontsize=10)
        ax.set_xticks(range(len(labels)), labels)
        ax.set_yticks(range(len(THREE_WAY)), THREE_WAY)
        ax.set_xlabel(grader_name(judge))
        ax.set_ylabel(grader_name(reference))
    fig.tight_layout()
    return fig


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


def _pct(x: float) -> str:
    return f"{100 * x:.0f}%"


def _needed_text(pairs: pd.DataFrame) -> str:
    """How many questions the largest unseparated difference of a corpus would need."""
    open_pairs = pairs[~pairs["separated"] & (pairs["A - B"].abs() > 0)]
    if open_pairs.empty or "questions needed" not in open_pairs.columns:
        return ""
    row = open_pairs.loc[open_pairs["A - B"].abs().idxmax()]
    needed = row["questions needed"]
    size = (f"about {int(needed):,} questions" if needed is not None and not pd.isna(needed)
            else "more than 100,000 questions")
    return (f" (the largest unseparated difference, {row['strategy A']} − {row['strategy B']} = "
            f"{100 * row['A - B']:+.0f} points, would need {size} at this spread to separate)")


def reading(coverage: pd.DataFrame, answers: pd.DataFrame, differences: pd.DataFrame,
            agreement: pd.DataFrame, probe_summary: pd.DataFrame | None,
            stage_cost: pd.DataFrame) -> str:
    """The post's closing Markdown, every number taken from the tables passed in."""
    lines = []
    for row in coverage.itertuples():
        lines.append(f"- **{row.corpus}**: {row.questions_recorded} of {row.questions_planned} planned "
                     f"questions are recorded ({row.items} answered items).")
    ref = answers[answers["measure"] == REFERENCE_NAME]
    retrieved = answers[answers["measure"] == "passage retrieved"]
    for corpus, part in ref.groupby("corpus", sort=False):
        best = part.loc[part["share"].idxmax()]
        tied = [s for s in part.loc[part["share"] == best["share"], "strategy"] if s != best["strategy"]]
        tie = f" (tied with {', '.join(tied)})" if tied else ""
        gap = retrieved[retrieved["corpus"] == corpus].set_index("strategy")["share"]
        pairs = differences[differences["corpus"] == corpus]
        sep = pairs[pairs["separated"]]
        verdict = ("no two strategies are separated by their paired 95% intervals" if sep.empty else
                   f"{len(sep)} of {len(pairs)} strategy pairs are separated")
        verdict += _needed_text(pairs)
        lines.append(f"- On {corpus}, the reference grader passes {_pct(best['share'])} "
                     f"[{_pct(best['low'])}, {_pct(best['high'])}] of {best['strategy']}'s answers, the most of "
                     f"any strategy{tie}, while its passage was retrieved for {_pct(gap.get(best['strategy'], np.nan))} "
                     f"of the questions; {verdict}.")
    binary_rows = agreement[(agreement["scale"] == "pass/fail") &
                            (agreement["grader A"] == REFERENCE_NAME)]
    for row in binary_rows.itertuples():
        lines.append(f"- {sentence_start(row[2])} against the {REFERENCE_NAME} (pass/fail): {row.agree} of {row.items} "
                     f"items agree, κ = {numbers.estimate(row.kappa, row.low, row.high, 2)}.")
    if probe_summary is not None and len(probe_summary):
        for row in probe_summary.itertuples():
            lines.append(f"- Probes, {grader_name(row.judge)}: passes {_pct(row.plain_pass)} of plain correct answers, "
                         f"changes its verdict on {_pct(row.padded_flip)} when the answer is padded, catches "
                         f"{_pct(row.wrong_figure_caught)} of wrong figures, and changes "
                         f"{_pct(row.retest_changed)} on a retest (n = {row.n}).")
    for row in stage_cost.itertuples():
        lines.append(f"- Cost of stage `{row.stage}`: {row.calls} distinct calls, {row.tokens_in:.0f} tokens in "
                     f"and {row.tokens_out:.0f} out on average, {row.seconds_per_call:.1f} s per call on 2 CPU cores.")
    return "\n".join(lines)


def coverage_text(coverage: pd.DataFrame) -> str:
    """One Markdown sentence per corpus on how much of the planned study is recorded."""
    parts = [f"**{r.corpus}**: {r.questions_recorded} of {r.questions_planned} planned questions "
             f"({r.items} items)" for r in coverage.itertuples()]
    partial = any(r.questions_recorded < r.questions_planned for r in coverage.itertuples())
    note = (" The run is partial: the questions are processed in a seeded random order, so the recorded "
            "ones are a uniform random sample of the planned ones, paired across strategies; "
            "`make llm-run` records the rest." if partial else "")
    return "Recorded so far — " + "; ".join(parts) + "." + note


def judge_pair_confusions(table: pd.DataFrame, reference: str = REFERENCE_COLUMN) -> list[pd.DataFrame]:
    """The confusion table of every pair of LLM judges (the reference grader's are plotted)."""
    judges = [c for c in grader_columns(table) if c != reference]
    return [confusion(table, a, b) for a, b in combinations(judges, 2)]
