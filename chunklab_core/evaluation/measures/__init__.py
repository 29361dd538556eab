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

A measure is a value with declared parameters (``params``: a relevance ``threshold`` of the
slot measures; :meth:`Measure.with_params` sets them) and a cut-off (``measure @ 10`` is a
:class:`Cut`, column ``<name>@10``, as ir_measures writes ``AP@10``). A registry entry is
callable: ``MEASURES[name](run, ks, **context)`` is the per-question table of that measure (one
row per question of ``run``, in order, with its ``<name>@<k>`` columns; ``context`` is what
``run_matrix`` passes every measure, ``threshold`` and ``pool_grades``, for the functions that
use them). Each measure is one module of this folder (``evaluation/measures/<name>.py``, as
ir_measures keeps one file per measure) registering itself with its function (one function may
compute several measures: the slot and span tables; the stage evaluators' measures of ranked ids
against relevant ids, ``id_recall``, ``f1`` and ``map``, take judged ids, ``ranking_metrics.JudgedIds``,
and are not scored by ``run_matrix``); the folder is imported with this package,
then any module a user dropped here, then the entry points of group ``chunklab.measures``, so
a new measure is one module (docs/extending.md).

Not handled: the formulas (``ranking_metrics``, ``slot_metrics``, ``span_metrics``,
``token_metrics``), display labels and prose ("MRR@10", "R@5", the posts' own
wording), columns that are not per-question measures (budgets, rerank deltas).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, Sequence

import numpy as np

from chunklab_core.core.members import Registry, discover

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
    params: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}), compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "params", MappingProxyType(dict(self.params)))

    def __call__(self, run, ks: Sequence[int], **context) -> "pd.DataFrame":
        """The per-question table of this measure on ``run`` (``ValueError`` if no function is bound);
        its declared ``params`` fill what ``context`` does not give."""
        if self.compute is None:
            raise ValueError(f"measure {self.name!r} has no function: the module that defines it is not imported")
        return self.compute(run, ks, **{**self.params, **context})

    def __matmul__(self, k: int) -> "Cut":
        """The measure at cut-off ``k`` (``AP @ 10``, as ir_measures writes ``AP@10``)."""
        return Cut(self, _check_k(k))

    def with_params(self, **values: Any) -> "Measure":
        """This measure with declared parameters set (``recall.with_params(threshold=0.8)``); an
        undeclared one is a ``ValueError`` naming the declared ones."""
        unknown = sorted(set(values) - set(self.params))
        if unknown:
            raise ValueError(f"measure {self.name!r} has no parameter(s) {unknown}; declared: {sorted(self.params) or 'none'}")
        return replace(self, params={**self.params, **values})

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


@dataclass(frozen=True)
class Cut:
    """A measure at one cut-off: ``measure @ k``; its table column is ``<name>@<k>``."""

    measure: Measure
    k: int

    @property
    def column(self) -> str:
        return f"{self.measure.name}@{self.k}"

    def __str__(self) -> str:
        return self.column


_STEM = r"[a-z][a-z0-9_]*"  # a measure's name, its columns' stem: f1, span_iou
MEASURES: Registry[Measure] = Registry("measure")
"""Every registered measure, in registration order; the modules of ``evaluation/measures/`` (and the
entry points of group ``chunklab.measures``) fill it when this package is imported."""


def register_measure(new: Measure) -> Measure:
    """Add a measure with its function to :data:`MEASURES` (its column then parses, ``run_matrix``
    scores it unless ``matrix`` is False); a taken name, a missing function or a name that is not
    a column stem (a lower-case letter, then lower-case letters, digits and ``_``) is a ``ValueError``."""
    if not callable(new.compute):
        raise ValueError(f"measure {new.name!r} needs its function (compute=)")
    if not re.fullmatch(_STEM, new.name):
        raise ValueError(f"measure name {new.name!r} must be a lower-case letter, then lower-case letters, digits "
                         "and _ (it is a column stem)")
    return MEASURES.add(new.name, new)


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


_COLUMN = re.compile(rf"^(?P<name>{_STEM})@(?P<k>[1-9][0-9]*)$")
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


def depth_columns(k_max: int, names: Iterable[str] | None = None) -> list[str]:
    """The measures reported once at the run's depth (``rr``, ``ndcg``, any registered later), at
    ``k_max``; among ``names`` (a summary's measures) when given, else among every registered one."""
    chosen = [measure(n) for n in names] if names is not None else list(MEASURES.values())
    return [column(m.name, k_max) for m in chosen if m.cutoff == DEPTH]


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


BUILTIN = ("recall", "complete", "hit", "p", "rr", "ndcg", "tokens", "context_efficiency", "span_recall",
           "span_precision", "span_iou", "complete_evidence", "token_recall",  # the series' measures, the tables' order
           "id_recall", "f1", "map")  # the stage evaluators' measures of judged ids (not in run_matrix)
discover(__name__, __path__, BUILTIN, "measures")
