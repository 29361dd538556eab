"""Paired bootstrap statistics over per-question score matrices.

Input everywhere is ``scores``: an array of shape (n_questions, n_cells), one row per question
and one column per cell (a strategy x retriever combination, say); a 1-D array is one cell.
Scores must be finite. Nothing here knows what a score means (recall@k, a 0/1 verdict, ...).

Resampling scheme (the non-parametric bootstrap of Efron & Tibshirani, "An Introduction to the
Bootstrap", 1993, ch. 6 and 13): a resample draws ``n`` question indices uniformly with
replacement. The indices depend only on ``(n, resamples, seed)`` (:func:`resample_indices`),
so every cell of a matrix - and every later call with the same seed and question count - sees
the same resampled question sets: comparisons are paired by construction. Resamples are
processed in blocks of about two million indices, so memory is bounded whatever the number of
resamples; the block size does not change the draws. A resampled mean is ``counts @ scores / n``
where ``counts`` holds how often each question was drawn (that is the multinomial-weights view
of the same draws; it turns many cells into one matrix product).

``sampler="patterns"`` is an optional exact shortcut: identical question rows are collapsed
into patterns with multiplicities ``m_j`` and the pattern counts are drawn directly as
Multinomial(n, m_j / n), which is the distribution the index draws induce on them. For 0/1
scores in a few cells there are only a handful of patterns and this is orders of magnitude
faster. Its draws depend on the data, so intervals from separate calls are no longer built
from the same resamples; within one call all cells stay paired.

Not handled: missing scores (drop or impute before), weighted questions, BCa or studentised
intervals (percentile intervals only), clustered questions (see :mod:`chunklab_core.stats.clustered`).
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Iterator
from typing import Literal, NamedTuple

import numpy as np
import pandas as pd

from chunklab_core.core.bounds import RANGES, shown

Sampler = Literal["indices", "patterns"]
BLOCK_ELEMENTS = 2**21  # indices (or pattern counts) drawn per block; bounds memory
TIE_TOLERANCE = 1e-12  # resampled means this close (relative to the score scale) are ties


class Interval(NamedTuple):
    """A point estimate with a two-sided interval.

    Scalars for one cell; arrays of shape (n_cells,) when a matrix was given (column order).
    Unpacks as ``mean, low, high = bootstrap_ci(scores)``.
    """

    mean: float | np.ndarray
    low: float | np.ndarray
    high: float | np.ndarray


def as_score_matrix(scores, name: str = "scores") -> np.ndarray:
    """Return ``scores`` as a finite float (n_questions, n_cells) array; 1-D becomes one column."""
    matrix = np.asarray(scores, dtype=float)
    if matrix.ndim == 1:
        matrix = matrix[:, None]
    if matrix.ndim != 2:
        raise ValueError(f"{name} must be 1-D or 2-D (questions x cells), got shape {matrix.shape}")
    if matrix.shape[0] == 0:
        raise ValueError(f"{name} has no questions (shape {matrix.shape}); nothing to resample")
    if not np.all(np.isfinite(matrix)):
        raise ValueError(f"{name} contains NaN or infinite values; drop or impute them first")
    return matrix


def _check_resamples(resamples: int) -> int:
    """A resample count from 1 to ``bounds.RANGES["resamples"]``'s maximum (a notebook parameter
    ``-p RESAMPLES`` reaches here unchecked by any command line)."""
    high = int(RANGES["resamples"][1])
    if (isinstance(resamples, bool) or not isinstance(resamples, (int, float, np.integer))
            or not np.isfinite(resamples) or int(resamples) != resamples or not 1 <= resamples <= high):
        raise ValueError(f"resamples must be an integer from 1 to {high:,}, got {shown(resamples)}")
    return int(resamples)


def _check_confidence(confidence: float) -> float:
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must lie strictly between 0 and 1, got {confidence!r}")
    return float(confidence)


def iter_resample_indices(n: int, resamples: int, seed) -> Iterator[np.ndarray]:
    """Yield blocks of bootstrap index rows (shape (block, n), int64), ``resamples`` rows in all.

    One generator ``np.random.default_rng(seed)`` draws the blocks in order; numpy's bounded
    integer draws are consumed sequentially, so the rows do not depend on the block size and
    the first r rows are the same whatever the total number of resamples. For an integer seed
    and n <= 65,535 the blocks are kept (as read-only uint16 arrays, the same values) and a
    later call with the same (n, resamples, seed) reads them instead of drawing again.
    """
    if int(n) != n or n < 1:
        raise ValueError(f"n (number of questions) must be a positive integer, got {n!r}")
    resamples = _check_resamples(resamples)
    block = max(1, BLOCK_ELEMENTS // int(n))
    integer_seed = isinstance(seed, (int, np.integer)) and not isinstance(seed, bool)
    key = (int(n), resamples, int(seed), block) if integer_seed else None
    if key is not None and key in _DRAWN:
        _DRAWN.move_to_end(key)
        yield from _DRAWN[key]
        return
    rng = np.random.default_rng(seed)
    blocks = []
    for start in range(0, resamples, block):
        indices = rng.integers(0, n, size=(min(block, resamples - start), int(n)))
        if key is not None and n <= np.iinfo(np.uint16).max:
            indices = indices.astype(np.uint16)  # the same values, a quarter of the memory to keep and read
            indices.flags.writeable = False
            blocks.append(indices)
        yield indices
    if key is not None and blocks and len(blocks) * block >= resamples:
        _keep(key, blocks)


# Drawn index blocks of integer seeds, kept per process (least recently used first out, at most
# DRAWN_BYTES): every interval of a post with the same (n, resamples, seed) reads the same rows,
# so they are drawn once. Read-only arrays; the rows are exactly those a fresh generator draws.
DRAWN_BYTES = 256 * 2**20
_DRAWN: "OrderedDict[tuple[int, int, int, int], list[np.ndarray]]" = OrderedDict()


def _keep(key: tuple[int, int, int, int], blocks: list[np.ndarray]) -> None:
    _DRAWN[key] = blocks
    while sum(b.nbytes for blocks_ in _DRAWN.values() for b in blocks_) > DRAWN_BYTES and len(_DRAWN) > 1:
        _DRAWN.popitem(last=False)


def resample_indices(n: int, resamples: int, seed) -> np.ndarray:
    """All bootstrap index rows at once, shape (resamples, n); for small problems and tests."""
    return np.concatenate(list(iter_resample_indices(n, resamples, seed)))


def counts_from_indices(indices: np.ndarray, n: int) -> np.ndarray:
    """How often each question occurs in each resample row: (block, n) float counts."""
    rows = indices.shape[0]
    flat = (indices + (np.arange(rows, dtype=np.int64) * n)[:, None]).ravel()
    return np.bincount(flat, minlength=rows * n).reshape(rows, n).astype(float)


def iter_resampled_means(scores, resamples: int, seed, sampler: Sampler = "indices") -> Iterator[np.ndarray]:
    """Yield blocks of resampled cell means, shape (block, n_cells); all cells share the resamples."""
    matrix = as_score_matrix(scores)
    n, cells = matrix.shape
    if sampler == "indices":
        for indices in iter_resample_indices(n, resamples, seed):
            if cells <= 2:  # a gather beats counting plus a product for one or two cells
                yield np.stack([matrix[:, j][indices].sum(axis=1) for j in range(cells)], axis=1) / n
            else:
                yield counts_from_indices(indices, n) @ matrix / n
    elif sampler == "patterns":
        resamples = _check_resamples(resamples)
        patterns, multiplicity = np.unique(matrix, axis=0, return_counts=True)
        rng = np.random.default_rng(seed)
        block = max(1, BLOCK_ELEMENTS // len(patterns))
        for start in range(0, resamples, block):
            counts = rng.multinomial(n, multiplicity / n, size=min(block, resamples - start))
            yield counts @ patterns / n
    else:
        raise ValueError(f"sampler must be 'indices' or 'patterns', got {sampler!r}")


def resampled_means(scores, resamples: int, seed, sampler: Sampler = "indices") -> np.ndarray:
    """All resampled cell means, shape (resamples, n_cells); memory grows with cells, not questions."""
    return np.concatenate(list(iter_resampled_means(scores, resamples, seed, sampler)))


def percentile_interval(resampled: np.ndarray, confidence: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Percentile interval along axis 0: the (1-c)/2 and (1+c)/2 quantiles, linear interpolation.

    Efron & Tibshirani (1993), eq. 13.5; the same quantile rule as
    ``scipy.stats.bootstrap(method="percentile")``.
    """
    alpha = (1.0 - _check_confidence(confidence)) / 2.0
    low, high = np.quantile(resampled, [alpha, 1.0 - alpha], axis=0)
    return low, high


def _shape_like_input(scores, values: np.ndarray):
    return float(values[0]) if np.asarray(scores).ndim == 1 else values


def bootstrap_ci(scores, resamples: int = 10_000, seed=0, confidence: float = 0.95,
                 sampler: Sampler = "indices") -> Interval:
    """Percentile bootstrap interval on the mean per-question score of each cell.

    Returns ``Interval(mean, low, high)``: floats for a 1-D input, arrays (one entry per column)
    for a matrix. ``mean`` is the observed mean, not the mean of the resampled means.
    """
    matrix = as_score_matrix(scores)
    low, high = percentile_interval(resampled_means(matrix, resamples, seed, sampler), confidence)
    mean = matrix.mean(axis=0)
    return Interval(*(_shape_like_input(scores, v) for v in (mean, low, high)))


def paired_difference_ci(a, b, resamples: int = 10_000, seed=0, confidence: float = 0.95,
                         sampler: Sampler = "indices") -> Interval:
    """Percentile interval on mean(a) - mean(b) from paired resamples of the questions.

    Resamples the per-question differences ``a - b``; with the index sampler this is exactly
    the difference of the two cells' resampled means under the same resamples.
    """
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    if a.ndim != 1 or b.ndim != 1:
        raise ValueError(f"a and b must be 1-D per-question scores, got shapes {a.shape} and {b.shape}")
    if a.shape != b.shape:
        raise ValueError(f"a and b must score the same questions in the same order; got {len(a)} and "
                         f"{len(b)} questions (a paired difference needs one score of each per question)")
    return bootstrap_ci(a - b, resamples, seed, confidence, sampler)


def _sizing_inputs(n: int, ci: tuple[float, float]) -> tuple[float, float]:
    """``ci`` as ``(low, high)`` after checking ``n >= 1`` and ``low <= high`` (the sizing functions' inputs)."""
    if n < 1:
        raise ValueError(f"n must be a positive number of questions, got {n!r}")
    low, high = ci
    if high < low:
        raise ValueError(f"ci must be (low, high) with low <= high, got {ci!r}")
    return low, high


def questions_needed(n: int, diff: float, ci: tuple[float, float], cap: int = 100_000) -> int | None:
    """Questions needed for an interval of half-width |diff| (so the two cells separate).

    ``max(n + 1, ceil(n * (halfwidth / |diff|)**2))`` with ``halfwidth = (high - low) / 2``:
    an interval's width shrinks like 1/sqrt(n) at a fixed per-question variance. Returns None
    when |diff| < 1e-9 (no difference to resolve) or the answer exceeds ``cap``. The ratio is
    rounded to 6 decimals before the ceiling so float noise cannot add a question (n=20,
    diff=0.02, ci=(-0.08, 0.12) gives exactly 500; post 03's 800 questions with a difference of
    means 0.945 − 0.9425, stored as 0.00249999999999995, give 28,800, not 28,801).
    """
    low, high = _sizing_inputs(n, ci)
    if abs(diff) < 1e-9:
        return None
    halfwidth = (high - low) / 2.0
    needed = max(n + 1, math.ceil(round(n * (halfwidth / abs(diff)) ** 2, 6)))
    return None if needed > cap else int(needed)


def questions_for_power(n: int, diff: float, ci: tuple[float, float], power: float = 0.80,
                        level: float = 0.95, cap: int = 100_000) -> int | None:
    """Questions at which a true difference of ``diff`` would exclude 0 with probability ``power``.

    ``ceil(n * ((z_(1-a/2) + z_power) * se / |diff|)**2)``, ``se = (high - low) / (2 z_(1-a/2))``
    read from the 95% interval measured on ``n`` questions: the normal-approximation sample size
    of a two-sided z test (e.g. Chow, Shao & Wang, *Sample Size Calculations in Clinical
    Research*, 3rd ed., section 3.1), the per-question spread held at what was measured.
    :func:`questions_needed` is the same formula at 50% power (``z_power = 0``): the n at which
    the lead *as measured* would just reach the interval's edge. At least ``n + 1``; None when
    |diff| < 1e-9 or above ``cap``. Cross-checked against statsmodels' ``NormalIndPower``
    (one sample) in ``tests/test_post00.py``.
    """
    from scipy.special import ndtri  # ``scipy.stats.norm.ppf``'s computation, without importing scipy.stats

    low, high = _sizing_inputs(n, ci)
    if not 0.5 <= power < 1 or not 0 < level < 1:
        raise ValueError(f"power must be in [0.5, 1) and level in (0, 1), got {power!r}, {level!r}")
    if abs(diff) < 1e-9:
        return None
    z_level = float(ndtri(1 - (1 - level) / 2))
    se = (high - low) / (2 * z_level)
    needed = max(n + 1, math.ceil(round(n * ((z_level + float(ndtri(power))) * se / abs(diff)) ** 2, 6)))
    return None if needed > cap else int(needed)


def best_shares(means: np.ndarray, scale: float = 1.0) -> np.ndarray:
    """Per resample row, 1/k for each of the k cells tied at the row maximum, else 0.

    Ties are means within ``TIE_TOLERANCE * max(1, scale)`` of the maximum (``scale`` is the
    largest absolute score), so float rounding in the matrix product cannot break a tie
    between identical columns.
    """
    tolerance = TIE_TOLERANCE * max(1.0, float(scale))
    is_best = means >= means.max(axis=1, keepdims=True) - tolerance
    return is_best / is_best.sum(axis=1, keepdims=True)


def probability_best(scores, resamples: int = 10_000, seed=0, sampler: Sampler = "indices") -> np.ndarray:
    """Share of paired resamples in which each cell has the highest resampled mean.

    Exact ties (within 1e-12 of the score scale) split the resample equally, so the shares sum
    to 1 and identical columns get identical shares. One column gives [1.0]; a matrix with
    zero columns gives an empty array. Computed block by block: memory is bounded by the block,
    not by ``resamples``.
    """
    matrix = np.asarray(scores, dtype=float)
    if matrix.ndim == 2 and matrix.shape[1] == 0:
        return np.zeros(0)
    matrix = as_score_matrix(matrix)
    wins = np.zeros(matrix.shape[1])
    scale = float(np.max(np.abs(matrix)))
    for means in iter_resampled_means(matrix, resamples, seed, sampler):
        wins += best_shares(means, scale).sum(axis=0)
    return wins / _check_resamples(resamples)


def balanced_score(recall, tokens, lam: float = 0.05, t_min: float | None = None):
    """Recall penalised by context cost: ``recall - lam * (tokens / T_min - 1)``.

    The chunklab trade-off score (post 01): each multiple of the cheapest strategy's returned
    tokens beyond the first costs ``lam`` recall. ``T_min`` is the smallest mean returned
    token count among the compared strategies unless given. 1-D inputs are one value per
    strategy; 2-D inputs are per-question matrices (questions x strategies), T_min then comes
    from the column means and the result is per question (its column means are the balanced
    scores, and it can be bootstrapped like any score matrix). pandas inputs keep their labels.
    """
    if isinstance(recall, pd.Series | pd.DataFrame) and isinstance(tokens, pd.Series | pd.DataFrame):
        if not recall.axes[-1].equals(tokens.axes[-1]):
            raise ValueError("recall and tokens are labelled differently; align them (same strategies, "
                             "same order) before computing balanced scores")
    recall_values = np.asarray(recall, dtype=float)
    token_values = np.asarray(tokens, dtype=float)
    if recall_values.shape != token_values.shape:
        raise ValueError(f"recall and tokens must have the same shape, got {recall_values.shape} "
                         f"and {token_values.shape}")
    if recall_values.ndim not in (1, 2) or recall_values.size == 0:
        raise ValueError("recall and tokens must be non-empty 1-D (per strategy) or 2-D "
                         f"(questions x strategies) arrays, got shape {recall_values.shape}")
    if lam < 0:
        raise ValueError(f"lam must be >= 0, got {lam!r}")
    if t_min is None:
        mean_tokens = token_values if token_values.ndim == 1 else token_values.mean(axis=0)
        t_min = float(mean_tokens.min())
    if not t_min > 0:
        raise ValueError(f"T_min must be positive (returned tokens per strategy), got {t_min!r}")
    balanced = recall_values - lam * (token_values / t_min - 1.0)
    if isinstance(recall, pd.Series):
        return pd.Series(balanced, index=recall.index, name=recall.name)
    if isinstance(recall, pd.DataFrame):
        return pd.DataFrame(balanced, index=recall.index, columns=recall.columns)
    return balanced
