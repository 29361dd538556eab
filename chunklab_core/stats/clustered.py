"""Document-clustered bootstrap: intervals when questions come in groups from the same document.

Questions written about the same document share its difficulty (a long contract, a badly parsed
PDF), so they are not independent draws; the plain bootstrap of :mod:`chunklab_core.stats.bootstrap`
then understates the uncertainty. This module resamples *documents*.

What is implemented: the one-stage cluster bootstrap (Davison & Hinkley, "Bootstrap Methods
and their Application", 1997, sec. 3.8, strategy 1; Field & Welsh, "Bootstrapping clustered
data", JRSS-B 2007). Draw as many documents as there are, uniformly with replacement, keep all
questions of each drawn document, and take the mean over all kept questions (a ratio
estimator: sum of document totals / number of kept questions, so documents with more
questions weigh more, exactly as in the observed mean). The resampled documents depend only on
``(n_documents, resamples, seed)`` and are shared by every cell, so comparisons stay paired.

What is not: the two-stage variant (also resampling questions inside each drawn document).
Davison & Hinkley show that resampling at both stages counts the within-document variance
twice and overstates the spread unless the number of documents is small and the
within-document variance dominates; the one-stage scheme is the conservative default with
many documents. With fewer than about 10 documents any cluster bootstrap is unreliable
(Cameron, Gelbach & Miller, 2008) and a warning is issued.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from chunklab_core.stats.bootstrap import (
    Interval,
    as_score_matrix,
    bootstrap_ci,
    counts_from_indices,
    iter_resample_indices,
    percentile_interval,
)

MIN_RELIABLE_CLUSTERS = 10


def _cluster_totals(matrix: np.ndarray, clusters) -> tuple[np.ndarray, np.ndarray]:
    """Per-document score totals (n_documents, n_cells) and question counts (n_documents,)."""
    labels = np.asarray(clusters)
    if labels.shape != (matrix.shape[0],):
        raise ValueError(f"clusters must give one document label per question: got {labels.shape} "
                         f"labels for {matrix.shape[0]} questions")
    _, codes = np.unique(labels, return_inverse=True)
    sizes = np.bincount(codes).astype(float)
    if len(sizes) < 2:
        raise ValueError("all questions come from one document; a document-clustered bootstrap "
                         "needs at least two documents")
    if len(sizes) < MIN_RELIABLE_CLUSTERS:
        warnings.warn(f"only {len(sizes)} documents: cluster bootstrap intervals are unreliable with "
                      f"fewer than {MIN_RELIABLE_CLUSTERS} clusters", UserWarning, stacklevel=3)
    totals = np.zeros((len(sizes), matrix.shape[1]))
    np.add.at(totals, codes, matrix)
    return totals, sizes


def clustered_resampled_means(scores, clusters, resamples: int = 10_000, seed=0) -> np.ndarray:
    """Resampled means under the one-stage document bootstrap, shape (resamples, n_cells)."""
    matrix = as_score_matrix(scores)
    totals, sizes = _cluster_totals(matrix, clusters)
    n_docs = len(sizes)
    blocks = []
    for indices in iter_resample_indices(n_docs, resamples, seed):
        counts = counts_from_indices(indices, n_docs)
        blocks.append((counts @ totals) / (counts @ sizes)[:, None])
    return np.concatenate(blocks)


def clustered_bootstrap_ci(scores, clusters, resamples: int = 10_000, seed=0,
                           confidence: float = 0.95) -> Interval:
    """Percentile interval on each cell's mean, resampling documents (one-stage cluster bootstrap).

    ``clusters`` holds one document label per question (any hashable labels). Returns
    ``Interval(mean, low, high)`` shaped like :func:`chunklab_core.stats.bootstrap.bootstrap_ci`.
    """
    matrix = as_score_matrix(scores)
    low, high = percentile_interval(clustered_resampled_means(matrix, clusters, resamples, seed), confidence)
    mean = matrix.mean(axis=0)
    if np.asarray(scores).ndim == 1:
        return Interval(float(mean[0]), float(low[0]), float(high[0]))
    return Interval(mean, low, high)


def paired_difference_clustered_ci(a, b, clusters, resamples: int = 10_000, seed=0,
                                   confidence: float = 0.95) -> Interval:
    """Percentile interval on mean(a) - mean(b), resampling documents (one-stage cluster bootstrap).

    ``a``, ``b``: per-question scores of two cells on the same questions; ``clusters``: the
    document of each question. The per-question differences are resampled by document, exactly
    as :func:`clustered_bootstrap_ci` resamples a score (so it is the difference of the two
    cells' clustered resampled means under the same documents drawn).
    """
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    if a.ndim != 1 or a.shape != b.shape:
        raise ValueError(f"a and b must be 1-D per-question scores of the same questions, got {a.shape} and {b.shape}")
    return clustered_bootstrap_ci(a - b, clusters, resamples, seed, confidence)


def shares_documents(clusters) -> bool:
    """True when some document holds more than one question (the questions are then not independent)."""
    labels = np.asarray(clusters)
    return len(labels) > 0 and len(np.unique(labels)) < len(labels)


def design_effect(scores, clusters, resamples: int = 10_000, seed=0, confidence: float = 0.95,
                  names=None) -> pd.DataFrame:
    """Plain vs document-clustered interval per cell, with the width ratio and a design effect.

    ``width_ratio = clustered width / plain width``; ``design_effect = width_ratio**2`` (Kish's
    design effect is a variance ratio, and interval widths scale with the standard error);
    ``effective_questions = n_questions / design_effect``: how many independent questions the
    clustered sample is worth. Both intervals use the same seed.
    """
    matrix = as_score_matrix(scores)
    plain = bootstrap_ci(matrix, resamples, seed, confidence)
    clustered = clustered_bootstrap_ci(matrix, clusters, resamples, seed, confidence)
    names = list(range(matrix.shape[1])) if names is None else list(names)
    if len(names) != matrix.shape[1]:
        raise ValueError(f"got {len(names)} names for {matrix.shape[1]} cells")
    plain_width = plain.high - plain.low
    clustered_width = clustered.high - clustered.low
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(plain_width > 0, clustered_width / plain_width, np.nan)
    return pd.DataFrame({
        "cell": names,
        "mean": plain.mean,
        "plain_low": plain.low,
        "plain_high": plain.high,
        "clustered_low": clustered.low,
        "clustered_high": clustered.high,
        "width_ratio": ratio,
        "design_effect": ratio**2,
        "effective_questions": matrix.shape[0] / ratio**2,
        "n_questions": matrix.shape[0],
        "n_documents": len(np.unique(np.asarray(clusters))),
    })
