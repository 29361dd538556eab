"""The one list of posts: every numbered post, and what the Makefile, `make runs` and post 00 need of it.

Handles: :data:`POSTS` (number, notebook, report package, the tables post 00 reads from it,
where `make runs` records it, where post 00's reading order lists it, and its extra make
prerequisites), and what is derived from it: :func:`recorded_posts` (``make runs``' order,
``run_recording.POSTS``), :func:`reading_order` (post 00's ``READING_ORDER``),
:func:`findings_tables` (the tables post 00 reads, with the post that writes each) and
:func:`make_fragment`, the Makefile fragment (``.cache/posts.mk``: ``NOTEBOOKS``,
``SITE_POSTS`` (what `make site` publishes), ``FINDINGS_TABLES`` and each post's prerequisites;
the Makefile's one pattern rule executes them); and each post's parameters (strategies, cut-offs,
depth, retrievers), read by its notebook, the lab and the pool. A new post is one :class:`Post` line here
(and its notebook source and report package).

Standard library only: the Makefile runs this file as a script with the system Python
(``python3.11 chunklab_core/reports/posts.py --out .cache/posts.mk``), before the virtualenv exists.
The one exception is :meth:`Post.retriever_names`, which asks the retriever registry when it is
called (never by the script).

Not handled: executing a post (``notebook_run``), the columns post 00 needs of each table
(``post00.sources``), what post 00 says about them (``post00.findings``).
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path


SERIES_FILE = Path(__file__).resolve().parents[1] / "decision" / "series.json"
SERIES: tuple[str, ...] = tuple(json.loads(SERIES_FILE.read_text(encoding="utf-8"))["strategies"])
"""The series' strategies, post 02's: the decision stage's one list (``decision/series.json``, its pool's
``SERIES``), read as a file because this module runs with the system Python and cannot import the package."""


@dataclass(frozen=True)
class Post:
    """One numbered post.

    ``inputs``: extra make prerequisites (make expressions, e.g. the recorded LLM calls it
    reads); ``only_if``: a make expression; the post is in ``NOTEBOOKS`` only when it is
    non-empty (its recorded inputs exist); ``after``: posts whose executed notebooks it needs
    first (``"*"``: every other post); ``make_args``: extra papermill arguments (a make
    expression); ``records_runs`` / ``reading``: its position in `make runs`' order / post 00's
    reading order (``None``: not in it); ``retrievers``: the retrievers its matrix runs, ``None``
    for every registered retriever as registered when asked (:meth:`retriever_names`).
    """

    number: str
    name: str  # the notebook's stem: notebooks/src/<name>.ipynb
    package: str
    title: str = ""
    read_for: str = ""
    tables: tuple[str, ...] = ()  # tables in data/ that post 00 reads
    records_runs: int | None = None
    reading: int | None = None
    inputs: tuple[str, ...] = ()
    only_if: str = ""
    after: tuple[str, ...] = ()
    make_args: str = ""
    strategies: tuple[str, ...] = ()
    ks: tuple[int, ...] = ()
    depth: int | None = None
    retrievers: tuple[str, ...] | None = None

    def parameters(self, strategies=None, ks=None) -> tuple[list[str], list[int]]:
        """A notebook's ``STRATEGIES`` and ``KS``: the values papermill gave, or (``None``) the declared ones."""
        return (list(self.strategies if strategies is None else strategies), list(self.ks if ks is None else ks))

    def retriever_names(self, retrievers=None) -> list[str]:
        """A notebook's ``RETRIEVERS``: the value papermill gave, or (``None``) the declared ones; where
        the post declares none, every retriever registered *now* (``retrieval.registry.registered``,
        read at the call, so a retriever a user's module or entry point adds is in it: the lab replays
        the cells this post records, no other)."""
        if retrievers is not None:
            return list(retrievers)
        if self.retrievers is not None:
            return list(self.retrievers)
        from chunklab_core.retrieval.registry import registered  # the package, only when asked

        return list(registered())

    @property
    def notebook(self) -> str:
        return f"notebooks/{self.name}.ipynb"

    @property
    def source(self) -> str:
        return f"notebooks/src/{self.name}.ipynb"


POSTS: tuple[Post, ...] = (
    Post("01", "01_chunking", "chunklab_core.reports.post01", "Which chunking strategy finds the answer?",
         "one retriever, one clean corpus: recall@k and its token cost",
         tables=("01_full_set_verdicts.csv",), records_runs=2, reading=1,
         strategies=("fixed_500", "fixed_500_o50", "fixed_500_o125", "recursive_500", "sentence_window_2",
                     "parent_doc_250_1000", "semantic_tfidf", "fixed_1000"), ks=(1, 3, 5, 10)),
    Post("02", "02_retrievers", "chunklab_core.reports.post02", "Retrievers, embedding models, other documents",
         "whether post 01's answer survives other retrievers, models and corpora",
         tables=("02_recall_verdicts.csv", "02_pool.csv", "02_pool_guide.csv", "02_chunk_health.csv", "02_stability.csv", "02_balanced_verdicts.csv",
                 "02_matrix.csv", "02_paired_retrievers.csv", "02_models.csv"),
         records_runs=1, reading=3, make_args="$(OWN_DOCS)",
         strategies=SERIES, ks=(1, 3, 5, 10)),
    Post("03", "03_uncertainty", "chunklab_core.reports.post03", "How far can N questions be trusted?",
         "post 01's ranking with paired intervals, the verdict rule, calibration, clustering",
         tables=("03_paired_vs_leader.csv", "03_clustered.csv", "03_calibration.csv"), records_runs=3, reading=2,
         after=("01_chunking",)),
    Post("04", "04_questions", "chunklab_core.reports.post04", "Where do test questions come from?",
         "what generated test questions hide", tables=("04_retrieval.csv", "04_trend.csv", "04_checks.csv"),
         records_runs=5, reading=5, inputs=("$(QUESTION_CALLS)",), only_if="$(QUESTION_CALLS)"),
    Post("05", "05_answers", "chunklab_core.reports.post05", "Answers from retrieved chunks, graded by LLM judges",
         "whether retrieval turns into right answers",
         tables=("05_answers.csv", "05_strategy_differences.csv", "05_agreement.csv"), records_runs=4, reading=6,
         inputs=("$(LLM_CALLS)",)),
    Post("06", "06_judge_audit", "chunklab_core.reports.post06", "Can the judges be trusted?",
         "every judge against the audit's grades (one model grader)",
         tables=("06_agreement.csv", "06_accuracy.csv", "06_paired.csv"), reading=7, inputs=("$(POST06_INPUTS)",),
         only_if="$(wildcard $(AUDIT)/post05_v2_sheet.csv)"),
    Post("07", "07_reranking", "chunklab_core.reports.post07", "Does a reranking stage help?",
         "reranking depth, scorers and their cost", tables=("07_stage.csv", "07_depths.csv", "07_slice_comparisons.csv"),
         records_runs=6, reading=8, inputs=("$(RERANK_CALLS)",), only_if="$(RERANK_CALLS)"),
    Post("08", "08_library_splitters", "chunklab_core.reports.post08",
         "The splitters RAG builders use, and Chroma's report",
         "framework defaults against the series' strategies; which of the report's differences survive",
         tables=("08_neighbours.csv", "08_llm_pairs.csv"), records_runs=7,
         reading=4, inputs=("$(CHUNKER_CALLS)",), after=("02_retrievers",)),  # its builder section reads 02_pool
    Post("00", "00_findings", "chunklab_core.reports.post00", inputs=("$(FINDINGS_TABLES)", "$(AUDIT)/post05_v2_sheet.csv"),
         after=("*",)),
)


def post(number: str) -> Post:
    """The post numbered ``number``; an unknown one is a ``KeyError`` listing the known ones."""
    for p in POSTS:
        if p.number == number:
            return p
    raise KeyError(f"no post {number!r}; known: {', '.join(p.number for p in POSTS)}")


def recorded_posts() -> tuple[str, ...]:
    """The notebooks `make runs` executes in record mode, in its order."""
    return tuple(p.name for p in sorted((p for p in POSTS if p.records_runs is not None), key=lambda p: p.records_runs))


def reading_order() -> tuple[tuple[str, str, str], ...]:
    """Post 00's reading order: (number, title, read it for) of every post it lists."""
    listed = sorted((p for p in POSTS if p.reading is not None), key=lambda p: p.reading)
    return tuple((p.number, p.title, p.read_for) for p in listed)


def findings_tables() -> dict[str, str]:
    """Every table post 00 reads -> the number of the post that writes it, in the posts' order."""
    return {table: p.number for p in POSTS for table in p.tables}


def make_fragment() -> str:
    """The Makefile fragment: ``NOTEBOOKS``, ``SITE_POSTS`` (the registered posts' executed
    notebooks that exist: what `make site` publishes, never a wildcard of the folder),
    ``FINDINGS_TABLES`` and each post's prerequisites."""
    lines = ["# Generated from chunklab_core/reports/posts.py (the one list of posts): do not edit.",
             "NOTEBOOKS := " + " ".join(f"$(if {p.only_if},{p.notebook},)" if p.only_if else p.notebook
                                        for p in POSTS),
             "SITE_POSTS := $(wildcard " + " ".join(sorted(p.notebook for p in POSTS)) + ")",
             "FINDINGS_TABLES := " + " ".join(f"data/{t}" for t in findings_tables())]
    for p in POSTS:
        after = [f"$(filter-out {p.notebook},$(NOTEBOOKS))"] if "*" in p.after else [
            f"notebooks/{name}.ipynb" for name in p.after]
        prerequisites = " ".join([p.source, *p.inputs, *after])
        lines.append(f"{p.notebook}: {prerequisites}")
        if p.tables:  # its tables come with its notebook (a table not yet committed is made by running it)
            lines.append(" ".join(f"data/{t}" for t in p.tables) + f": {p.notebook} ;")
        if p.make_args:
            lines.append(f"{p.notebook}: POST_ARGS = {p.make_args}")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Write the Makefile fragment to ``--out`` (atomically: a failed write leaves no partial file)."""
    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    handle, tmp = tempfile.mkstemp(dir=args.out.parent, prefix=f".{args.out.name}.")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(make_fragment())
        os.replace(tmp, args.out)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
