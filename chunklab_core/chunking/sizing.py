"""How a strategy is sized: its sizeable parameters with their units, and the config kind it answers to.

Handles two declarations a :class:`~chunklab_core.chunking.StrategySpec` carries:

* ``sizes``: parameter -> unit (one of :data:`SIZE_UNITS`: ``chars``, ``tokens``,
  ``sentences``) for every parameter that is a length, e.g. ``{"size": "tokens", "overlap":
  "tokens"}``. A sizeable parameter may be absent from the spec's defaults (``overlap`` of
  ``fixed_tokens_256``): a variant may still set it (``register_variant``).
* ``sizing``: a :class:`Sizing`, on the one spec per (kind, unit) that a user's sized entry
  in the own-documents config (``{kind: fixed, size: 800, unit: tokens}``) is built from:
  which config key sets which parameter, and how the variant is named and labelled.

Not handled: validating a config entry or registering the variant (``own.config``), what the
parameters mean to the strategy (its function).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

SIZE_UNITS = ("chars", "tokens", "sentences")
CEILING_KEYS = ("max", "size")  # the config keys that set a size ceiling (max_chars / max_tokens of the variant)


@dataclass(frozen=True)
class Sizing:
    """How a sized config entry of ``kind`` becomes a variant of the spec that declares this.

    ``keys``: config key -> the spec's parameter (``{"size": "max_tokens"}``); the unit is the
    one its ``sizes`` gives those parameters. ``name`` / ``label``: ``str.format`` templates
    over the entry's keys and ``_o`` / ``o_label`` (the overlap's, empty without overlap),
    ``_p`` / ``p_label`` (the percentile's, empty at the default).
    """

    kind: str
    keys: Mapping[str, str] = field(default_factory=dict)
    name: str = ""
    label: str = ""


def sizing_unit(sizes: Mapping[str, str], sizing: Sizing) -> str:
    """The one unit of the sizeable parameters ``sizing`` sets; ``ValueError`` if they mix units or none is sizeable."""
    units = {sizes[p] for p in sizing.keys.values() if p in sizes}
    if len(units) != 1:
        raise ValueError(f"sizing of kind {sizing.kind!r} must set sizeable parameters of one unit, got {sorted(units)}")
    return units.pop()


def check_sizes(sizes: Mapping[str, str]) -> None:
    """``ValueError`` unless every unit of ``sizes`` is one of :data:`SIZE_UNITS`."""
    bad = {p: u for p, u in sizes.items() if u not in SIZE_UNITS}
    if bad:
        raise ValueError(f"size units must be one of {', '.join(SIZE_UNITS)}, got {bad}")
