"""The engine's table read per budget and per setting: what a builder uses, and how sure it is.

Handles, from :func:`decision.engine.setting_table` alone (so a CSV read back gives the same):

* :func:`budget_guide`: one row per (setting, budget): the pick (the simplest of the leader and
  its equivalents), the leader, the equivalents (ties joined by ``≡``), the budget's verdict
  (``decided``, ``undecided`` with the questions that would settle it, ``below floor``), the share
  of its chunk word pieces the embedding model reads for the pick and each equivalent, the
  candidates that do not fit, and the gain of the next budget's leader;
* :func:`setting_guide`: one row per setting: the pick at every budget (``at B``), then the
  recommended budget (the smallest whose pick is equivalent to every larger budget's leader),
  its pick, equivalents and verdict at δ, the verdict at every other margin computed (0: the rule
  before a margin, δ/2, 2δ), whether recall still rises by more than δ at the largest budget, and
  the gain per doubling;
* :func:`robustness`: per margin, how many settings are decided, undecided, below floor, and how
  many keep the pick and budget they have at δ.

Not handled: computing intervals (``decision.engine``), sentences (``reports.pool``).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from chunklab_core.decision.engine import (BELOW_FLOOR, DECIDED, DOES_NOT_FIT, EQUIVALENT, LEADER, LIST_SEPARATOR,
                                           SETTING, UNDECIDED, margin_column)
from chunklab_core.decision.margin import DEFAULT_MARGIN, questions_to_settle

READ_SHARE = 0.80  # a pick or equivalent the model reads less of says so
SETTLED = "—"  # "what would decide" where nothing is undecided


def _flag(value) -> bool:
    """A boolean cell, also when read back from a CSV (NaN: False; "False": False)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return False
    if isinstance(value, str):
        return value.strip().lower() == "true"
    return bool(value)


def reads(row) -> float:
    """1 − the share of the candidate's chunk word pieces beyond the model's window (NaN: no model reads it)."""
    beyond = row.get("beyond window", float("nan"))
    return float("nan") if pd.isna(beyond) else 1.0 - float(beyond)


def _with_ties(part: pd.DataFrame, names: list[str]) -> str:
    """Labels of ``names`` (rows of ``part`` by strategy) with their ties joined by ``≡``, each once."""
    groups, seen = [], set()
    by_strategy = part.set_index("strategy")
    for name in names:
        label = by_strategy.loc[name, "label"]
        if label in seen:
            continue
        cell = by_strategy.loc[name, "ties"]
        ties = [t for t in (cell if isinstance(cell, str) else "").split(LIST_SEPARATOR)
                if t and t in set(part.loc[part["strategy"].isin(names), "label"]) and t not in seen]
        seen.update([label, *ties])
        groups.append(" ≡ ".join([label, *ties]))
    return LIST_SEPARATOR.join(groups)


def _settle(row, margin: float, gain: bool = False) -> str:
    cols = ("against", "against low", "against high") if gain else ("leader − this", "low", "high")
    needed = questions_to_settle(int(row["questions"]), float(row[cols[0]]), float(row[cols[1]]),
                                 float(row[cols[2]]), margin)
    return f"{needed:,}" if needed is not None else "more than 100,000"


def _budget_row(part: pd.DataFrame, margin: float) -> dict | None:
    decision = part[margin_column("decision", margin)]
    lead = part[decision == LEADER]
    if lead.empty:
        return None
    lead = lead.iloc[0]
    pick = part[part[margin_column("pick", margin)].map(_flag)].iloc[0]
    equivalents = part[(decision.isin([LEADER, EQUIVALENT])) & (part["strategy"] != pick["strategy"])]
    pick_ties = [t for t in str(pick["ties"] if isinstance(pick["ties"], str) else "").split(LIST_SEPARATOR) if t]
    equivalents = equivalents[~equivalents["label"].isin(pick_ties)].sort_values("score", ascending=False,
                                                                                 kind="stable")
    undecided = part[decision == UNDECIDED].sort_values("score", ascending=False, kind="stable")
    verdict = (BELOW_FLOOR if float(lead["score"]) < _floor() else UNDECIDED if len(undecided) else DECIDED)
    low_reads = [f"{r['label']} ({reads(r):.0%})" for _, r in pd.concat([pick.to_frame().T, equivalents]).iterrows()
                 if not np.isnan(reads(r)) and reads(r) < READ_SHARE]
    return {"sample": lead["sample"], "corpus": lead["corpus"], "retriever": lead["retriever"], "model": lead["model"],
            "budget": int(lead["budget"]), "measure": lead["measure"], "use": pick["label"],
            "strategy": pick["strategy"], "score": float(pick["score"]), "leader": lead["label"],
            "leader score": float(lead["score"]),
            "equivalents": _with_ties(part, list(equivalents["strategy"])),
            "ties": pick["ties"] if isinstance(pick["ties"], str) else "",
            "ruled out": int((decision == "ruled out").sum()), "undecided": int(len(undecided)),
            "verdict": verdict,
            "what would decide": (_settle(undecided.iloc[0], margin) if verdict == UNDECIDED else SETTLED),
            "winner": bool(lead["verdict"] == "winner"), "reads": reads(pick),
            "reads below": LIST_SEPARATOR.join(low_reads),
            "tokens per context": float(pick["tokens per context"]),
            "does not fit": LIST_SEPARATOR.join(part.loc[decision == DOES_NOT_FIT, "label"]),
            "gain": float(lead.get("gain", float("nan"))), "next budget": lead.get("next budget", float("nan")),
            "gain low": float(lead.get("gain low", float("nan"))), "gain high": float(lead.get("gain high", float("nan"))),
            "settles": _flag(pick.get("settles")), "depth binds": float(pick["depth binds"]),
            "source": pick["source"], "key": pick["key"]}


def _floor() -> float:
    from chunklab_core.decision.engine import FLOOR

    return FLOOR


def budget_guide(table: pd.DataFrame, margin: float = DEFAULT_MARGIN) -> pd.DataFrame:
    """One row per (setting, budget) of the engine's table at margin ``margin`` (module docstring)."""
    rows = [r for _, part in table.groupby(SETTING + ["budget"], sort=False)
            if (r := _budget_row(part, margin)) is not None]
    return pd.DataFrame(rows)


def setting_guide(table: pd.DataFrame, margin: float = DEFAULT_MARGIN) -> pd.DataFrame:
    """One row per setting (module docstring): the picks at every budget first, then the recommended one."""
    from chunklab_core.decision.engine import margins_of

    per_budget = budget_guide(table, margin)
    rows = []
    for keys, cell in table.groupby(SETTING, sort=False):
        recommended = cell[cell[margin_column("recommended", margin)].map(_flag)]
        if recommended.empty:
            continue
        pick = recommended.iloc[0]
        budgets = per_budget[(per_budget["corpus"] == keys[0]) & (per_budget["retriever"] == keys[1])
                             & (per_budget["model"] == keys[2])].sort_values("budget")
        here = budgets[budgets["budget"] == int(pick["budget"])].iloc[0]
        verdict = pick[margin_column("setting verdict", margin)]
        largest = budgets.iloc[-1]
        last_gain = budgets.iloc[-2]["gain"] if len(budgets) > 1 else float("nan")
        doublings = [f"{int(a):,}→{int(b):,} {g:+.3f}" for a, b, g in
                     zip(budgets["budget"], budgets["budget"].iloc[1:], budgets["gain"]) if not pd.isna(g)]
        rejected = cell[cell[margin_column("pick", margin)].map(_flag) & (cell["budget"] < int(pick["budget"]))
                        & ~cell["rejected decidedly"].map(_flag)]
        decide = here["what would decide"]
        if verdict == UNDECIDED and decide == SETTLED and len(rejected):
            decide = _settle(rejected.iloc[0], margin, gain=True)
        best = cell[cell["verdict"] != DOES_NOT_FIT].sort_values(["score", "budget"], ascending=[False, True],
                                                                 kind="stable").iloc[0]
        row = {"sample": pick["sample"], "corpus": keys[0], "retriever": keys[1], "model": keys[2],
               "measure": pick["measure"],
               **{f"at {int(b['budget']):,}": b["use"] for _, b in budgets.iterrows()},
               "use": pick["label"], "strategy": pick["strategy"], "tokens": int(pick["budget"]),
               "score": float(pick["score"]), "leader at tokens": here["leader"],
               "equivalents": here["equivalents"], "ties": here["ties"], "verdict": verdict,
               "what would decide": decide,
               **{margin_column("verdict", m): pick[margin_column("setting verdict", m)] for m in margins_of(margin)
                  if margin_column("setting verdict", m) in cell},
               "still rising": bool(int(pick["budget"]) == int(largest["budget"]) and not pd.isna(last_gain)
                                    and last_gain > margin),
               "last gain": float(last_gain), "gain per doubling": "; ".join(doublings),
               "against budget": pick["against budget"], "against": pick["against"],
               "against low": pick["against low"], "against high": pick["against high"],
               "reads": here["reads"], "reads below": here["reads below"],
               "below floor": verdict == BELOW_FLOOR, "winner": bool(pick["verdict"] == "winner"),
               "does not fit": here["does not fit"], "tokens per context": float(pick["tokens per context"]),
               "leader": best["label"], "leader tokens": int(best["budget"]), "leader score": float(best["score"]),
               "depth binds": float(pick["depth binds"]),
               "candidates": ", ".join(dict.fromkeys(cell["strategy"])), "questions": int(pick["questions"]),
               "documents": int(pick["documents"]), "design": pick["design"],
               "source": pick["source"], "key": pick["key"]}
        rows.append(row)
    return pd.DataFrame(rows)


def robustness(table: pd.DataFrame, margin: float = DEFAULT_MARGIN) -> pd.DataFrame:
    """Per margin of the engine (0, δ/2, δ, 2δ): settings decided, undecided and below floor, and
    how many keep the pick and recommended budget they have at δ."""
    from chunklab_core.decision.engine import margins_of

    at_delta = setting_guide(table, margin).set_index(SETTING)
    rows = []
    for m in margins_of(margin):
        if margin_column("setting verdict", m) not in table:
            continue
        guide = setting_guide(table, m).set_index(SETTING)
        same = [(guide.loc[k, "strategy"], guide.loc[k, "tokens"]) == (at_delta.loc[k, "strategy"],
                                                                          at_delta.loc[k, "tokens"])
                for k in guide.index if k in at_delta.index]
        rows.append({"margin": m, "settings": len(guide), "decided": int((guide["verdict"] == DECIDED).sum()),
                     "undecided": int((guide["verdict"] == UNDECIDED).sum()),
                     "below floor": int((guide["verdict"] == BELOW_FLOOR).sum()),
                     "same pick and budget as at δ": int(sum(same)),
                     "budget below the largest": int((guide["tokens"] < table["budget"].max()).sum())})
    return pd.DataFrame(rows)
