"""A synthetic graded audit with a known truth, for tests, CI and trying post 06 out.

Handles: a simulated post-05 population (every item has a hidden true grade; each judge's
verdict is drawn from a confusion matrix given that grade: :data:`JUDGE_BEHAVIOUR`, one
lenient, one yes/no, one noisy with ``unparsed`` replies, one strict reference grader),
the blind stratified sample drawn from it by :func:`chunklab_core.audit.sample.draw_audit_sample`
exactly as for real data, and the sheet filled with the true grades by a script (grader
kind ``model:synthetic``), optionally a second sheet by a second, noisier synthetic grader.
The three files have the layout ``chunklab-audit-draw`` writes, so
:func:`chunklab_core.audit.loading.load_audit` and notebook 06 read them unchanged.

CLI: ``chunklab-synthetic-audit FOLDER [--items 400] [--sample 90] [--seed 6]
[--ungraded 0]`` writes ``post05_{population,key,sheet}.csv`` into FOLDER.

Not handled: anything real. The files are never written into ``data/audit`` or ``data/records``
(``paths.IRREPLACEABLE_DIRS``): they carry the real pilot's file names, so that is refused.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

from chunklab_core.core import bounds
from chunklab_core.answers.verdicts import CORRECT, GRADE_LABELS, PARTIAL, THREE_WAY, YES_NO
from chunklab_core.audit.sample import draw_audit_sample
from chunklab_core.audit.sheets import write_key, write_sheet
from chunklab_core.core.paths import AUDIT_PILOT
from chunklab_core.core import output_dirs, paths
from chunklab_core.core.atomic_files import replace_folder
from chunklab_core.core.output_dirs import require_output_folder
from chunklab_core.core.csv_cells import frame_csv
from chunklab_core.core.cli_errors import command_edge

SYNTHETIC_KIND = "model:synthetic"  # the grades are filled in by this script, not by a person
TRUE_GRADES = GRADE_LABELS
TRUE_SHARES = (0.55, 0.15, 0.30)
# judge column -> (its labels, P(label | true grade) for true grade correct, partial, wrong)
JUDGE_BEHAVIOUR = {
    "judge_qwen15_3way": (THREE_WAY,
                          ((0.92, 0.05, 0.02, 0.01), (0.50, 0.35, 0.15, 0.00),
                           (0.18, 0.07, 0.74, 0.01))),
    "judge_qwen15_yesno": (YES_NO,
                           ((0.93, 0.06, 0.01), (0.55, 0.45, 0.00), (0.12, 0.87, 0.01))),
    "judge_qwen05_3way": (THREE_WAY,
                          ((0.80, 0.08, 0.07, 0.05), (0.45, 0.25, 0.25, 0.05),
                           (0.30, 0.10, 0.55, 0.05))),
    "reference_grader": (THREE_WAY,
                         ((0.75, 0.15, 0.10, 0.00), (0.05, 0.50, 0.45, 0.00),
                          (0.01, 0.04, 0.95, 0.00))),
}


MARKER = ".chunklab-synthetic-audit"  # lists an earlier audit's files: only such a FOLDER is replaced

def simulate_population(n_items: int = 400, seed: int = 6) -> pd.DataFrame:
    """Post-05-shaped table of ``n_items`` answers with a hidden ``true_grade`` column."""
    if n_items < 2:
        raise ValueError("n_items must be at least 2")
    rng = np.random.default_rng(seed)
    truth = rng.choice(len(TRUE_GRADES), size=n_items, p=TRUE_SHARES)
    strategies = ("fixed_1000", "fixed_500", "parent_doc_250_1000")
    table = pd.DataFrame({
        "item_id": [f"q{i // 3:04d}|{strategies[i % 3]}" for i in range(n_items)],
        "corpus": "synthetic", "qid": [f"q{i // 3:04d}" for i in range(n_items)],
        "strategy": [strategies[i % 3] for i in range(n_items)],
        "question": [f"Synthetic question {i // 3}?" for i in range(n_items)],
        "reference": [f"gold answer {i // 3}" for i in range(n_items)],
        "answer": [f"answer {i} ({TRUE_GRADES[t]} by construction)" for i, t in enumerate(truth)],
    })
    for column, (labels, rows) in JUDGE_BEHAVIOUR.items():
        probabilities = np.asarray(rows)[truth]  # (n_items, labels): one row per item's truth
        picks = (rng.random(n_items)[:, None] > np.cumsum(probabilities, axis=1)).sum(axis=1)
        table[column] = np.asarray(labels, dtype=object)[np.minimum(picks, len(labels) - 1)]
    table["passage"] = [f"Synthetic passage holding gold answer {i // 3}." for i in range(n_items)]
    table["true_grade"] = np.asarray(TRUE_GRADES, dtype=object)[truth]
    return table


def write_synthetic_audit(folder, n_items: int = 400, n_sample: int = 90, seed: int = 6,
                          ungraded: int = 0, grader: str = "synthetic-grader",
                          min_per_stratum: int = 1, grader_kind: str = SYNTHETIC_KIND,
                          second_grader: str | None = None,
                          second_kind: str = SYNTHETIC_KIND,
                          second_flip: float = 0.15) -> tuple[dict[str, Path], pd.DataFrame]:
    """Write population, key and a sheet graded with the true grades; return paths and the population.

    The last ``ungraded`` sheet rows are left blank (not graded yet). The returned table
    keeps ``true_grade``; the population file does not. The grades are written by a script,
    so their kind is ``model:synthetic`` unless ``grader_kind`` says otherwise (tests use
    ``human`` to check the wording rule). ``second_grader`` also writes
    ``post05_sheet_2.csv``: the same items graded by a second (synthetic) grader who changes
    a seeded ``second_flip`` share of the true grades to another label.
    """
    folder = Path(folder)
    guarded = paths.irreplaceable_folder_of(folder)
    if guarded is not None:
        raise ValueError(f"{folder} is inside {guarded}, which holds real recorded calls or graded "
                         "sheets; write the synthetic audit into another folder")
    folder.mkdir(parents=True, exist_ok=True)
    population = simulate_population(n_items, seed)
    sheet, key = draw_audit_sample(population, n_sample, seed=seed, min_per_stratum=min_per_stratum)
    truth = population["true_grade"].to_numpy()[key["source_row"].to_numpy()]
    graded = np.arange(len(sheet)) < len(sheet) - ungraded
    sheet["grade"] = np.where(graded, truth, "")
    sheet["grader"] = np.where(graded, grader, "")
    sheet["grader_kind"] = np.where(graded, grader_kind, "")
    days = np.random.default_rng(seed).integers(1, 28, size=len(sheet))
    sheet["graded_at"] = [f"2026-08-{d:02d}T10:00:00+00:00" if g else "" for d, g in zip(days, graded)]
    sheet["note"] = np.where(graded & (truth == PARTIAL), "synthetic: half of the answer", "")
    files = {name: folder / f"{AUDIT_PILOT}_{name}.csv" for name in ("sheet", "key", "population")}
    files["population"].write_text(frame_csv(population.drop(columns="true_grade"), index=False),
                                   encoding="utf-8", newline="")
    write_key(key, files["key"])
    write_sheet(sheet, files["sheet"])
    if second_grader:
        rng = np.random.default_rng(seed + 1)
        flip = rng.random(len(sheet)) < second_flip
        shift = rng.integers(1, len(TRUE_GRADES), size=len(sheet))
        codes = np.array([TRUE_GRADES.index(t) for t in truth])
        other = np.asarray(TRUE_GRADES, dtype=object)[(codes + np.where(flip, shift, 0)) % 3]
        second = sheet.assign(grade=np.where(graded, other, ""),
                              grader=np.where(graded, second_grader, ""),
                              grader_kind=np.where(graded, second_kind, ""),
                              note=np.where(graded & flip, "synthetic: changed grade", ""))
        files["sheet_2"] = folder / f"{AUDIT_PILOT}_sheet_2.csv"
        write_sheet(second, files["sheet_2"])
    return files, population


@command_edge
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Write a synthetic, graded audit (known truth).")
    parser.add_argument("folder", type=Path)
    parser.add_argument("--items", type=bounds.int_in("questions"), default=400)
    parser.add_argument("--sample", type=bounds.int_in("sample"), default=90)
    parser.add_argument("--seed", type=bounds.int_in("seed"), default=6)
    parser.add_argument("--ungraded", type=bounds.int_in("count"), default=0)
    parser.add_argument("--second-grader", default=None,
                        help=f"also write {AUDIT_PILOT}_sheet_2.csv graded by this second synthetic grader")
    args = parser.parse_args(argv)
    require_output_folder(args.folder, MARKER, option="FOLDER")

    def fill(work: Path):
        written, population = write_synthetic_audit(work, args.items, args.sample, args.seed, args.ungraded,
                                                    second_grader=args.second_grader)
        output_dirs.write_marker(work, MARKER, "chunklab-synthetic-audit")
        return {name: args.folder / path.name for name, path in written.items()}, population

    files, population = replace_folder(args.folder, fill)  # all files or none; never a folder of yours
    share = (population["true_grade"] == CORRECT).mean()
    print(f"wrote {', '.join(str(p) for p in files.values())}; true share correct {share:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
