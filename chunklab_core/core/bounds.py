"""Numbers from outside -- a command's options, a config file, a make variable passed to a module -- bounded before use.

Handles:

* :data:`RANGES` -- the allowed range of every kind of number a user may give (resample counts,
  seeds, cut-offs, budgets, ports, threads, sample sizes, ...), declared once so a command's
  option and a config key of the same kind accept the same values.
* :func:`problem` -- what is wrong with one value (``"--resamples must be an integer from 10 to
  1,000,000, got 0"``), or ``None``: a bool, a float where an integer is needed, NaN, a value
  outside the range are refused, never clamped silently and never replaced by a default
  (a resample count of 0 used to become 10,000).
* :func:`int_in` / :func:`float_in` -- ``argparse`` types that refuse a value outside its range
  with that message (argparse prints it with the usage line and exits 2, no traceback).
* :func:`checked` -- the value itself, or ``ValueError`` with the message (for a function that a
  notebook parameter reaches: ``make notebooks/... PARAMS='-p RESAMPLES 0'``).
* :func:`shown` -- a value as a problem message quotes it, cut to a few dozen characters, so a
  hostile value (an alias that expands to half a million entries) never makes a message of
  megabytes.
* :func:`memory_problem` -- whether an estimated allocation fits this machine's memory
  (``/proc/meminfo``'s MemTotal, else ``os.sysconf``), for a config refused at ``validate``
  because the run it asks for cannot fit.

Not handled: the meaning of a value within its range (each command checks its own relations,
e.g. an overlap below its size); numbers read from stored files (their own loaders check them).
"""

from __future__ import annotations

import argparse
import math
import os
from typing import Any, Callable

MAX_SHOWN = 60  # characters of a quoted value in a message

RANGES: dict[str, tuple[float, float]] = {
    "resamples": (10, 1_000_000),  # bootstrap/permutation draws (a report asks for more: own config 100)
    "seed": (0, 2**32 - 1),  # numpy's legacy and most libraries' seed range
    "k": (1, 10_000),  # a cut-off in chunks/contexts per question
    "budget": (1, 10_000_000),  # tokens a question may read
    "questions": (1, 1_000_000),  # questions / items / passages to draw or process
    "sample": (1, 100_000),  # cells or items sampled for a check
    "threads": (1, 1024),
    "workers": (1, 1024),
    "concurrency": (1, 256),
    "port": (0, 65535),  # 0: a free port
    "context": (256, 1_048_576),  # an LLM's context window (tokens)
    "chars": (1, 100_000_000),  # a size in characters
    "share": (0.0, 1.0),  # a proportion, a threshold, a half-width
    "temperature": (0.0, 2.0),
    "count": (0, 1_000_000),  # a count that may be zero (items left ungraded, a start index)
}


def shown(value: Any, limit: int = MAX_SHOWN) -> str:
    """``repr(value)`` cut to ``limit`` characters (``... (N characters)`` said when cut)."""
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001 - a value whose repr fails is shown by its type
        text = f"<{type(value).__name__}>"
    return cut(text, limit)


def cut(text: str, limit: int = 200) -> str:
    """``text`` cut to ``limit`` characters (``... (N characters)`` said when cut)."""
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text):,} characters)"


def _range_text(low: float, high: float, integer: bool) -> str:
    if integer:
        return f"an integer from {int(low):,} to {int(high):,}"
    return f"a number from {low:g} to {high:g}"


def problem(name: str, value: Any, kind: str | None = None, *, low: float | None = None,
            high: float | None = None, integer: bool = True) -> str | None:
    """Why ``value`` is not an allowed ``name`` (range :data:`RANGES` ``[kind or name]``, or
    ``low``/``high`` given), or ``None`` when it is."""
    if low is None or high is None:
        base_low, base_high = RANGES[kind or name]
        low = base_low if low is None else low
        high = base_high if high is None else high
    wanted = _range_text(low, high, integer)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return f"{name} must be {wanted}, got {shown(value)}"
    if integer and not isinstance(value, int):
        return f"{name} must be {wanted}, got {shown(value)}"
    if not math.isfinite(value) or not low <= value <= high:
        return f"{name} must be {wanted}, got {shown(value)}"
    return None


def checked(name: str, value: Any, kind: str | None = None, **bounds) -> Any:
    """``value`` when allowed (see :func:`problem`), else ``ValueError`` with the message."""
    message = problem(name, value, kind, **bounds)
    if message:
        raise ValueError(message)
    return value


def _argparse_type(kind: str, integer: bool, low: float | None, high: float | None) -> Callable[[str], Any]:
    def parse(text: str):
        try:
            value = int(text) if integer else float(text)
        except ValueError:
            value = text
        message = problem("value", value, kind, low=low, high=high, integer=integer)
        if message:
            raise argparse.ArgumentTypeError(message.replace("value must be", "must be", 1))
        return value
    parse.__name__ = "integer" if integer else "number"  # argparse's "invalid integer value" wording
    return parse


def int_in(kind: str, *, low: int | None = None, high: int | None = None) -> Callable[[str], int]:
    """An ``argparse`` type: an integer within ``RANGES[kind]`` (or ``low``/``high``)."""
    return _argparse_type(kind, True, low, high)


def float_in(kind: str, *, low: float | None = None, high: float | None = None) -> Callable[[str], float]:
    """An ``argparse`` type: a finite number within ``RANGES[kind]`` (or ``low``/``high``)."""
    return _argparse_type(kind, False, low, high)


def memory_bytes() -> int:
    """This machine's physical memory in bytes (MemTotal of /proc/meminfo, else sysconf; 0 if unknown)."""
    try:
        with open("/proc/meminfo", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (OSError, ValueError, AttributeError):
        return 0


def gib(n_bytes: float) -> str:
    """``12.3 GiB``."""
    return f"{n_bytes / 2**30:,.1f} GiB"


def memory_problem(what: str, needed: float, available: int | None = None, share: float = 0.5) -> str | None:
    """Why an allocation of ``needed`` bytes for ``what`` cannot be made (more than ``share`` of
    this machine's memory), or ``None``; unknown memory is never a problem."""
    available = memory_bytes() if available is None else available
    if available and needed > share * available:
        return (f"{what} needs about {gib(needed)} of memory; this machine has {gib(available)} "
                f"(at most half of it is planned for one run)")
    return None
