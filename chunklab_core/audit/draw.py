"""Drawing post 06's grading sample from post 05's recorded answers.

Handles: the population table (every answered item of the recorded post-05 study with its
verdicts and the reference passage a grader reads), and the CLI that writes the population,
the blind sheet and the key under ``data/audit/`` (``paths.AUDIT_DIR``) with :func:`chunklab_core.audit.sample.draw_audit_sample`
(strata: the graders' pass/fail patterns, disagreements oversampled).
It refuses to overwrite a sheet that already holds grades.

CLI: ``chunklab-audit-draw [--half-width 0.07] [--min-n 120] [--seed 6]
[--out data/audit] [--name post05_v2] [--top-up]``: the sample size is the smallest ``n >= --min-n``
whose planned interval half-width meets the target (:mod:`chunklab_core.audit.sizing`, with
planning variances from the graded pilot sheet ``--pilot``), or ``--n``. ``--top-up`` adds
the items post 05 recorded since the draw as a new wave (:mod:`chunklab_core.audit.topup`).

The reference passage is the paragraph holding the gold answer: for SQuAD the paragraph of
the question's evidence span, for Natural Questions the paragraph around the first verbatim
occurrence of the gold answer (cut to :data:`MAX_PASSAGE` characters around it); when the
gold is nowhere in the page, the first retrieved context, marked as such.
Not handled: grading (``audit.terminal_grader``), the analysis (``reports.post06.tables``).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from chunklab_core.core import bounds
from chunklab_core.core.cli_errors import user_errors
from chunklab_core.core.output_dirs import tracked_files
from chunklab_core.core.csv_cells import frame_csv
from chunklab_core.data.registry import DataError
from chunklab_core.llm.records import user_error_types
from chunklab_core.audit.loading import audit_error_types
from chunklab_core.core.corpus import Corpus, Question
from chunklab_core.core.paths import AUDIT_DIR, AUDIT_PILOT, AUDIT_SAMPLE
from chunklab_core.core.seeds import DEFAULT_SEED

MAX_PASSAGE = 1500
POPULATION_COLUMNS = ["item_id", "corpus", "qid", "strategy", "question", "reference", "answer",
                      "judge_qwen15_3way", "judge_qwen15_yesno", "judge_qwen05_3way",
                      "reference_grader", "passage"]


def _paragraph_around(text: str, start: int, end: int) -> str:
    """The blank-line- or newline-delimited paragraph holding ``text[start:end]``, capped."""
    left = max(text.rfind("\n\n", 0, start), text.rfind("\n", 0, start))
    right_candidates = [i for i in (text.find("\n", end),) if i >= 0]
    right = min(right_candidates) if right_candidates else len(text)
    left = left + 1 if left >= 0 else 0
    if right - left > MAX_PASSAGE:
        half = (MAX_PASSAGE - (end - start)) // 2
        left, right = max(left, start - half), min(right, end + half)
    return text[left:right].strip()


def reference_passage(corpus: Corpus, question: Question, fallback: str = "") -> str:
    """The passage holding the question's gold answer (see the module docstring)."""
    from chunklab_core.data.longdocs import locate

    document = corpus.doc(question.doc_id)
    if question.evidence_spans:
        _, start, end = question.evidence_spans[0]
        return _paragraph_around(document.text, start, end)
    for answer in question.answers:
        spots = locate(document.text, answer) if answer.strip() else []
        if spots:
            return _paragraph_around(document.text, *spots[0])
    return f"(gold answer not found in the page; first retrieved context) {fallback}"


def population_table(study, corpora: dict) -> pd.DataFrame:
    """Post 05's items with verdicts and reference passage, in :data:`POPULATION_COLUMNS`."""
    table = study.table.copy()
    passages = []
    for corpus_name, qid, contexts in zip(table["corpus"], table["qid"], table["contexts"]):
        corpus = corpora[corpus_name][0]
        question = next(q for q in corpus.questions if q.qid == qid)
        passages.append(reference_passage(corpus, question, contexts[0] if contexts else ""))
    table["passage"] = passages
    return table[POPULATION_COLUMNS].reset_index(drop=True)


def _pilot_variances(out: Path, pilot: str) -> dict[bool, float] | None:
    """Planning variances from a graded pilot sheet (``<pilot>_sheet.csv`` + key), or None."""
    from chunklab_core.answers.verdicts import passed
    from chunklab_core.audit.sizing import planning_variances
    from chunklab_core.audit.sheets import import_grades

    sheet, key = out / f"{pilot}_sheet.csv", out / f"{pilot}_key.csv"
    if not (sheet.is_file() and key.is_file()):
        return None
    grades = import_grades(sheet, key_path=key)
    grades = grades[grades["graded"]]
    return planning_variances(passed(grades["grade"]),
                              grades["stratum"].to_numpy(), grades["disagreement"].to_numpy())


def draw_output_problem(out: Path, name: str, sheet_exists: bool) -> str | None:
    """Why a draw must not write ``name``'s files into ``out`` (``core.output_dirs``' rules for a
    folder the draw adds files to), or None: a folder of tracked files other than the audit's own,
    a file where the folder should be, or a key or population without its sheet (another draw's)."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        return f"{out}: exists and is not a folder; choose another --out"
    if out.resolve() != AUDIT_DIR.resolve() and tracked_files(out):
        return f"{out}: holds files tracked by git; draw into {AUDIT_DIR} (the series' audit) or a folder of your own"
    others = [out / f"{name}_{part}.csv" for part in ("key", "population")]
    if not sheet_exists and any(p.exists() for p in others):
        found = ", ".join(str(p) for p in others if p.exists())
        return f"{found}: already there without {name}_sheet.csv (another draw's files); move them, or choose another --name"
    return None


@user_errors(DataError, *user_error_types(), *audit_error_types())
def main(argv: list[str] | None = None) -> int:
    from chunklab_core.answers.study import DEFAULT_STRATEGIES, load_study
    from chunklab_core.data.corpora import load_corpus
    from chunklab_core.llm.wiring import make_models
    from chunklab_core.answers.verdicts import pass_fail
    from chunklab_core.audit.sample import draw_audit_sample, verdict_labels, verdict_patterns
    from chunklab_core.audit.sizing import WORST_CASE_VARIANCE, sample_size_for_precision
    from chunklab_core.audit.sheets import DEFAULT_JUDGE_COLUMNS, read_sheet, write_key, write_sheet

    parser = argparse.ArgumentParser(description="Draw post 06's blind grading sample.")
    parser.add_argument("--n", type=bounds.int_in("questions"), default=None,
                        help="sample size; default: sized from --half-width (at least --min-n)")
    parser.add_argument("--half-width", type=bounds.float_in("share", low=0.001, high=0.5), default=0.07,
                        help="precision target: planned 95%% half-width of the graded accuracy")
    parser.add_argument("--min-n", type=bounds.int_in("questions"), default=120)
    parser.add_argument("--pilot", default=AUDIT_PILOT,
                        help="graded pilot sheet (name prefix in --out) for planning variances")
    parser.add_argument("--seed", type=bounds.int_in("seed"), default=6)
    parser.add_argument("--out", type=Path, default=AUDIT_DIR)
    parser.add_argument("--name", default=AUDIT_SAMPLE, help="file name prefix of the new sample")
    parser.add_argument("--squad-questions", type=bounds.int_in("questions"), default=200)
    parser.add_argument("--nq-questions", type=bounds.int_in("questions"), default=20)
    parser.add_argument("--study-seed", type=bounds.int_in("seed"), default=DEFAULT_SEED)
    parser.add_argument("--force", action="store_true", help="overwrite an ungraded sheet")
    parser.add_argument("--top-up", action="store_true",
                        help="append a sample of the items recorded since --name was drawn (a new wave)")
    args = parser.parse_args(argv)
    sheet_path = args.out / f"{args.name}_sheet.csv"
    if args.top_up:
        from chunklab_core.audit.topup import top_up

        corpora = {"squad": (load_corpus("squad", seed=args.study_seed), args.squad_questions),
                   "nq": (load_corpus("nq", seed=args.study_seed), args.nq_questions)}
        study = load_study(corpora, DEFAULT_STRATEGIES, args.study_seed, make_models(mode="replay"))
        added = top_up(args.out, args.name, population_table(study, corpora), args.seed)
        print(f"{added} items of a new wave appended to {sheet_path} (grade them; the post "
              "leaves them out until then)")
        return 0
    if sheet_path.exists():
        _, rows = read_sheet(sheet_path)
        graded = sum(bool(r.get("grade", "").strip()) for r in rows)
        if graded or not args.force:
            raise SystemExit(f"{sheet_path} exists ({graded} graded rows); it is never overwritten "
                             "with grades in it, and an ungraded one only with --force")
    problem = draw_output_problem(args.out, args.name, sheet_path.exists())
    if problem:
        raise SystemExit(f"chunklab-audit-draw: {problem}")
    # the population is every item post 05 has recorded now (load_study stops a corpus at its
    # first question without records), so the sample follows the records at draw time
    corpora = {"squad": (load_corpus("squad", seed=args.study_seed), args.squad_questions),
               "nq": (load_corpus("nq", seed=args.study_seed), args.nq_questions)}
    study = load_study(corpora, DEFAULT_STRATEGIES, args.study_seed, make_models(mode="replay"))
    population = population_table(study, corpora)
    n = args.n
    if n is None:
        patterns = verdict_patterns(population, DEFAULT_JUDGE_COLUMNS, "pass/fail")
        strata = sorted(patterns.unique())
        sizes = [int((patterns == s).sum()) for s in strata]
        distinct = verdict_labels(population, DEFAULT_JUDGE_COLUMNS).map(pass_fail).nunique(axis=1)
        flags = [bool(distinct[(patterns == s).to_numpy()].iloc[0] > 1) for s in strata]
        pilot = _pilot_variances(args.out, args.pilot)
        planning = pilot or {False: WORST_CASE_VARIANCE, True: WORST_CASE_VARIANCE}
        n, width = sample_size_for_precision(sizes, flags, [planning[f] for f in flags],
                                             args.half_width, args.min_n)
        print(f"sized: n = {n} (planned 95% half-width {width:.3f} <= {args.half_width}, at least "
              f"{args.min_n}; planning variances {planning[False]:.3f} where the judges agree, "
              f"{planning[True]:.3f} where they disagree, "
              f"{'from the pilot ' + args.pilot if pilot else 'worst case'})")
    sheet, key = draw_audit_sample(population, n, seed=args.seed, scale="pass/fail")
    args.out.mkdir(parents=True, exist_ok=True)
    # the passages are dataset text: only the sampled ones (in the sheet) are committed
    (args.out / f"{args.name}_population.csv").write_text(frame_csv(population.drop(columns="passage"), index=False),
                                                          encoding="utf-8", newline="")
    write_key(key, args.out / f"{args.name}_key.csv")
    write_sheet(sheet, sheet_path)
    per_corpus = population["corpus"].value_counts().to_dict()
    print(f"population: {len(population)} items {per_corpus}; sheet: {sheet_path} "
          f"({len(sheet)} items); key: {args.out / (args.name + '_key.csv')} (keep it away "
          "from the grader)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
