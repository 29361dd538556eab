"""The retriever interface and registry: one spec per retriever, as the chunking strategies have.

Handles: the ``Retriever`` protocol every retriever implements (``fit(texts)`` then
``search(queries, k) -> (ids, scores)``, best first, ids indexing the fitted texts, ties broken
by the lower index), and :data:`RETRIEVER_SPECS`, the registry of the series' retrievers with
what a caller needs to know without naming one: how to build it (``factory``), the version its
recorded rankings carry (``version``: bump it when its scoring changes, every record of it
becomes stale), whether it needs an embedding model, whether its rankings are recorded as they
are (``stored``) or fused from other recorded rankings (``fused_from``), and its display name.
A new retriever is one :func:`register_retriever` call (see the README's Architecture section).
Modules outside the retrieval stage ask the registry (:func:`needs_model`, :func:`display_name`,
:func:`model_column`, :data:`BASELINE`, :data:`EMBEDDER`) instead of naming retrievers.

Not handled: building a retriever from a spec (``run.make_retriever``), recording runs
(``recorded_runs``), fusing rankings (``hybrid``, ``cell_search``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Protocol, Sequence, runtime_checkable

import numpy as np

NO_MODEL = "—"  # the model column of a retriever that uses no embedding model


@runtime_checkable
class Retriever(Protocol):
    """What every retriever does: index texts, then rank them for each query."""

    def fit(self, texts: Sequence[str]) -> "Retriever": ...

    def search(self, queries: Sequence[str], k: int) -> tuple[np.ndarray, np.ndarray]: ...


@dataclass(frozen=True)
class RetrieverSpec:
    """One registered retriever.

    ``factory``: for a stored retriever, ``factory(**options) -> Retriever`` (a retriever that
    needs a model gets ``model=`` among the options); for a fused one, ``factory(parts)`` fuses
    the built retrievers of ``fused_from``, in that order. ``version``: what ``recorded_runs``
    stores with each ranking of a stored retriever (``None`` for a fused one: its parts carry it).
    """

    name: str
    display: str
    needs_model: bool
    factory: Callable[..., Retriever]
    version: int | None = 1
    fused_from: tuple[str, ...] = ()  # empty: its rankings are recorded as they are

    @property
    def stored(self) -> bool:
        return not self.fused_from


def _bm25(**options) -> Retriever:
    from chunklab_core.retrieval.bm25 import BM25Index

    return BM25Index(**options)


def _dense(**options) -> Retriever:
    from chunklab_core.retrieval.dense import DenseRetriever

    return DenseRetriever(**options)


def _rrf(parts: Sequence[Retriever]) -> Retriever:
    from chunklab_core.retrieval.hybrid import HybridRetriever

    return HybridRetriever(list(parts))


RETRIEVER_SPECS: dict[str, RetrieverSpec] = {}


def register_retriever(new: RetrieverSpec) -> RetrieverSpec:
    """Add ``new`` to :data:`RETRIEVER_SPECS`; a taken name, or a fused one whose parts are not
    registered stored retrievers, is a ``ValueError``."""
    if new.name in RETRIEVER_SPECS:
        raise ValueError(f"retriever {new.name!r} is already registered")
    if new.stored and new.version is None:
        raise ValueError(f"stored retriever {new.name!r} needs a version")
    bad = [part for part in new.fused_from if part not in RETRIEVER_SPECS or not RETRIEVER_SPECS[part].stored]
    if bad:
        raise ValueError(f"retriever {new.name!r} is fused from unregistered or fused retrievers {bad}")
    RETRIEVER_SPECS[new.name] = new
    return new


register_retriever(RetrieverSpec("bm25", "BM25", needs_model=False, factory=_bm25, version=1))
register_retriever(RetrieverSpec("dense", "Dense", needs_model=True, factory=_dense, version=1))
register_retriever(RetrieverSpec("hybrid", "Hybrid (RRF)", needs_model=True, factory=_rrf, version=None,
                                 fused_from=("bm25", "dense")))
RETRIEVERS = tuple(RETRIEVER_SPECS)  # the series' retrievers (registered later ones: registered())
BASELINE = "bm25"  # the model-free retriever every other one is compared with
EMBEDDER = "dense"  # the retriever whose model embeds texts for chunkers that cut by embedding


def registered() -> tuple[str, ...]:
    """Every registered retriever's name, in registration order (the series' and any added)."""
    return tuple(RETRIEVER_SPECS)


def spec(name: str) -> RetrieverSpec:
    """The registered spec of ``name``; an unknown name is a ``ValueError`` listing the known ones."""
    try:
        return RETRIEVER_SPECS[name]
    except KeyError:
        raise ValueError(f"unknown retriever {name!r}; known: {', '.join(RETRIEVER_SPECS)}") from None


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
    return tuple(name for name in RETRIEVER_SPECS if name != baseline)


def setting_name(retriever: str, model: str | None, sep: str = " · ") -> str:
    """A cell's setting for tables: the retriever, with its model when it uses one."""
    return retriever if not needs_model(retriever) or uses_no_model(model) else f"{retriever}{sep}{model}"


def uses_no_model(model_value: str | None) -> bool:
    """True for a table's model value that names no model (:data:`NO_MODEL`, empty, NaN)."""
    return model_value is None or model_value != model_value or model_value in ("", NO_MODEL)
