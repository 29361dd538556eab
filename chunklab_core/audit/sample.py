"""Drawing the blind, stratified audit sample of post 05's graded answers.

Handles: the stratum of each graded answer (its judges' verdict pattern, on the label or the
pass/fail scale), the sample size per stratum, and the seeded draw that returns the blind
sheet and its key (:func:`draw_audit_sample`). Not handled: writing and reading the sheet
files (:mod:`chunklab_core.audit.sheets`), the estimates that use the design weights
(:mod:`chunklab_core.stats.stratified`).

Sampling design (:func:`allocate_sample`, stratified simple random sampling without
replacement; Cochran, *Sampling Techniques*, 3rd ed. 1977, ch. 5): a stratum is one verdict
pattern, the tuple of judge labels of a row (a missing label is ``missing``; ``unparsed``
counts as a label). A pattern with two or more distinct labels is a *disagreement* stratum.
With ``N_h`` rows in stratum ``h``:

1. floor: ``m_h = min(N_h, min_per_stratum)``; if ``sum m_h > n`` a ``ValueError`` says so
   (dropping a stratum would give it inclusion probability 0 and bias every estimate);
2. the remaining ``R = n - sum m_h`` items are shared in proportion to ``f_h * N_h``, with
   ``f_h = disagreement_factor`` for disagreement strata and 1 otherwise, never beyond the
   stratum's remaining rows ``N_h - m_h``: strata whose quota reaches that cap take all their
   rows and leave, the quotas of the rest are recomputed, until none is capped; then each
   stratum takes the floor of its quota and the leftover items go one each to the largest
   fractional parts (Hamilton's method; ties to the larger ``f_h * N_h``, then pattern order);
3. ``n_h = m_h + extra_h`` rows are drawn uniformly without replacement within the stratum,
   so every row of stratum ``h`` has inclusion probability ``pi_h = n_h / N_h`` and design
   weight ``w_h = N_h / n_h`` (both stored in the key). Weighted means with ``w_h`` are the
   Horvitz-Thompson/Hajek estimates for the whole table (Horvitz & Thompson, JASA 1952);
   the weights of the sample sum to ``len(graded)``.

The selected rows are shuffled with the same generator and renamed ``A001, A002, ...`` so
neither order nor id reveals a verdict. pandas is imported inside the functions that need it,
so importing this module stays cheap.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Sequence

from chunklab_core.answers.verdicts import pass_fail
from chunklab_core.audit.sheets import DEFAULT_ID_COLUMNS, DEFAULT_JUDGE_COLUMNS, GRADE_COLUMNS, cell_text

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["allocate_sample", "verdict_patterns", "draw_audit_sample", "SCALES"]


def allocate_sample(sizes: Sequence[int], disagreement: Sequence[bool], n: int,
                    min_per_stratum: int = 2, disagreement_factor: float = 3.0) -> list[int]:
    """Sample size per stratum by the rule in the module docstring (floor, then Hamilton)."""
    if len(sizes) != len(disagreement):
        raise ValueError("sizes and disagreement must have the same length")
    if any(size < 1 for size in sizes):
        raise ValueError("every stratum must have at least one row")
    if min_per_stratum < 1 or disagreement_factor < 1:
        raise ValueError("min_per_stratum must be >= 1 and disagreement_factor >= 1")
    total = sum(sizes)
    if not 1 <= n <= total:
        raise ValueError(f"n={n} must be between 1 and the {total} rows available")
    floors = [min(size, min_per_stratum) for size in sizes]
    if sum(floors) > n:
        raise ValueError(f"n={n} cannot give min_per_stratum={min_per_stratum} items to each "
                         f"of {len(sizes)} verdict patterns (needs {sum(floors)}); raise n "
                         "or lower min_per_stratum")
    pull = [size * (disagreement_factor if dis else 1.0)
            for size, dis in zip(sizes, disagreement)]
    extra = [0] * len(sizes)
    active = [h for h in range(len(sizes)) if sizes[h] > floors[h]]
    remaining = n - sum(floors)
    while True:
        weight = sum(pull[h] for h in active)
        quota = {h: remaining * pull[h] / weight for h in active} if weight else {}
        capped = [h for h in active if quota[h] >= sizes[h] - floors[h]]
        if not capped:
            break
        for h in capped:
            extra[h] = sizes[h] - floors[h]
            remaining -= extra[h]
        active = [h for h in active if h not in capped]
    for h in active:
        extra[h] = math.floor(quota[h])
    leftover = remaining - sum(extra[h] for h in active)
    by_fraction = sorted(active, key=lambda h: (-(quota[h] - extra[h]), -pull[h], h))
    for h in by_fraction[:leftover]:
        extra[h] += 1
    return [f + e for f, e in zip(floors, extra)]


SCALES = ("labels", "pass/fail")


def verdict_labels(table: pd.DataFrame, judge_columns: Sequence[str]) -> pd.DataFrame:
    """The judge columns as text labels, a missing verdict written ``missing``."""
    columns = table[list(judge_columns)]
    return columns.astype(object).where(columns.notna(), "missing").astype(str)


def verdict_patterns(table: pd.DataFrame, judge_columns: Sequence[str], scale: str = "labels") -> pd.Series:
    """Each row's stratum: its judge labels (missing -> ``missing``; on ``scale``) joined by ``|``."""
    if scale not in SCALES:
        raise ValueError(f"scale must be one of {SCALES}, not {scale!r}")
    verdicts = verdict_labels(table, judge_columns)
    if scale == "pass/fail":
        verdicts = verdicts.map(pass_fail)
    return verdicts.agg("|".join, axis=1)


def draw_audit_sample(graded: pd.DataFrame, n: int = 60, *, seed: int,
                      judge_columns: Sequence[str] = DEFAULT_JUDGE_COLUMNS,
                      id_columns: Sequence[str] = DEFAULT_ID_COLUMNS,
                      question_column: str = "question", reference_column: str = "reference",
                      passage_column: str = "passage", answer_column: str = "answer",
                      min_per_stratum: int = 2, disagreement_factor: float = 3.0,
                      id_prefix: str = "A", scale: str = "labels") -> tuple[pd.DataFrame, pd.DataFrame]:
    """Blind stratified sample of ``graded``: ``(sheet_df, key_df)`` aligned row by row.

    ``sheet_df`` has exactly :data:`SHEET_COLUMNS` (grade columns empty); ``key_df`` has
    ``item_id``, ``source_row`` (position in ``graded``), the ``id_columns`` (``item_id``
    renamed ``source_item_id``), the judge columns, ``stratum``, ``disagreement``,
    ``stratum_size``, ``stratum_sample``, ``inclusion_prob``, ``weight`` and ``stratum_scale``.
    ``scale="labels"`` makes each distinct tuple of labels a stratum; ``"pass/fail"`` first maps
    every label to pass/fail (:func:`chunklab_core.answers.verdicts.pass_fail`), giving far fewer strata when four graders
    mix three-way and YES/NO labels. Either way a *disagreement* pattern is one whose graders
    differ on the pass/fail scale (``YES`` and ``correct`` agree).
    """
    import numpy as np
    import pandas as pd

    needed = [*judge_columns, *id_columns, question_column, reference_column,
              passage_column, answer_column]
    missing = [c for c in dict.fromkeys(needed) if c not in graded.columns]
    if missing:
        raise ValueError(f"graded table lacks column(s) {missing}; pass the right names "
                         "(judge_columns=, id_columns=, question_column=, ...)")
    if not judge_columns:
        raise ValueError("judge_columns must name at least one verdict column")
    if id_columns and graded.duplicated(list(id_columns)).any():
        raise ValueError(f"id_columns {list(id_columns)} do not identify rows uniquely")
    table = graded.reset_index(drop=True)
    verdicts = verdict_labels(table, judge_columns)
    patterns = verdict_patterns(table, judge_columns, scale)
    strata = sorted(patterns.unique())
    rows_of = {s: np.flatnonzero((patterns == s).to_numpy()) for s in strata}
    distinct = verdicts.map(pass_fail).nunique(axis=1).to_numpy()
    disagree = {s: bool(distinct[rows_of[s][0]] > 1) for s in strata}
    sizes = [len(rows_of[s]) for s in strata]
    counts = allocate_sample(sizes, [disagree[s] for s in strata], n, min_per_stratum,
                             disagreement_factor)

    rng = np.random.default_rng(seed)
    picked = np.concatenate([rng.choice(rows_of[s], size=k, replace=False)
                             for s, k in zip(strata, counts)])
    picked = picked[rng.permutation(len(picked))]
    width = max(3, len(str(n)))
    item_ids = [f"{id_prefix}{i:0{width}d}" for i in range(1, n + 1)]
    size_of = dict(zip(strata, sizes))
    count_of = dict(zip(strata, counts))

    chosen = table.iloc[picked]
    sheet = pd.DataFrame({
        "item_id": item_ids,
        "question": [cell_text(v) for v in chosen[question_column]],
        "reference": [cell_text(v) for v in chosen[reference_column]],
        "passage": [cell_text(v) for v in chosen[passage_column]],
        "answer": [cell_text(v) for v in chosen[answer_column]],
    })
    for column in GRADE_COLUMNS:
        sheet[column] = ""
    key = pd.DataFrame({"item_id": item_ids, "source_row": picked})
    for column in id_columns:
        key["source_item_id" if column == "item_id" else column] = chosen[column].to_numpy()
    for column in judge_columns:
        key[column] = verdicts[column].iloc[picked].to_numpy()
    stratum = patterns.iloc[picked].to_numpy()
    key["stratum"] = stratum
    key["disagreement"] = [disagree[s] for s in stratum]
    key["stratum_size"] = [size_of[s] for s in stratum]
    key["stratum_sample"] = [count_of[s] for s in stratum]
    key["inclusion_prob"] = key["stratum_sample"] / key["stratum_size"]
    key["weight"] = key["stratum_size"] / key["stratum_sample"]
    key["stratum_scale"] = scale
    return sheet, key
