"""Benchmark chunklab_core.stats.bootstrap against named alternatives measured in the same run.

1. Probability of being best, 100,000 paired resamples over 800 questions x 24 cells (seeded
   Bernoulli data), against a straightforward Python loop over resamples (2,000 resamples,
   scaled up per resample).
2. A 10,000-resample percentile interval on one cell (800 questions) against
   ``scipy.stats.bootstrap(method="percentile")`` with the same number of resamples, for both
   samplers ("indices": data-independent draws shared across calls; "patterns": the exact
   multinomial shortcut over distinct rows).
3. 10,000-resample intervals for all 24 cells in one call against scipy on the same matrix
   (scipy also reuses one set of indices across the batch dimension; batch=500 bounds its
   memory).

Peak memory: tracemalloc (numpy reports its buffers to it) in a separate untimed run, and the
process's maximum resident set size. Usage: ``python scripts/bench_stats.py``.
"""

from __future__ import annotations

import resource
import time
import tracemalloc

import numpy as np
import scipy
import scipy.stats

from chunklab_core.stats.bootstrap import bootstrap_ci, probability_best


def best_of(function, repeats: int = 3) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)


def peak_mib(function) -> float:
    tracemalloc.start()
    function()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / 2**20


def loop_probability_best(scores: np.ndarray, resamples: int, seed: int) -> np.ndarray:
    """The straightforward version: one resample at a time."""
    rng = np.random.default_rng(seed)
    n, cells = scores.shape
    wins = np.zeros(cells)
    for _ in range(resamples):
        means = scores[rng.integers(0, n, n)].mean(axis=0)
        best = means >= means.max() - 1e-12
        wins += best / best.sum()
    return wins / resamples


def main() -> None:
    rng = np.random.default_rng(0)
    n_questions, n_cells = 800, 24
    scores = (rng.random((n_questions, n_cells)) < rng.uniform(0.4, 0.7, n_cells)).astype(float)
    print(f"numpy {np.__version__}, scipy {scipy.__version__}")

    print(f"\n1. probability of being best, {n_questions} questions x {n_cells} cells")
    ours_s = best_of(lambda: probability_best(scores, 100_000, seed=1), repeats=2)
    loop_s = best_of(lambda: loop_probability_best(scores, 2_000, seed=1), repeats=1)
    ours_per, loop_per = ours_s / 100_000, loop_s / 2_000
    print(f"   chunklab (blocked, 100,000 resamples): {ours_s:.2f} s  ({1e6 * ours_per:.1f} us/resample)")
    print(f"   python loop (2,000 resamples):         {loop_s:.2f} s  ({1e6 * loop_per:.1f} us/resample;"
          f" {loop_per * 100_000:.0f} s scaled to 100,000)")
    print(f"   per-resample speed-up: {loop_per / ours_per:.1f}x")
    gap = np.abs(probability_best(scores, 2_000, seed=1) - loop_probability_best(scores, 2_000, seed=2)).max()
    print(f"   max |difference| between the two at 2,000 resamples (different draws): {gap:.3f}")
    peak = peak_mib(lambda: probability_best(scores, 100_000, seed=1))
    print(f"   peak traced memory: {peak:.1f} MiB (input {scores.nbytes / 2**20:.2f} MiB)")

    print(f"\n2. 10,000-resample percentile interval, one cell of {n_questions} questions")
    cell = scores[:, 0]
    scipy_s = best_of(lambda: scipy.stats.bootstrap(
        (cell,), np.mean, n_resamples=10_000, method="percentile", rng=np.random.default_rng(1)))
    theirs = scipy.stats.bootstrap((cell,), np.mean, n_resamples=10_000, method="percentile",
                                   rng=np.random.default_rng(1)).confidence_interval
    print(f"   scipy.stats.bootstrap: {1e3 * scipy_s:7.1f} ms  [{theirs.low:.4f}, {theirs.high:.4f}]")
    for sampler in ("indices", "patterns"):
        ours_s = best_of(lambda: bootstrap_ci(cell, 10_000, seed=1, sampler=sampler), repeats=5)
        ci = bootstrap_ci(cell, 10_000, seed=1, sampler=sampler)
        peak = peak_mib(lambda: bootstrap_ci(cell, 10_000, seed=1, sampler=sampler))
        print(f"   chunklab {sampler:8s}:   {1e3 * ours_s:7.1f} ms  [{ci.low:.4f}, {ci.high:.4f}]  "
              f"{scipy_s / ours_s:6.1f}x scipy, peak {peak:.1f} MiB")
    scipy_peak = peak_mib(lambda: scipy.stats.bootstrap(
        (cell,), np.mean, n_resamples=10_000, method="percentile", rng=np.random.default_rng(1)))
    print(f"   scipy peak traced memory: {scipy_peak:.1f} MiB")

    print(f"\n3. 10,000-resample intervals for all {n_cells} cells at once (paired)")
    scipy_s = best_of(lambda: scipy.stats.bootstrap(
        (scores.T,), np.mean, n_resamples=10_000, method="percentile", axis=-1, batch=500,
        rng=np.random.default_rng(1)), repeats=1)
    ours_s = best_of(lambda: bootstrap_ci(scores, 10_000, seed=1))
    print(f"   scipy.stats.bootstrap (axis=-1, batch=500): {scipy_s:.2f} s")
    print(f"   chunklab indices:                           {ours_s:.2f} s  {scipy_s / ours_s:.1f}x scipy")
    maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"\nprocess max resident set size: {maxrss:.0f} MiB")


if __name__ == "__main__":
    main()
