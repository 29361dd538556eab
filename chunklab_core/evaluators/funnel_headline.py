"""The funnel's headline by the series' rule, and where its shares and a stage table's differ.

Handles
-------
* :func:`funnel_headline`: which step loses the most queries, said only when the rule allows:
  the step with the largest lost share is named when the paired interval of its loss minus
  the next-worst step's loss (per query, the same queries, one bootstrap: clustered by document
  where each query names one, as every scorecard row) excludes 0 (``stats.claims
  .interval_side``); otherwise the headline lists the steps that cannot be told apart from it
  (every step whose paired interval against it holds 0). Also the share that gets through
  every step, with its interval (``funnel_table``'s last row).
* :func:`denominator_notes`: for a funnel step that a stage table also measures (retrieved ↔
  retrieval's ``hit@k`` at the funnel's k, kept in the packed context ↔ augmentation's
  ``answer_in_context``, exact match ↔ end to end's ``task_success``), one note when the two are
  computed on different numbers of queries: the funnel counts a query only when every step is
  measured and a query lost earlier never reaches a later step; a stage counts every query
  carrying its inputs.
* :func:`headline_text`: the headline as one plain line (the terminal prints it).

Why not the decision engine (``chunklab_core.decision``): the headline chooses no candidate. It says
where one pipeline loses its queries (a diagnosis of stages, each measured on the same queries), not
which of several chunkings to use, so there is no margin of worthwhile difference between stages and
no simpler stage to prefer; the interval rule only keeps it from naming a step the data cannot single out.

Not handled: the sentences' wording (``report_files.md``), the intervals' computation
(``scorecard._interval``), writing files.
"""

from __future__ import annotations

import html
import re

import numpy as np

from chunklab_core.evaluators.scorecard import Options, Scorecard, _interval, funnel_matrices
from chunklab_core.stats.claims import interval_side

#: Funnel step -> (stage, metric prefix) measuring the same thing in a stage table.
COUNTERPARTS = {"retrieved": ("retrieval", "hit@"), "in_context": ("augmentation", "answer_in_context"),
                "answer_correct": ("end_to_end", "task_success")}


def _clusters(card: Scorecard, keep: np.ndarray):
    if card.docs is None or len(card.docs) != len(keep):
        return None
    clusters = np.asarray(card.docs, dtype=object)[keep]
    return None if any(c is None for c in clusters) else clusters


def funnel_headline(card: Scorecard) -> dict | None:
    """The headline's facts: ``{"rule": "named" | "tied" | "no_loss", "n", "last", "final",
    "final_low", "final_high"}`` plus, when a step loses a query, ``step`` (the title of the
    most-losing step), ``lost`` (its share and interval), ``next`` (the next-worst step's title),
    ``diff``/``diff_low``/``diff_high`` (paired loss of ``step`` minus loss of ``next``) and
    ``tied`` (titles of the steps that cannot be told apart from ``step``, itself first).
    ``None`` without a measured funnel."""
    table = card.funnel
    if table is None or table.empty or "funnel" not in card.stages:
        return None
    last = table.iloc[-1]
    out = {"n": int(last["n"]), "last": last["title"], "final": float(last["reached"]),
           "final_low": float(last["reached_low"]), "final_high": float(last["reached_high"])}
    lost_means = table["lost"].astype(float).to_numpy()
    if not (lost_means > 0).any():
        return {**out, "rule": "no_loss"}
    worst = int(np.argmax(lost_means))  # the first of equal ones
    row = table.iloc[worst]
    out.update(step=row["title"], lost=float(row["lost"]), lost_low=float(row["lost_low"]),
               lost_high=float(row["lost_high"]))
    others = [j for j in np.argsort(-lost_means, kind="stable") if j != worst]
    if not others:  # one measured step: nothing to tell it apart from
        return {**out, "rule": "named", "next": None, "tied": [row["title"]]}
    _, keep, _, lost = funnel_matrices(card.stages["funnel"])
    diffs = lost[:, [worst]] - lost[:, others]  # per query, paired: loss at the worst − loss at each other
    mean, low, high = _interval(diffs, _clusters(card, keep), card.options or Options())
    sides = [interval_side(lo, hi) for lo, hi in zip(low, high)]
    nxt = 0  # others[0] is the next-worst
    out.update(next=table.iloc[others[nxt]]["title"], diff=float(mean[nxt]), diff_low=float(low[nxt]),
               diff_high=float(high[nxt]))
    tied = [row["title"]] + [table.iloc[j]["title"] for j, side in zip(others, sides) if side == 0]
    out.update(rule="named" if sides[nxt] > 0 else "tied", tied=tied)
    return out


def denominator_notes(card: Scorecard) -> list[dict]:
    """Per funnel step with a stage counterpart measured on a different number of queries:
    ``{"step", "reached", "n", "stage", "metric", "value", "stage_n"}``."""
    table = card.funnel
    if table is None or table.empty:
        return []
    notes = []
    for row in table.to_dict(orient="records"):
        if row["step"] not in COUNTERPARTS:
            continue
        stage, prefix = COUNTERPARTS[row["step"]]
        if stage not in card.tables:
            continue
        rows = card.tables[stage]
        rows = rows[rows["metric"].astype(str).str.startswith(prefix) & rows["value"].notna()]
        if prefix.endswith("@"):  # the funnel's k: the definition names it ("top 10"), else the largest
            k = re.search(r"top (\d+)", str(row["definition"] or ""))
            at = rows[rows["metric"] == f"{prefix}{k.group(1)}"] if k else rows.iloc[0:0]
            rows = at if len(at) else rows.iloc[-1:]
        if not len(rows):
            continue
        other = rows.iloc[0]
        if other["n"] is not None and int(other["n"]) != int(row["n"]):
            notes.append({"step": row["title"], "reached": float(row["reached"]), "n": int(row["n"]),
                          "stage": stage, "metric": str(other["metric"]), "value": float(other["value"]),
                          "stage_n": int(other["n"])})
    return notes


def headline_text(sentence_html: str) -> str:
    """A template's filled HTML as one plain line (tags dropped, entities decoded)."""
    return " ".join(html.unescape(re.sub(r"<[^>]+>", "", sentence_html)).split())
