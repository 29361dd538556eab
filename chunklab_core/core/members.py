"""Registries whose members find themselves: one module per member, found by a folder scan and entry points.

Handles: :class:`Registry`, the ordered name -> member table every varied concept of the series
keeps (chunking strategies, retrievers, measures): ``register`` (a taken name is a
``ValueError``), read access as a mapping, and :meth:`Registry.scoped`, a context in which
registrations are undone on exit (tests add members inside it and leak nothing into the
process); and :func:`discover`, which completes a registry's folder: it imports the built-in
modules in their declared order (as ir_measures' ``measures/__init__.py`` imports its measures),
then every other module in the folder (a module a user dropped there, in name order), then every
module named by the entry-point group ``chunklab.<kind>`` of an installed distribution
(``importlib.metadata``), so an outside package adds a member without editing this one.

Not handled: what a member is (each stage's spec: ``chunking.StrategySpec``,
``retrieval.registry.RetrieverSpec``, ``evaluation.measures.Measure``), checking a member (each
stage's ``register_*``).
"""

from __future__ import annotations

import importlib
import pkgutil
from contextlib import contextmanager
from importlib import metadata
from typing import Generic, Iterator, Mapping, Sequence, TypeVar

Member = TypeVar("Member")

ENTRY_POINT_PREFIX = "chunklab."  # the entry-point group of a kind: chunklab.retrievers, ...


class Registry(Mapping[str, Member], Generic[Member]):
    """An ordered, read-only mapping of registered members, with :meth:`add` and :meth:`scoped`."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._members: dict[str, Member] = {}

    def __getitem__(self, name: str) -> Member:
        return self._members[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._members)

    def __len__(self) -> int:
        return len(self._members)

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}: {', '.join(self._members)})"

    def add(self, name: str, member: Member, *, replace: bool = False) -> Member:
        """Register ``member`` under ``name``; a taken name is a ``ValueError`` unless ``replace``."""
        if name in self._members and not replace:
            raise ValueError(f"{self.kind} {name!r} is already registered")
        self._members[name] = member
        return member

    def remove(self, name: str) -> Member:
        """Unregister ``name`` (``KeyError`` when absent); for :meth:`scoped` and the tests' own undo."""
        return self._members.pop(name)

    @contextmanager
    def scoped(self) -> Iterator["Registry[Member]"]:
        """A context whose registrations (and replacements, removals) are undone on exit, even on error."""
        saved = dict(self._members)
        try:
            yield self
        finally:
            self._members.clear()
            self._members.update(saved)


def discover(package: str, path: Sequence[str], builtin: Sequence[str], kind: str) -> list[str]:
    """Import a member folder: ``builtin`` modules first, in that order; then the folder's other
    modules (names not starting with ``_``), in name order; then the entry points of group
    ``chunklab.<kind>`` (each names a module or an object; loading it registers its members).
    Returns the module names imported from the folder. A member module that fails to import is
    an ``ImportError`` naming it (never skipped: a dropped module that is broken must say so)."""
    found = [m.name for m in pkgutil.iter_modules(path) if not m.name.startswith("_")]
    names = [*builtin, *sorted(set(found) - set(builtin))]
    for name in names:
        try:
            importlib.import_module(f"{package}.{name}")
        except ImportError as error:
            raise ImportError(f"the {kind} module {package}.{name} failed to import: {error}") from error
    for entry in metadata.entry_points(group=ENTRY_POINT_PREFIX + kind):
        try:
            entry.load()
        except Exception as error:  # an outside package's member: name it and the group
            raise ImportError(f"the {kind} entry point {entry.name!r} ({entry.value}) of group "
                              f"{ENTRY_POINT_PREFIX + kind} failed to load: {error}") from error
    return names
