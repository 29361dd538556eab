"""Hand-grading sheets for auditing LLM judges: blind stratified samples, sheet files, import.

Handles: drawing a seeded audit sample from post 05's graded-answer table, stratified by the
judges' verdict pattern; writing the blind sheet (what the person sees) and the key (what the
judges said, the stratum and the sampling weight) as two separate CSV files; reading a filled
sheet back, from the terminal grader (``python -m chunklab_core.grade``) or from any
spreadsheet, with every problem reported at once. Not handled: agreement statistics between
people and judges (the analysis layer reads :func:`import_grades` and the key weights), and
merging several graders' copies of one sheet (import each and concatenate).

Workflow::

    from chunklab_core.sheets import draw_audit_sample, write_sheet, write_key, import_grades
    sheet, key = draw_audit_sample(graded, n=60, seed=6)
    write_sheet(sheet, DATA_DIR / "audit_sheet.csv")      # give this one to the grader
    write_key(key, DATA_DIR / "audit_key.csv")            # keep this one away from the grader
    # $ python -m chunklab_core.grade data/audit_sheet.csv --grader ana
    grades = import_grades(DATA_DIR / "audit_sheet.csv", key_path=DATA_DIR / "audit_key.csv")

Sheet format (CSV, UTF-8, comma-separated, one row per item): ``item_id, question, reference,
passage, answer, grade, grader, graded_at, note``. ``grade`` is ``correct``, ``partial`` or
``wrong`` (any case, or the letters ``c``/``p``/``w``); blank means not graded yet.
``graded_at`` is an ISO-8601 timestamp. Row numbers in error messages count the header as
row 1, as a spreadsheet shows them. Sheet files are read with the standard ``csv`` module
(never pandas' type guessing, which would turn an answer "NA" into a missing value).

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
so the terminal grader, which imports the file helpers below, starts in a blink.
"""

from __future__ import annotations

import csv
import io
import math
import os
from collections import defaultdict
from typing import TYPE_CHECKING, Iterable, Sequence

from .atomic_files import atomic_write_text  # noqa: F401  (re-exported: the grader saves with it)

if TYPE_CHECKING:
    import pandas as pd

LABELS = ("correct", "partial", "wrong")
LETTERS = {"c": "correct", "p": "partial", "w": "wrong"}
SHEET_COLUMNS = ("item_id", "question", "reference", "passage", "answer",
                 "grade", "grader", "graded_at", "note")
GRADE_COLUMNS = ("grade", "grader", "graded_at", "note")
DEFAULT_JUDGE_COLUMNS = ("judge_qwen15_3way", "judge_qwen15_yesno", "judge_qwen05_3way",
                         "reference_grader")
DEFAULT_ID_COLUMNS = ("item_id", "qid", "strategy")
KEY_NUMERIC = {"source_row": int, "stratum_size": int, "stratum_sample": int,
               "inclusion_prob": float, "weight": float}


class SheetError(ValueError):
    """A sheet with problems; ``problems`` lists every one, each naming its row."""

    def __init__(self, path: str | os.PathLike, problems: Sequence[str]):
        self.problems = list(problems)
        lines = "\n".join(f"  - {p}" for p in self.problems)
        super().__init__(f"{path}: {len(self.problems)} problem(s):\n{lines}")


# ---------------------------------------------------------------- file helpers (stdlib only)

def normalize_label(value: str | None) -> str | None:
    """``'C'``/``'correct '``/``'Correct'`` -> ``'correct'``; blank -> ``None``; else ValueError."""
    text = (value or "").strip().lower()
    if not text:
        return None
    label = LETTERS.get(text, text)
    if label not in LABELS:
        raise ValueError(f"grade {value!r} is not one of correct/partial/wrong "
                         "(or c/p/w, or blank for not graded)")
    return label


def read_sheet(path: str | os.PathLike) -> tuple[list[str], list[dict[str, str]]]:
    """``(fieldnames, rows)`` of a sheet CSV, every cell a string (missing cells ``''``)."""
    csv.field_size_limit(max(csv.field_size_limit(), 1 << 30))  # long passages
    with open(path, encoding="utf-8-sig", newline="") as handle:
        reader = csv.DictReader(handle)
        fieldnames = list(reader.fieldnames or [])
        rows = [{name: (row.get(name) or "") for name in fieldnames} for row in reader]
    return fieldnames, rows


def write_sheet_rows(path: str | os.PathLike, fieldnames: Sequence[str],
                     rows: Iterable[dict[str, str]]) -> None:
    """Write rows (dicts of strings) as a sheet CSV, atomically (:func:`atomic_write_text`)."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(fieldnames), lineterminator="\n",
                            extrasaction="ignore")
    writer.writeheader()
    writer.writerows(rows)
    atomic_write_text(path, buffer.getvalue())


def sheet_problems(rows: Sequence[dict[str, str]], known_ids: set[str] | None = None,
                   grader: str | None = None, require_grader: bool = True) -> list[str]:
    """Every problem of a filled sheet, each naming its spreadsheet row (header = row 1).

    Empty, duplicate and (with ``known_ids``) unknown ids; labels other than
    correct/partial/wrong/c/p/w/blank; graded rows without a grader unless ``grader``
    supplies one or ``require_grader`` is false.
    """
    problems: list[str] = []
    rows_of: dict[str, list[int]] = defaultdict(list)
    for number, row in enumerate(rows, start=2):
        item_id = row.get("item_id", "").strip()
        if not item_id:
            problems.append(f"row {number}: item_id is empty")
        else:
            rows_of[item_id].append(number)
            if known_ids is not None and item_id not in known_ids:
                problems.append(f"row {number}: item_id {item_id!r} is not in the key")
        try:
            label = normalize_label(row.get("grade"))
        except ValueError as err:
            problems.append(f"row {number}: {err}")
            continue
        if label and require_grader and not row.get("grader", "").strip() and not grader:
            problems.append(f"row {number}: graded {label!r} but no grader "
                            "(fill the grader column or pass grader=...)")
    for item_id, numbers in rows_of.items():
        if len(numbers) > 1:
            listed = ", ".join(str(n) for n in numbers)
            problems.append(f"rows {listed}: item_id {item_id!r} appears {len(numbers)} times")
    return problems


# ---------------------------------------------------------------- sampling

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


PASS_LABELS = frozenset({"correct", "YES"})
FAIL_LABELS = frozenset({"partial", "wrong", "NO"})
SCALES = ("labels", "pass/fail")


def pass_fail(label: str) -> str:
    """``pass`` for correct/YES, ``fail`` for partial/wrong/NO; anything else (``unparsed``,
    ``missing``) unchanged, so it stays a pattern of its own."""
    return "pass" if label in PASS_LABELS else "fail" if label in FAIL_LABELS else label


def verdict_patterns(table: pd.DataFrame, judge_columns: Sequence[str], scale: str = "labels") -> pd.Series:
    """Each row's stratum: its judge labels (missing -> ``missing``; on ``scale``) joined by ``|``."""
    if scale not in SCALES:
        raise ValueError(f"scale must be one of {SCALES}, not {scale!r}")
    verdicts = table[list(judge_columns)].astype(object).where(table[list(judge_columns)].notna(), "missing")
    verdicts = verdicts.astype(str)
    if scale == "pass/fail":
        verdicts = verdicts.map(pass_fail)
    return verdicts.agg("|".join, axis=1)


def _as_text(value: object) -> str:
    """Cell text for the sheet: lists of gold answers joined with ' | ', missing as ''."""
    if isinstance(value, (list, tuple)) or type(value).__name__ == "ndarray":
        return " | ".join(_as_text(v) for v in value)
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return str(value)


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
    every label to pass/fail (:func:`pass_fail`), giving far fewer strata when four graders
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
    verdicts = table[list(judge_columns)].astype(object).where(table[list(judge_columns)]
                                                               .notna(), "missing")
    patterns = verdict_patterns(table, judge_columns, scale)
    strata = sorted(patterns.unique())
    rows_of = {s: np.flatnonzero((patterns == s).to_numpy()) for s in strata}
    distinct = verdicts.astype(str).map(pass_fail).nunique(axis=1).to_numpy()
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
        "question": [_as_text(v) for v in chosen[question_column]],
        "reference": [_as_text(v) for v in chosen[reference_column]],
        "passage": [_as_text(v) for v in chosen[passage_column]],
        "answer": [_as_text(v) for v in chosen[answer_column]],
    })
    for column in GRADE_COLUMNS:
        sheet[column] = ""
    key = pd.DataFrame({"item_id": item_ids, "source_row": picked})
    for column in id_columns:
        key["source_item_id" if column == "item_id" else column] = chosen[column].to_numpy()
    for column in judge_columns:
        key[column] = verdicts[column].iloc[picked].astype(str).to_numpy()
    stratum = patterns.iloc[picked].to_numpy()
    key["stratum"] = stratum
    key["disagreement"] = [disagree[s] for s in stratum]
    key["stratum_size"] = [size_of[s] for s in stratum]
    key["stratum_sample"] = [count_of[s] for s in stratum]
    key["inclusion_prob"] = key["stratum_sample"] / key["stratum_size"]
    key["weight"] = key["stratum_size"] / key["stratum_sample"]
    key["stratum_scale"] = scale
    return sheet, key


# ---------------------------------------------------------------- writing and import

def write_sheet(sheet_df: pd.DataFrame, path: str | os.PathLike) -> None:
    """Write the blind sheet: exactly :data:`SHEET_COLUMNS`, nothing else (atomic)."""
    missing = [c for c in SHEET_COLUMNS[:5] if c not in sheet_df.columns]
    if missing:
        raise ValueError(f"sheet lacks column(s) {missing}")
    rows = [{c: _as_text(row.get(c, "")) for c in SHEET_COLUMNS}
            for row in sheet_df.to_dict("records")]
    write_sheet_rows(path, SHEET_COLUMNS, rows)


def write_key(key_df: pd.DataFrame, path: str | os.PathLike) -> None:
    """Write the key (sheet id -> source ids, verdicts, stratum, weight) as CSV, atomically."""
    if "item_id" not in key_df.columns or key_df["item_id"].duplicated().any():
        raise ValueError("key needs an item_id column with unique values")
    atomic_write_text(path, key_df.to_csv(index=False, lineterminator="\n"))


def read_key(path: str | os.PathLike) -> pd.DataFrame:
    """Read a key written by :func:`write_key`; ids and verdicts stay strings."""
    import pandas as pd

    key = pd.read_csv(path, dtype=str, keep_default_na=False, encoding="utf-8-sig")
    for column, kind in KEY_NUMERIC.items():
        if column in key.columns:
            key[column] = key[column].astype(kind)
    if "disagreement" in key.columns:
        key["disagreement"] = key["disagreement"].str.lower().eq("true")
    return key


def import_grades(path: str | os.PathLike, key_path: str | os.PathLike | None = None,
                  grader: str | None = None) -> pd.DataFrame:
    """Validated grades of a filled sheet: one row per sheet row, joined to the key if given.

    Columns: ``item_id``, ``grade`` (``correct``/``partial``/``wrong``, or ``None`` when not
    graded), ``graded`` (bool), ``grader`` (blank graders of graded rows filled with
    ``grader=``), ``graded_at``, ``note``, then the key's columns. Raises :class:`SheetError`
    listing every problem: missing columns, empty/unknown/duplicate ids, bad labels, graded
    rows without a grader.
    """
    import pandas as pd

    fieldnames, rows = read_sheet(path)
    absent = [c for c in ("item_id", "grade") if c not in fieldnames]
    if absent:
        raise SheetError(path, [f"row 1: the header lacks column(s) {absent}"])
    key = read_key(key_path) if key_path is not None else None
    known = set(key["item_id"]) if key is not None else None
    problems = sheet_problems(rows, known_ids=known, grader=grader)
    if problems:
        raise SheetError(path, problems)
    labels = [normalize_label(row["grade"]) for row in rows]
    graders = [row.get("grader", "").strip() or (grader if label else "") or ""
               for row, label in zip(rows, labels)]
    tidy = pd.DataFrame({
        "item_id": [row["item_id"].strip() for row in rows],
        "grade": pd.Series(labels, dtype=object),
        "graded": [label is not None for label in labels],
        "grader": graders,
        "graded_at": [row.get("graded_at", "").strip() for row in rows],
        "note": [row.get("note", "") for row in rows],
    })
    if key is not None:
        tidy = tidy.merge(key, on="item_id", how="left", validate="one_to_one")
    return tidy

