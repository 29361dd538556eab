"""The retriever interface and registry: one spec per retriever, as the chunking strategies have.

Handles: the ``Retriever`` protocol every retriever implements (``fit(texts)`` then
``search(queries, k) -> (ids, scores)``, best first, ids indexing the fitted texts, ties broken
by the lower index), and :data:`RETRIEVER_SPECS`, the registry of the series' retrievers with
what a caller needs to know without naming one: whether it needs an embedding model, whether
its rankings are recorded as they are (``stored``) or fused from other recorded rankings
(``fused_from``), and its display name. Modules outside the retrieval stage ask the registry
(:func:`needs_model`, :func:`display_name`, :func:`model_column`) instead of comparing names.

Not handled: building a retriever (``run.make_retriever``), recording runs (``recorded_runs``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, Sequence, runtime_checkable

import numpy as np

NO_MODEL = "—"  # the model column of a retriever that uses no embedding model


@runtime_checkable
class Retriever(Protocol):
    """What every retriever does: index texts, then rank them for each query."""

    def fit(self, texts: Sequence[str]) -> "Retriever": ...

    def search(self, queries: Sequence[str], k: int) -> tuple[np.ndarray, np.ndarray]: ...


@dataclass(frozen=True)
class RetrieverSpec:
    """One registered retriever."""

    name: str
    display: str
    needs_model: bool
    fused_from: tuple[str, ...] = ()  # empty: its rankings are recorded as they are

    @property
    def stored(self) -> bool:
        return not self.fused_from


RETRIEVER_SPECS: dict[str, RetrieverSpec] = {
    spec.name: spec
    for spec in (
        RetrieverSpec("bm25", "BM25", needs_model=False),
        RetrieverSpec("dense", "Dense", needs_model=True),
        RetrieverSpec("hybrid", "Hybrid (RRF)", needs_model=True, fused_from=("bm25", "dense")),
    )
}
RETRIEVERS = tuple(RETRIEVER_SPECS)
BASELINE = "bm25"  # the model-free retriever every other one is compared with


def spec(name: str) -> RetrieverSpec:
    """The registered spec of ``name``; an unknown name is a ``ValueError`` listing the known ones."""
    try:
        return RETRIEVER_SPECS[name]
    except KeyError:
        raise ValueError(f"unknown retriever {name!r}; known: {', '.join(RETRIEVERS)}") from None


def needs_model(name: str) -> bool:
    """True when the retriever ranks with an embedding model (dense, hybrid)."""
    return spec(name).needs_model


def display_name(name: str) -> str:
    return spec(name).display


def model_column(name: str, model: str | None) -> str:
    """What a table's model column holds for this retriever: the model, or :data:`NO_MODEL`."""
    return model if needs_model(name) and model else NO_MODEL


def model_free(names) -> list[bool]:
    """For each retriever name: True when it uses no embedding model."""
    return [not needs_model(name) for name in names]


def rows_of_model(frame, model: str, retriever_column: str = "retriever"):
    """The rows of a table whose retriever uses no model (BM25) or uses ``model``."""
    free = frame[retriever_column].map(lambda name: not needs_model(name))
    return frame[free | (frame["model"] == model)]


def stored_retrievers() -> tuple[str, ...]:
    """The retrievers whose rankings are recorded as they are (not fused)."""
    return tuple(name for name, s in RETRIEVER_SPECS.items() if s.stored)


def compared_with(baseline: str = BASELINE) -> tuple[str, ...]:
    """Every other retriever, for paired comparisons against ``baseline``."""
    return tuple(name for name in RETRIEVERS if name != baseline)


def setting_name(retriever: str, model: str | None, sep: str = " · ") -> str:
    """A cell's setting for tables: the retriever, with its model when it uses one."""
    return retriever if not needs_model(retriever) or uses_no_model(model) else f"{retriever}{sep}{model}"


def uses_no_model(model_value: str | None) -> bool:
    """True for a table's model value that names no model (:data:`NO_MODEL`, empty, NaN)."""
    return model_value is None or model_value != model_value or model_value in ("", NO_MODEL)
