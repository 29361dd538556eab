"""Grading sheet files for auditing LLM judges: writing, reading back, import.

Handles: writing the blind sheet (what the person sees) and the key (what the judges said,
the stratum and the sampling weight) as two separate CSV files; reading a filled sheet back,
from the terminal grader (``chunklab-grade``) or from any spreadsheet, with
every problem reported at once. Not handled: drawing the sample
(:mod:`chunklab_core.audit.sample`), agreement statistics between people and judges (the
analysis layer reads :func:`import_grades` and the key weights), and merging several
graders' copies of one sheet (import each and concatenate).

Workflow::

    from chunklab_core.audit.sample import draw_audit_sample
    from chunklab_core.audit.sheets import write_sheet, write_key, import_grades
    sheet, key = draw_audit_sample(graded, n=60, seed=6)
    write_sheet(sheet, AUDIT_DIR / "mine_sheet.csv")      # give this one to the grader
    write_key(key, AUDIT_DIR / "mine_key.csv")            # keep this one away from the grader
    # $ chunklab-grade data/audit/mine_sheet.csv --grader ana
    grades = import_grades(AUDIT_DIR / "mine_sheet.csv", key_path=AUDIT_DIR / "mine_key.csv")

Sheet format (CSV, UTF-8, comma-separated, one row per item): ``item_id, question, reference,
passage, answer, grade, grader, graded_at, note``. ``grade`` is ``correct``, ``partial`` or
``wrong`` (any case, or the letters ``c``/``p``/``w``); blank means not graded yet.
``graded_at`` is an ISO-8601 timestamp. Row numbers in error messages count the header as
row 1, as a spreadsheet shows them. Sheet files are read with the standard ``csv`` module
(never pandas' type guessing, which would turn an answer "NA" into a missing value).

pandas is imported inside the functions that need it, so the terminal grader, which imports
the file helpers below, starts in a blink.
"""

from __future__ import annotations

import csv
import io
import math
import os
from collections import defaultdict
from typing import TYPE_CHECKING, Iterable, Sequence

from chunklab_core.answers.verdicts import GRADE_LABELS
from chunklab_core.audit.sheet_file import SheetUnreadable, decode_sheet, duplicate_columns_problem
from chunklab_core.core.atomic_files import atomic_write_text  # noqa: F401  (re-exported: the grader saves with it)
from chunklab_core.core.csv_cells import csv_rows, frame_csv, restored_cell, restored_frame

if TYPE_CHECKING:
    import pandas as pd

LABELS = GRADE_LABELS  # the grades a grader gives (:mod:`chunklab_core.answers.verdicts`)
LETTERS = {label[0]: label for label in LABELS}  # c, p, w
SHEET_COLUMNS = ("item_id", "question", "reference", "passage", "answer",
                 "grade", "grader", "grader_kind", "graded_at", "note")
GRADE_COLUMNS = ("grade", "grader", "grader_kind", "graded_at", "note")
HUMAN_KIND = "human"
MODEL_KIND_PREFIX = "model:"
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


def grader_kind_problem(kind: str | None) -> str | None:
    """Why ``kind`` is not a grader kind (``human`` or ``model:<name>``), or None when it is one.

    ``model:<name>`` covers any model or automated reader (an LLM, a script); ``<name>`` is one
    or more letters, digits, ``.``, ``_``, ``-`` or ``/``.
    """
    text = (kind or "").strip()
    if text == HUMAN_KIND:
        return None
    name = text[len(MODEL_KIND_PREFIX):] if text.startswith(MODEL_KIND_PREFIX) else None
    if name and all(c.isalnum() or c in "._-/" for c in name):
        return None
    return (f"grader_kind {kind!r} is not 'human' or 'model:<name>' (a model or script, "
            "e.g. model:claude)")


def is_human(kind: str) -> bool:
    """True only for the grader kind ``human``."""
    return (kind or "").strip() == HUMAN_KIND


def read_sheet(path: str | os.PathLike) -> tuple[list[str], list[dict[str, str]]]:
    """``(fieldnames, rows)`` of a sheet CSV, every cell a string (missing cells ``''``)."""
    csv.field_size_limit(max(csv.field_size_limit(), 1 << 30))  # long passages
    try:
        data = open(path, "rb").read()
    except FileNotFoundError:
        raise SheetUnreadable(f"{path}: no such file") from None
    reader = csv.DictReader(io.StringIO(decode_sheet(path, data), newline=""))
    fieldnames = list(reader.fieldnames or [])
    problem = duplicate_columns_problem(path, fieldnames)
    if problem:
        raise SheetUnreadable(problem)
    rows = [{name: restored_cell(row.get(name) or "") for name in fieldnames} for row in reader]
    return fieldnames, rows


def write_sheet_rows(path: str | os.PathLike, fieldnames: Sequence[str],
                     rows: Iterable[dict[str, str]]) -> None:
    """Write rows (dicts of strings) as a sheet CSV, atomically (:func:`atomic_write_text`)."""
    names = list(fieldnames)
    atomic_write_text(path, csv_rows([names, *([row.get(name, "") for name in names] for row in rows)]))


def sheet_problems(rows: Sequence[dict[str, str]], known_ids: set[str] | None = None,
                   grader: str | None = None, require_grader: bool = True,
                   grader_kind: str | None = None, require_kind: bool = False) -> list[str]:
    """Every problem of a filled sheet, each naming its spreadsheet row (header = row 1).

    Empty, duplicate and (with ``known_ids``) unknown ids; labels other than
    correct/partial/wrong/c/p/w/blank; graded rows without a grader unless ``grader``
    supplies one or ``require_grader`` is false; a ``grader_kind`` cell that is not ``human``
    or ``model:<name>``; with ``require_kind``, graded rows without a kind unless
    ``grader_kind`` supplies one.
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
        kind = row.get("grader_kind", "").strip()
        if kind and grader_kind_problem(kind):
            problems.append(f"row {number}: {grader_kind_problem(kind)}")
        elif label and require_kind and not kind and not grader_kind:
            problems.append(f"row {number}: graded {label!r} but no grader_kind "
                            "(fill it with 'human' or 'model:<name>', or pass grader_kind=...)")
    for item_id, numbers in rows_of.items():
        if len(numbers) > 1:
            listed = ", ".join(str(n) for n in numbers)
            problems.append(f"rows {listed}: item_id {item_id!r} appears {len(numbers)} times")
    return problems


def cell_text(value: object) -> str:
    """Cell text for the sheet: lists of gold answers joined with ' | ', missing as ''."""
    if isinstance(value, (list, tuple)) or type(value).__name__ == "ndarray":
        return " | ".join(cell_text(v) for v in value)
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return str(value)


# ---------------------------------------------------------------- writing and import

def write_sheet(sheet_df: pd.DataFrame, path: str | os.PathLike) -> None:
    """Write the blind sheet: exactly :data:`SHEET_COLUMNS`, nothing else (atomic)."""
    missing = [c for c in SHEET_COLUMNS[:5] if c not in sheet_df.columns]
    if missing:
        raise ValueError(f"sheet lacks column(s) {missing}")
    rows = [{c: cell_text(row.get(c, "")) for c in SHEET_COLUMNS}
            for row in sheet_df.to_dict("records")]
    write_sheet_rows(path, SHEET_COLUMNS, rows)


def write_key(key_df: pd.DataFrame, path: str | os.PathLike) -> None:
    """Write the key (sheet id -> source ids, verdicts, stratum, weight) as CSV, atomically."""
    if "item_id" not in key_df.columns or key_df["item_id"].duplicated().any():
        raise ValueError("key needs an item_id column with unique values")
    atomic_write_text(path, frame_csv(key_df, index=False))


def read_key(path: str | os.PathLike) -> pd.DataFrame:
    """Read a key written by :func:`write_key`; ids and verdicts stay strings."""
    import pandas as pd

    key = restored_frame(pd.read_csv(path, dtype=str, keep_default_na=False, encoding="utf-8-sig"))
    for column, kind in KEY_NUMERIC.items():
        if column in key.columns:
            key[column] = key[column].astype(kind)
    if "disagreement" in key.columns:
        key["disagreement"] = key["disagreement"].str.lower().eq("true")
    return key


def import_grades(path: str | os.PathLike, key_path: str | os.PathLike | None = None,
                  grader: str | None = None, grader_kind: str | None = None,
                  require_kind: bool = False) -> pd.DataFrame:
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
    if grader_kind is not None and grader_kind_problem(grader_kind):
        raise SheetError(path, [f"grader_kind=: {grader_kind_problem(grader_kind)}"])
    problems = sheet_problems(rows, known_ids=known, grader=grader, grader_kind=grader_kind,
                              require_kind=require_kind)
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
        "grader_kind": [row.get("grader_kind", "").strip() or (grader_kind if label else "") or ""
                        for row, label in zip(rows, labels)],
        "graded_at": [row.get("graded_at", "").strip() for row in rows],
        "note": [row.get("note", "") for row in rows],
    })
    if key is not None:
        tidy = tidy.merge(key, on="item_id", how="left", validate="one_to_one")
    return tidy

