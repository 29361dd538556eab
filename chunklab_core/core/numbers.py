"""How the series writes a number in prose and tables: an estimate with its interval, a count, a range.

Handles, for every post and the recommendation of ``chunklab-own`` alike:

* :func:`interval` -- ``[low, high]``; :func:`estimate` -- ``estimate [low, high]``, the one
  shape of an estimate with its 95% interval (``0.910 [0.890, 0.929]``), as a share
  (``64.3% [58.1%, 70.2%]``) or a difference in percentage points (``+6.4 points [+0.9,
  +12.1]``); ``signed`` writes the sign of a difference. An estimate without an interval (a
  NaN bound) is written alone, never with ``[nan, nan]``.
* :func:`count` -- ``1 comparison`` / ``3 comparisons``, ``1 other`` / ``2 others``: a noun
  agrees with its number.
* :func:`value_range` -- ``0.80 to 0.92 over 3 comparisons``; one value, or values that print
  the same, are written once (``0.80, 1 comparison``), never as ``range 0.80 to 0.80``.

The level (95%) is said once by the text or the column header that shows these strings, not
repeated in every bracket. Not handled: choosing the words of a verdict (:mod:`chunklab_core.stats.claims`),
tables' numeric columns (they stay numbers).
"""

from __future__ import annotations

import math
from typing import Iterable

__all__ = ["number", "interval", "estimate", "count", "value_range", "span"]

SCALES = ("plain", "percent", "points")


def number(value: float, digits: int = 3, signed: bool = False, scale: str = "plain") -> str:
    """``value`` with ``digits`` decimals; ``percent``: ``12.3%`` (a share times 100); ``points``:
    a difference of shares times 100 (``+6.4``). ``signed`` writes ``+`` before positive values."""
    if scale not in SCALES:
        raise ValueError(f"scale must be one of {SCALES}, got {scale!r}")
    value = float(value)
    if math.isnan(value):
        return "n/a"
    sign = "+" if signed else ""
    if scale == "plain":
        return f"{value:{sign}.{digits}f}"
    text = f"{100 * value:{sign}.{digits}f}"
    return text + "%" if scale == "percent" else text


def interval(low: float, high: float, digits: int = 3, signed: bool = False,
             scale: str = "plain") -> str:
    """``[low, high]`` with the formatting of :func:`number`; ``""`` when a bound is NaN."""
    if any(math.isnan(float(v)) for v in (low, high)):
        return ""
    return f"[{number(low, digits, signed, scale)}, {number(high, digits, signed, scale)}]"


def estimate(value: float, low: float, high: float, digits: int = 3, signed: bool = False,
             scale: str = "plain") -> str:
    """``value [low, high]``; ``points`` adds the unit after the value (``+6.4 points [+0.9, +12.1]``)."""
    unit = " points" if scale == "points" else ""
    bounds = interval(low, high, digits, signed, scale)
    head = number(value, digits, signed, scale) + unit
    return f"{head} {bounds}" if bounds else head


def count(n: int, noun: str, plural: str | None = None) -> str:
    """``n noun`` with the noun in the plural unless ``n`` is 1 (``plural`` defaults to ``noun + "s"``)."""
    n = int(n)
    return f"{n} {noun if n == 1 else (plural or noun + 's')}"


def span(low: float, high: float, digits: int = 3, signed: bool = False, scale: str = "plain") -> str:
    """``low to high``, or one value when both print the same (``numbers.span(552, 5508, 0)``)."""
    a, b = number(low, digits, signed, scale), number(high, digits, signed, scale)
    return a if a == b else f"{a} to {b}"


def value_range(values: Iterable[float], noun: str, digits: int = 2, plural: str | None = None) -> str:
    """``low to high over n nouns``; when every value prints the same: ``value, n noun(s)``."""
    values = [float(v) for v in values]
    if not values:
        raise ValueError("value_range needs at least one value")
    low, high = number(min(values), digits), number(max(values), digits)
    counted = count(len(values), noun, plural)
    return f"{low}, {counted}" if low == high else f"{low} to {high} over {counted}"
