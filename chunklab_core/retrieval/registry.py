"""The retriever interface and registry: one spec per retriever, as the chunking strategies have.

Handles: the ``Retriever`` protocol every retriever implements (``fit(texts)`` then
``search(queries, k) -> (ids, scores)``, best first, ids indexing the fitted texts, ties broken
by the lower index), and :data:`RETRIEVER_SPECS`, the registry of the series' retrievers with
what a caller needs to know without naming one: how to build it (``factory``), the version its
recorded rankings carry (``version``: bump it when its scoring changes, every record of it
becomes stale), whether it needs an embedding model, whether its rankings are recorded as they
are (``stored``) or fused from other recorded rankings (``fused_from``, with its own ``fuse``),
and its display name; and :data:`RECORD_DEPTH`, the one depth rankings are recorded and fused to.
A new retriever is one module in ``retrieval/retrievers/`` calling :func:`register_retriever`
(or an entry point of group ``chunklab.retrievers``; see docs/extending.md).
Modules outside the retrieval stage ask the registry (:func:`needs_model`, :func:`display_name`,
:func:`model_column`, :data:`BASELINE`, :data:`EMBEDDER`) instead of naming retrievers.

Not handled: the members themselves (``retrieval/retrievers/``), building one by name (``run.make_retriever``), recording runs
(``recorded_runs``), fusing rankings (``hybrid``, ``cell_search``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Protocol, Sequence, runtime_checkable

import numpy as np

from chunklab_core.core.members import Registry

NO_MODEL = "—"  # the model column of a retriever that uses no embedding model


@runtime_checkable
class Retriever(Protocol):
    """What every retriever does: index texts, then rank them for each query."""

    def fit(self, texts: Sequence[str]) -> "Retriever": ...

    def search(self, queries: Sequence[str], k: int) -> tuple[np.ndarray, np.ndarray]: ...


RECORD_DEPTH = 100
"""The one record depth: every stored ranking is recorded to this many chunks per question, and a
fused retriever searches each part to it (Cormack et al. fused full runs; 100 is the series' depth)."""


@dataclass(frozen=True)
class RetrieverSpec:
    """One registered retriever.

    ``factory``: for a stored retriever, ``factory(**options) -> Retriever`` (a retriever that
    needs a model gets ``model=`` among the options). A fused one has no factory: ``fuse(rankings,
    k) -> (ids, scores)`` fuses the rankings of its parts (``fused_from``, in that order):
    ``run.make_retriever`` wraps the built parts in a ``hybrid.HybridRetriever`` that fuses with
    it, and ``cell_search`` fuses the parts' recorded rankings with the same ``fuse``. ``version``:
    what ``recorded_runs`` stores with each ranking of a stored retriever (``None`` for a fused
    one: its parts carry it).
    """

    name: str
    display: str
    needs_model: bool
    factory: Callable[..., Retriever] | None = None
    version: int | None = 1
    fused_from: tuple[str, ...] = ()  # empty: its rankings are recorded as they are
    fuse: Callable[[Sequence[np.ndarray], int], tuple[np.ndarray, np.ndarray]] | None = None

    @property
    def stored(self) -> bool:
        return not self.fused_from


RETRIEVER_SPECS: Registry[RetrieverSpec] = Registry("retriever")
"""Every registered retriever, in registration order; the modules of ``retrieval/retrievers/``
(and the entry points of group ``chunklab.retrievers``) fill it when ``chunklab_core.retrieval``
is imported."""


def register_retriever(new: RetrieverSpec) -> RetrieverSpec:
    """Add ``new`` to :data:`RETRIEVER_SPECS`; a taken name, a stored one without a version or a
    factory, or a fused one without ``fuse`` or whose parts are not registered stored retrievers, is
    a ``ValueError``."""
    if new.stored and (new.version is None or not callable(new.factory)):
        raise ValueError(f"stored retriever {new.name!r} needs a version and a factory")
    if not new.stored and not callable(new.fuse):
        raise ValueError(f"fused retriever {new.name!r} needs its fuse(rankings, k)")
    bad = [part for part in new.fused_from if part not in RETRIEVER_SPECS or not RETRIEVER_SPECS[part].stored]
    if bad:
        raise ValueError(f"retriever {new.name!r} is fused from unregistered or fused retrievers {bad}")
    return RETRIEVER_SPECS.add(new.name, new)


BASELINE = "bm25"  # the model-free retriever every other one is compared with
EMBEDDER = "dense"  # the retriever whose model embeds texts for chunkers that cut by embedding


def registered() -> tuple[str, ...]:
    """Every registered retriever's name, in registration order (the series' and any added)."""
    return tuple(RETRIEVER_SPECS)


def spec(name: "str | RetrieverSpec") -> RetrieverSpec:
    """The registered spec of ``name``; an unknown name is a ``ValueError`` listing the known ones.

    A spec object is returned as it is: names are resolved once, at the edge (a config, a
    notebook parameter, ``run_matrix``), and the stages below pass the spec on."""
    if isinstance(name, RetrieverSpec):
        return name
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
