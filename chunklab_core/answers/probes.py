"""Reliability probes for LLM judges: test-retest, verbosity padding, a wrong figure.

Handles: building probe inputs from gold answers alone (no answerer involved, so the probes
are fixed by the corpus and a seed), judging them through the same recorded judges as post
05, and the per-judge summary. Each probe is a pair of inputs whose correct verdicts are
known in advance:

* **plain**: ``"The answer is <gold>."`` -- correct by construction;
* **padded**: the plain sentence followed by :data:`FILLER`, true-sounding words that add
  nothing -- still correct; a judge whose verdict changes is swayed by length;
* **wrong figure**: the plain sentence with one number changed by :func:`alter_number` --
  wrong; a judge that passes it does not check figures;
* **retest**: the plain input judged a second time (the record key carries ``repeat=2``, so
  it is a fresh model call, not a replay of the first) -- any change is run-to-run noise.
  At temperature 0 this measures the runtime's determinism, not sampling variability.

Questions are drawn (seeded) among those whose first gold answer contains a digit, so all
four probes use the same items. Not handled: probes on real model answers (post 05's
agreement tables do that), judges other than the post-05 three-way and yes/no prompts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd

from chunklab_core.answers.verdicts import CORRECT, UNPARSED, WRONG, passes
from chunklab_core.core.corpus import Corpus

PROBES = ("plain", "padded", "wrong_figure", "retest")
EXPECTED = {"plain": CORRECT, "padded": CORRECT, "wrong_figure": WRONG, "retest": CORRECT}
FILLER = (" It is worth adding that the passages discuss this topic at some length, that the"
          " surrounding material gives helpful background on the people, places and events"
          " involved, and that readers interested in the broader context will find several"
          " related details there which, while not strictly needed here, round out the picture.")
_NUMBER = re.compile(r"\d+")


def alter_number(text: str) -> str:
    """``text`` with the last digit of its first number raised by 3 (mod 10): 1995 -> 1998.

    A deterministic, always-different figure of the same length and shape (a year stays a
    year). Raises ``ValueError`` when ``text`` has no digit.
    """
    match = _NUMBER.search(text)
    if match is None:
        raise ValueError(f"no number to alter in {text!r}")
    digits = match.group(0)
    changed = digits[:-1] + str((int(digits[-1]) + 3) % 10)
    return text[: match.start()] + changed + text[match.end():]


@dataclass(frozen=True)
class ProbeInput:
    probe: str
    qid: str
    question: str
    reference: str
    answer: str
    expected: str


def probe_inputs(corpus: Corpus, n: int, seed: int) -> list[ProbeInput]:
    """Four inputs (plain, padded, wrong figure, retest) for ``n`` seeded numeric-gold questions."""
    numeric = [q for q in corpus.questions if q.answers and _NUMBER.search(q.answers[0])]
    if not 1 <= n <= len(numeric):
        raise ValueError(f"n must lie in [1, {len(numeric)}] (questions with a digit in the gold), got {n}")
    picked = np.random.default_rng(seed).choice(len(numeric), n, replace=False)
    inputs = []
    for index in picked:
        q = numeric[int(index)]
        gold = q.answers[0].strip()
        reference = " | ".join(dict.fromkeys(a.strip() for a in q.answers))
        plain = f"The answer is {gold}."
        answers = {"plain": plain, "padded": plain + FILLER,
                   "wrong_figure": f"The answer is {alter_number(gold)}.", "retest": plain}
        for probe in PROBES:
            inputs.append(ProbeInput(probe, q.qid, q.text, reference, answers[probe], EXPECTED[probe]))
    return inputs


def judge_probe(item: ProbeInput, models: dict, yes_no_judges: Sequence[str]) -> list[dict]:
    """Every judge's verdict on one probe input (rows: probe, qid, judge, label, expected)."""
    from chunklab_core.llm.judges import judge_three_way, judge_yes_no

    options = {"repeat": 2} if item.probe == "retest" else {}
    rows = []
    for name, llm in models.items():
        if name == "answerer":
            continue
        calls = [("3way", judge_three_way)] + ([("yesno", judge_yes_no)] if name in yes_no_judges else [])
        for kind, judge in calls:
            result = judge(llm, item.question, item.reference, item.answer, **options)
            rows.append({"probe": item.probe, "qid": item.qid, "judge": f"{name}_{kind}",
                         "label": result.label, "expected": item.expected, "answer": item.answer,
                         "question": item.question, "reference": item.reference})
    return rows


def run_probes(inputs: Sequence[ProbeInput], models: dict, yes_no_judges: Sequence[str],
               progress: bool = True, concurrency: int = 1) -> pd.DataFrame:
    """All probe verdicts as one long table in input order (resumable through the judges'
    records); ``concurrency`` inputs are judged at once (``llm.pool``)."""
    from chunklab_core.llm.pool import map_bounded

    per_input = map_bounded(inputs, lambda item: judge_probe(item, models, yes_no_judges),
                            concurrency, desc="judge probes", progress=progress)
    return pd.DataFrame([row for rows in per_input for row in rows])


def probe_summary(verdicts: pd.DataFrame) -> pd.DataFrame:
    """Per judge: how it treats each probe, on the pass/fail scale
    (:func:`chunklab_core.answers.verdicts.passes`; ``unparsed`` fails).

    Columns: ``n`` questions, ``plain_pass`` (share passed), ``padded_flip`` (share whose
    verdict on the padded answer differs from the plain one), ``wrong_figure_caught`` (share
    not passed), ``retest_changed`` (share whose retest label differs from the plain label),
    and ``unparsed`` (count over all four probes).
    """
    table = verdicts.copy()
    table["pass"] = [passes(label) for label in table["label"]]
    rows = []
    for judge, group in table.groupby("judge", sort=False):
        wide = group.pivot(index="qid", columns="probe", values="label")
        passed = group.pivot(index="qid", columns="probe", values="pass")
        rows.append({
            "judge": judge, "n": len(wide),
            "plain_pass": float(passed["plain"].mean()),
            "padded_flip": float((wide["padded"] != wide["plain"]).mean()),
            "wrong_figure_caught": float((~passed["wrong_figure"].astype(bool)).mean()),
            "retest_changed": float((wide["retest"] != wide["plain"]).mean()),
            "unparsed": int((group["label"] == UNPARSED).sum()),
        })
    return pd.DataFrame(rows)
