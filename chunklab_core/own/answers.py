"""``chunklab-own answers``: are the answers built on your retrieval right? Answers and judges on your corpus.

For the recommended setting of a ``chunklab-own run`` (its overall leader; with
``--candidates`` also every cell that *cannot be ruled out*), or for cells named with
``--cell``, each question's top-k contexts are retrieved exactly as the run did (same
strategy, retriever and embedding model, :func:`chunklab_core.evaluation.scoring.run_cell`), an
answering model answers from them (:func:`chunklab_core.llm.answering.answer_question`) and
every judge grades every answer (:mod:`chunklab_core.llm.judges`: three-way and YES/NO), beside
the rule-based reference grader (:mod:`chunklab_core.answers.reference_grader`). The calls go
through the series' LLM layer (``llm.wiring.make_models``): embedded GGUF by default
(``qwen-0.5b``, after ``chunklab-models qwen-0.5b``), ``--backend ollama`` or ``--backend
openai --base-url URL``. Every call is recorded in ``OUT/records/`` (one fsynced JSONL line
per call), so a killed run resumes where it stopped and ``--replay`` rebuilds the report with
no model at all (a missing call is then an error naming the command that records it).

**The reference is your gold snippets.** Each question's gold slots are the reference
answer (:func:`reference_text`: alternatives of a slot joined by `` OR ``, slots by `` AND ``,
all slots needed; not `` | ``, which a snippet copied from a table row holds between cells). What that implies: a snippet is a phrase copied from your documents so
retrieval can be scored, not a written answer. Judges and the reference grader compare the
answer with it, so (1) an answer that is right but says it differently is at the mercy of the
judge's paraphrase tolerance, and the rule-based grader misses it; (2) a right answer taken
from another passage than the snippet's is graded against the snippet; (3) the reference
grader's "correct" is close to retrieval's own containment rule, so retrieval and that grader
agree partly by construction. The audit (``chunklab-own audit``) measures how far each judge
can be trusted on your answers.

Output folder (``--out``, default ``own_answers``; refused when it holds tracked files):
``records/`` (the calls), ``answers.csv`` (one row per item: question x cell, with the
contexts, the answer, every verdict and the cost), ``accuracy.csv``, ``differences.csv``,
``part_ways.csv``, ``cost.csv``, ``answers.json`` (what was run) and ``report.md`` /
``report.html`` (:mod:`chunklab_core.own.answers_report`). The tables are written atomically
(:mod:`chunklab_core.core.atomic_files`); ``records/`` is only appended to.

Questions are answered in a seeded random order (``--questions N`` takes the first N of it,
so a partial run is a uniform sample), question by question with every cell of a question
together, so the cells are compared on the same questions.

Not handled: choosing k (the run's ``k`` from its config), answer metrics beyond the series'
(``answers.metrics``), several corpora at once.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from chunklab_core.answers.reference_grader import reference_grade
from chunklab_core.answers.study import AnswerItem, judge_columns, process_item
from chunklab_core.answers.verdicts import CORRECT, PARTIAL, WRONG
from chunklab_core.core.corpus import Corpus
from chunklab_core.retrieval.registry import needs_model

DEFAULT_OUT = "own_answers"
DEFAULT_ANSWERER = ("qwen05", "qwen-0.5b")
DEFAULT_JUDGES = {"qwen05": "qwen-0.5b"}
MARKER = ".chunklab-own-answers"
SLOT_SEPARATOR, ALTERNATIVE_SEPARATOR = " AND ", " OR "  # " | " is a table row's cell delimiter


def reference_text(slots: Sequence[Sequence[str]]) -> str:
    """The reference answer of a question from its gold slots: ``a OR b AND c`` (see module docstring).

    Not `` | ``: a gold snippet copied from a table row holds `` | `` between its cells."""
    parts = [ALTERNATIVE_SEPARATOR.join(dict.fromkeys(s.strip() for s in slot if s.strip())) for slot in slots]
    return SLOT_SEPARATOR.join(p for p in parts if p)


def reference_terms(reference: str) -> list[str]:
    """Every alternative of every slot of a :func:`reference_text` (what a grader looks for)."""
    terms = [t.strip() for part in reference.split(SLOT_SEPARATOR) for t in part.split(ALTERNATIVE_SEPARATOR)]
    return list(dict.fromkeys(t for t in terms if t))


def slots_grade(answer: str, slots: Sequence[Sequence[str]], context: str | None = None) -> dict:
    """The reference grader over several gold slots.

    Rule: each slot is graded by :func:`chunklab_core.answers.reference_grader.reference_grade`
    against its alternatives; the label is ``correct`` when every slot is correct, ``wrong``
    when every slot is wrong, else ``partial`` (part of the reference: the series' rubric for
    "one of two items"). With one slot this is ``reference_grade`` itself. ``reason`` lists
    each slot's reason; ``exact_match`` and ``f1`` are the means over slots.
    """
    if not slots:
        raise ValueError("a question needs at least one gold slot to be graded")
    grades = [reference_grade(answer, list(slot), context=context) for slot in slots]
    if len(grades) == 1:
        return grades[0]
    labels = [g["label"] for g in grades]
    label = CORRECT if all(x == CORRECT for x in labels) else WRONG if all(x == WRONG for x in labels) else PARTIAL
    return {"label": label, "reason": "; ".join(f"slot {i + 1}: {g['reason']}" for i, g in enumerate(grades)),
            "exact_match": float(np.mean([g["exact_match"] or 0.0 for g in grades])),
            "f1": float(np.mean([g["f1"] or 0.0 for g in grades]))}


@dataclass(frozen=True)
class OwnItem(AnswerItem):
    """An :class:`~chunklab_core.answers.study.AnswerItem` whose reference is every gold slot."""

    slots: tuple[tuple[str, ...], ...] = ()

    @property
    def reference(self) -> str:
        return reference_text(self.slots) if self.slots else super().reference


Cell = tuple[str, str, str]  # strategy, retriever, model ("—" for bm25)


def cell_label(cell: Cell) -> str:
    """``strategy / retriever`` or ``strategy / retriever / model``: the item table's ``strategy``."""
    from chunklab_core.own.check import cell_name

    return cell_name(cell)


def cells_from_recommendation(record: dict, candidates: bool = False) -> list[Cell]:
    """The cell the overall scope of a ``recommendation.json`` says to use (its ``use``: the decision
    engine's matched-cost pick; a record written before it had one: its ``leader``); with
    ``candidates``, then every other candidate of that scope not ruled out at k chunks, in the record's order."""
    scopes = record.get("recommendations") or []
    chosen = next((s for s in scopes if s.get("scope") == "overall"), scopes[0] if scopes else None)
    if chosen is None:
        raise ValueError("the recommendation has no scope")
    rows = chosen.get("candidates", [])
    def cell(row) -> Cell:
        return (str(row["strategy"]), str(row["retriever"]), str(row.get("model") or "—"))
    if isinstance(chosen.get("use"), dict):
        out = [cell(chosen["use"])]
    else:
        leader = [cell(r) for r in rows if r.get("candidate") == chosen.get("leader")]
        if not leader:
            raise ValueError(f"the leader {chosen.get('leader')!r} is not among the candidates")
        out = leader
    if candidates:
        kept = ("leader", "equivalent", "undecided", "cannot be ruled out")  # the last: records before the engine
        out += [cell(r) for r in rows if r.get("status") in kept and cell(r) not in out]
    return out


def question_order(n_total: int, n: int | None, seed: int) -> np.ndarray:
    """The first ``n`` (all when None) of a seeded random permutation of the questions."""
    order = np.random.default_rng(seed).permutation(n_total)
    if n is not None:
        if n < 1:
            raise ValueError(f"--questions must be >= 1, got {n}")
        order = order[:n]
    return order


def build_items(corpus: Corpus, cells: Sequence[Cell], k: int, n_questions: int | None, seed: int,
                progress: bool = False, backend: str = "torch", embed_model: str = "all-MiniLM-L6-v2",
                threshold: float = 0.9) -> list[OwnItem]:
    """The items: the seeded question order, each question with its top-``k`` contexts per cell.

    ``passage_retrieved``: every gold slot is found in the top-``k`` contexts (slot recall@k = 1,
    the run's measure, :func:`chunklab_core.evaluation.slot_metrics.score_slots` at ``threshold``).
    """
    from chunklab_core.evaluation.measures import column
    from chunklab_core.evaluation.scoring import run_cell
    from chunklab_core.evaluation.slot_metrics import score_slots

    order = question_order(len(corpus.questions), n_questions, seed)
    chosen = [corpus.questions[i] for i in order]
    sub = Corpus(corpus.name, corpus.documents, chosen)
    runs = {}
    for cell in cells:
        strategy, retriever, model = cell
        options = {} if not needs_model(retriever) else {"model": model, "show_progress": progress, "backend": backend}
        runs[cell] = run_cell(sub, strategy, retriever, k_max=k, retriever_options=options,
                              strategy_options=_strategy_options(strategy, embed_model, backend))
    found = {cell: score_slots(run, [k], threshold=threshold)[column("recall", k)].to_numpy() >= 1.0 - 1e-12
             for cell, run in runs.items()}
    items = []
    for row, question in enumerate(chosen):
        for cell in cells:
            run = runs[cell]
            ranked = [c for c in run.ranked[row] if c >= 0]
            label = cell_label(cell)
            items.append(OwnItem(f"{question.qid}|{label}", corpus.name, question.qid, label, question.text,
                                 tuple(question.gold_slots[0]) if question.gold_slots else (),
                                 tuple(run.context_text(c) for c in ranked), bool(found[cell][row]), question.doc_id,
                                 slots=tuple(tuple(s) for s in question.gold_slots)))
    return items


def _strategy_options(strategy: str, embed_model: str, backend: str) -> dict:
    """``{"embed": ...}`` for a strategy that cuts at embedding breakpoints (as the run's matrix
    does: the run's first embedding model), else ``{}``."""
    from chunklab_core.chunking import STRATEGIES

    if STRATEGIES[strategy].needs_embedding:
        from chunklab_core.retrieval.dense import DenseRetriever

        return {"embed": DenseRetriever(model=embed_model, backend=backend).embed}
    return {}


def process_own_item(item: OwnItem, models: dict, yes_no_judges: Sequence[str]) -> dict:
    """:func:`chunklab_core.answers.study.process_item` with the judges given every slot, and the
    reference grader over every slot (:func:`slots_grade`)."""
    row = process_item(item, models, tuple(yes_no_judges))
    grade = slots_grade(row["answer"], item.slots, context="\n\n".join(item.contexts))
    row.update(reference_grader=grade["label"], reference_reason=grade["reason"],
               exact_match=grade["exact_match"], f1=grade["f1"], contexts=json.dumps(list(item.contexts)))
    return row


@dataclass
class AnswerRun:
    """The answered items and how many of the planned questions are complete."""

    table: pd.DataFrame
    planned_questions: int
    complete_questions: int
    judge_columns: list[str]
    yesno_columns: list[str]
    missing: str | None = None  # replay: the first question whose call is not recorded, and why


def answer_items(items: Sequence[OwnItem], models: dict, yes_no_judges: Sequence[str],
                 progress: bool = False) -> AnswerRun:
    """Every item, question by question; in replay mode the first question with a missing call
    ends the table (its calls are forgotten) and is named in ``missing``: the caller refuses to
    write a smaller table than the records promised (issue 41: a missing call is an error)."""
    from chunklab_core.llm.records import ReplayMiss

    groups: dict[str, list[OwnItem]] = {}
    for item in items:
        groups.setdefault(item.qid, []).append(item)
    rows, complete, missing = [], 0, None
    iterator = groups.values()
    if progress:
        from tqdm import tqdm

        iterator = tqdm(iterator, desc="questions (answer + judges)")
    for group in iterator:
        try:
            done = [process_own_item(item, models, yes_no_judges) for item in group]
        except ReplayMiss as miss:
            missing = f"question {group[0].qid!r}: {miss}"
            break
        rows.extend(done)
        complete += 1
    columns = judge_columns(models, tuple(yes_no_judges))
    return AnswerRun(pd.DataFrame(rows), len(groups), complete, columns,
                     [c for c in columns if c.endswith("_yesno")], missing)


def population(run: AnswerRun) -> pd.DataFrame:
    """The audit population: one row per answered item, with the contexts as the grader's passage."""
    table = run.table.copy()
    table["passage"] = [passage_text(json.loads(c)) for c in table["contexts"]]
    keep = ["item_id", "qid", "strategy", "question", "reference", "answer", *run.judge_columns,
            "reference_grader", "passage_retrieved", "passage"]
    return table[keep].reset_index(drop=True)


def passage_text(contexts: Sequence[str]) -> str:
    """The contexts the answerer read, numbered as in its prompt (``[1] ...``)."""
    from chunklab_core.llm.answering import format_contexts

    return format_contexts(list(contexts))
