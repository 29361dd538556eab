"""What every stage evaluator shares: the word token, the percentile rule, first-rank ids, and results.

Handles
-------
* :func:`word_tokens`: the evaluators' token, a word: a maximal run of letters, digits or
  underscore (``re``'s ``\\w``, Unicode-aware), lower-cased. A metric that counts anything
  else (cl100k_base tokens, SQuAD-normalised tokens, characters) says so in its docstring.
* :func:`percentile`: numpy's default linear interpolation (Hyndman & Fan 1996, definition 7):
  100 ms and 300 ms give P50 200 and P95 290.
* :func:`measured_mean`: the mean of the measured values; "not measured" (``None``, or NaN in an
  array) is left out, and nothing measured gives ``None``, never 0.
* :func:`encode_ranked`: ranked id lists -> an integer matrix (-1 padding) with **a chunk id
  returned twice counted once, at its first rank** (the repeat becomes padding where it stood:
  it used a slot of the list, so later ids keep their ranks), and the relevance matrix against
  each query's relevant ids, vectorised over all queries at once.
* :func:`as_slots` and :func:`contains_gold`: gold as slots of alternatives, the convention of
  the own-documents questions file (``evaluation.gold_slots.normalize_gold``: a string is one
  slot; a list holds slots, each a string or a list of alternatives), and the evaluators'
  containment rule: a text holds the gold when, after ``core.text.normalize``, it contains one
  alternative of every slot (one slot of alternatives: any of them, post 01's rule).
* :class:`StageResult`: one stage's per-query values (a float array per metric, NaN where that
  query was not measured), the metrics whose input was not given at all (with the input that
  would measure them), percentile metrics (raw values + q), corpus-level values, and for a
  metric that has more than one definition, the one used (``definitions``).

Not handled: the metrics themselves (one module per stage), intervals (``evaluators.scorecard``).
"""

from __future__ import annotations

import itertools
import math
import re
from dataclasses import dataclass, field
from typing import Collection, Iterable, Sequence

import numpy as np
import pandas as pd

from chunklab_core.core.text import normalize
from chunklab_core.evaluation.gold_slots import normalize_gold

WORD = re.compile(r"\w+")


def word_tokens(text: str) -> list[str]:
    """Words of ``text``: ``re.findall(r"\\w+", text.lower())`` (letters, digits, underscore)."""
    return WORD.findall(text.lower())


def as_slots(gold) -> tuple[tuple[str, ...], ...] | None:
    """Gold slots (``gold_slots.normalize_gold``: ``"a"`` -> ``(("a",),)``, ``["a", ["b", "c"]]``
    -> ``(("a",), ("b", "c"))``), each alternative ``core.text.normalize``-d, blank ones dropped;
    ``None`` for no gold (``None``, an empty list, or nothing left after normalising)."""
    if gold is None or (isinstance(gold, (list, tuple)) and not gold):
        return None
    slots = tuple(tuple(w for w in (normalize(a) for a in slot) if w) for slot in normalize_gold(gold))
    return slots if slots and all(slots) else None


def contains_gold(body: str, slots: tuple[tuple[str, ...], ...]) -> bool:
    """1[every slot has an alternative that is a substring of ``body``]; ``body`` and ``slots``
    already normalised (``core.text.normalize``, :func:`as_slots`)."""
    return all(any(a in body for a in slot) for slot in slots)


def slots_filled(bodies: Sequence[str], slots: tuple[tuple[str, ...], ...]) -> int:
    """How many slots have an alternative in at least one of ``bodies`` (normalised texts)."""
    return sum(any(a in body for body in bodies for a in slot) for slot in slots)


def _measured(values: Iterable[float | None]) -> np.ndarray:
    out = np.array([np.nan if v is None else float(v) for v in values], dtype=float)
    return out[~np.isnan(out)]


def percentile(values: Iterable[float | None], q: float) -> float | None:
    """The ``q``-th percentile of the measured values, linear interpolation between order
    statistics (``numpy.percentile``'s default, Hyndman & Fan 1996 type 7:
    ``x_(i) + (h - i)(x_(i+1) - x_(i))`` with ``h = (n - 1) q / 100``); ``None`` when nothing was
    measured. ``[100, 300]`` gives P50 = 200 and P95 = 290."""
    if not 0 <= q <= 100:
        raise ValueError(f"a percentile lies in [0, 100], got {q!r}")
    measured = _measured(values)
    return float(np.percentile(measured, q)) if measured.size else None


def measured_mean(values: Iterable[float | None]) -> float | None:
    """``sum(measured) / #measured``; ``None`` and NaN are "not measured" and left out; ``None``
    when nothing was measured (so a missing input never reads as a score of 0)."""
    measured = _measured(values)
    return float(measured.mean()) if measured.size else None


def first_occurrences(ids: Sequence) -> list:
    """``ids`` with every repeat replaced by ``None`` (a chunk id counts once, at its first rank)."""
    seen: set = set()
    out = []
    for i in ids:
        out.append(None if i in seen else i)
        seen.add(i)
    return out


@dataclass(frozen=True)
class EncodedRun:
    """Ranked ids as integers: ``ids`` (n, depth) with -1 padding (short lists and repeats),
    ``rel`` (n, depth) 0/1 grades, ``n_relevant`` (n,) distinct relevant ids per query, and
    ``returned`` (n,) how many distinct ids each query returned within the depth."""

    ids: np.ndarray
    rel: np.ndarray
    n_relevant: np.ndarray
    returned: np.ndarray


def _flatten(lists: Sequence[Sequence], depth: int | None) -> tuple[list, np.ndarray]:
    cut = [lst if depth is None else lst[:depth] for lst in lists]
    lengths = np.fromiter((len(c) for c in cut), dtype=np.int64, count=len(cut))
    return list(itertools.chain.from_iterable(cut)), lengths


def encode_ranked(ranked: Sequence[Sequence], relevant: Sequence[Collection] | None, depth: int,
                  codebook: pd.Index | None = None) -> EncodedRun:
    """Encode ``ranked`` (one id list per query, best first) to ``depth`` ranks and grade it.

    Ids are factorised together with the relevant ids (``pandas.factorize``, or looked up in
    ``codebook`` so two runs share codes); query ``i``'s id ``c`` becomes the key
    ``i * n_codes + c``, repeats within a row are found with ``numpy.unique`` (first index
    kept) and relevance is membership of the key among the relevant keys (``numpy.isin``).
    ``relevant=None`` grades nothing (``rel`` all 0, ``n_relevant`` all 0).
    """
    n = len(ranked)
    if relevant is not None and len(relevant) != n:
        raise ValueError(f"{len(relevant)} relevant-id sets for {n} ranked lists")
    flat, lengths = _flatten(ranked, depth)
    gold, gold_lengths = _flatten([list(r) for r in relevant] if relevant is not None else [[]] * n, None)
    if codebook is None:
        codes, uniques = pd.factorize(pd.Index(flat + gold, dtype=object), sort=False)
        n_codes = max(len(uniques), 1)
    else:
        codes = codebook.get_indexer(pd.Index(flat + gold, dtype=object))
        if (codes < 0).any():
            raise ValueError("an id is missing from the shared codebook")
        n_codes = max(len(codebook), 1)
    codes = np.asarray(codes, dtype=np.int64)
    rows = np.repeat(np.arange(n, dtype=np.int64), lengths)
    cols = np.arange(len(flat), dtype=np.int64) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    keys = rows * n_codes + codes[: len(flat)]
    _, first = np.unique(keys, return_index=True)
    keep = np.zeros(len(flat), dtype=bool)
    keep[first] = True
    ids = np.full((n, depth), -1, dtype=np.int64)
    ids[rows[keep], cols[keep]] = codes[: len(flat)][keep]
    gold_keys = np.unique(np.repeat(np.arange(n, dtype=np.int64), gold_lengths) * n_codes + codes[len(flat):])
    rel = np.zeros((n, depth), dtype=float)
    rel[rows[keep], cols[keep]] = np.isin(keys[keep], gold_keys, assume_unique=False)
    n_relevant = np.bincount(gold_keys // n_codes, minlength=n).astype(np.int64) if n else np.zeros(0, np.int64)
    returned = np.bincount(rows[keep], minlength=n).astype(np.int64) if n else np.zeros(0, np.int64)
    return EncodedRun(ids, rel, n_relevant, returned)


def none_where(values: np.ndarray, missing: np.ndarray) -> np.ndarray:
    """``values`` as floats with NaN ("not measured") where ``missing`` is True."""
    out = np.asarray(values, dtype=float).copy()
    out[np.asarray(missing, dtype=bool)] = np.nan
    return out


def as_optional(value) -> float | None:
    """A float, or ``None`` for ``None``/NaN (how "not measured" leaves every result)."""
    if value is None:
        return None
    value = float(value)
    return None if math.isnan(value) else value


@dataclass
class StageResult:
    """One stage's results.

    ``values``: metric -> per-query float array (NaN = not measured for that query);
    ``not_measured``: metric -> the input that would measure it (the input was not given);
    ``percentiles``: metric -> (per-query raw values, q) for percentile metrics (``p50``...);
    ``corpus``: corpus-level metrics (chunking, index) -> value or ``None``;
    ``definitions``: metric -> the definition used, for a metric that can be measured from
    different inputs (ids or containment of snippets).
    """

    stage: str
    qids: list[str]
    values: dict[str, np.ndarray] = field(default_factory=dict)
    not_measured: dict[str, str] = field(default_factory=dict)
    percentiles: dict[str, tuple[np.ndarray, float]] = field(default_factory=dict)
    corpus: dict[str, float | None] = field(default_factory=dict)
    definitions: dict[str, str] = field(default_factory=dict)

    def means(self) -> dict[str, float | None]:
        """Every metric's value: means of per-query metrics (measured queries only), the
        percentiles, the corpus-level values, and ``None`` for every metric not measured."""
        out: dict[str, float | None] = {m: measured_mean(v) for m, v in self.values.items()}
        out.update({m: percentile(v, q) for m, (v, q) in self.percentiles.items()})
        out.update({m: as_optional(v) for m, v in self.corpus.items()})
        out.update({m: None for m in self.not_measured})
        return out

    def n_measured(self, metric: str) -> int:
        if metric in self.values:
            return int(np.count_nonzero(~np.isnan(self.values[metric])))
        if metric in self.percentiles:
            return int(np.count_nonzero(~np.isnan(np.asarray(self.percentiles[metric][0], dtype=float))))
        return 0

    def per_query(self) -> pd.DataFrame:
        """One row per query (``qid`` first), one column per per-query metric, ``None`` where
        not measured (object columns, so nothing turns a missing value into a number)."""
        frame = pd.DataFrame({"qid": self.qids})
        for metric, values in self.values.items():
            frame[metric] = pd.Series([as_optional(v) for v in values], dtype=object)
        return frame
