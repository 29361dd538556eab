"""Post 02's answer, first: which chunking, under which retriever, at what context budget.

Handles:

* :func:`decide`: the computation the answer needs, made once at the top of the post and read by
  every later section: the corpora as loaded -> the well-posed corpora (questions no measure can
  score dropped, CUAD and QASPER searched within each question's document: ``post02.scope``) ->
  the strategy x retriever x model matrix (``evaluation.matrix.run_matrix``) -> the candidate pool
  at matched cost and its decision (``reports.pool.pool_tables``, the decision engine posts 08
  and 00 and ``chunklab-own`` use). Returned as an :class:`Evidence`;
* :func:`outcomes`: per setting (corpus x retriever), the outcome at the margin δ: *decided* (the
  pick leads and every other candidate is ruled out), *equivalent within ±δ* (a decided tie: the
  pick is the simplest of the leader and its equivalents), *undecided* (with the questions that
  would settle it), *below floor*; and where more context stops paying (the recommended budget
  below the largest), or that recall still rises by more than δ at the largest budget;
* :func:`answer` (the prose, under 150 words, templates ``answer.md``) and :func:`answer_table`
  (one row per setting).

Not handled: any verdict or interval (``chunklab_core.decision``), the sections' own views.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

from chunklab_core.core import numbers
from chunklab_core.core.corpus import Corpus
from chunklab_core.decision.candidates import MEASURE_NAMES, TOKENIZER, measure_of
from chunklab_core.decision.engine import BELOW_FLOOR, DECIDED, LIST_SEPARATOR, UNDECIDED
from chunklab_core.decision.margin import DEFAULT_MARGIN
from chunklab_core.reports.post02.scope import WellPosed, well_posed
from chunklab_core.reports.samples import DATASETS, labels_for
from chunklab_core.reports.templates import Templates
from chunklab_core.retrieval.scope import DOCUMENT

PROSE = Templates(__file__, "answer.md")
EQUIVALENT_TIE = "equivalent within ±δ"  # the outcome word of a decided tie (δ written out in the table)

__all__ = ["Evidence", "decide", "outcomes", "answer", "answer_table"]


@dataclass
class Evidence:
    """What the answer is computed from, and what the post's later sections read."""

    well_posed: WellPosed  # the corpora as loaded, the corpora scored, the per-measure counts
    matrix: object  # evaluation.matrix.MatrixResult on the scored corpora (the post's strategies)
    pool_matrix: object  # the matrix with the pool's library splitters run too
    pool_table: pd.DataFrame  # decision.engine.setting_table: one row per (setting, candidate, budget)
    pool_guide: pd.DataFrame  # decision.guide.setting_guide: one row per setting
    coverage: pd.DataFrame | None = None  # post02.tables.model_coverage of the second model (None: one model)
    second_read: tuple = ()  # the corpora the second model is read on (post02.tables.read_model_corpora)

    @property
    def corpora(self) -> dict[str, Corpus]:
        return self.well_posed.corpora

    @property
    def labels(self) -> dict[str, str]:
        return labels_for(self.corpora)


def decide(loaded: Mapping[str, Corpus], strategies: Sequence[str], retrievers: Sequence[str],
           models: Sequence[str], ks: Sequence[int], k: int, threshold: float, resamples: int, seed: int,
           model_corpora: Mapping[str, Sequence[str]] | None = None,
           model_strategies: Mapping[str, Sequence[str]] | None = None, source: str = "02_pool.csv",
           margin: float = DEFAULT_MARGIN) -> Evidence:
    """The post's computation, in the order its sections read it (module docstring): the pool is
    decided for the first model of ``models`` at depth ``k`` (its recall@k view) with ``resamples``
    resamples from ``seed``. ``model_corpora`` (one second model): in a replay it is read only on
    the corpora whose cells are all recorded in their scope; the others are named as still being
    recorded (``Evidence.coverage``)."""
    from chunklab_core.evaluation.matrix import run_matrix
    from chunklab_core.reports import pool

    from chunklab_core.reports.post02 import tables

    state = well_posed(loaded, threshold)
    coverage, second_read = None, ()
    if model_corpora:  # the second model: read where its cells are recorded in the scope each corpus is searched in
        (second, wanted), = model_corpora.items()
        coverage = tables.model_coverage(state.corpora, second,
                                         (model_strategies or {}).get(second, strategies))
        second_read = tuple(tables.read_model_corpora(coverage, wanted))
        model_corpora = {second: list(second_read)}
    matrix = run_matrix(state.corpora, strategies, retrievers, models, model_corpora, ks, threshold, progress=False,
                        model_strategies=model_strategies)
    extended = pool.extend(matrix, state.corpora, retrievers, models[0], k)
    table, guide = pool.pool_tables(extended, models[0], k, resamples, seed, labels_for(state.corpora), source=source,
                                    margin=margin)
    return Evidence(state, matrix, extended, table, guide, coverage, second_read)


def _count_of(cell) -> int:
    text = cell if isinstance(cell, str) else ""
    return len([part for part in text.split(LIST_SEPARATOR) if part])


def outcomes(guide: pd.DataFrame, largest: int, margin: float = DEFAULT_MARGIN) -> pd.DataFrame:
    """Per setting of ``guide`` (``decision.guide.setting_guide`` at ``margin``): corpus, retriever,
    model, the pick and its budget and score, ``outcome`` (decided / equivalent within ±δ /
    undecided / below floor), ``equivalents`` (how many), ``questions`` that would settle an
    undecided one, ``stops`` (the recommended budget lies below ``largest``, the largest budget
    compared), ``rising`` (recall still rises by more than δ at the largest) and the last gain."""
    from chunklab_core.decision.guide import _flag

    rows = []
    for _, row in guide.iterrows():
        equivalents = _count_of(row["equivalents"]) + _count_of(row["ties"])
        verdict = row["verdict"]
        outcome = (BELOW_FLOOR if verdict == BELOW_FLOOR else UNDECIDED if verdict == UNDECIDED
                   else EQUIVALENT_TIE if equivalents else DECIDED)
        rows.append({"corpus": row["corpus"], "retriever": row["retriever"], "model": row["model"],
                     "use": row["use"], "tokens": int(row["tokens"]), "score": float(row["score"]),
                     "measure": measure_of(row["corpus"]), "outcome": outcome, "equivalents": equivalents,
                     "questions": row["what would decide"] if verdict == UNDECIDED else "",
                     "stops": int(row["tokens"]) < int(largest), "rising": _flag(row["still rising"]),
                     "last gain": float(row["last gain"])})
    return pd.DataFrame(rows)


def _names(keys: Sequence[str]) -> str:
    named = [DATASETS.get(key, key) for key in dict.fromkeys(keys)]
    return ", ".join(named[:-1]) + " and " + named[-1] if len(named) > 1 else "".join(named)


def answer(evidence: Evidence, margin: float = DEFAULT_MARGIN) -> str:
    """The answer in at most 150 words (templates ``answer.md``): settings decided, equivalent within
    ±δ, undecided and below floor; where more context stops paying and where it still pays; the
    measure each corpus is read by; and which corpora are searched within each question's document."""
    from chunklab_core.decision.candidates import BUDGETS

    table = evidence.pool_table
    largest = int(table["budget"].max()) if len(table) else max(BUDGETS)
    found = outcomes(evidence.pool_guide, largest, margin)
    count = found["outcome"].value_counts()
    delta = numbers.number(margin, 2)
    parts = [PROSE.fill("answer.counts", settings=numbers.count(len(found), "setting"),
                        kinds=numbers.count(found["corpus"].nunique(), "kind"),
                        retrievers=numbers.count(found["retriever"].nunique(), "retriever"),
                        smallest=f"{int(table['budget'].min()):,}", largest=f"{largest:,}", tokenizer=TOKENIZER,
                        margin=delta, decided=int(count.get(DECIDED, 0)), tied=int(count.get(EQUIVALENT_TIE, 0)),
                        decided_all=int(count.get(DECIDED, 0)) + int(count.get(EQUIVALENT_TIE, 0)),
                        undecided=int(count.get(UNDECIDED, 0)), below=int(count.get(BELOW_FLOOR, 0)))]
    stops = found[found["stops"]]
    parts.append(PROSE.fill("answer.stops", settings=numbers.count(len(stops), "setting"),
                            budgets=", ".join(f"{b:,}" for b in sorted(set(stops["tokens"]))))
                 if len(stops) else PROSE.fill("answer.never_stops", largest=f"{largest:,}"))
    rising = found[found["rising"]]
    if len(rising):
        parts.append(PROSE.fill("answer.rising", settings=numbers.count(len(rising), "setting"),
                                largest=f"{largest:,}", margin=delta,
                                gain=numbers.number(float(rising["last gain"].max()), signed=True)))
    spans = [c for c in dict.fromkeys(found["corpus"]) if measure_of(c) == "span"]
    parts.append(PROSE.fill("answer.measures", containment=MEASURE_NAMES["containment"], span=MEASURE_NAMES["span"],
                            corpora=_names(spans)) if spans else
                 PROSE.fill("answer.measure", containment=MEASURE_NAMES["containment"]))
    scoped = [key for key, corpus in evidence.corpora.items() if corpus.scope == DOCUMENT]
    if scoped:
        dropped = int(evidence.well_posed.counts["no measure"].sum())
        parts.append(PROSE.fill("answer.scoped", corpora=_names(scoped),
                                dropped=numbers.count(dropped, "question")))
    parts.append(PROSE.fill("answer.table"))
    return " ".join(parts)


def answer_table(evidence: Evidence, margin: float = DEFAULT_MARGIN) -> pd.DataFrame:
    """One row per setting: the setting, what to use, at how many tokens, its score (the corpus's
    measure), the outcome at ±δ, and where more context stops paying."""
    from chunklab_core.retrieval.registry import setting_name

    largest = int(evidence.pool_table["budget"].max())
    found = outcomes(evidence.pool_guide, largest, margin)
    delta = numbers.number(margin, 2)

    def outcome(row) -> str:
        if row["outcome"] == EQUIVALENT_TIE:
            return PROSE.fill("table.tie", margin=delta, others=numbers.count(row["equivalents"], "other"))
        if row["outcome"] == UNDECIDED:
            return PROSE.fill("table.undecided", questions=row["questions"])
        return row["outcome"]

    def more(row) -> str:
        if row["stops"]:
            return PROSE.fill("table.stops", tokens=f"{row['tokens']:,}")
        if row["rising"]:
            return PROSE.fill("table.rising", gain=numbers.number(row["last gain"], signed=True))
        return PROSE.fill("table.open", gain=numbers.number(row["last gain"], signed=True))

    return pd.DataFrame({
        "setting": [f"{DATASETS.get(c, c)} · {setting_name(r, None)}" for c, r in zip(found["corpus"], found["retriever"])],
        "use": found["use"], "tokens": [f"{t:,}" for t in found["tokens"]],
        "score": [f"{numbers.number(s)} ({'span' if m == 'span' else 'containment'})"
                  for s, m in zip(found["score"], found["measure"])],
        f"at ±{delta}": [outcome(r) for _, r in found.iterrows()],
        "more context": [more(r) for _, r in found.iterrows()]})
