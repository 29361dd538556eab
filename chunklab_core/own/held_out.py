"""What a run's recommendation rests on: generated questions, a held-out check, questions at the margin.

Handles three additions to the box of ``chunklab-own run`` (``own.pipeline`` appends their lines):

* ``post04_measure``: what post 04 measured generated questions hide, read from its committed
  tables (``data/04_retrieval.csv``: on NQ, the mean over its strategy x retriever cells of
  ``generated − human`` on post 04's measure against real search queries, and how many cells'
  paired intervals lie above 0; ``data/04_checks.csv``: the share of generated questions at least
  one check flags). Nothing is typed: a missing table says so.
* ``held_out_check``: select on one half, confirm on the other (post 03's guard). The questions
  are split in two halves at random (seeded); on each half the decision engine decides
  (``decision.compare.compare``, the same margin δ): the engine's pick on the selection half must
  be the run's pick, and on the held-out half it must lead or be equivalent within ±δ to the
  leader; undecided or ruled out there, the box says it is not confirmed. Beside it, over
  ``N_SPLITS`` random halves, ``stats.holdout.held_out_selection``'s share of splits whose
  top-scoring candidate is among the held-out best and its mean optimism (selection minus held-out
  score): a different thing from a decision, kept as such -- it measures how much choosing on the
  same questions flatters the choice (post 03's winner's curse), and decides nothing.
* ``questions_at_margin``: the questions (and documents, at this run's questions per document) that
  would settle the box's decision at the margin δ (``decision.margin.DEFAULT_MARGIN``) with 80%
  power: the engine's own figure (``decision.margin.questions_to_settle``), so the number a
  ``chunklab-own questions --report`` draws is the one the box states.

Not handled: splits grouped by document (questions are split one by one; generated questions
are one per passage), choosing delta for you.
"""

from __future__ import annotations

from chunklab_core.core.csv_cells import read_frame

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from chunklab_core.core import paths
from chunklab_core.decision.margin import DEFAULT_MARGIN

N_SPLITS = 50
POWER = 0.80
MIN_HALF = 5  # questions per half below which nothing is held out
POST04_METRIC = "hit@5"  # post 04's METRIC parameter (notebooks/src/04_questions.ipynb; a test pins it)
POST04_CORPUS = "nq"  # post 04's corpus of real search queries


@dataclass(frozen=True)
class Post04:
    """Post 04's measure on NQ (mean generated − human over ``cells``, ``above`` of them above 0), and flags."""

    mean_gap: float
    cells: int
    above: int
    passages: int
    flagged: int
    generated: int


def post04_measure(folder=None) -> Post04 | None:
    """Post 04's committed numbers (see the module docstring); None when its tables are not there."""
    from chunklab_core.questions.checks import CHECK_NAMES  # deferred: only a run on generated questions reads it

    folder = paths.TABLES_DIR if folder is None else folder
    retrieval, checks = folder / "04_retrieval.csv", folder / "04_checks.csv"
    if not retrieval.is_file() or not checks.is_file():
        return None
    table = read_frame(retrieval)
    nq = table[table["corpus"] == POST04_CORPUS]
    generated = read_frame(checks)
    generated = generated[generated["set"] == "generated"]
    flagged = generated[list(CHECK_NAMES)].astype(bool).any(axis=1)
    return Post04(float(nq["generated − human"].mean()), len(nq), int((nq["low"] > 0).sum()),
                  int(nq["passages"].max()), int(flagged.sum()), len(generated))


def generated_line(n_generated: int, n_questions: int, post04: Post04 | None) -> str:
    """The box line saying the questions are generated and what post 04 measured they hide."""
    share = "all" if n_generated == n_questions else f"{n_generated} of {n_questions}"
    head = f"{share} questions generated from your documents (chunklab-own questions), not asked by your users"
    if post04 is None:
        return head + "; the series' generated-question tables are not in this installation, so what they hide is not quoted"
    return (f"{head}. The series' generated-question study measured what such questions hide: on Natural Questions, {POST04_METRIC} was "
            f"{post04.mean_gap:+.2f} higher on generated questions than on real search queries (mean of "
            f"{post04.cells} strategy × retriever cells, {post04.passages} passages; {post04.above} of "
            f"{post04.cells} paired intervals above 0), and the checks flagged {post04.flagged} of "
            f"{post04.generated} generated questions. Expect real users' recall lower, and rankings that may differ")


def _halves(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    order = np.random.default_rng(seed).permutation(n)
    return np.sort(order[: n // 2]), np.sort(order[n // 2:])


def held_out_check(wide: pd.DataFrame, pick: str, resamples: int, seed: int, margin: float = DEFAULT_MARGIN,
                   simple=None) -> dict:
    """Select on one seeded half of ``wide`` (questions x candidates), confirm on the other, both by the
    decision engine (``decision.compare.compare`` at ``margin``, ties to ``simple``; module docstring)."""
    from chunklab_core.decision.compare import EQUIVALENT, LEADER, RULED_OUT, compare
    from chunklab_core.stats.holdout import held_out_selection

    n = len(wide)
    if n < 2 * MIN_HALF or wide.shape[1] < 2:
        return {"confirmed": None, "text": f"not checked: {n} questions; a held-out half needs at least "
                                           f"{MIN_HALF} questions per half ({2 * MIN_HALF} in all)"}
    names = [str(c) for c in wide.columns]
    wide = wide.set_axis(names, axis=1)
    select, hold = _halves(n, seed)
    on_select = compare(wide.iloc[select], resamples, seed, margin, simple=simple)
    on_hold = compare(wide.iloc[hold], resamples, seed, margin, simple=simple)
    chosen = on_select.pick
    word = on_hold.words[chosen]
    confirmed = chosen == pick and word in (LEADER, EQUIVALENT)
    halves = f"picked on one half ({len(select)} questions)"
    if chosen != pick:
        verdict = f"not confirmed: on a random half ({len(select)} questions) the engine picks {chosen}, not {pick}"
    elif word == LEADER:
        verdict = f"confirmed: {pick}, {halves}, leads on the other ({len(hold)} questions)"
    elif word == EQUIVALENT:
        verdict = (f"confirmed: {pick}, {halves}, is equivalent within ±{margin:g} to the leader of the other "
                   f"({len(hold)} questions; {on_hold.interval_text(pick)})")
    else:
        said = "ruled out" if word == RULED_OUT else f"undecided at ±{margin:g} (neither equivalent nor ruled out)"
        verdict = (f"not confirmed: {pick}, {halves}, is {said} on the other ({len(hold)} questions; "
                   f"{on_hold.interval_text(pick)})")
    repeated = held_out_selection(wide.to_numpy(dtype=float), names, seed=seed, n_splits=N_SPLITS).summary
    text = (f"{verdict}; over {N_SPLITS} random halves the top-scoring candidate on one half was among the best on "
            f"the other in {repeated['share_agrees']:.0%}, and its held-out minus selection score averaged "
            f"{round(-repeated['mean_gap'], 3) + 0.0:+.3f} (the series' held-out guard: how much choosing "
            f"on the same questions flatters the choice, not a verdict)")
    return {"confirmed": confirmed, "text": text, "pick": chosen, "held-out word": word,
            "selection questions": len(select), "held-out questions": len(hold),
            "share agrees": float(repeated["share_agrees"]), "mean gap": float(repeated["mean_gap"])}


def questions_at_margin(needed: int | None, verdict: str, n: int, n_documents: int,
                        margin: float = DEFAULT_MARGIN) -> dict:
    """Questions (and documents, at this run's questions per document) that would settle the box's
    decision at ``margin`` with 80% power: the decision engine's figure (``needed``, from
    ``decision.margin.questions_to_settle``; None above its cap) when ``verdict`` is undecided."""
    from chunklab_core.decision.compare import BELOW_FLOOR, DECIDED

    empty = {"questions": None, "documents": None, "margin": margin, "power": POWER}
    if verdict == DECIDED:
        return {**empty, "text": f"none needed: decided at δ = {margin:g} on your {n} questions"}
    if verdict == BELOW_FLOOR:
        return {**empty, "text": "not sized: below floor, more questions would not make chunking what limits it"}
    if needed is None:
        return {**empty, "text": f"more than 100,000 questions would settle the decision at δ = {margin:g}"}
    documents = max(1, math.ceil(needed * n_documents / n))
    text = (f"about {needed:,} questions (about {documents:,} documents at your {n / n_documents:.1f} questions "
            f"per document) would settle the decision above at δ = {margin:g} of recall with {POWER:.0%} power "
            f"(you have {n}); chunklab-own questions DOCS --report OUT draws that many, as far as the documents allow")
    return {**empty, "questions": needed, "documents": documents, "text": text}
