"""Post 06's input: the hand-graded audit sheet, its key and the population, read and cross-checked.

Handles: reading the three audit files (:func:`load_audit`; ``python -m
chunklab_core.audit_draw`` writes them) with every inconsistency reported at once, the
judges' label scales (three-way ``correct``/``partial``/``wrong``; yes/no ``YES``/``NO``;
both with ``unparsed``) and the binary "correct vs not" scale they are compared on
(:func:`binary_labels`, :func:`binary_scores`).

Files (CSV, UTF-8): the sheet (:data:`chunklab_core.sheets.SHEET_COLUMNS`, filled by a
person), the key (:func:`chunklab_core.sheets.write_key`: sheet id -> ``source_row`` and
``source_item_id`` in the population, verdicts, stratum, weight) and the population (one
row per answered item: at least :data:`REQUIRED_POPULATION` and the judge columns; extra
columns such as ``corpus``, ``strategy`` or ``passage`` are kept).

Ungraded sheet rows are listed in ``AuditData.ungraded`` and left out of every statistic;
the design weights of the graded items are recomputed from the graded counts
(``N_h / graded_h``), so a partly graded stratum still stands for its whole population.
Strata with no graded item at all are listed in ``AuditData.empty_strata`` (estimates that
need them raise). ``unparsed`` verdicts are labels like any other, never dropped.

A blank copy of a sheet (:func:`write_blank_copy`) lets a second person grade the same items.

Not handled: drawing the sample (:mod:`chunklab_core.audit_draw`), several graders' copies of
one sheet (load each and compare), statistics (:mod:`chunklab_core.audit_report`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from .audit_sample import verdict_patterns
from .paths import PROJ_ROOT
from .sheets import (DEFAULT_JUDGE_COLUMNS, GRADE_COLUMNS, import_grades, read_key, read_sheet,
                     write_sheet_rows)

THREE_WAY = ("correct", "partial", "wrong", "unparsed")
YES_NO = ("YES", "NO", "unparsed")
HUMAN = ("correct", "partial", "wrong")
BINARY = ("correct", "not correct", "unparsed")
YESNO_COLUMNS = ("judge_qwen15_yesno",)
REQUIRED_POPULATION = ("item_id", "question", "reference", "answer")


class AuditError(ValueError):
    """Audit files that do not fit together; ``problems`` lists every one."""

    def __init__(self, problems: Sequence[str]):
        self.problems = list(problems)
        super().__init__(f"{len(self.problems)} problem(s) with the audit files:\n"
                         + "\n".join(f"  - {p}" for p in self.problems))


def judge_scale(column: str, yesno_columns: Sequence[str] = YESNO_COLUMNS) -> tuple[str, ...]:
    """The labels a judge column may hold: :data:`YES_NO` or :data:`THREE_WAY`."""
    return YES_NO if column in yesno_columns else THREE_WAY


def binary_labels(labels, lenient: bool = False) -> np.ndarray:
    """Map verdicts to ``correct`` / ``not correct`` / ``unparsed``.

    ``correct`` and ``YES`` -> ``correct``; ``partial``, ``wrong`` and ``NO`` -> ``not correct``
    (with ``lenient=True`` a ``partial`` counts as ``correct``); ``unparsed`` stays itself.
    Any other label raises, so nothing is silently re-labelled.
    """
    passing = {"correct", "YES"} | ({"partial"} if lenient else set())
    failing = {"partial", "wrong", "NO"} - passing
    values = np.asarray(labels, dtype=object)
    unknown = sorted({str(v) for v in values} - passing - failing - {"unparsed"})
    if unknown:
        raise ValueError(f"unknown verdict label(s) {unknown}")
    return np.where(np.isin(values, list(passing)), "correct",
                    np.where(values == "unparsed", "unparsed", "not correct")).astype(object)


def binary_scores(labels, lenient: bool = False) -> np.ndarray:
    """1.0 where :func:`binary_labels` says ``correct``, else 0.0 (``unparsed`` is not a pass)."""
    return (binary_labels(labels, lenient) == "correct").astype(float)


@dataclass
class AuditData:
    """The validated audit: graded items with their texts, key and weights, and the population."""

    graded: pd.DataFrame  # one row per graded sheet item: grade, grader, key columns, texts, weight
    ungraded: pd.DataFrame  # sheet items without a grade: item_id, stratum
    population: pd.DataFrame  # every answered item, with its stratum
    key: pd.DataFrame  # the key as written when the sample was drawn
    judge_columns: tuple[str, ...]
    yesno_columns: tuple[str, ...]
    stratum_sizes: dict  # stratum -> N_h in the population
    empty_strata: list  # strata of the population without any graded item
    paths: dict  # sheet, key, population


def resolve_path(path: str | os.PathLike) -> Path:
    """An existing file: ``path`` as given (relative to the working folder) or under the repository root."""
    given = Path(path).expanduser()
    if given.is_file() or given.is_absolute():
        return given
    in_repo = PROJ_ROOT / given
    return in_repo if in_repo.is_file() else given


def _read_population(path: Path, judge_columns: Sequence[str]) -> pd.DataFrame:
    table = pd.read_csv(path, dtype=str, keep_default_na=False, encoding="utf-8-sig")
    absent = [c for c in (*REQUIRED_POPULATION, *judge_columns) if c not in table.columns]
    if absent:
        raise AuditError([f"population {path} lacks column(s) {absent}"])
    return table


def _problems(population: pd.DataFrame, key: pd.DataFrame, grades: pd.DataFrame,
              judge_columns: Sequence[str], yesno_columns: Sequence[str]) -> list[str]:
    """Every inconsistency between the sheet, the key and the population."""
    problems = []
    absent = [c for c in ("item_id", "source_row", "source_item_id", "stratum", "stratum_size",
                          *judge_columns) if c not in key.columns]
    if absent:
        return [f"key lacks column(s) {absent} (write it with sheets.write_key)"]
    for column in judge_columns:
        bad = sorted(set(population[column]) - set(judge_scale(column, yesno_columns)))
        if bad:
            problems.append(f"population column {column} has label(s) {bad}; allowed: "
                            f"{list(judge_scale(column, yesno_columns))}")
    duplicated = population["item_id"][population["item_id"].duplicated()].unique()
    if len(duplicated):
        problems.append(f"population item_id values repeat: {list(duplicated[:10])}")
    missing_from_sheet = sorted(set(key["item_id"]) - set(grades["item_id"]))
    if missing_from_sheet:
        problems.append(f"{len(missing_from_sheet)} key item(s) are not on the sheet: "
                        f"{missing_from_sheet[:10]}")
    unknown = sorted(set(key["source_item_id"]) - set(population["item_id"]))
    if unknown:
        problems.append(f"{len(unknown)} key source_item_id(s) are not in the population: "
                        f"{unknown[:10]}")
    rows = key["source_row"].to_numpy()
    out_of_range = (rows < 0) | (rows >= len(population))
    if out_of_range.any():
        problems.append(f"key source_row outside the population's {len(population)} rows: "
                        f"{sorted(rows[out_of_range])[:10]}")
    if problems:
        return problems
    at_rows = population.iloc[rows]
    moved = key["item_id"][at_rows["item_id"].to_numpy() != key["source_item_id"].to_numpy()]
    if len(moved):
        problems.append(f"{len(moved)} key row(s) point at a population row with another item_id "
                        f"(was the population re-ordered?): {list(moved[:10])}")
    for column in judge_columns:
        changed = key["item_id"][at_rows[column].to_numpy() != key[column].to_numpy()]
        if len(changed):
            problems.append(f"{column}: {len(changed)} key verdict(s) differ from the population "
                            f"(re-judged since the sample was drawn?): {list(changed[:10])}")
    sizes = population["stratum"].value_counts()
    in_key = key.drop_duplicates("stratum").set_index("stratum")["stratum_size"]
    for stratum, size in in_key.items():
        if sizes.get(stratum, 0) != size:
            problems.append(f"stratum {stratum!r}: key says {size} population items, the "
                            f"population has {sizes.get(stratum, 0)}")
    never = sorted(set(sizes.index) - set(in_key.index))
    if never:
        problems.append(f"population verdict pattern(s) {never} have no item on the key "
                        "(the sample was drawn from another table)")
    return problems


def load_audit(sheet_path, key_path, population_path, grader: str | None = None,
               judge_columns: Sequence[str] = DEFAULT_JUDGE_COLUMNS,
               yesno_columns: Sequence[str] = YESNO_COLUMNS) -> AuditData:
    """Read and cross-check the filled sheet, its key and the population (module docstring).

    ``grader`` names the grader of graded rows whose grader column is blank (as in
    :func:`chunklab_core.sheets.import_grades`). Raises :class:`chunklab_core.sheets.SheetError`
    for problems inside the sheet, :class:`AuditError` listing every mismatch between the three
    files, and :class:`AuditError` when fewer than 2 items are graded.
    """
    paths = {name: resolve_path(p) for name, p in
             (("sheet", sheet_path), ("key", key_path), ("population", population_path))}
    for name, path in paths.items():
        if not path.is_file():
            raise FileNotFoundError(f"audit {name} file {path} not found")
    judge_columns, yesno_columns = tuple(judge_columns), tuple(yesno_columns)
    grades = import_grades(paths["sheet"], key_path=paths["key"], grader=grader)
    key = read_key(paths["key"])
    population = _read_population(paths["population"], judge_columns)
    scale = key["stratum_scale"].iloc[0] if "stratum_scale" in key.columns and len(key) else "labels"
    population["stratum"] = verdict_patterns(population, judge_columns, scale)
    problems = _problems(population, key, grades, judge_columns, yesno_columns)
    if problems:
        raise AuditError(problems)
    graded = grades[grades["graded"]].reset_index(drop=True)
    if len(graded) < 2:
        raise AuditError([f"only {len(graded)} of {len(grades)} sheet items are graded; "
                          "agreement needs at least 2"])
    texts = population.iloc[graded["source_row"].to_numpy()]
    for column in ("question", "reference", "answer"):
        graded[column] = texts[column].to_numpy()
    stratum_sizes = population["stratum"].value_counts(sort=False).to_dict()
    graded_per_stratum = graded["stratum"].value_counts()
    graded["stratum_graded"] = graded["stratum"].map(graded_per_stratum).astype(int)
    graded["graded_weight"] = graded["stratum_size"] / graded["stratum_graded"]
    empty = [s for s in stratum_sizes if s not in graded_per_stratum.index]
    ungraded = grades.loc[~grades["graded"], ["item_id", "stratum"]].reset_index(drop=True)
    return AuditData(graded, ungraded, population, key, judge_columns, yesno_columns,
                     stratum_sizes, empty, paths)


def write_blank_copy(sheet_path, out_path) -> Path:
    """Copy a sheet with its grade columns emptied, so another person can grade the same items.

    Refuses to overwrite ``out_path``. CLI: ``python -m chunklab_core.audit_data SHEET OUT``.
    """
    out_path = Path(out_path)
    if out_path.exists():
        raise FileExistsError(f"{out_path} exists; choose another name")
    fieldnames, rows = read_sheet(resolve_path(sheet_path))
    write_sheet_rows(out_path, fieldnames, [{**row, **{c: "" for c in GRADE_COLUMNS if c in row}}
                                            for row in rows])
    return out_path


if __name__ == "__main__":
    import sys

    if len(sys.argv) != 3:
        raise SystemExit("usage: python -m chunklab_core.audit_data SHEET OUT (a blank copy to grade)")
    print(f"blank copy written: {write_blank_copy(sys.argv[1], sys.argv[2])}")
