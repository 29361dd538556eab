"""The measure registry: every per-question retrieval measure of the series, defined once.

Handles: the name of each measure as it appears in the tables (``hit``, ``p``, ``rr``, ``ndcg``,
``tokens``, slot ``recall`` ...), whether it is reported at every cut-off k or once at the
retrieved depth, its trec_eval name where trec_eval has the same quantity, which source defines
it, the function that computes it and whether ``run_matrix`` scores it; the cut-offs the series
scores (:data:`KS`); and the one
spelling of a metric column, ``<measure>@<k>`` (:func:`column`, read back by :func:`parse`),
with its interval bounds ``<column>_low`` / ``<column>_high`` (:func:`interval_columns`).

Cut-offs: most measures are reported at every k of ``ks``; the rank measures ``rr`` and
``ndcg`` are reported once, at the depth of the run (``k_max``, the largest k), as
:func:`depth_columns` builds them. A table's depth is the largest k among its measure
columns (:func:`largest_k`).

trec_eval names are trec_eval 9's (``P_5``, ``recip_rank``, ``ndcg_cut_10``, ``success_10``)
as pytrec_eval accepts them, and ranx's names (``hit_rate@10``, ``precision@5``, ``mrr@10``,
``ndcg@10``) as ``trec_export``'s round trip reads them; the tests cross-check both. ``recip_rank``
has no cut-off in trec_eval: it equals ``rr@k`` on a run holding k contexts per question, which
is how the series' runs are written (``trec_export``). Measures without a counterpart (token
counts, slot recall, span overlap) say so with ``None``. Slot ``recall`` is not trec_eval's
``recall_k`` (relevant documents found / relevant documents): a slot is a piece of the answer,
not a document.

A registry entry is callable: ``MEASURES[name](run, ks, **context)`` is the per-question table
of that measure (one row per question of ``run``, in order, with its ``<name>@<k>`` columns;
``context`` is what ``run_matrix`` passes every measure, ``threshold`` and ``pool_grades``, for
the functions that use them). The function is bound by the module that defines it:
``@computes("span_recall", ...)`` above ``span_metrics.span_scores`` (one function may compute
several measures); a new measure is one :func:`register_measure` call beside its function.

Not handled: the formulas (``ranking_metrics``, ``slot_metrics``, ``span_metrics``,
``token_metrics``), display labels and prose ("MRR@10", "R@5", the posts' own
wording), columns that are not per-question measures (budgets, rerank deltas).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Callable, Iterable, Sequence

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

KS = (1, 3, 5, 10)
EVERY_K = "every k"
DEPTH = "depth"


@dataclass(frozen=True)
class Measure:
    """One per-question measure: its column stem, what it is, who defines it, and the function computing it.

    ``compute(run, ks, **context) -> pd.DataFrame`` (the module docstring's one signature; ``None``
    until its module is imported); calling the measure calls it. ``matrix``: ``run_matrix`` scores
    it in every cell.
    """

    name: str
    title: str
    cutoff: str  # EVERY_K: one column per k; DEPTH: one column, at the run's depth
    source: str
    trec_eval: str | None = None  # trec_eval name, "{k}" for the cut-off; None: trec_eval has none
    ranx: str | None = None  # ranx metric name, "{k}" for the cut-off; None: ranx has none
    compute: Callable[..., "pd.DataFrame"] | None = None
    matrix: bool = True

    def __call__(self, run, ks: Sequence[int], **context) -> "pd.DataFrame":
        """The per-question table of this measure on ``run`` (``ValueError`` if no function is bound)."""
        if self.compute is None:
            raise ValueError(f"measure {self.name!r} has no function: the module that defines it is not imported")
        return self.compute(run, ks, **context)

    def trec_eval_name(self, k: int) -> str:
        """The trec_eval measure equal to this measure at ``k``; ``ValueError`` when there is none."""
        if self.trec_eval is None:
            raise ValueError(f"measure {self.name!r} has no trec_eval counterpart")
        return self.trec_eval.format(k=_check_k(k))

    def ranx_name(self, k: int) -> str:
        """The ranx metric equal to this measure at ``k``; ``ValueError`` when there is none."""
        if self.ranx is None:
            raise ValueError(f"measure {self.name!r} has no ranx counterpart")
        return self.ranx.format(k=_check_k(k))


_MEASURES = (
    Measure("recall", "slot recall: share of the question's gold slots filled by the top k", EVERY_K,
            "defined in this series (slot_metrics); equals hit@k for one slot"),
    Measure("complete", "every gold slot filled by the top k (0/1)", EVERY_K,
            "defined in this series (slot_metrics)"),
    Measure("hit", "some context in the top k is relevant (0/1); the chunking literature's recall@k", EVERY_K,
            "trec_eval success measure (m_success.c); called recall@k by chunking benchmarks", "success_{k}",
            "hit_rate@{k}"),
    Measure("p", "precision: relevant contexts in the top k, divided by k", EVERY_K,
            "trec_eval P (m_P.c); Manning, Raghavan & Schütze, Introduction to IR (2008), ch. 8", "P_{k}",
            "precision@{k}"),
    Measure("rr", "reciprocal rank of the first relevant context within the depth (MRR is its mean)", DEPTH,
            "trec_eval recip_rank (m_recip_rank.c); Voorhees, The TREC-8 Question Answering Track Report (1999)",
            "recip_rank", "mrr@{k}"),
    Measure("ndcg", "normalised discounted cumulative gain at the depth, linear gains, log2 discount", DEPTH,
            "Järvelin & Kekäläinen, Cumulated gain-based evaluation of IR techniques, ACM TOIS 20(4), 2002; "
            "trec_eval ndcg_cut (m_ndcg_cut.c)", "ndcg_cut_{k}", "ndcg@{k}"),
    Measure("tokens", "cl100k_base tokens of the top k returned contexts", EVERY_K,
            "defined in this series (tiktoken cl100k_base counts)"),
    Measure("context_efficiency", "tokens of the found gold / tokens of the top k", EVERY_K,
            "defined in this series (slot_metrics)"),
    Measure("span_recall", "evidence characters covered by the top k / evidence characters", EVERY_K,
            "Smith & Troynikov, Evaluating Chunking Strategies for Retrieval, Chroma technical report (2024)"),
    Measure("span_precision", "evidence characters covered by the top k / characters returned", EVERY_K,
            "Smith & Troynikov, Evaluating Chunking Strategies for Retrieval, Chroma technical report (2024)"),
    Measure("span_iou", "intersection over union of returned and evidence characters", EVERY_K,
            "Smith & Troynikov, Evaluating Chunking Strategies for Retrieval, Chroma technical report (2024)"),
    Measure("complete_evidence", "every evidence span lies inside the top k (0/1)", EVERY_K,
            "defined in this series (span_metrics)"),
    Measure("token_recall", "gold word tokens inside the top k / gold word tokens", EVERY_K,
            "defined in this series (span recall with tokens for characters)",
            matrix=False),  # read by post 02 on long gold, not scored in every cell
)
MEASURES: dict[str, Measure] = {m.name: m for m in _MEASURES}


def register_measure(new: Measure) -> Measure:
    """Add a measure with its function to :data:`MEASURES` (its column then parses, ``run_matrix``
    scores it unless ``matrix`` is False); a taken name or a missing function is a ``ValueError``."""
    if new.name in MEASURES:
        raise ValueError(f"measure {new.name!r} is already registered")
    if not callable(new.compute):
        raise ValueError(f"measure {new.name!r} needs its function (compute=)")
    MEASURES[new.name] = new
    return new


def computes(*names: str) -> Callable:
    """Decorator binding a function to the declared measures ``names`` (its module is where it is defined)."""
    def bind(func: Callable[..., "pd.DataFrame"]) -> Callable[..., "pd.DataFrame"]:
        for name in names:
            MEASURES[name] = replace(measure(name), compute=func)
        return func
    return bind


def matrix_functions() -> list[tuple[Callable[..., "pd.DataFrame"], list[str]]]:
    """(function, the names it computes) for every distinct function of the measures ``run_matrix``
    scores, in registration order; ``ValueError`` naming a matrix measure whose module bound none."""
    unbound = [m.name for m in MEASURES.values() if m.matrix and m.compute is None]
    if unbound:
        raise ValueError(f"measures {unbound} have no function (import the modules that define them)")
    found: dict[Callable, list[str]] = {}
    for m in MEASURES.values():
        if m.matrix:
            found.setdefault(m.compute, []).append(m.name)
    return list(found.items())


_COLUMN = re.compile(r"^(?P<name>[a-z_]+)@(?P<k>[1-9][0-9]*)$")
_INTERVAL_SUFFIXES = ("_low", "_high")


def _check_k(k) -> int:
    if isinstance(k, (int, np.integer)) and not isinstance(k, bool) and k >= 1:
        return int(k)
    raise ValueError(f"k must be an integer >= 1, got {k!r}")


def measure(name: str) -> Measure:
    """The registered measure ``name``; ``ValueError`` naming the known ones otherwise."""
    if name not in MEASURES:
        raise ValueError(f"unknown measure {name!r}; known: {', '.join(MEASURES)}")
    return MEASURES[name]


def column(name: str, k: int) -> str:
    """The metric column of measure ``name`` at cut-off ``k``: ``column("hit", 5) == "hit@5"``."""
    return f"{measure(name).name}@{_check_k(k)}"


def columns(name: str, ks: Iterable[int]) -> list[str]:
    """``column(name, k)`` for every k, in the order given."""
    return [column(name, k) for k in ks]


def parse(metric_column: str) -> tuple[str, int]:
    """``"hit@5" -> ("hit", 5)``; ``ValueError`` for a malformed name or an unknown measure."""
    match = _COLUMN.match(metric_column) if isinstance(metric_column, str) else None
    if match is None:
        raise ValueError(f"{metric_column!r} is not a metric column (<measure>@<k>, k >= 1)")
    return measure(match["name"]).name, int(match["k"])


def is_metric_column(name: str) -> bool:
    """True when ``name`` parses as a registered measure at some k."""
    try:
        parse(name)
    except ValueError:
        return False
    return True


def metric_columns(names: Iterable[str]) -> list[str]:
    """The names holding ``@``, in order, each checked to be a registered measure column.

    A name with ``@`` that does not parse raises ``ValueError`` rather than being left out.
    """
    found = [n for n in names if "@" in n]
    for name in found:
        parse(name)
    return found


def interval_columns(metric_column: str) -> tuple[str, str]:
    """The 95%-interval bound columns of a metric column: ``("hit@10_low", "hit@10_high")``."""
    parse(metric_column)
    return tuple(metric_column + suffix for suffix in _INTERVAL_SUFFIXES)


def depth_columns(k_max: int) -> list[str]:
    """The measures reported once at the run's depth (``rr``, ``ndcg``), at ``k_max``."""
    return [column(m.name, k_max) for m in _MEASURES if m.cutoff == DEPTH]


def largest_k(names: Iterable[str]) -> int:
    """The largest k among the metric columns in ``names`` (other names are ignored): a table's depth."""
    ks = [parse(n)[1] for n in names if is_metric_column(n)]
    if not ks:
        raise ValueError("no metric column (<measure>@<k>) among the columns given")
    return max(ks)


def require_columns(available: Iterable[str], wanted: Sequence[str], what: str = "the table") -> list[str]:
    """``wanted`` unchanged when every column is in ``available``; a ``ValueError`` naming the missing ones."""
    present = set(available)
    missing = [c for c in wanted if c not in present]
    if missing:
        raise ValueError(f"{what} lacks the metric columns {missing}; it has "
                         f"{sorted(c for c in present if is_metric_column(c))}")
    return list(wanted)
