"""Retrieval runs written as TREC run and qrels files, for ranx, ir_measures or trec_eval.

Handles: any :class:`~chunklab_core.retrieval.run.RetrievalRun` (post 01's cells, every cell of
post 02's matrix in ``MatrixResult.runs``, a run on your own documents), one at a time
(:func:`write_trec`) or all the runs of a dict or matrix (:func:`export_runs`).

Formats (trec_eval's; ranx ``Run.from_file(kind="trec")`` and ``Qrels.from_file(kind="trec")``
read them)::

    run:    qid Q0 docid rank score run_name      one line per returned context, rank from 1
    qrels:  qid 0 docid relevance                 one line per relevant context

* ``docid`` is a returned *context*, ``<doc_id>:<start>-<end>`` (the character span of the
  source document it covers), so runs of different strategies never share an id by accident;
  ``doc_id`` and ``qid`` are percent-encoded (``urllib.parse.quote``) so that they hold no
  whitespace.
* ``score`` is ``depth - rank + 1``: the runs keep the rank order of the retriever, not its
  raw scores, and every rank metric depends only on that order.
* qrels are the post-01 rule (``evaluation.scoring``): a context is relevant (1) when it contains any
  alternative of the question's single gold slot, judged over every context of the cell, so
  an nDCG computed from the files has the same ideal ranking as the series. Questions with
  several slots or with gold found nowhere have no qrels line (their scores are 0, as in
  the series; evaluate with ranx's ``make_comparable=True``). Post 02's fuzzy multi-slot
  recall and graded pooled nDCG are not expressible as TREC qrels and are not exported.

Not handled: reading TREC files (ranx, ir_measures and trec_eval do), raw retriever scores.

CLI: ``chunklab-trec --out DIR --corpus squad --strategies fixed_500
--retrievers bm25`` (``--corpus own --docs DIR --questions FILE`` for your documents).
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import Iterable, Mapping
from urllib.parse import quote

from chunklab_core.core import bounds
from chunklab_core.core.atomic_files import atomic_write, replace_folder
from chunklab_core.core.output_dirs import require_output_folder, write_marker
from chunklab_core.retrieval.run import RetrievalRun
from chunklab_core.retrieval.registry import BASELINE, needs_model, registered, uses_no_model
from chunklab_core.core.cli_errors import command_edge

_SAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")


MARKER = ".chunklab-trec"  # lists an earlier export's files: only such a --out folder is replaced

def context_id(doc_id: str, start: int, end: int) -> str:
    """The TREC document id of a returned context: ``<doc_id percent-encoded>:<start>-<end>``."""
    return f"{quote(str(doc_id), safe='/._-')}:{start}-{end}"


def run_name(run: RetrievalRun, model: str | None = None) -> str:
    """``strategy/retriever`` (``/model`` added for embedding retrievers), without whitespace."""
    parts = [run.strategy, run.retriever] + ([] if uses_no_model(model) else [model])
    return "/".join(quote(p, safe="._-") for p in parts)


def trec_run_lines(run: RetrievalRun, name: str | None = None) -> list[str]:
    """``qid Q0 docid rank score name`` for every returned context of every question."""
    name = name or run_name(run)
    depth = run.ranked.shape[1]
    lines = []
    for question, ranked in zip(run.corpus.questions, run.ranked):
        qid = quote(str(question.qid), safe="._-")
        for rank, context in enumerate(ranked[ranked >= 0], start=1):
            lines.append(f"{qid} Q0 {context_id(*run.contexts[context])} {rank} {depth - rank + 1} {name}")
    return lines


def trec_qrels_lines(run: RetrievalRun) -> list[str]:
    """``qid 0 docid 1`` for every relevant context of every question (post-01 rule)."""
    lines = []
    for question, relevant in zip(run.corpus.questions, run.relevant):
        qid = quote(str(question.qid), safe="._-")
        lines += [f"{qid} 0 {context_id(*run.contexts[c])} 1" for c in sorted(relevant)]
    return lines


def _write_lines(path: Path, lines: list[str]) -> None:
    def write(tmp: Path) -> None:
        tmp.write_text("".join(line + "\n" for line in lines), encoding="utf-8")

    atomic_write(path, write)


def write_trec(run: RetrievalRun, folder: str | Path, stem: str | None = None,
               model: str | None = None) -> tuple[Path, Path]:
    """Write ``<stem>.run`` and ``<stem>.qrels`` into ``folder`` (atomically); return both paths.

    ``stem`` defaults to ``corpus__strategy__retriever[__model]``.
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    parts = [run.corpus.name, run.strategy, run.retriever] + ([] if uses_no_model(model) else [model])
    stem = stem or "__".join(_SAFE_NAME.sub("-", p) for p in parts)
    run_path, qrels_path = folder / f"{stem}.run", folder / f"{stem}.qrels"
    _write_lines(run_path, trec_run_lines(run, run_name(run, model)))
    _write_lines(qrels_path, trec_qrels_lines(run))
    return run_path, qrels_path


def export_runs(runs: Mapping | Iterable[RetrievalRun], folder: str | Path) -> list[tuple[Path, Path]]:
    """Write every run: a ``MatrixResult.runs`` dict keyed ``(corpus, model, strategy, retriever)``,
    any other dict or iterable of runs, or a ``MatrixResult`` itself. Returns the written pairs."""
    runs = getattr(runs, "runs", runs)  # a MatrixResult
    items = runs.items() if isinstance(runs, Mapping) else ((None, run) for run in runs)
    written = []
    for key, run in items:
        model = key[1] if isinstance(key, tuple) and len(key) == 4 else None
        written.append(write_trec(run, folder, model=model))
    return written


@command_edge
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Write retrieval runs as TREC run and qrels files.")
    parser.add_argument("--out", type=Path, required=True, help="folder for the .run and .qrels files")
    parser.add_argument("--corpus", default="squad", help="squad, nq, cuad, qasper, chroma or own")
    parser.add_argument("--strategies", default="fixed_500", help="comma-separated chunking strategies")
    parser.add_argument("--retrievers", default=BASELINE, help=f"comma-separated: {', '.join(registered())}")
    parser.add_argument("--model", default="all-MiniLM-L6-v2", help="embedding model of dense/hybrid")
    parser.add_argument("--k", type=bounds.int_in("k"), default=10, help="contexts per question (default 10)")
    parser.add_argument("--docs", default="", help="your documents (folder), with --corpus own")
    parser.add_argument("--questions", default="", help="your questions file, with --corpus own")
    parser.add_argument("--squad-articles", type=bounds.int_in("questions"), default=40)
    parser.add_argument("--squad-questions", type=bounds.int_in("questions"), default=800)
    args = parser.parse_args(argv)

    from chunklab_core.evaluation.scoring import run_cell
    from chunklab_core.data.corpora import load_corpus

    require_output_folder(args.out, MARKER, inputs=[args.docs or None, args.questions or None])
    corpus = load_corpus(args.corpus, squad_articles=args.squad_articles, squad_questions=args.squad_questions,
                         docs=args.docs, questions=args.questions)

    def fill(work: Path) -> list[str]:
        lines = []
        for strategy in args.strategies.split(","):
            for retriever in args.retrievers.split(","):
                options = {"model": args.model} if needs_model(retriever) else {}
                run = run_cell(corpus, strategy, retriever, k_max=args.k, retriever_options=options)
                run_path, qrels_path = write_trec(run, work, model=args.model if needs_model(retriever) else None)
                lines.append(f"{args.out / run_path.name}  {args.out / qrels_path.name}")
        write_marker(work, MARKER, "chunklab-trec")
        return lines

    print("\n".join(replace_folder(args.out, fill)))  # all pairs or none; only a new or earlier --out replaced
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
