"""Extending a drawn audit sample when post 05 has recorded more items since: a second wave.

The sample of ``chunklab-audit-draw`` is drawn from the items recorded at that
moment. When post 05 later records more (e.g. more Natural Questions questions), those items
form a new *wave*: a population of their own, stratified by the same verdict patterns
(strata named ``wave 2: <pattern>``), sampled by the same rule and appended to the same sheet
and key with new ids. Strata of different waves never mix, so every item keeps a known
inclusion probability and the union is one stratified design over the whole population
(stratified sampling with the waves as a first stratification variable; Cochran 1977 ch. 5).
The graded items of earlier waves are untouched.

Handles: :func:`wave_strata` (the stratum of every population row, wave prefix included;
:func:`chunklab_core.audit.loading.load_audit` uses it) and :func:`top_up` (the new wave drawn
and the three files rewritten atomically; it refuses when an old item changed or vanished).
A small wave (at most ``census_max`` items) is taken whole; a larger one at the first
wave's sampling rate, and never below two items per pattern (the draw's floor). CLI: ``python -m
chunklab_core.audit.draw --top-up``.

Not handled: re-drawing earlier waves, items whose verdicts changed (re-judged items raise).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Sequence

import pandas as pd

from chunklab_core.core.csv_cells import frame_csv, restored_frame
from chunklab_core.audit.sample import draw_audit_sample, verdict_patterns
from chunklab_core.audit.sheets import (DEFAULT_JUDGE_COLUMNS, GRADE_COLUMNS, atomic_write_text, read_key, read_sheet, write_key, write_sheet_rows)

WAVE = "wave"


def wave_strata(population: pd.DataFrame, judge_columns: Sequence[str], scale: str) -> pd.Series:
    """Verdict pattern per row, prefixed ``wave <w>: `` for rows of a wave after the first."""
    patterns = verdict_patterns(population, judge_columns, scale)
    if WAVE not in population.columns:
        return patterns
    wave = pd.to_numeric(population[WAVE], errors="coerce").fillna(1).astype(int)
    return pd.Series([p if w <= 1 else f"wave {w}: {p}" for p, w in zip(patterns, wave)],
                     index=population.index)


def top_up(out: Path, name: str, current: pd.DataFrame, seed: int, census_max: int = 40,
           judge_columns: Sequence[str] = DEFAULT_JUDGE_COLUMNS) -> int:
    """Append a sample of the items of ``current`` not yet in ``<name>_population.csv``; returns its size."""
    paths = {kind: out / f"{name}_{kind}.csv" for kind in ("population", "key", "sheet")}
    old = restored_frame(pd.read_csv(paths["population"], dtype=str, keep_default_na=False))
    key = read_key(paths["key"])
    fieldnames, rows = read_sheet(paths["sheet"])
    now = current.astype({c: str for c in judge_columns}).set_index("item_id")
    gone = sorted(set(old["item_id"]) - set(now.index))
    if gone:
        raise ValueError(f"{len(gone)} item(s) of the drawn population are no longer recorded: {gone[:5]}")
    changed = [c for c in judge_columns
               if (now.loc[old["item_id"], c].to_numpy() != old[c].to_numpy()).any()]
    if changed:
        raise ValueError(f"verdicts changed since the draw in {changed}; re-draw instead of topping up")
    new = current[~current["item_id"].isin(old["item_id"])].reset_index(drop=True)
    if new.empty:
        return 0
    wave = int(pd.to_numeric(old[WAVE]).max()) + 1 if WAVE in old.columns else 2
    scale = key["stratum_scale"].iloc[0] if "stratum_scale" in key.columns else "labels"
    share = len(key) / len(old)
    floors = int(verdict_patterns(new, judge_columns, scale).value_counts().clip(upper=2).sum())
    n = len(new) if len(new) <= census_max else \
        min(len(new), max(floors, math.ceil(share * len(new))))
    sheet_new, key_new = draw_audit_sample(new, n, seed=seed, scale=scale)
    ids = [f"A{len(key) + i:03d}" for i in range(1, n + 1)]
    sheet_new["item_id"], key_new["item_id"] = ids, ids
    key_new["source_row"] = key_new["source_row"] + len(old)
    key_new["stratum"] = f"wave {wave}: " + key_new["stratum"]
    population = pd.concat([old.assign(**{WAVE: old.get(WAVE, "1")}),
                            new.drop(columns="passage", errors="ignore").assign(**{WAVE: str(wave)})],
                           ignore_index=True)
    atomic_write_text(paths["population"], frame_csv(population, index=False))
    write_key(pd.concat([key, key_new], ignore_index=True), paths["key"])
    added = [{c: ("" if c in GRADE_COLUMNS else str(row.get(c, ""))) for c in fieldnames}
             for row in sheet_new.to_dict("records")]
    write_sheet_rows(paths["sheet"], fieldnames, rows + added)
    return n
