"""Post 06's input: the graded audit sheet (graded by a person or a model), its key and the population, read and cross-checked.

Handles: reading the three audit files (:func:`load_audit`; ``python -m
chunklab_core.audit.draw`` writes them) with every inconsistency reported at once, the
label scale of each judge column (``yesno_columns`` name the yes/no judges; the labels,
the binary "correct vs not" scale and the judges' names are :mod:`chunklab_core.answers.verdicts`).

Files (CSV, UTF-8): the sheet (:data:`chunklab_core.audit.sheets.SHEET_COLUMNS`, filled by a
grader: a person or a model, named with its kind in every graded row), the key (:func:`chunklab_core.audit.sheets.write_key`: sheet id -> ``source_row`` and
``source_item_id`` in the population, verdicts, stratum, weight) and the population (one
row per answered item: at least :data:`REQUIRED_POPULATION` and the judge columns; extra
columns such as ``corpus``, ``strategy`` or ``passage`` are kept).

Ungraded sheet rows are listed in ``AuditData.ungraded`` and left out of every statistic;
the design weights of the graded items are recomputed from the graded counts
(``N_h / graded_h``), so a partly graded stratum still stands for its whole population.
Strata with no graded item at all are listed in ``AuditData.empty_strata`` (estimates that
need them raise). ``unparsed`` verdicts are labels like any other, never dropped.

A blank copy of a sheet (:func:`write_blank_copy`) lets a second grader (a person, or another model) grade the same items.

Several graders: :func:`load_audit` takes a list of sheets of the same sample (each grader's
copy); ``AuditData.grades`` keeps every grade with its grader and kind, ``AuditData.graded``
one row per item with the adjudicated label (:mod:`chunklab_core.audit.graders`), and
:func:`for_grader` gives the audit as one grader graded it.

Not handled: drawing the sample (:mod:`chunklab_core.audit.draw`), statistics
(:mod:`chunklab_core.reports.post06.tables`, :mod:`chunklab_core.audit.paired`).
"""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Sequence

import pandas as pd

from chunklab_core.answers.verdicts import scale_of
from chunklab_core.audit.topup import wave_strata
from chunklab_core.core.paths import PROJ_ROOT
from chunklab_core.core.csv_cells import restored_frame, torn_table_problem
from chunklab_core.audit.sheets import (DEFAULT_JUDGE_COLUMNS, GRADE_COLUMNS, import_grades, read_key, read_sheet, write_sheet_rows)
from chunklab_core.core.cli_errors import command_edge

YESNO_COLUMNS = ("judge_qwen15_yesno",)
REQUIRED_POPULATION = ("item_id", "question", "reference", "answer")


def audit_error_types() -> tuple[type[BaseException], ...]:
    """The audit's errors a command prints as a message alone (they name the file and the fix)."""
    from chunklab_core.audit.sheet_file import SheetUnreadable
    from chunklab_core.audit.sheets import SheetError

    return (AuditError, SheetError, SheetUnreadable)


class AuditError(ValueError):
    """Audit files that do not fit together; ``problems`` lists every one."""

    def __init__(self, problems: Sequence[str]):
        self.problems = list(problems)
        super().__init__(f"{len(self.problems)} problem(s) with the audit files:\n"
                         + "\n".join(f"  - {p}" for p in self.problems))


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
    paths: dict  # sheet (the first), key, population
    grades: pd.DataFrame = field(default=None)  # every grade: item_id, grader, grader_kind, grade, ...
    sheets: list = field(default_factory=list)  # every sheet read


def resolve_path(path: str | os.PathLike) -> Path:
    """An existing file: ``path`` as given (relative to the working folder) or under the repository root."""
    given = Path(path).expanduser()
    if given.is_file() or given.is_absolute():
        return given
    in_repo = PROJ_ROOT / given
    return in_repo if in_repo.is_file() else given


def _read_population(path: Path, judge_columns: Sequence[str]) -> pd.DataFrame:
    table = restored_frame(pd.read_csv(path, dtype=str, keep_default_na=False, encoding="utf-8-sig"))
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
        bad = sorted(set(population[column]) - set(scale_of(column, yesno_columns)))
        if bad:
            problems.append(f"population column {column} has label(s) {bad}; allowed: "
                            f"{list(scale_of(column, yesno_columns))}")
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


def _with_weights(graded: pd.DataFrame, stratum_sizes: dict) -> tuple[pd.DataFrame, list]:
    """``graded`` with ``stratum_graded`` and ``graded_weight`` (N_h / graded_h); the empty strata."""
    graded = graded.reset_index(drop=True).copy()
    per_stratum = graded["stratum"].value_counts()
    graded["stratum_graded"] = graded["stratum"].map(per_stratum).astype(int)
    graded["graded_weight"] = graded["stratum_size"] / graded["stratum_graded"]
    return graded, [s for s in stratum_sizes if s not in per_stratum.index]


def load_audit(sheet_path, key_path, population_path, grader: str | None = None,
               judge_columns: Sequence[str] = DEFAULT_JUDGE_COLUMNS,
               yesno_columns: Sequence[str] = YESNO_COLUMNS,
               grader_kind: str | None = None) -> AuditData:
    """Read and cross-check the filled sheet(s), their key and the population (module docstring).

    ``sheet_path`` is one sheet or a list of sheets of the same sample (several graders'
    copies, e.g. from :func:`write_blank_copy`). Every graded row must name its grader and
    its kind (``human`` or ``model:<name>``): ``grader`` and ``grader_kind`` fill blank cells
    (``grader`` only with a single sheet). One grader grading one item twice is an error.
    ``graded`` holds one row per item graded by anyone, with the adjudicated ``grade``
    (:func:`chunklab_core.audit.graders.adjudicate`); ``grades`` holds every grade (long).
    Raises :class:`chunklab_core.audit.sheets.SheetError` for problems inside a sheet,
    :class:`AuditError` listing every mismatch between the files, and :class:`AuditError`
    when fewer than 2 items are graded.
    """
    from chunklab_core.audit.graders import adjudicate

    sheets = [sheet_path] if isinstance(sheet_path, (str, os.PathLike)) else list(sheet_path)
    if not sheets:
        raise ValueError("name at least one graded sheet")
    paths = {"key": resolve_path(key_path), "population": resolve_path(population_path)}
    sheet_paths = [resolve_path(p) for p in sheets]
    for name, path in [*paths.items(), *(("sheet", p) for p in sheet_paths)]:
        if not path.is_file():
            raise FileNotFoundError(f"audit {name} file {path} not found")
    torn = [torn_table_problem(paths[name]) for name in ("key", "population")]  # never half a file
    if any(torn):
        raise AuditError([f"{problem}; a torn or edited file: restore it (git checkout for the series' audit) "
                          "or draw the sample again" for problem in torn if problem])
    judge_columns, yesno_columns = tuple(judge_columns), tuple(yesno_columns)
    frames = []
    for path in sheet_paths:
        frame = import_grades(path, key_path=paths["key"],
                              grader=grader if len(sheet_paths) == 1 else None,
                              grader_kind=grader_kind, require_kind=True)
        frames.append(frame.assign(sheet=str(path)))
    key = read_key(paths["key"])
    population = _read_population(paths["population"], judge_columns)
    scale = key["stratum_scale"].iloc[0] if "stratum_scale" in key.columns and len(key) else "labels"
    population["stratum"] = wave_strata(population, judge_columns, scale)
    problems = []
    for path, frame in zip(sheet_paths, frames):
        found = _problems(population, key, frame, judge_columns, yesno_columns)
        problems += [f"{path.name}: {p}" for p in found]  # the file named, one sheet or several
    long = pd.concat([f[f["graded"]] for f in frames], ignore_index=True)
    if long["item_id"].nunique() < 2 and not problems:
        raise AuditError([f"only {long['item_id'].nunique()} of {len(key)} sheet items are "
                          "graded; agreement needs at least 2"])
    twice = long[long.duplicated(["item_id", "grader"], keep=False)]
    if len(twice):
        problems.append(f"{twice['item_id'].nunique()} item(s) graded twice by the same grader "
                        f"across the sheets: {sorted(set(zip(twice['item_id'], twice['grader'])))[:10]}")
    kinds = long.groupby("grader")["grader_kind"].nunique()
    if (kinds > 1).any():
        problems.append(f"grader(s) {list(kinds[kinds > 1].index)} have more than one grader_kind")
    if problems:
        raise AuditError(problems)
    grades = long[["item_id", "grader", "grader_kind", "grade", "graded_at", "note", "sheet"]]
    wide = grades.pivot(index="item_id", columns="grader", values="grade")
    adjudicated = adjudicate(wide)
    several = wide.shape[1] > 1
    notes = grades.groupby("item_id").apply(
        lambda g: " / ".join(f"{who}: {n}" if several else str(n)
                             for who, n in zip(g["grader"], g["note"]) if str(n).strip()),
        include_groups=False)
    graded = key[key["item_id"].isin(adjudicated.index)].copy()
    graded["grade"] = graded["item_id"].map(adjudicated)
    graded["graders"] = graded["item_id"].map(wide.notna().sum(axis=1)).astype(int)
    graded["note"] = graded["item_id"].map(notes).fillna("")
    if len(graded) < 2:
        raise AuditError([f"only {len(graded)} of {len(key)} sheet items are graded; "
                          "agreement needs at least 2"])
    texts = population.iloc[graded["source_row"].to_numpy()]
    for column in ("question", "reference", "answer"):
        graded[column] = texts[column].to_numpy()
    stratum_sizes = population["stratum"].value_counts(sort=False).to_dict()
    graded, empty = _with_weights(graded, stratum_sizes)
    ungraded = key.loc[~key["item_id"].isin(adjudicated.index), ["item_id", "stratum"]] \
        .reset_index(drop=True)
    data = AuditData(graded, ungraded, population, key, judge_columns, yesno_columns,
                     stratum_sizes, empty, {**paths, "sheet": sheet_paths[0]})
    data.grades = grades.merge(graded[["item_id", "qid"]], on="item_id", how="left") \
        if "qid" in graded.columns else grades
    data.sheets = sheet_paths
    return data


def grader_table(data: AuditData) -> pd.DataFrame:
    """One row per grader: id, kind, items graded, first and last ``graded_at`` (UTC dates)."""
    table = data.grades.assign(when=pd.to_datetime(data.grades["graded_at"], utc=True,
                                                   errors="coerce", format="ISO8601"))
    rows = []
    for (name, kind), group in table.groupby(["grader", "grader_kind"], sort=True):
        when = group["when"].dropna()
        rows.append({"grader": name, "grader_kind": kind, "items graded": len(group),
                     "first": when.min().strftime("%Y-%m-%d %H:%M") if len(when) else "",
                     "last": when.max().strftime("%Y-%m-%d %H:%M") if len(when) else "",
                     "without timestamp": len(group) - len(when)})
    return pd.DataFrame(rows)


def for_grader(data: AuditData, grader: str) -> AuditData:
    """The audit as one grader graded it: their items and labels, design weights recomputed."""
    mine = data.grades[data.grades["grader"] == grader].set_index("item_id")
    if mine.empty:
        raise ValueError(f"grader {grader!r} graded no item; graders: "
                         f"{sorted(set(data.grades['grader']))}")
    graded = data.graded[data.graded["item_id"].isin(mine.index)].copy()
    graded["grade"] = graded["item_id"].map(mine["grade"])
    graded["note"] = graded["item_id"].map(mine["note"]).fillna("")
    graded, empty = _with_weights(graded, data.stratum_sizes)
    result = replace(data, graded=graded, empty_strata=empty)
    result.grades = data.grades[data.grades["grader"] == grader]
    result.sheets = data.sheets
    return result


def write_blank_copy(sheet_path, out_path) -> Path:
    """Copy a sheet with its grade columns emptied, so another person can grade the same items.

    Refuses to overwrite ``out_path``. CLI: ``chunklab-blank-sheet SHEET OUT`` (:func:`main`).
    """
    out_path = Path(out_path)
    if out_path.exists():
        raise FileExistsError(f"{out_path} exists; choose another name")
    fieldnames, rows = read_sheet(resolve_path(sheet_path))
    write_sheet_rows(out_path, fieldnames, [{**row, **{c: "" for c in GRADE_COLUMNS if c in row}}
                                            for row in rows])
    return out_path


@command_edge
def main(argv: list[str] | None = None) -> int:
    """``chunklab-blank-sheet SHEET OUT``: a blank copy of a grading sheet for another grader."""
    parser = argparse.ArgumentParser(
        description="Copy a grading sheet with its grades emptied, so another grader (a person "
                    "or a model) grades the same items blind. Refuses to overwrite OUT.")
    parser.add_argument("sheet", help="the sheet to copy (a path; a relative one is also looked up from the repository root)")
    parser.add_argument("out", type=Path, help="the blank copy to write (must not exist)")
    args = parser.parse_args(argv)
    try:
        written = write_blank_copy(args.sheet, args.out)
    except (FileExistsError, FileNotFoundError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    print(f"blank copy written: {written}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
