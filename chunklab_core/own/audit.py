"""``chunklab-own audit``: can the judges of your answers be trusted? A graded sample, as in post 06.

    chunklab-own audit draw   [--answers own_answers] [--half-width 0.10] [--min-n 30] [--seed 6]
    chunklab-own audit grade  [--answers own_answers] --grader NAME     (the browser workbench)
    chunklab-own audit report [--answers own_answers] [--resamples N]

``draw`` reads the items of ``chunklab-own answers`` (``answers.csv``), stratifies them by the
graders' pass/fail patterns with disagreements oversampled (:func:`chunklab_core.audit.sample.draw_audit_sample`,
the series' design) and sizes the sample from a precision target: the smallest ``n >= --min-n``
whose planned 95% interval on the graded accuracy is at most ``--half-width``
(:func:`chunklab_core.audit.sizing.sample_size_for_precision`, with the worst-case variance 0.25
in every stratum: there is no graded pilot on your documents), or the whole population when
even that cannot meet it. It writes ``audit/population.csv``, ``audit/key.csv`` (keep it from
the grader) and the blind ``audit/sheet.csv`` (no verdict in it), and never overwrites a sheet
that holds grades.

``grade`` opens the sheet in the auditor's workbench (:mod:`chunklab_core.audit.workbench`);
the terminal grader (``chunklab-grade``) and ``chunklab-grade-batch`` (a model grading, with its
kind) write the same file through the same layer.

``report`` reads the graded sheet, key and population (:func:`chunklab_core.audit.loading.load_audit`:
every graded row names its grader and kind, ``human`` or ``model:<name>``) and reports, exactly
as post 06 does (:mod:`chunklab_core.audit.estimates`, the functions post 06 calls): who graded
(:func:`~chunklab_core.audit.loading.grader_table`), each judge's agreement with the grades
(matches, Cohen's kappa with an interval resampling questions, population-weighted agreement)
and the accuracy of the answers by the judge alone, by the grades alone and by stratified PPI
(judge + grades). The words come from the graders' kinds (:func:`chunklab_core.audit.graders.grader_words`):
"hand grades" only when a person graded. Output: ``audit/report.md``, ``audit/report.html``,
``audit/agreement.csv``, ``audit/accuracy.csv`` (atomic writes).

Not handled: several graders' copies (post 06's ``EXTRA_SHEET`` does that), top-up waves.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import pandas as pd

from chunklab_core.core.atomic_files import atomic_write_text
from chunklab_core.core.csv_cells import frame_csv, restored_frame, torn_table_problem

AUDIT_FOLDER = "audit"
DEFAULT_HALF_WIDTH = 0.10
DEFAULT_MIN_N = 30


class OwnAuditError(ValueError):
    """A user error of the audit commands (message names the file)."""


def audit_paths(answers_dir: str | Path) -> dict[str, Path]:
    """The audit files of an answers folder."""
    folder = Path(answers_dir) / AUDIT_FOLDER
    return {"folder": folder, "population": folder / "population.csv", "key": folder / "key.csv",
            "sheet": folder / "sheet.csv", "report": folder / "report.md"}


def read_answers(answers_dir: str | Path) -> tuple[pd.DataFrame, dict]:
    """``(population table, answers.json)`` of an answers folder."""
    import json

    folder = Path(answers_dir)
    manifest_path, table_path = folder / "answers.json", folder / "population.csv"
    for path in (manifest_path, table_path):
        if not path.is_file():
            raise OwnAuditError(f"{path}: not found; run `chunklab-own answers ... --out {folder}` first")
    rebuild = f"a torn or edited file: rebuild it with `chunklab-own answers ... --out {folder}`"
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise OwnAuditError(f"{manifest_path}: not readable JSON ({err}); {rebuild}") from None
    if not isinstance(manifest, dict) or not isinstance(manifest.get("judge_columns"), list):
        raise OwnAuditError(f"{manifest_path}: not the manifest of chunklab-own answers (no judge_columns); {rebuild}")
    problem = torn_table_problem(table_path, manifest.get("answers"), "answers.json records")
    if problem:
        raise OwnAuditError(f"{problem}; {rebuild}")
    table = restored_frame(pd.read_csv(table_path, dtype=str, keep_default_na=False))
    return table, manifest


def draw(answers_dir: str | Path, half_width: float = DEFAULT_HALF_WIDTH, min_n: int = DEFAULT_MIN_N,
         n: int | None = None, seed: int = 6, force: bool = False) -> dict:
    """Draw the blind sample (module docstring); returns what was written and the planned width."""
    from chunklab_core.answers.verdicts import pass_fail
    from chunklab_core.audit.sample import draw_audit_sample, verdict_labels, verdict_patterns
    from chunklab_core.audit.sheets import read_sheet, write_key, write_sheet
    from chunklab_core.audit.sizing import WORST_CASE_VARIANCE, sample_size_for_precision

    table, manifest = read_answers(answers_dir)
    columns = list(manifest["judge_columns"]) + ["reference_grader"]
    paths = audit_paths(answers_dir)
    if paths["sheet"].exists():
        _, rows = read_sheet(paths["sheet"])
        graded = sum(bool(r.get("grade", "").strip()) for r in rows)
        if graded or not force:
            raise OwnAuditError(f"{paths['sheet']} exists ({graded} graded rows); it is never overwritten "
                                "with grades in it, and an ungraded one only with --force")
    if len(table) < 2:
        raise OwnAuditError(f"{answers_dir}: {len(table)} answered item(s); an audit needs at least 2")
    patterns = verdict_patterns(table, columns, "pass/fail")
    strata = sorted(patterns.unique())
    sizes = [int((patterns == s).sum()) for s in strata]
    distinct = verdict_labels(table, columns).map(pass_fail).nunique(axis=1)
    flags = [bool(distinct[(patterns == s).to_numpy()].iloc[0] > 1) for s in strata]
    planned = None
    if n is None:
        n, planned = sample_size_for_precision(sizes, flags, [WORST_CASE_VARIANCE] * len(strata), half_width,
                                               min(min_n, len(table)))
    if not 1 <= n <= len(table):
        raise OwnAuditError(f"--n {n}: the population has {len(table)} items")
    sheet, key = draw_audit_sample(table, n, seed=seed, judge_columns=columns, scale="pass/fail")
    paths["folder"].mkdir(parents=True, exist_ok=True)
    atomic_write_text(paths["population"], frame_csv(table, index=False))
    write_key(key, paths["key"])
    write_sheet(sheet, paths["sheet"])
    return {"n": n, "population": len(table), "strata": len(strata), "planned_half_width": planned,
            "half_width": half_width, "paths": paths}


def load(answers_dir: str | Path):
    """The graded audit of an answers folder (:func:`chunklab_core.audit.loading.load_audit`)."""
    from chunklab_core.audit.loading import load_audit

    _, manifest = read_answers(answers_dir)
    paths = audit_paths(answers_dir)
    if not paths["sheet"].is_file():
        raise OwnAuditError(f"{paths['sheet']}: not found; run `chunklab-own audit draw --answers {answers_dir}` first")
    columns = list(manifest["judge_columns"]) + ["reference_grader"]
    return load_audit(paths["sheet"], paths["key"], paths["population"], judge_columns=columns,
                      yesno_columns=list(manifest["yesno_columns"]))


def report(answers_dir: str | Path, resamples: int = 10_000, seed: int = 0) -> dict:
    """The audit report (module docstring); returns the tables and the page's Markdown."""
    from chunklab_core.audit.estimates import PPI, agreement_table, corrected_accuracy
    from chunklab_core.audit.graders import grader_words
    from chunklab_core.audit.loading import grader_table
    from chunklab_core.own.answers_report import render_page

    data = load(answers_dir)
    who = grader_table(data)
    words = grader_words(who)
    with warnings.catch_warnings(record=True) as caught:  # small samples: stated in the report, not crashed on
        warnings.simplefilter("always")
        agreement = agreement_table(data, resamples, seed)
    notes = list(dict.fromkeys(str(w.message) for w in caught if issubclass(w.category, UserWarning)))
    no_variance = ""
    try:
        accuracy = corrected_accuracy(data) if not data.empty_strata else pd.DataFrame()
    except ValueError as error:  # every stratum holds one graded item: no within-stratum variance yet
        if "single graded item" not in str(error):
            raise
        accuracy = pd.DataFrame()
        no_variance = ("Not estimated yet: every stratum has a single graded item, so no within-stratum "
                       "variance can be estimated; grade a second item in at least one stratum.")
    design = (f"{len(data.graded)} of {len(data.key)} sampled items graded ({len(data.ungraded)} not yet), "
              f"drawn from {len(data.population)} answers in {len(data.stratum_sizes)} strata (the graders' "
              f"pass/fail patterns, disagreements oversampled). Graded by {words.who}. Grades made against "
              "the reference (your gold snippets) favour the reference grader, whose rule is close to it.")
    if no_variance:
        accuracy_text = no_variance
    elif data.empty_strata:
        accuracy_text = (f"Not estimated yet: {len(data.empty_strata)} stratum/strata have no graded item "
                         f"({', '.join(data.empty_strata)}); grade at least one item of each.")
    else:
        strict = accuracy[(accuracy["variant"] == "strict") & (accuracy["estimator"] == PPI)]
        accuracy_text = ("Accuracy of your answers (strict: graded correct), by each judge alone, by "
                         f"{words.grades} alone (stratified), and by PPI (judge + {words.grades}). PPI: "
                         + "; ".join(f"{r['judge']} {r['accuracy']:.3f} [{r['low']:.3f}, {r['high']:.3f}]"
                                     for _, r in strict.iterrows()) + ".")
    binary = agreement[agreement["scale"] == "binary"]
    agreement_text = (f"Each judge against {words.grades} (kappa intervals resample questions). Binary scale: "
                      + "; ".join(f"{r['judge']} {r['matches']}/{r['graded']} agree, kappa {r['kappa']:.2f} "
                                  f"[{r['kappa low']:.2f}, {r['kappa high']:.2f}]" for _, r in binary.iterrows())
                      + ".")
    if notes:
        agreement_text += " Note: " + "; ".join(notes) + "."
    sections = [("Who graded, and the sample", design, who),
                ("Agreement of each judge with the grades", agreement_text, agreement),
                ("Accuracy corrected by the grades (PPI)", accuracy_text, accuracy)]
    markdown, page = render_page("Can the judges of your answers be trusted? The audit", sections)
    paths = audit_paths(answers_dir)
    atomic_write_text(paths["folder"] / "agreement.csv", frame_csv(agreement, index=False))
    atomic_write_text(paths["folder"] / "accuracy.csv", frame_csv(accuracy, index=False))
    atomic_write_text(paths["report"], markdown + "\n")
    atomic_write_text(paths["folder"] / "report.html", page)
    return {"graders": who, "words": words, "agreement": agreement, "accuracy": accuracy, "markdown": markdown,
            "data": data, "warnings": notes}
