"""``chunklab-own``: which chunking should I use on my documents? Validate, then run.

    chunklab-own validate DOCS QUESTIONS [--config FILE]
    chunklab-own run DOCS QUESTIONS [--config FILE] [--out DIR] [--resamples N] [--notebook]
    chunklab-own strategies
    chunklab-own questions DOCS [--out questions.yaml] [--n N] [--server URL --model M]   (``own.generate``)
    chunklab-own review QUESTIONS DOCS        (accept / reject / edit them in the browser, ``own.review``)
    chunklab-own answers | audit draw|grade|report | check   (are the answers right? ``own.commands``)
    (also: python -m chunklab_core.own.cli ...; make own DOCS=dir QUESTIONS=file [OUT=dir] [CONFIG=file])

``validate`` reads the documents, the questions and the config and lists every problem at
once (with, for a gold snippet found nowhere, the closest passage and its score), then the
gold snippets matched only approximately, with their scores. It takes seconds.

``run`` validates, then computes the whole report in this process (``own.pipeline``: your
corpus only, no public corpus, no second model unless the config asks), writes ``report.html``
(``own.html_report``, no kernel), the CSV tables, ``recommendation.json`` and the figures, and
prints the recommendation box first, then one block per scope; box, JSON and page say the same
(``recommendation.box``). ``--notebook`` also executes the report notebook
``notebooks/src/own_documents.ipynb`` with papermill (``report.ipynb``; slower: a kernel start).
Output folder (default ``own_results`` in the current folder). Everything is written into a
temporary folder beside it and moved into place only when the whole run succeeded, so a failed
run leaves no partial output. An existing output folder is replaced only when it holds nothing
but an earlier run's outputs: the marker file ``.chunklab-own`` lists every file a run wrote, and
a folder holding any other file (a ``notes.md`` of yours) or no marker is refused, naming the
files. An output folder inside DOCS is refused (the next run would read this run's report as a
document), and so is one holding files tracked by git, so a run never writes a tracked file.
SIGTERM and SIGHUP stop a run as Ctrl-C does: the kernel is shut down, the temporary folder
removed, the earlier output left as it was (:mod:`chunklab_core.core.signals`). Progress (cells, encoding) is shown unless ``CI`` is set.

Not handled: running several corpora at once (run once per folder), remote models.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

from chunklab_core.core import bounds, output_dirs, paths
from chunklab_core.core.atomic_files import replace_folder
from chunklab_core.core.signals import exit_status, signals_as_interrupt
from chunklab_core.core.cli_errors import command_edge

REPORT_SOURCE = paths.NOTEBOOKS_DIR / "src" / "own_documents.ipynb"
DEFAULT_OUT = "own_results"
MARKER = ".chunklab-own"
KERNEL = "chunklab"


NO_QUESTIONS_YET = ("Documents but no questions yet? `chunklab-own questions DOCS --out questions.yaml` drafts "
                    "them from your documents with a local model, `chunklab-own review questions.yaml DOCS` lets you "
                    "accept, reject or edit them, then run with that file (docs/own-documents.md, "
                    "\"Without test questions\"); or write them by hand (the README's format).")


class _HintingParser(argparse.ArgumentParser):
    """A subcommand's parser whose "questions is required" error also says how to get questions."""

    def error(self, message):
        if "required: " in message and "questions" in message.split("required: ", 1)[1].split(", "):
            message += ". " + NO_QUESTIONS_YET
        super().error(message)


def missing_questions(docs, questions) -> str | None:
    """The problem line of a questions file that does not exist, naming ``chunklab-own questions``."""
    if Path(questions).exists():
        return None
    return (f"{Path(questions).name}: no questions file at {questions}. Documents but no questions yet? "
            f"`chunklab-own questions {docs} --out {questions}` drafts them from your documents with a local "
            f"model (`chunklab-own review {questions} {docs}` to accept, reject or edit them), then run again; "
            "or write them by hand (docs/own-documents.md)")


def validate(docs: str | Path, questions: str | Path, config: str | Path | None = None, resamples: int = 0):
    """``(problems, approximate notes, other notes)`` of the documents, questions and config
    (with ``resamples`` > 0 instead of the config's), including a run too large for this machine's memory."""
    return _validated(docs, questions, config, resamples)[:3]


def _validated(docs, questions, config=None, resamples: int = 0):
    """:func:`validate`'s three, then the loaded corpus as ``own.report.load_with_notes`` gives it
    (``None`` when there are problems), so a run reads and parses the documents once."""
    from chunklab_core.core import bounds
    from chunklab_core.data.gold_advice import GoldAdvice
    from chunklab_core.data.loaders import ValidationError, load_user_corpus
    from chunklab_core.own.config import load_config, memory_needed
    from chunklab_core.own.report import approximate_matches

    problems: list[str] = []
    settings = corpus = None
    try:
        settings = load_config(config)
    except ValidationError as exc:
        problems += exc.problems
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            corpus = load_user_corpus(docs, questions)
        except ValidationError as exc:
            missing = missing_questions(docs, questions)  # instead of the bare "cannot be read"
            problems += [p for p in exc.problems if not (missing and p.startswith(f"{Path(questions).name}: cannot be read"))]
            problems += [missing] if missing else []
    if settings is not None and corpus is not None:
        if resamples:
            settings.resamples = resamples
        needed, how = memory_needed(settings, len(corpus.questions))
        too_big = bounds.memory_problem(f"a run of this config ({how})", needed)
        if too_big:
            problems.append(f"{Path(config).name if config else 'config'}: {too_big}; lower k or resamples, or "
                            "run fewer strategies, retrievers or models")
    approximate, other = approximate_matches([str(w.message) for w in caught])
    loaded = None if problems or corpus is None else (
        corpus, *approximate_matches([str(w.message) for w in caught if not issubclass(w.category, GoldAdvice)]))
    return problems, approximate, other, loaded


def _print_validation(problems, approximate, other) -> None:
    if other:
        print(f"note: {other}")
    if len(approximate):
        print(f"{len(approximate)} gold snippet(s) matched only approximately (fuzzy score; 1.00 = exact):")
        for _, row in approximate.iterrows():
            print(f'  {row["question"]}: "{row["gold snippet"]}" score {row["score"]:.2f}, matched "{row["matched text"]}"')
    if problems:
        print(f"{len(problems)} problem(s); fix them all and run again:", file=sys.stderr)
        for problem in problems:
            print(f"  {problem}", file=sys.stderr)


def write_marker(folder: Path) -> None:
    """The marker of a finished run: a header line, then one written file per line."""
    output_dirs.write_marker(folder, MARKER, "chunklab-own run")


def foreign_files(out: Path) -> list[str]:
    """Files in ``out`` that no earlier run wrote (all of them when there is no marker)."""
    return output_dirs.foreign_files(out, MARKER)


def check_output_folder(out: Path, docs: Path | None = None, inputs=(), marker: str = MARKER,
                        append_only: bool = False) -> str | None:
    """A problem with ``out`` as the output folder (for documents in ``docs``), or ``None``
    (``core.output_dirs``' rule, plus: not inside the documents)."""
    if docs is not None and (Path(out).resolve() == Path(docs).resolve()
                             or Path(docs).resolve() in Path(out).resolve().parents):
        return (f"{out}: the output folder is inside the documents folder {docs}; the next run would read this "
                "run's report as one of your documents. Choose an --out outside it")
    return output_dirs.output_folder_problem(out, marker, inputs=[docs, *inputs], append_only=append_only)


def console_table(record: dict) -> str:
    """The recommendation: the box's lines first (as ``recommendation.json`` holds them), then a
    plain-text block per scope."""
    target = record["config"]["recall_target"]
    width = max((len(line["label"]) for line in record.get("box", [])), default=0)
    box = [f"  {line['label']:<{width}}  {line['text']}" for line in record.get("box", [])]
    lines = ["RECOMMENDATION", *box, "", f"Details on {record['corpus']['questions']} questions, "
             f"{record['corpus']['documents']} documents, at k chunks (recall@{record['config']['k']}, "
             f"{record['config']['RESAMPLES']:,} paired resamples, seed {record['config']['seed']}):", ""]
    if not record["recommendations"]:
        lines.append("  one cell only: no verdict (see the box)")
    for rec in sorted(record["recommendations"], key=lambda r: r["scope"] != "overall"):
        tokens = rec.get(f"pick's tokens at recall {target:.2f}")
        rows = [("pick at k", f"{rec['pick']}  ({rec['verdict']}; leader {rec['leader']})"),
                (f"equivalent (±{rec['margin']:g})", rec["equivalent"]),
                ("undecided", rec["undecided"]),
                ("ruled out", rec["ruled out"]),
                ("closest open", rec["closest open"]),
                ("questions to decide", rec["questions to decide"]),
                (f"tokens at recall {target:.2f}", "not reached within k = 10" if tokens is None else f"{tokens:,.0f}"),
                ("warnings", rec["warnings"])]
        rows += [("caution", caution) for caution in rec.get("verdict_warnings", [])]
        lines.append(f"[{rec['scope']}]")
        lines += [f"  {name:<24} {value}" for name, value in rows]
        lines.append("")
    return "\n".join(lines)


def console_notes(record: dict) -> str:
    """The warnings the report shows ("Notes raised while computing"), for the terminal too ("" when none)."""
    notes = record.get("notes") or []
    if not notes:
        return ""
    return "\n".join([f"NOTES raised while computing ({len(notes)}; also in the report):",
                      *(f"  {note}" for note in notes)]) + "\n"


def drop_progress_output(notebook):
    """The notebook without stderr stream outputs (progress bars, which the terminal showed)."""
    for cell in notebook.cells:
        if cell.cell_type == "code":
            cell.outputs = [o for o in cell.outputs if not (o.output_type == "stream" and o.name == "stderr")]
    return notebook


def write_report(result, folder: Path) -> list[str]:
    """Figures, CSV tables, ``recommendation.json`` and ``report.html`` of ``result`` into ``folder``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from chunklab_core.own import html_report
    from chunklab_core.own.report import figure_png, plot_intervals, plot_recall_tokens, save_figure, write_outputs

    figures = {"recall_intervals": plot_intervals(result.summary, result.config.k),
               "recall_vs_tokens": plot_recall_tokens(result.curves, result.config.recall_target)}
    pngs = {name: figure_png(fig) for name, fig in figures.items()}  # drawn once, for the files and the page
    for fig in figures.values():
        plt.close(fig)
    written = write_outputs(folder, result.tables(), result.record())
    written += [save_figure(png, folder, name) for name, png in pngs.items()]
    (folder / "report.html").write_text(html_report.render(result, pngs), encoding="utf-8")
    return [*written, "report.html"]


def _execute_notebook(docs: Path, questions: Path, config: Path | None, folder: Path, resamples: int,
                      progress: bool) -> None:
    """``report.ipynb``: the report notebook executed by papermill (its warnings kept off the console)."""
    import nbformat
    import papermill

    notebook = folder / "report.ipynb"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # nbformat's MissingIDFieldWarning and kernel-side notices
        papermill.execute_notebook(
            str(REPORT_SOURCE), str(notebook), kernel_name=KERNEL, progress_bar=progress, cwd=str(folder),
            parameters={"DOCS": str(docs), "QUESTIONS": str(questions), "CONFIG": str(config or ""),
                        "RESAMPLES": resamples, "PROGRESS": progress})
        executed = drop_progress_output(nbformat.read(notebook, as_version=4))
        nbformat.write(executed, notebook)


def _execute(docs: Path, questions: Path, config: Path | None, folder: Path, resamples: int, progress: bool,
             notebook: bool = False, loaded=None) -> None:
    from chunklab_core.own.pipeline import compute

    result = compute(str(docs), str(questions), str(config or ""), resamples, progress, loaded=loaded)
    write_report(result, folder)
    if notebook:
        _execute_notebook(docs, questions, config, folder, resamples, progress)


def run(docs: str | Path, questions: str | Path, config: str | Path | None = None, out: str | Path = DEFAULT_OUT,
        resamples: int = 0, progress: bool | None = None, notebook: bool = False) -> dict:
    """Validate, execute the report into a temporary folder, move it to ``out``; the JSON record.

    Raises ``SystemExit(1)`` on validation problems or an unusable ``out``; any failure of the
    execution removes the temporary folder and re-raises.
    """
    docs, questions = Path(docs).resolve(), Path(questions).resolve()
    config = Path(config).resolve() if config else None
    out = Path(out).resolve()
    problems, approximate, other, loaded = _validated(docs, questions, config, resamples)
    folder_problem = check_output_folder(out, docs, inputs=[questions, config])
    problems += [folder_problem] if folder_problem else []
    _print_validation(problems, approximate, other)
    if problems:
        raise SystemExit(1)
    progress = (not os.environ.get("CI")) if progress is None else progress
    out.parent.mkdir(parents=True, exist_ok=True)
    with signals_as_interrupt():  # SIGTERM/SIGHUP: the clean-up of Ctrl-C below
        return _run_into(docs, questions, config, out, resamples, progress, notebook, loaded)


def _run_into(docs: Path, questions: Path, config: Path | None, out: Path, resamples: int, progress: bool,
              notebook: bool = False, loaded=None) -> dict:
    def fill(work: Path) -> dict:
        _execute(docs, questions, config, work, resamples, progress, notebook, loaded)
        write_marker(work)
        return json.loads((work / "recommendation.json").read_text(encoding="utf-8"))

    return replace_folder(out, fill)  # a failed or interrupted run leaves no partial folder


@command_edge
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="chunklab-own", description="Which chunking should I use on my documents?")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_HintingParser)
    for name, text in (("validate", "check documents, questions and config; every problem at once (seconds)"),
                       ("run", "validate, then run the comparison and write the report")):
        command = sub.add_parser(name, help=text, epilog=NO_QUESTIONS_YET)
        command.add_argument("docs", help="folder of .md, .txt, .html, .pdf, .docx files (read recursively)")
        command.add_argument("questions", help="questions file (.yaml, .yml or .jsonl); none yet? see below")
        command.add_argument("--config", default=None, help="YAML config (strategies, retrievers, models, k, ...)")
        if name == "run":
            command.add_argument("--out", default=DEFAULT_OUT, help=f"output folder (default: ./{DEFAULT_OUT})")
            command.add_argument("--resamples", type=bounds.int_in("resamples"), default=0,
                                 help="paired resamples, 100 to 1,000,000 (default: the config's)")
            command.add_argument("--no-progress", action="store_true", help="no progress bars (also when CI is set)")
            command.add_argument("--notebook", action="store_true",
                                 help="also execute the report notebook (report.ipynb; starts a kernel, slower)")
    sub.add_parser("strategies", help="list the registered strategy names")
    from chunklab_core.own import commands  # answers, audit, check: are the answers right? (issue 27)

    commands.add_parsers(sub)
    from chunklab_core.own import generate, review  # questions from documents alone, and their review (issue 48)

    generate.add_parser(sub)
    review.add_parser(sub)
    args = parser.parse_args(argv)
    if args.command == "questions":
        return generate.command(args)
    if args.command == "review":
        return review.command(args)
    if args.command in commands.COMMANDS:
        return commands.run(args, validate=validate, check_output_folder=check_output_folder)
    if args.command == "strategies":
        from chunklab_core.own.config import strategy_table

        for name, label in strategy_table():
            print(f"{name:<24} {label}")
        return 0
    if args.command == "validate":
        problems, approximate, other = validate(args.docs, args.questions, args.config)
        _print_validation(problems, approximate, other)
        if not problems:
            print("OK: documents, questions and config are valid.")
        return 1 if problems else 0
    from chunklab_core.retrieval.embedding_cache import CacheUnusable

    try:
        record = run(args.docs, args.questions, args.config, args.out, args.resamples,
                     progress=False if args.no_progress else None, notebook=args.notebook)
    except SystemExit as exc:
        return int(exc.code or 0)
    except CacheUnusable as exc:  # names the cache folder and the fix; the earlier output left as it was
        print(f"chunklab-own: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt as exc:  # Ctrl-C, SIGTERM, SIGHUP: the temporary folder is gone
        print(f"chunklab-own: interrupted ({exc or 'Ctrl-C'}); {Path(args.out).resolve()} was left as it was",
              file=sys.stderr)
        return exit_status(exc)
    print(console_table(record))
    print(console_notes(record), end="")
    print(f"Report: {Path(args.out).resolve() / 'report.html'} (also CSV tables, recommendation.json, figures"
          f"{', report.ipynb' if args.notebook else ''})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
