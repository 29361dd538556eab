"""``chunklab-own check``: did retrieval on your documents get worse than a committed baseline?

    chunklab-own check RUN --baseline FILE [--measure recall@5] [--cell NAME] [--resamples N] [--seed S]

``RUN`` is the output folder of ``chunklab-own run`` (its ``per_question.csv``) or a per-question
table; ``--baseline`` is a committed ``recommendation.json`` (its folder's ``per_question.csv``
is read beside it: commit both) or a per-question table (CSV with ``strategy``, ``retriever``,
``model``, ``qid`` and the measure's column).

The compared setting is one cell (strategy / retriever / embedding model): by default the cell
the baseline's ``recommendation.json`` says to use in its overall scope (``use``: the decision
engine's pick; the ``leader`` of a record written before it), the setting you adopted,
in both tables; ``--cell strategy/retriever[/model]`` names another, ``--run-cell leader``
compares against the run's own leader instead (a new splitter, under a new name). The two
tables are paired by question id on the questions both scored; questions only one of them has
are counted and named, never silently dropped from the message.

The verdict is the series' one rule (:mod:`chunklab_core.stats.claims`), on the paired 95%
percentile interval of ``mean(run) - mean(baseline)`` over paired resamples of the questions
(:func:`chunklab_core.stats.bootstrap.paired_difference_ci`): **worse** when the interval lies
below 0 (exit status 1), **better** when it lies above 0, else the two **cannot be told apart**
(both exit 0). So CI fails on evidence that retrieval got worse, not on noise. Exit status 2:
the inputs cannot be compared (missing file, cell or column, no common question), with the
file named.

Why not the decision engine: ``check`` chooses nothing. It asks a different, one-cell question --
did this setting get worse than the baseline you committed? -- a regression gate whose only
actionable outcome is "worse" (interval below 0); which setting to use is decided by ``run``
through the engine, and this reads that decision. A margin would let a real loss smaller than δ
pass the gate unnoticed, so none is applied.

Not handled: several measures at once (run it once per measure), equivalence margins, the
multiplicity of checking many cells (one cell is checked).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from chunklab_core.core import bounds
from chunklab_core.core.csv_cells import restored_frame
from chunklab_core.evaluation.measures import parse
from chunklab_core.stats.bootstrap import paired_difference_ci
from chunklab_core.stats.claims import NOT_TOLD_APART, interval_side
from chunklab_core.retrieval.registry import NO_MODEL, model_column, needs_model, uses_no_model

WORSE, BETTER = "worse", "better"
EXIT = {WORSE: 1, BETTER: 0, NOT_TOLD_APART: 0}
CELL_COLUMNS = ("strategy", "retriever", "model")


class CheckError(ValueError):
    """Inputs that cannot be compared; the message names the file and what is missing."""


@dataclass(frozen=True)
class CheckResult:
    """The paired comparison of one cell: run minus baseline on the common questions."""

    measure: str
    run_cell: tuple[str, str, str]
    baseline_cell: tuple[str, str, str]
    n_questions: int
    run_mean: float
    baseline_mean: float
    difference: float
    low: float
    high: float
    verdict: str
    only_in_run: tuple[str, ...]
    only_in_baseline: tuple[str, ...]
    resamples: int
    seed: int

    @property
    def exit_status(self) -> int:
        return EXIT[self.verdict]

    def text(self) -> str:
        """The verdict and its interval, worded by the series' one rule."""
        name = cell_name(self.run_cell)
        base = cell_name(self.baseline_cell)
        same = name if self.run_cell == self.baseline_cell else f"{name} (run) against {base} (baseline)"
        interval = f"{self.difference:+.3f} [{self.low:+.3f}, {self.high:+.3f}]"
        reading = {WORSE: "WORSE: the paired 95% interval of run − baseline lies below 0, so retrieval got worse",
                   BETTER: "better: the paired 95% interval of run − baseline lies above 0",
                   NOT_TOLD_APART: "cannot be told apart: the paired 95% interval of run − baseline contains 0 "
                                   "(no evidence that retrieval got worse or better)"}[self.verdict]
        lines = [f"{self.measure} of {same} on {self.n_questions} common questions: run {self.run_mean:.3f}, "
                 f"baseline {self.baseline_mean:.3f}, difference {interval} "
                 f"({self.resamples:,} paired resamples, seed {self.seed}).", reading + "."]
        for label, ids in (("only in the run", self.only_in_run), ("only in the baseline", self.only_in_baseline)):
            if ids:
                shown = ", ".join(ids[:10]) + (f" and {len(ids) - 10} more" if len(ids) > 10 else "")
                lines.append(f"{len(ids)} question(s) {label}, not compared: {shown}.")
        return "\n".join(lines)


def cell_name(cell: tuple[str, str, str]) -> str:
    """``strategy / retriever`` (bm25) or ``strategy / retriever / model``."""
    strategy, retriever, model = cell
    return f"{strategy} / {retriever}" if not needs_model(retriever) or uses_no_model(model) else \
        f"{strategy} / {retriever} / {model}"


def parse_cell(text: str) -> tuple[str, str, str]:
    """``strategy/retriever[/model]`` -> a cell (bm25's model is ``—``, as in the tables)."""
    parts = [p.strip() for p in text.split("/")]
    if len(parts) not in (2, 3) or not all(parts):
        raise CheckError(f"--cell {text!r}: write strategy/retriever or strategy/retriever/model")
    strategy, retriever = parts[:2]
    model = parts[2] if len(parts) == 3 else NO_MODEL
    return strategy, retriever, model_column(retriever, model)


def leader_cell(recommendation: dict, source: Path) -> tuple[str, str, str]:
    """The overall leader of a ``recommendation.json`` (the scope ``overall``, else its only scope);
    a hand-edited file of another shape is a :class:`CheckError` naming it."""
    try:
        return _leader_cell(recommendation, source)
    except (AttributeError, KeyError, TypeError, IndexError) as err:
        raise CheckError(f"{source}: not the shape of a chunklab-own recommendation.json (hand-edited? "
                         f"{type(err).__name__}: {err}); restore it from the run, or name the cell with --cell") from None


def _leader_cell(recommendation: dict, source: Path) -> tuple[str, str, str]:
    if not isinstance(recommendation, dict):
        raise CheckError(f"{source}: not a JSON object (is it a chunklab-own recommendation.json?)")
    scopes = recommendation.get("recommendations")
    if not isinstance(scopes, list) or not scopes:
        raise CheckError(f"{source}: no 'recommendations' list (is it a chunklab-own recommendation.json?)")
    chosen = next((s for s in scopes if s.get("scope") == "overall"), scopes[0] if len(scopes) == 1 else None)
    if chosen is None:
        raise CheckError(f"{source}: several scopes and none 'overall'; name the cell with --cell")
    use = chosen.get("use")  # the decision engine's pick (records before it: the leader below)
    if isinstance(use, dict):
        return str(use["strategy"]), str(use["retriever"]), str(use.get("model") or "—")
    leader = chosen.get("leader")
    for candidate in chosen.get("candidates", []):
        if candidate.get("candidate") == leader:
            model = str(candidate.get("model") or "—")
            return str(candidate["strategy"]), str(candidate["retriever"]), model
    raise CheckError(f"{source}: the leader {leader!r} is not among the candidates of scope {chosen.get('scope')!r}")


def read_table(path: str | Path) -> tuple[pd.DataFrame, dict | None, Path]:
    """``(per-question table, recommendation or None, table path)`` of a run folder, a
    ``recommendation.json`` (its ``per_question.csv`` beside it) or a per-question CSV."""
    path = Path(path)
    if path.is_dir():
        folder, recommendation_path = path, path / "recommendation.json"
        table_path = path / "per_question.csv"
    elif path.suffix == ".json":
        folder, recommendation_path, table_path = path.parent, path, path.parent / "per_question.csv"
    else:
        folder, recommendation_path, table_path = path.parent, path.parent / "recommendation.json", path
    del folder
    if not table_path.is_file():
        raise CheckError(f"{table_path}: not found (commit the run's per_question.csv next to its "
                         "recommendation.json, or give a per-question table)")
    recommendation = None
    if recommendation_path.is_file():
        try:
            recommendation = json.loads(recommendation_path.read_text(encoding="utf-8"))
        except (ValueError, OSError) as err:
            raise CheckError(f"{recommendation_path}: not valid UTF-8 JSON ({err}); restore it from the run") from None
    try:
        table = restored_frame(pd.read_csv(table_path, dtype={"qid": str, "model": str}, keep_default_na=False,
                                           encoding="utf-8-sig"))
    except pd.errors.EmptyDataError:
        raise CheckError(f"{table_path}: empty (no header, no rows); restore it from the run") from None
    except UnicodeDecodeError as err:
        raise CheckError(f"{table_path}: not UTF-8 ({err.reason} at byte {err.start}; saved by a spreadsheet in "
                         "another encoding?): save it as UTF-8 CSV, or restore it from the run") from None
    except (pd.errors.ParserError, OSError, ValueError) as err:
        raise CheckError(f"{table_path}: cannot be read as CSV ({err}); restore it from the run") from None
    missing = [c for c in (*CELL_COLUMNS, "qid") if c not in table.columns]
    if missing:
        raise CheckError(f"{table_path}: lacks column(s) {missing}")
    return table, recommendation, table_path


def cell_scores(table: pd.DataFrame, cell: tuple[str, str, str], measure: str, source: Path) -> pd.Series:
    """Per-question ``measure`` of one cell, indexed by qid (one row per question)."""
    if measure not in table.columns:
        raise CheckError(f"{source}: no column {measure!r}; measures there: "
                         f"{[c for c in table.columns if '@' in c][:12]}")
    model = table["model"].replace({"": NO_MODEL})
    rows = table[(table["strategy"] == cell[0]) & (table["retriever"] == cell[1])
                 & ((model == cell[2]) | (not needs_model(cell[1])))]
    if rows.empty:
        cells = sorted({cell_name(c) for c in zip(table["strategy"], table["retriever"], model)})
        raise CheckError(f"{source}: no rows for {cell_name(cell)}; cells there: {cells}")
    if rows["qid"].duplicated().any():
        raise CheckError(f"{source}: {cell_name(cell)} has question ids more than once "
                         f"({sorted(rows['qid'][rows['qid'].duplicated()])[:5]})")
    values = pd.to_numeric(rows[measure], errors="coerce")
    if values.isna().any():
        raise CheckError(f"{source}: {measure} of {cell_name(cell)} is not a number for question(s) "
                         f"{list(rows['qid'][values.isna()])[:5]}")
    return pd.Series(values.to_numpy(dtype=float), index=rows["qid"].to_numpy())


def compare(run: str | Path, baseline: str | Path, measure: str = "recall@5", cell: str | None = None,
            run_cell: str | None = None, resamples: int = 10_000, seed: int = 0,
            confidence: float = 0.95) -> CheckResult:
    """The paired comparison (module docstring); :class:`CheckError` when it cannot be made."""
    parse(measure)  # an unknown measure is an error, as everywhere in the series
    run_table, run_record, run_path = read_table(run)
    base_table, base_record, base_path = read_table(baseline)
    if cell:
        base_cell = parse_cell(cell)
    elif base_record is not None:
        base_cell = leader_cell(base_record, base_path.with_name("recommendation.json"))
    else:
        raise CheckError(f"{base_path}: no recommendation.json beside it to name the adopted cell; pass --cell")
    if run_cell in (None, ""):
        new_cell = base_cell
    elif run_cell == "leader":
        if run_record is None:
            raise CheckError(f"{run_path}: no recommendation.json beside it, so it has no leader")
        new_cell = leader_cell(run_record, run_path.with_name("recommendation.json"))
    else:
        new_cell = parse_cell(run_cell)
    new = cell_scores(run_table, new_cell, measure, run_path)
    old = cell_scores(base_table, base_cell, measure, base_path)
    common = [q for q in old.index if q in set(new.index)]
    if len(common) < 2:
        raise CheckError(f"{run_path} and {base_path} share {len(common)} question id(s); "
                         "a paired comparison needs the same questions (at least 2)")
    a, b = new.loc[common].to_numpy(), old.loc[common].to_numpy()
    interval = paired_difference_ci(a, b, resamples=resamples, seed=seed, confidence=confidence)
    side = interval_side(interval.low, interval.high)
    verdict = {1: BETTER, -1: WORSE, 0: NOT_TOLD_APART}[side]
    return CheckResult(measure, new_cell, base_cell, len(common), float(np.mean(a)), float(np.mean(b)),
                       float(interval.mean), float(interval.low), float(interval.high), verdict,
                       tuple(q for q in new.index if q not in set(old.index)),
                       tuple(q for q in old.index if q not in set(new.index)), resamples, seed)


def add_parser(sub) -> None:
    """The ``check`` subcommand of ``chunklab-own``."""
    command = sub.add_parser("check", help="did retrieval get worse than a committed baseline? (exit 1 only then)")
    command.add_argument("run", help="output folder of chunklab-own run, or a per-question CSV")
    command.add_argument("--baseline", required=True,
                         help="committed recommendation.json (with per_question.csv beside it) or per-question CSV")
    command.add_argument("--measure", default="recall@5", help="per-question measure column (default recall@5)")
    command.add_argument("--cell", default=None, help="strategy/retriever[/model] (default: the baseline's leader)")
    command.add_argument("--run-cell", default=None,
                         help="the run's cell if not the same: strategy/retriever[/model], or 'leader'")
    command.add_argument("--resamples", type=bounds.int_in("resamples"), default=10_000)
    command.add_argument("--seed", type=bounds.int_in("seed"), default=0)


def main(args) -> int:
    """Run ``check``; print the verdict and interval; the exit status (1 only when worse)."""
    import sys

    try:
        result = compare(args.run, args.baseline, args.measure, args.cell, args.run_cell, args.resamples, args.seed)
    except (CheckError, ValueError) as err:
        print(f"chunklab-own check: {err}", file=sys.stderr)
        return 2
    except (KeyError, AttributeError, TypeError, IndexError, OSError) as err:  # never status 1 ("worse") for bad input
        print(f"chunklab-own check: cannot compare {args.run} with {args.baseline} ({type(err).__name__}: {err}); "
              "is each a chunklab-own run folder, recommendation.json or per-question table?", file=sys.stderr)
        return 2
    print(result.text())
    return result.exit_status
