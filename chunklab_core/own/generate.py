"""``chunklab-own questions``: test questions generated from your documents, checked, for review.

    chunklab-own questions DOCS --out questions.yaml [--n N] [--report RUN_DIR] [--seed S]
                 [--server URL --model M] [--replay] [--threads T]

Handles: the passage draw (``own.passages.stratified_draw``: every document represented), one
question and answer per passage by post 04's prompt and parser (``questions.generation``: the
local Qwen2.5-Coder-1.5B by default, or any OpenAI-compatible server with ``--server``/``--model``),
every call recorded in ``<out>.records/`` (``llm.records``: an interrupted run resumes where it
stopped; ``--replay`` rebuilds the file from the records and loads no model), post 04's seven
validity checks (``questions.checks.check_all``: answer not in the passage, context-dependent
wording, answer in the question, near-duplicates -- the later one of a pair --, numbers, yes/no
restatement, not a question), and the questions file: every entry carries ``source: generated``
and its check results; a flagged entry is written commented out, preceded by its reasons, so
``chunklab-own run`` skips it until a reviewer accepts it (``own.review``). The gold snippet is
the answer as the document writes it (the passage's own characters at the located span).

How many: ``--n``; else the questions an earlier run's report says would decide its top two at
the margin delta (``--report RUN_DIR``, ``recommendation.json``'s ``questions at margin``); else
``DEFAULT_N``. Always at most the passages the documents hold (said when it binds).

Not handled: more than one question per passage, judging whether a question is good beyond the
rules (the review page is for that), other languages' context cues.
"""

from __future__ import annotations

from chunklab_core.core import bounds

import json
from dataclasses import dataclass
from pathlib import Path

import yaml

# the heavy imports (numpy, rapidfuzz, the checks, the generator) are deferred into the functions:
# ``chunklab-own`` imports this module to add its subcommand, and ``run`` must not pay for them
STAGE = "own_questions"
UNPARSED = "unparsed"  # questions.generation.UNPARSED (a test pins it)
DEFAULT_N = 100
DUPLICATE_THRESHOLD = 90.0
FLAG_PREFIX = "# FLAGGED: "
REJECT_PREFIX = "# REJECTED: "


@dataclass
class Item:
    """One generated question: its passage, the model's reply, its checks and review state."""

    qid: str
    passage: object  # own.passages.DocPassage
    question: str
    answer: str
    gold: str  # the answer as the document writes it ("" when not found in the passage)
    status: str
    checks: dict  # check name -> questions.checks.Check

    @property
    def reasons(self) -> list[str]:
        if self.status == UNPARSED:
            return ["unparsed: the model's reply could not be read twice"]
        return [f"{name}: {check.evidence}" if check.evidence else name
                for name, check in self.checks.items() if check.flag]

    def entry(self) -> dict:
        """The questions-file entry (fields the loader accepts)."""
        return {"id": self.qid, "query": self.question, "gold_snippets": self.gold, "doc": self.passage.doc_id,
                "source": "generated",
                "checks": {name: ("flag: " + c.evidence if c.evidence else "flag") if c.flag else "pass"
                           for name, c in self.checks.items()}}


def earlier_duplicates(questions: list[str], threshold: float = DUPLICATE_THRESHOLD) -> list:
    """``questions.checks.near_duplicates`` with only the later question of each pair flagged.

    Same similarity (``rapidfuzz`` token-sort ratio after ``default_process``) and threshold; a
    question is flagged when an *earlier* one scores >= ``threshold``, so one of each pair is kept.
    """
    import numpy as np
    from rapidfuzz import fuzz, process, utils

    from chunklab_core.questions.checks import Check

    if len(questions) < 2:
        return [Check(False, "") for _ in questions]
    scores = process.cdist(questions, questions, scorer=fuzz.token_sort_ratio, processor=utils.default_process,
                           dtype=np.float64)
    checks = []
    for i, text in enumerate(questions):
        earlier = scores[i, :i]
        j = int(np.argmax(earlier)) if i else -1
        if i == 0 or not text.strip() or earlier[j] < threshold:
            checks.append(Check(False, ""))
        else:
            checks.append(Check(True, f"{earlier[j]:.0f} vs {questions[j]!r}"))
    return checks


def verbatim_gold(passage: str, answer: str) -> str:
    """The answer as the passage writes it (first located span, ``locate_ignoring_spacing``), else ""."""
    from chunklab_core.questions.checks import locate_ignoring_spacing

    spans = locate_ignoring_spacing(passage, answer) if answer.strip() else []
    return passage[spans[0][0]:spans[0][1]] if spans else ""


def generate(passages: list, llm, progress: bool = False) -> list[Item]:
    """One question per passage through ``llm`` (a recorded ``ChatModel``), then every check."""
    from tqdm import tqdm

    from chunklab_core.questions.checks import CHECK_NAMES, check_all
    from chunklab_core.questions.generation import generate_question

    generations = [generate_question(llm, p.text)
                   for p in tqdm(passages, desc="question generation", disable=not progress)]
    questions = [g.question for g in generations]
    checks = check_all(questions, [g.answer for g in generations], [p.text for p in passages],
                       duplicate_threshold=DUPLICATE_THRESHOLD)
    duplicates = earlier_duplicates(questions)
    items = []
    for number, (p, g, c, dup) in enumerate(zip(passages, generations, checks, duplicates), start=1):
        c = {name: (dup if name == "near-duplicate" else c[name]) for name in CHECK_NAMES}
        items.append(Item(f"gen-{number:03d}", p, g.question, g.answer, verbatim_gold(p.text, g.answer),
                          g.status, c))
    return items


def yaml_block(entry: dict) -> list[str]:
    text = yaml.safe_dump([entry], allow_unicode=True, sort_keys=False, width=100)
    return ["  " + line for line in text.rstrip("\n").splitlines()]


def render(items: list[Item], header: list[str]) -> str:
    """The questions file: header comments, then every entry; flagged ones commented out with their reasons."""
    lines = [f"# {line}" if line else "#" for line in header] + ["questions:"]
    for item in items:
        block = yaml_block(item.entry())
        if item.reasons:
            lines += [FLAG_PREFIX + "; ".join(item.reasons).replace("\n", " ")] + ["# " + line for line in block]
        else:
            lines += block
    return "\n".join(lines) + "\n"


def header_lines(docs: Path, n_docs: int, drawn: int, asked: str, model: str, seed: int, items: list[Item]) -> list[str]:
    flagged = sum(bool(i.reasons) for i in items)
    return [f"Questions generated by chunklab-own questions from {docs} ({n_docs} documents).",
            f"{drawn} passages drawn across the documents (seed {seed}; {asked}), one question each by {model}.",
            f"{len(items) - flagged} entries pass the seven checks of the series' generated-question study; {flagged} are flagged and commented out",
            "with their reasons (review them: chunklab-own review THIS_FILE DOCS).",
            "Generated questions are easier than real users' (the series measured it); chunklab-own run says so in its box.",
            ""]


def questions_from_report(run_dir: str | Path | None) -> int | None:
    """``questions at margin`` of an earlier run's ``recommendation.json`` (None when absent)."""
    if not run_dir:
        return None
    path = Path(run_dir) / "recommendation.json"
    if not path.is_file():
        raise FileNotFoundError(f"{path}: not found; --report takes the output folder of chunklab-own run")
    value = json.loads(path.read_text(encoding="utf-8")).get("questions at margin", {}).get("questions")
    return int(value) if value else None


def planned_n(documents, n: int | None, report: str | Path | None) -> tuple[int, str]:
    """How many passages to draw and the sentence saying why (bounded by the passages the documents hold)."""
    from chunklab_core.own.passages import supply

    available = supply(documents)
    if n is not None:
        wanted, why = n, f"--n {n}"
    else:
        from_report = questions_from_report(report)
        wanted, why = ((from_report, f"{from_report} would decide the top two of {report} at its margin")
                       if from_report else (DEFAULT_N, f"default {DEFAULT_N}"))
    if wanted > available:
        return available, f"{why}, bounded by the {available} passages the documents hold"
    if wanted < len(documents):
        return len(documents), f"{why}, raised to one per document ({len(documents)})"
    return wanted, why


def write_questions(docs: str | Path, out: str | Path, llm, n: int | None = None, seed: int = 0,
                    report: str | Path | None = None, model_name: str = "", progress: bool = False) -> list[Item]:
    """Draw, generate, check and write ``out`` (atomically: a failed run leaves no file); the items."""
    from chunklab_core.core.atomic_files import atomic_write_text
    from chunklab_core.data.loaders import load_folder
    from chunklab_core.own.passages import stratified_draw

    docs, out = Path(docs), Path(out)
    documents = load_folder(docs, exclude=(out,))
    count, why = planned_n(documents, n, report)
    passages = stratified_draw(documents, count, seed)
    items = generate(passages, llm, progress=progress)
    header = header_lines(docs, len(documents), len(passages), why, model_name or "the model", seed, items)
    atomic_write_text(out, render(items, header))
    return items


HEADER_START = "# Questions generated by chunklab-own questions"


def out_problem(out: Path, docs: Path, force: bool = False) -> str | None:
    """Why ``out`` cannot be written (None when it can): tracked by git, a folder, or a file this command did not write."""
    from chunklab_core.core.output_dirs import tracked_files

    if out.is_dir():
        return f"{out}: is a folder; --out takes the questions file to write (questions.yaml)"
    if tracked_files(out):
        return f"{out}: tracked by git; a run never writes a tracked file. Choose another --out"
    if out.is_file() and not force and not out.read_text(encoding="utf-8", errors="replace").startswith(HEADER_START):
        return (f"{out}: exists and was not written by chunklab-own questions (your own questions?); "
                "choose another --out, or pass --force to replace it")
    if not docs.is_dir():
        return f"{docs}: not a folder of documents"
    return None


def add_parser(sub) -> None:
    """The ``questions`` subcommand of ``chunklab-own``."""
    parser = sub.add_parser("questions", help="generate test questions from your documents (for review, then run)")
    parser.add_argument("docs", help="folder of your documents (as for run)")
    parser.add_argument("--out", default="questions.yaml", help="questions file to write (default ./questions.yaml)")
    parser.add_argument("--n", type=bounds.int_in("questions"), default=None,
                        help=f"questions to draw (default: --report's count at the margin, else {DEFAULT_N}; "
                             "at most the passages the documents hold)")
    parser.add_argument("--report", default=None, help="an earlier chunklab-own run folder: draw the questions "
                                                       "it says would decide its top two")
    parser.add_argument("--seed", type=bounds.int_in("seed"), default=0, help="passage draw seed (default 0)")
    parser.add_argument("--server", default=None, help="OpenAI-compatible base URL (default: the local model)")
    parser.add_argument("--model", default=None, help="model: a served model id with --server, else a local "
                                                      "alias or .gguf path (default qwen-1.5b)")
    parser.add_argument("--threads", type=bounds.int_in("threads"), default=None, help="CPU threads of the local model")
    parser.add_argument("--replay", action="store_true", help="rebuild the file from the recorded calls; no model")
    parser.add_argument("--force", action="store_true", help="replace an --out this command did not write")
    parser.add_argument("--no-progress", action="store_true")


def records_folder(out: Path) -> Path:
    """Where the calls of ``out`` are recorded: ``<out without suffix>.records/`` beside it."""
    return out.with_name(out.stem + ".records")


def command(args, llm=None) -> int:
    """Run ``chunklab-own questions``; ``llm`` replaces the configured model (tests pass a scripted one)."""
    import sys

    from chunklab_core.data.loaders import ValidationError
    from chunklab_core.llm.base import BackendUnavailable, IdentityUnavailable
    from chunklab_core.llm.record_schema import RecordsError
    from chunklab_core.llm.records import CallStore, RecordedLLM, user_error_types

    def fail(message: str) -> int:
        print(f"chunklab-own questions: {message}", file=sys.stderr)
        return 1

    docs, out = Path(args.docs), Path(args.out)
    problem = out_problem(out, docs, args.force)
    if problem:
        return fail(problem)
    if args.n is not None and args.n < 1:
        return fail(f"--n must be at least 1, got {args.n}")
    records = records_folder(out)
    mode = "replay" if args.replay else "replay_or_record"
    if not args.replay:
        records.mkdir(parents=True, exist_ok=True)
    if args.server and not args.model:
        return fail("--server needs --model (the model id the server lists)")
    model = args.model or "qwen-1.5b"
    if llm is None:
        from chunklab_core.llm.wiring import make_backend

        llm = make_backend("openai" if args.server else "llamacpp", model, args.threads, None, args.server)
    try:
        store = CallStore.for_stage(STAGE, records, make_target=None)
        recorded = RecordedLLM(llm, store, mode)
        items = write_questions(docs, out, recorded, args.n, args.seed, args.report,
                                model_name=f"{model} (server {args.server})" if args.server else model,
                                progress=not args.no_progress)
    except (ValidationError, FileNotFoundError, RecordsError, BackendUnavailable, IdentityUnavailable,
            *user_error_types()) as err:
        return fail(f"{err}\n(finished calls are kept in {records}; run the same command again to resume)")
    flagged = sum(bool(i.reasons) for i in items)
    print(f"wrote {out}: {len(items)} generated questions from {len({i.passage.doc_id for i in items})} documents, "
          f"{len(items) - flagged} pass the checks, {flagged} flagged and commented out "
          f"({recorded.new_calls} new calls, {recorded.hits} replayed from {records}).\n"
          f"review them: chunklab-own review {out} {docs}\n"
          f"then: chunklab-own run {docs} {out}")
    return 0
