"""The strategy registry: one ``StrategySpec`` per named strategy setting, and how one is registered.

Handles: :class:`StrategySpec` (function, default parameters, label, whether it is one of post
01's default strategies, tiling, size ceiling, headings, embedding model, sizeable parameters
and their units), :data:`STRATEGIES` (every registered one, in order; ``STRATEGIES.scoped()``
undoes what a test registers), :func:`register_strategy` (what each module of
``chunking/strategies/`` calls), :func:`register_variant` (a user's sizes of a registered one),
and the name lookups (:func:`strategy_label`, :func:`strategy_names`).

Not handled: the strategies themselves (``chunking/strategies/``, one module each), cutting a
text (``chunking.document_spans``), the span contract (``chunking.spans``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Callable, Mapping

from chunklab_core.chunking.sizing import Sizing, check_sizes, sizing_unit
from chunklab_core.chunking.spans import ChunkSpan
from chunklab_core.core.members import Registry


@dataclass(frozen=True)
class StrategySpec:
    """A registered strategy: ``func(text, **params)`` with these default ``params``.

    ``tiles``: the indexed spans tile the text (no overlap). ``max_chars`` / ``max_tokens``:
    the size ceiling of the indexed spans under the default parameters (``None``: none).
    ``needs_embedding``: it cuts with an embedding model (passed as its ``embed`` parameter;
    its chunks are recorded with the model); declared per spec, inherited by its variants.
    ``sizes``: each sizeable parameter and its unit (``chars``, ``tokens``, ``sentences``),
    inherited by its variants; ``sizing``: the config kind a user's sized entry builds from this
    spec (:mod:`chunklab_core.chunking.sizing`; ``None``: not sizeable in a config, and never
    inherited).
    """

    name: str
    func: Callable[..., list[ChunkSpan]]
    params: Mapping[str, Any]
    label: str
    default: bool
    tiles: bool = True
    max_chars: int | None = None
    max_tokens: int | None = None
    description: str = field(default="", compare=False)
    uses_headings: bool = False
    needs_embedding: bool = False
    sizes: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    sizing: Sizing | None = None


def _spec(name, func, params, label, default, **extra) -> StrategySpec:
    """A spec; one that takes an ``embed`` parameter declares ``needs_embedding`` unless told otherwise.
    ``sizes`` units and a ``sizing``'s parameters are checked (``ValueError``)."""
    extra.setdefault("needs_embedding", "embed" in params)
    sizes = MappingProxyType(dict(extra.pop("sizes", {})))
    check_sizes(sizes)
    if extra.get("sizing") is not None:
        sizing_unit(sizes, extra["sizing"])
    return StrategySpec(name, func, MappingProxyType(dict(params)), label, default, sizes=sizes, **extra)


STRATEGIES: Registry[StrategySpec] = Registry("strategy")
"""Every registered strategy, in registration order; ``chunking/strategies/`` (and the entry points of
group ``chunklab.strategies``) fill it when this package is imported. ``STRATEGIES.scoped()`` undoes
what a test registers."""


def register_strategy(name: str, func: Callable[..., list[ChunkSpan]], params: Mapping[str, Any], label: str,
                      *, default: bool = False, check: bool = True, **extra: Any) -> str:
    """Register a new strategy ``func(text, **params) -> [ChunkSpan]`` under ``name``; return ``name``.

    ``extra``: the :class:`StrategySpec` fields beyond the defaults (``tiles``, ``max_chars``,
    ``max_tokens``, ``uses_headings``, ``description``, ``sizes``, ``sizing``: with a ``sizing``
    it is sizeable in the own-documents config under its kind); ``default``: one of post 01's
    default strategies. A taken name is a ``ValueError``; the function is checked on a short text
    at once (unless it needs an embedding model, or ``check`` is False: the series' own, which
    the tests check), so a bad definition fails here rather than mid-run.
    """
    if name in STRATEGIES:
        raise ValueError(f"strategy name {name!r} is taken")
    spec = _spec(name, func, params, label, default, **extra)
    if check and spec.params.get("embed", 0) is not None:
        func("A short check. Of the parameters.", **spec.params)
    STRATEGIES.add(name, spec)
    return name


def register_variant(name: str, base: str, params: Mapping[str, Any], label: str, **extra: Any) -> str:
    """Register ``name`` as strategy ``base`` with ``params`` replacing its defaults (for a user's
    sizes, e.g. ``fixed_chars_800_o200``); return ``name``. The variant inherits ``uses_headings``
    from its base (unless ``extra`` sets it), so a sized structure strategy cuts at headings, and
    its ``sizes``; a sizeable parameter of the base may be set though its defaults lack it.

    Registering the same name again with the same function and parameters is a no-op; a
    different definition under a taken name raises ``ValueError``. The parameters are checked
    on a short text at once, so a bad size fails here rather than mid-run.
    """
    spec = _lookup(base)
    unknown = sorted(set(params) - set(spec.params) - set(spec.sizes))
    if unknown:
        raise ValueError(f"strategy {base!r} has no parameter(s) {unknown}; it takes: {sorted({*spec.params, *spec.sizes})}")
    extra.setdefault("uses_headings", spec.uses_headings)  # a sized structure strategy still reads headings
    extra.setdefault("needs_embedding", spec.needs_embedding)
    extra.setdefault("sizes", spec.sizes)
    variant = _spec(name, spec.func, {**spec.params, **params}, label, False,
                    tiles=spec.tiles and not params.get("overlap", 0), **extra)
    if name in STRATEGIES:
        old = STRATEGIES[name]
        if old.func is variant.func and dict(old.params) == dict(variant.params):
            return name
        raise ValueError(f"strategy name {name!r} is taken by a different definition")
    if variant.params.get("embed", 0) is not None:  # the embedding strategies are checked when run
        spec.func("A short check. Of the parameters.", **variant.params)
    STRATEGIES.add(name, variant)
    return name


def _lookup(strategy: "str | StrategySpec") -> StrategySpec:
    """The registered spec of a name; a spec object is returned as it is (names are resolved once,
    at the edge, and the spec travels below: ``chunk_corpus`` resolves once per corpus, not per document)."""
    if isinstance(strategy, StrategySpec):
        return strategy
    try:
        return STRATEGIES[strategy]
    except (KeyError, TypeError):
        raise ValueError(f"unknown chunking strategy {strategy!r}; known: {', '.join(STRATEGIES)}") from None


def strategy_names(default_only: bool = True) -> list[str]:
    """Registered names in registration order; only post 01's defaults unless told otherwise."""
    return [name for name, spec in STRATEGIES.items() if spec.default or not default_only]


def strategy_label(name: str) -> str:
    """The human label of a strategy, e.g. ``"Semantic (TF-IDF proxy)"``."""
    return _lookup(name).label
