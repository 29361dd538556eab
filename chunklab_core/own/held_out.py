"""What a run's recommendation rests on: generated questions, a held-out check, questions at the margin.

Handles three additions to the box of ``chunklab-own run`` (``own.pipeline`` appends their lines):

* ``post04_measure``: what post 04 measured generated questions hide, read from its committed
  tables (``data/04_retrieval.csv``: on NQ, the mean over its strategy x retriever cells of
  ``generated − human`` on post 04's measure against real search queries, and how many cells'
  paired intervals lie above 0; ``data/04_checks.csv``: the share of generated questions at least
  one check flags). Nothing is typed: a missing table says so.
* ``held_out_check``: select on one half, confirm on the other (post 03's guard). The questions
  are split in two halves at random (seeded); the pick on the selection half must be the run's
  leader and must not be ruled out on the held-out half by the series' rule
  (``stats.selection.select_winner``: its paired 95% interval against the held-out leader
  contains 0, or it leads); otherwise the box says it is not confirmed. Beside it, over
  ``N_SPLITS`` random halves, ``stats.holdout.held_out_selection``'s share of splits whose pick is
  among the held-out best and its mean optimism (selection minus held-out score).
* ``questions_at_margin``: the questions that would decide the top two at the margin delta
  (``decision.margin.DEFAULT_MARGIN``) with 80% power, from their paired interval
  (``stats.bootstrap.questions_for_power``), and the documents that many questions need at this
  run's questions per document.

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
from chunklab_core.stats.bootstrap import questions_for_power

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


def held_out_check(wide: pd.DataFrame, leader: str, resamples: int, seed: int) -> dict:
    """Select on one seeded half of ``wide`` (questions x candidates), confirm on the other (module docstring)."""
    from chunklab_core.stats.holdout import held_out_selection
    from chunklab_core.stats.selection import select_winner

    n = len(wide)
    if n < 2 * MIN_HALF or wide.shape[1] < 2:
        return {"confirmed": None, "text": f"not checked: {n} questions; a held-out half needs at least "
                                           f"{MIN_HALF} questions per half ({2 * MIN_HALF} in all)"}
    names = [str(c) for c in wide.columns]
    scores = wide.to_numpy(dtype=float)
    select, hold = _halves(n, seed)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # few questions: said by the line itself
        on_select = select_winner(scores[select], names, resamples=resamples, seed=seed)
        on_hold = select_winner(scores[hold], names, resamples=resamples, seed=seed)
    pick = on_select.leader
    kept = pick in on_hold.candidates
    repeated = held_out_selection(scores, names, seed=seed, n_splits=N_SPLITS).summary
    confirmed = pick == leader and kept
    if pick != leader:
        verdict = f"not confirmed: on a random half ({len(select)} questions) the pick is {pick}, not {leader}"
    elif not kept:
        diff = on_hold.against_leader.get(pick)
        interval = f" ({on_hold.leader} − {pick}: {diff.mean:+.3f} [{diff.low:+.3f}, {diff.high:+.3f}])" if diff else ""
        verdict = (f"not confirmed: {pick}, picked on one half ({len(select)} questions), is ruled out on the "
                   f"other ({len(hold)} questions){interval}")
    else:
        verdict = (f"confirmed: {pick}, picked on one half ({len(select)} questions), cannot be ruled out on the "
                   f"other ({len(hold)} questions)")
    text = (f"{verdict}; over {N_SPLITS} random halves the pick on one half was among the best on the other in "
            f"{repeated['share_agrees']:.0%}, and its held-out minus selection score averaged "
            f"{round(-repeated['mean_gap'], 3) + 0.0:+.3f} (the series' held-out guard)")
    return {"confirmed": confirmed, "text": text, "pick": pick, "selection questions": len(select),
            "held-out questions": len(hold), "share agrees": float(repeated["share_agrees"]),
            "mean gap": float(repeated["mean_gap"])}


def questions_at_margin(n: int, interval: tuple[float, float], n_documents: int,
                        margin: float = DEFAULT_MARGIN) -> dict:
    """Questions (and documents, at this run's questions per document) that would decide the top two at
    ``margin``: ``questions_for_power(n, margin, interval, POWER)``; ``questions`` None above its cap."""
    if interval[1] - interval[0] <= 1e-12:  # no paired spread observed: nothing to size from
        return {"questions": None, "documents": None, "margin": margin, "power": POWER,
                "text": f"at k chunks (the secondary view): not sized, the top two scored alike on every one of your {n} questions (no paired "
                        f"spread), so the questions that would decide them at δ = {margin:g} cannot be estimated"}
    needed = questions_for_power(n, margin, interval, power=POWER)
    documents = None if needed is None else max(1, math.ceil(needed * n_documents / n))
    if needed is None:
        text = f"at k chunks (the secondary view): more than 100,000 questions would decide the top two at δ = {margin:g}"
    else:
        text = (f"at k chunks (the secondary view): about {needed:,} questions (about {documents:,} documents at your {n / n_documents:.1f} questions "
                f"per document) would decide the top two at δ = {margin:g} of recall with {POWER:.0%} power "
                f"(you have {n}); chunklab-own questions DOCS --report OUT draws that many, as far as the documents allow")
    return {"questions": needed, "documents": documents, "margin": margin, "power": POWER, "text": text}
