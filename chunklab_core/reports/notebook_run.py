"""Executing a notebook safely: parameter names checked first, the output replaced only on success.

Usage (what every notebook rule of the Makefile runs; usable by hand the same way)::

    python -m chunklab_core.reports.notebook_run SOURCE OUTPUT [papermill options...]
    python -m chunklab_core.reports.notebook_run --check SOURCE [-p NAME VALUE ...]   # only the check

Handles: :func:`notebook_parameters` (the names assigned in the source notebook's cell tagged
``parameters``, read with ``ast``), :func:`papermill_parameter_names` (the names given by
``-p``/``-r``/``-y``/``-f``/``-b`` and their long forms), :func:`check_parameters` (every
unknown name at once, with the closest known name as a hint: papermill itself only warns
and runs the post on its defaults) and :func:`run_notebook`: papermill writes a hidden
temporary file next to OUTPUT, named for this run alone (``.OUTPUT.tmp-<pid>-<random>.ipynb``,
so two runs into one output never share one), ``scripts/clean_notebook.py`` strips
its volatile metadata, and only then is it moved over OUTPUT with ``os.replace`` (atomic). A failed
run (bad data, a bug, Ctrl-C, SIGTERM, SIGHUP) leaves OUTPUT as it was and removes the temporary
file; on a signal papermill is stopped as by Ctrl-C, so its kernel is shut down
(:func:`chunklab_core.core.signals.run_child`), and the exit status is 128 + the signal. The
failed notebook can be kept for reading with ``--keep-failed PATH``.

The irreplaceable folders (``paths.IRREPLACEABLE_DIRS``: the recorded LLM calls in
``data/records/``, the audit sheets, keys and populations in ``data/audit/``) are guarded: every
file under them is snapshotted (path, size, sha256, :mod:`chunklab_core.core.snapshot`) before
the notebook runs and compared after; a file added, changed or removed fails the run
(exit status :data:`IRREPLACEABLE_WRITTEN`) with every such file named, and OUTPUT is left as
it was. Notebooks read those folders; only the recorders and the grading tools a person runs
write there. The tables and figures a post writes as it runs (``data/NN_*``, ``figures/NN_*``)
are put back as they were when the run fails or is interrupted (:class:`RegeneratedOutputs`), so
a failed run leaves no partial output.

Not handled: checking parameter *values* (the notebook's own validation does that), papermill
options other than the parameter ones (passed through untouched).
"""

from __future__ import annotations

import argparse
import ast
import base64
import difflib
import json
import math
import os
import re
import shutil
import subprocess  # noqa: F401  (tests replace subprocess.call through this module)
import sys
import tempfile
import time
from pathlib import Path

import yaml

from chunklab_core.core import paths
from chunklab_core.core.atomic_files import file_mode_for
from chunklab_core.core.paths import PROJ_ROOT
from chunklab_core.core.signals import exit_status, run_child, signals_as_interrupt
from chunklab_core.core.snapshot import compare, describe, snapshot
from chunklab_core.core.cli_errors import command_edge

_PAIR_OPTIONS = ("-p", "--parameters", "-r", "--parameters_raw")
_YAML_OPTIONS = ("-y", "--parameters_yaml")
_FILE_OPTIONS = ("-f", "--parameters_file")
_B64_OPTIONS = ("-b", "--parameters_base64")
IRREPLACEABLE_WRITTEN = 3  # exit status of a run that wrote into paths.IRREPLACEABLE_DIRS


class ParameterError(ValueError):
    """Unknown parameter names (or a notebook without a parameters cell)."""


def notebook_parameters(source: str | os.PathLike) -> list[str]:
    """Names assigned in the cell tagged ``parameters`` of ``source``, in order."""
    notebook = json.loads(Path(source).read_text(encoding="utf-8"))
    for cell in notebook.get("cells", []):
        if "parameters" in cell.get("metadata", {}).get("tags", []):
            code = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
            names = []
            for node in ast.parse(code).body:
                targets = node.targets if isinstance(node, ast.Assign) else \
                    [node.target] if isinstance(node, ast.AnnAssign) else []
                names += [t.id for t in targets if isinstance(t, ast.Name)]
            return names
    raise ParameterError(f"{source}: no cell tagged 'parameters'; papermill would inject parameters "
                         "into a new cell without checking them")


def papermill_parameter_names(args: list[str]) -> list[str]:
    """The parameter names a papermill command line sets (``-p NAME VALUE``, ``-y YAML`` ...)."""
    return [name for name, _ in papermill_parameter_values(args)]


def _typed(text: str):
    """A ``-p`` value as papermill types it (``True``/``False``/``None``, an int, a float, else text)."""
    if text in ("True", "False"):
        return text == "True"
    if text == "None":
        return None
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def papermill_parameter_values(args: list[str]) -> list[tuple[str, object]]:
    """``(name, value)`` of every parameter a papermill command line sets, typed as papermill types
    them (``-p``: :func:`_typed`; ``-r``: text; ``-y``/``-f``/``-b``: YAML)."""
    pairs, i = [], 0
    while i < len(args):
        arg = args[i]
        option, _, inline = arg.partition("=") if arg.startswith("--") else (arg, "", "")
        if option in _PAIR_OPTIONS:
            name, value = (inline, args[i + 1] if i + 1 < len(args) else "") if inline else \
                (args[i + 1] if i + 1 < len(args) else "", args[i + 2] if i + 2 < len(args) else "")
            pairs.append((name, value if option in ("-r", "--parameters_raw") else _typed(value)))
            i += 2 if inline else 3
            continue
        if option in (*_YAML_OPTIONS, *_FILE_OPTIONS, *_B64_OPTIONS):
            value = inline or (args[i + 1] if i + 1 < len(args) else "")
            if option in _FILE_OPTIONS:
                value = Path(value).read_text(encoding="utf-8")
            elif option in _B64_OPTIONS:
                value = base64.b64decode(value).decode("utf-8")
            data = yaml.safe_load(value) or {}
            if not isinstance(data, dict):
                raise ParameterError(f"{arg} must give a YAML mapping of parameter names to values")
            pairs += [(str(k), v) for k, v in data.items()]
            i += 1 if inline else 2
            continue
        i += 1
    return pairs


# A notebook parameter's kind by its name (core.bounds.RANGES); every other number must be finite.
PARAMETER_KINDS = ((re.compile(r"RESAMPLES$"), "resamples"), (re.compile(r"^SEED$"), "seed"),
                   (re.compile(r"^N_|_QUESTIONS$|_ARTICLES$|_DOCUMENTS$"), "questions"),
                   (re.compile(r"^(K|KS|DEPTH|DEPTHS)$"), "k"),
                   (re.compile(r"_REPEATS$|_SPLITS$|_COMPARISONS$|REPETITIONS$|_QUERIES$"), "count"))


def _numbers(value):
    """Every number inside ``value`` (lists, tuples and mapping values searched; booleans are not numbers)."""
    if isinstance(value, bool):
        return
    if isinstance(value, (int, float)):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _numbers(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _numbers(item)


def check_parameter_values(source: str | os.PathLike, pairs: list[tuple[str, object]]) -> None:
    """Raise :class:`ParameterError` for a number from the command line outside its kind's range
    (``PARAMETER_KINDS``: ``core.bounds.RANGES``) or, for any other parameter, not finite (NaN, inf)."""
    from chunklab_core.core import bounds

    problems = []
    for name, value in pairs:
        kind = next((k for pattern, k in PARAMETER_KINDS if pattern.search(name)), None)
        for number in _numbers(value):
            if kind is not None:
                message = bounds.problem(name, number, kind, integer=True)
            else:
                message = None if math.isfinite(number) else f"{name} must be a finite number, got {number!r}"
            if message:
                problems.append(f"  - {message}")
    if problems:
        raise ParameterError(f"{source}: parameter value(s) out of range; nothing was run:\n" + "\n".join(problems))


def check_parameters(source: str | os.PathLike, names: list[str]) -> None:
    """Raise :class:`ParameterError` listing every name not in ``source``'s parameters cell."""
    known = notebook_parameters(source)
    unknown = [n for n in dict.fromkeys(names) if n not in known]
    if unknown:
        lines = []
        for name in unknown:
            close = difflib.get_close_matches(name, known, n=1)
            lines.append(f"  - {name}" + (f" (did you mean {close[0]}?)" if close else ""))
        raise ParameterError(f"{source}: unknown parameter(s); nothing was run:\n" + "\n".join(lines)
                             + f"\nthe parameters cell defines: {', '.join(known)}")


def run_notebook(source: str | os.PathLike, output: str | os.PathLike, papermill_args: list[str],
                 kernel: str = "chunklab", keep_failed: str | os.PathLike | None = None) -> int:
    """Check the parameters, execute ``source`` into a temporary file, clean it, move it over
    ``output`` only if everything succeeded and nothing under ``paths.IRREPLACEABLE_DIRS``
    changed; returns papermill's (or the cleaner's) exit status, or
    :data:`IRREPLACEABLE_WRITTEN`."""
    check_parameters(source, papermill_parameter_names(papermill_args))
    check_parameter_values(source, papermill_parameter_values(papermill_args))
    output = Path(output)
    output.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=f".{output.stem}.tmp-{os.getpid()}-", suffix=".ipynb", dir=output.parent)
    os.close(fd)
    tmp = Path(name)
    os.chmod(tmp, file_mode_for(output))  # mkstemp's 0600 would follow the post; keep the post's (or umask's) mode
    with signals_as_interrupt():
        return _run(source, output, tmp, papermill_args, kernel, keep_failed)


def _run(source, output: Path, tmp: Path, papermill_args: list[str], kernel: str, keep_failed) -> int:
    # CHUNKLAB_PROGRESS=0 (make all, which runs posts in parallel): no bar, papermill's warnings
    # only, and one line per post when it is done, so concurrent posts stay readable
    parallel = os.environ.get("CHUNKLAB_PROGRESS") == "0"
    progress = "--no-progress-bar" if os.environ.get("CI") or parallel else "--progress-bar"  # off under CI too
    command = [sys.executable, "-m", "papermill", "--kernel", kernel, progress,
               str(source), str(tmp), *(["--log-level", "WARNING"] if parallel else []), *papermill_args]
    started = time.monotonic()
    guarded = tuple(paths.IRREPLACEABLE_DIRS)  # read at call time (tests point it elsewhere)
    before = snapshot(guarded)
    # only this post's files (NN_*): make all runs posts in parallel, and a failed post must not
    # undo what another one wrote meanwhile
    post = output.name[:3] if output.name[:2].isdigit() and output.name[2:3] == "_" else ""
    outputs = RegeneratedOutputs((paths.TABLES_DIR, paths.FIGURES_DIR), prefix=post)
    status = 1
    try:
        status = run_child(command)
        if status == 0:
            status = run_child([sys.executable, str(PROJ_ROOT / "scripts" / "clean_notebook.py"), str(tmp)])
        written = compare(before, snapshot(guarded))
        if written:
            print(f"notebook_run: {source} WROTE INTO THE IRREPLACEABLE FOLDERS "
                  f"({', '.join(str(d) for d in guarded)}); notebooks must only read them:\n"
                  f"{describe(written)}\n{output} was left as it was. Record LLM calls or grade with the "
                  "tools that write there (make llm-run / llm-questions / llm-rerank, chunklab_core.audit.*), "
                  "then re-execute the post to replay them; `git status data` shows what this run changed.",
                  file=sys.stderr)
            status = IRREPLACEABLE_WRITTEN
        if status == 0:
            os.replace(tmp, output)
            outputs.keep()
            if parallel:
                print(f"notebook_run: {output} executed in {time.monotonic() - started:.0f} s", flush=True)
            return 0
        if keep_failed and tmp.exists():
            shutil.move(str(tmp), str(keep_failed))
        print(f"notebook_run: {source} failed (exit {status}); {output} was left as it was"
              + (f"; the failed run is in {keep_failed}" if keep_failed else ""), file=sys.stderr)
        return status
    finally:
        tmp.unlink(missing_ok=True)
        outputs.restore_unless_kept()


class RegeneratedOutputs:
    """The tables and figures a post writes (files at the top of ``data/`` and in ``figures/``),
    put back as they were when its run fails or is interrupted.

    Only the post's own files count (``prefix``, its number: ``02_``), so a post failing while
    another runs beside it (``make all`` runs posts in parallel) leaves the other's files alone.
    Before the run every such file is copied into a hidden backup folder (a few MB: copies, not
    hard links, so a writer that rewrites a file in place cannot change the backup too); after a
    failed run a file the run changed gets its original back, a file it created is removed, and
    the backup is deleted. After a successful run the backup is only deleted.
    """

    def __init__(self, folders, prefix: str = "") -> None:
        self.folders = [Path(f) for f in folders if Path(f).is_dir()]
        self.prefix = prefix  # only files whose names start with it (a post's own: "02_")
        self.backup = Path(tempfile.mkdtemp(prefix=".outputs-backup-", dir=paths.CACHE_DIR if paths.CACHE_DIR.is_dir()
                                            else None))
        self.saved: dict[Path, Path] = {}
        self.kept = False
        for index, folder in enumerate(self.folders):
            for file in self._files(folder):
                copy = self.backup / str(index) / file.name
                copy.parent.mkdir(exist_ok=True)
                shutil.copy2(file, copy)
                self.saved[file] = copy

    def _files(self, folder: Path) -> list[Path]:
        return sorted(p for p in folder.iterdir()
                      if p.is_file() and not p.name.startswith(".") and p.name.startswith(self.prefix))

    def keep(self) -> None:
        self.kept = True

    def restore_unless_kept(self) -> None:
        try:
            if not self.kept:
                restored, removed = [], []
                for folder in self.folders:
                    for file in self._files(folder):
                        copy = self.saved.get(file)
                        if copy is None:
                            file.unlink(missing_ok=True)
                            removed.append(file.name)
                        elif file.read_bytes() != copy.read_bytes():
                            os.replace(copy, file)
                            restored.append(file.name)
                for file, copy in self.saved.items():
                    if not file.exists() and copy.exists():
                        os.replace(copy, file)
                        restored.append(file.name)
                if restored or removed:
                    print(f"notebook_run: the failed run's tables and figures were undone "
                          f"({len(restored)} restored, {len(removed)} removed)", file=sys.stderr)
        finally:
            shutil.rmtree(self.backup, ignore_errors=True)


@command_edge
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m chunklab_core.reports.notebook_run", allow_abbrev=False,
        description="Run a notebook with papermill after checking its parameter names; the output "
                    "is replaced only when the run succeeds. Other options go to papermill.")
    parser.add_argument("--check", action="store_true", help="only check the parameter names")
    parser.add_argument("--kernel", default="chunklab")
    parser.add_argument("--keep-failed", metavar="PATH", help="keep a failed run's notebook here")
    parser.add_argument("--runs", choices=("live", "record", "replay"), default=None,
                        help="CHUNKLAB_RUNS for the run: how retrieval runs are read (make all: replay)")
    parser.add_argument("source")
    parser.add_argument("output", nargs="?")
    args, papermill_args = parser.parse_known_args(argv)
    if args.runs is not None:  # the kernel inherits it (retrieval.recorded_runs.current_mode)
        os.environ["CHUNKLAB_RUNS"] = args.runs
    if args.output is not None and args.output.startswith("-"):
        papermill_args.insert(0, args.output)
        args.output = None
    try:
        if args.output is None and not args.check:
            parser.error("give SOURCE and OUTPUT (or --check SOURCE to only check the parameter names)")
        if args.check:
            check_parameters(args.source, papermill_parameter_names(papermill_args))
            print(f"{args.source}: parameter names ok")
            return 0
        if args.keep_failed and os.path.lexists(args.keep_failed):  # never moved over a file of yours
            parser.error(f"--keep-failed {args.keep_failed}: already exists; give a new path")
        return run_notebook(args.source, args.output, papermill_args, args.kernel, args.keep_failed)
    except ParameterError as err:
        print(err, file=sys.stderr)
        return 2
    except KeyboardInterrupt as err:  # Ctrl-C, SIGTERM, SIGHUP: papermill stopped, temporary file removed
        print(f"notebook_run: {args.source} interrupted ({err or 'Ctrl-C'}); {args.output} was left as it "
              "was", file=sys.stderr)
        return exit_status(err)


if __name__ == "__main__":
    raise SystemExit(main())
