"""The ``answers``, ``audit`` and ``check`` subcommands of ``chunklab-own``: are the answers on your documents right?

    chunklab-own answers DOCS QUESTIONS --run RUN_DIR [--candidates] [--out own_answers]
                 [--questions N] [--backend llamacpp|ollama|openai] [--base-url URL] [--host HOST]
                 [--answerer NAME MODEL] [--judge NAME=MODEL ...] [--replay] [--config FILE]
    chunklab-own audit draw|grade|report [--answers own_answers] ...
    chunklab-own check RUN --baseline FILE [--measure recall@5]

``answers`` (:mod:`chunklab_core.own.answers`, tables :mod:`chunklab_core.own.answers_report`):
the recommended setting of ``RUN_DIR`` (a ``chunklab-own run`` output folder), or ``--cell
strategy/retriever[/model]`` (repeatable) instead of ``--run``. ``audit``
(:mod:`chunklab_core.own.audit`), ``check`` (:mod:`chunklab_core.own.check`).
Every command writes only into its output folder, and refuses one that is an input, the current
folder, irreplaceable, foreign or tracked by git (``core.output_dirs``, via ``own.cli.check_output_folder``). User errors are one message with the file named,
exit status 1 (2 for ``check``'s "cannot compare"), never a traceback.

Not handled: the ``validate`` / ``run`` commands (``own.cli``). Imports are deferred, so
``chunklab-own --help`` stays fast.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from chunklab_core.core import bounds

COMMANDS = ("answers", "audit", "check")


def add_parsers(sub) -> None:
    """Add the three subcommands to ``chunklab-own``'s parser."""
    from chunklab_core.own import check

    answers = sub.add_parser("answers", help="answer your questions from the recommended setting; judges grade")
    answers.add_argument("docs", help="folder of your documents (as for run)")
    answers.add_argument("questions", help="questions file (as for run)")
    answers.add_argument("--run", default=None, help="output folder of chunklab-own run (its recommendation)")
    answers.add_argument("--cell", action="append", default=None,
                         help="strategy/retriever[/model] to answer from, instead of --run (repeatable)")
    answers.add_argument("--candidates", action="store_true",
                         help="also every cell that cannot be ruled out (with --run)")
    answers.add_argument("--config", default=None, help="the run's YAML config (sized strategies, k, backend)")
    answers.add_argument("--out", default="own_answers", help="output folder (default ./own_answers)")
    answers.add_argument("--questions", dest="n_questions", type=bounds.int_in("questions"), default=None,
                         help="answer only the first N questions of the seeded order")
    answers.add_argument("--k", type=bounds.int_in("k"), default=None, help="contexts per answer (default: the config's k)")
    answers.add_argument("--seed", type=bounds.int_in("seed"), default=None, help="question order seed (default: the config's)")
    answers.add_argument("--backend", choices=("llamacpp", "ollama", "openai"), default="llamacpp")
    answers.add_argument("--host", default=None, help="Ollama host (default $OLLAMA_HOST)")
    answers.add_argument("--base-url", default=None, help="OpenAI-compatible base URL (default $OPENAI_BASE_URL)")
    answers.add_argument("--answerer", nargs=2, metavar=("NAME", "MODEL"), default=None,
                         help="answering model (default qwen05 qwen-0.5b, the embedded 0.5B GGUF)")
    answers.add_argument("--judge", action="append", metavar="NAME=MODEL", default=None,
                         help="a judge (repeatable; default qwen05=qwen-0.5b)")
    answers.add_argument("--threads", type=bounds.int_in("threads"), default=None, help="CPU threads of the embedded model")
    answers.add_argument("--replay", action="store_true", help="rebuild the report from the records; no model")
    answers.add_argument("--resamples", type=bounds.int_in("resamples"), default=10_000)
    answers.add_argument("--no-progress", action="store_true")

    audit = sub.add_parser("audit", help="a graded sample of the answers: can the judges be trusted?")
    steps = audit.add_subparsers(dest="step", required=True)
    draw = steps.add_parser("draw", help="draw the blind stratified sample, sized from a precision target")
    grade = steps.add_parser("grade", help="grade the sheet in the browser (the auditor's workbench)")
    report = steps.add_parser("report", help="agreement and PPI accuracy from the graded sheet")
    for step in (draw, grade, report):
        step.add_argument("--answers", default="own_answers", help="output folder of chunklab-own answers")
    draw.add_argument("--half-width", type=bounds.float_in("share", low=0.001, high=0.5), default=0.10,
                      help="precision target: planned 95%% half-width of the graded accuracy (default 0.10)")
    draw.add_argument("--min-n", type=bounds.int_in("questions"), default=30, help="at least this many items (default 30)")
    draw.add_argument("--n", type=bounds.int_in("questions"), default=None, help="sample size (instead of sizing)")
    draw.add_argument("--seed", type=bounds.int_in("seed"), default=6)
    draw.add_argument("--force", action="store_true", help="overwrite an ungraded sheet")
    grade.add_argument("--grader", default=None, help="your name or initials (saved with each grade)")
    grade.add_argument("--port", type=bounds.int_in("port"), default=0, help="port on 127.0.0.1 (default: a free one)")
    grade.add_argument("--no-browser", action="store_true", help="print the address, open no browser")
    grade.add_argument("--show-verdicts", action="store_true", help="not blind: show the judges' verdicts")
    grade.add_argument("--grader-kind", default="human", help="human (default) or model:<name> (a program driving the page)")
    report.add_argument("--resamples", type=bounds.int_in("resamples"), default=10_000)
    report.add_argument("--seed", type=bounds.int_in("seed"), default=0)

    check.add_parser(sub)


def run(args, validate, check_output_folder) -> int:
    """Dispatch a parsed command; the exit status. ``validate`` and ``check_output_folder`` are
    ``own.cli``'s (passed in, so this module does not import ``cli``, which imports it)."""
    if args.command == "check":
        from chunklab_core.own import check

        return check.main(args)
    if args.command == "audit":
        return _audit(args)
    return _answers(args, validate, check_output_folder)


def _fail(message: str, status: int = 1) -> int:
    print(f"chunklab-own: {message}", file=sys.stderr)
    return status


def _cells(args) -> tuple[list, dict | None]:
    from chunklab_core.own.answers import cells_from_recommendation
    from chunklab_core.own.check import parse_cell

    if bool(args.run) == bool(args.cell):
        raise ValueError("give --run RUN_DIR (its recommended setting) or --cell strategy/retriever[/model], not both")
    if args.cell:
        return [parse_cell(c) for c in args.cell], None
    path = Path(args.run) / "recommendation.json"
    if not path.is_file():
        raise ValueError(f"{path}: not found; run `chunklab-own run DOCS QUESTIONS --out {args.run}` first")
    record = json.loads(path.read_text(encoding="utf-8"))
    return cells_from_recommendation(record, args.candidates), record


def _answers(args, validate, check_output_folder) -> int:
    from chunklab_core.data.loaders import ValidationError
    from chunklab_core.llm.record_schema import RecordsError
    from chunklab_core.own import answers as own_answers
    from chunklab_core.own.config import load_config

    started = time.perf_counter()
    out = Path(args.out).resolve()
    try:
        cells, record = _cells(args)
        config = load_config(args.config)
    except (ValueError, ValidationError) as err:
        return _fail(str(err))
    problems, _, _ = validate(args.docs, args.questions, args.config)
    folder_problem = check_output_folder(out, Path(args.docs), inputs=[args.questions, args.config, args.run],
                                         marker=own_answers.MARKER, append_only=True)
    if folder_problem:
        problems.append(folder_problem)
    if problems:
        return _fail(f"{len(problems)} problem(s):\n" + "\n".join(f"  {p}" for p in problems))
    from chunklab_core.own.report import load_with_notes

    corpus, _, _ = load_with_notes(args.docs, args.questions)
    k = args.k or int((record or {}).get("config", {}).get("k") or config.k)
    seed = config.seed if args.seed is None else args.seed
    progress = not args.no_progress
    from chunklab_core.chunking import STRATEGIES

    unknown = [c[0] for c in cells if c[0] not in STRATEGIES]
    if unknown:
        return _fail(f"unknown strategy {unknown} (registered: chunklab-own strategies; a sized variant needs the "
                     "run's --config)")
    from chunklab_core.retrieval.embedding_cache import CacheUnusable

    try:
        items = own_answers.build_items(corpus, cells, k, args.n_questions, seed, progress=progress,
                                        backend=config.embedding_backend, embed_model=config.models[0],
                                        threshold=config.threshold)
    except (ValueError, CacheUnusable) as err:  # a cache that cannot be used names its folder and the fix
        return _fail(str(err))
    records = out / "records"
    out.mkdir(parents=True, exist_ok=True)
    (out / own_answers.MARKER).write_text("output of chunklab-own answers; records/ is append-only\n", encoding="utf-8")
    records.mkdir(exist_ok=True)
    judges = dict(j.split("=", 1) for j in args.judge) if args.judge else dict(own_answers.DEFAULT_JUDGES)
    if any(not name or not model for name, model in judges.items()):
        return _fail(f"--judge takes NAME=MODEL, got {args.judge}")
    from chunklab_core.llm.wiring import make_models

    models = make_models("replay" if args.replay else "replay_or_record", args.threads, records,
                         backend=args.backend, answerer=tuple(args.answerer or own_answers.DEFAULT_ANSWERER),
                         judges=judges, host=args.host, base_url=args.base_url)
    from chunklab_core.llm.base import BackendUnavailable, IdentityUnavailable
    from chunklab_core.llm.records import user_error_types

    try:
        result = own_answers.answer_items(items, models, list(judges), progress=progress)
    except (RecordsError, BackendUnavailable, IdentityUnavailable, *user_error_types()) as err:  # also: another model's
        return _fail(f"{err}\n(finished calls are kept in {records}; run the same command again to resume)")
    if result.complete_questions == 0:
        return _fail(f"no question is recorded in {records} (replay mode calls no model); run the same command "
                     "without --replay to record the answers")
    if args.replay and result.missing:  # a smaller table than the records promised is never written
        return _fail(f"{records}: a recorded call is missing for {result.missing} ({result.complete_questions} of "
                     f"{result.planned_questions} questions complete; nothing was rewritten). Run the same command "
                     "without --replay to record it, or pass --questions N to report the first N only")
    from chunklab_core.own.answers_report import write_answers

    write_answers(out, result, cells, corpus, args, k, seed, models, time.perf_counter() - started)
    print((out / "summary.txt").read_text(encoding="utf-8"))
    return 0


def _audit(args) -> int:
    from chunklab_core.audit.loading import AuditError
    from chunklab_core.audit.sheets import SheetError
    from chunklab_core.own import audit as own_audit

    try:
        if args.step == "draw":
            done = own_audit.draw(args.answers, args.half_width, args.min_n, args.n, args.seed, args.force)
            if done["planned_half_width"] is None:
                planned = "n given"
            elif done["n"] == done["population"]:
                planned = (f"every answer: no smaller sample meets the target half-width {done['half_width']} "
                           "with the worst-case variance, so the audit is a census, without sampling error")
            else:
                planned = (f"planned 95% half-width {done['planned_half_width']:.3f} <= target {done['half_width']}, "
                           "worst-case variance 0.25 per stratum")
            print(f"drew {done['n']} of {done['population']} answers in {done['strata']} strata ({planned}).\n"
                  f"sheet (for the grader, blind): {done['paths']['sheet']}\n"
                  f"key (keep it away from the grader): {done['paths']['key']}\n"
                  f"grade it: chunklab-own audit grade --answers {args.answers} --grader YOUR_NAME "
                  f"(or chunklab-grade {done['paths']['sheet']})")
            return 0
        if args.step == "grade":
            from chunklab_core.audit.workbench import serve

            sheet = own_audit.audit_paths(args.answers)["sheet"]
            if not sheet.is_file():
                return _fail(f"{sheet}: not found; run `chunklab-own audit draw --answers {args.answers}` first")
            return serve(sheet, grader=args.grader, port=args.port, open_browser=not args.no_browser,
                         key=own_audit.audit_paths(args.answers)["key"] if args.show_verdicts else None,
                         grader_kind=args.grader_kind)
        done = own_audit.report(args.answers, args.resamples, args.seed)
        print(done["markdown"])
        return 0
    except (own_audit.OwnAuditError, AuditError, SheetError, FileNotFoundError, ValueError) as err:
        return _fail(str(err))
