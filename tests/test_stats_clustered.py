"""Document-clustered bootstrap: reduces to the plain bootstrap, widens under a document effect."""

from __future__ import annotations

import numpy as np
import pytest

from chunklab_core.stats.bootstrap import bootstrap_ci, resample_indices
from chunklab_core.stats.clustered import clustered_bootstrap_ci, clustered_resampled_means, design_effect


def document_effect_data(n_docs=40, per_doc=10, doc_sd=1.0, seed=0):
    """0/1 outcomes of two cells whose questions share a strong per-document effect."""
    rng = np.random.default_rng(seed)
    doc_effect = np.repeat(rng.normal(0.0, doc_sd, n_docs), per_doc)
    noise = rng.normal(0.0, 1.0, (n_docs * per_doc, 2))
    scores = (doc_effect[:, None] + noise > [0.0, 0.2]).astype(float)
    return scores, np.repeat([f"doc{i:02d}" for i in range(n_docs)], per_doc)


def test_one_question_per_document_is_the_plain_bootstrap():
    scores = np.random.default_rng(1).random((30, 3))
    plain = bootstrap_ci(scores, 2_000, seed=4)
    clustered = clustered_bootstrap_ci(scores, np.arange(30), 2_000, seed=4)
    for ours, theirs in zip(clustered, plain):
        np.testing.assert_allclose(ours, theirs, atol=1e-12)


def test_resampled_mean_is_the_mean_over_all_kept_questions():
    """Unequal documents by hand: a resample's mean pools the drawn documents' questions."""
    scores = np.array([1.0, 0.0, 1.0, 1.0, 0.0, 0.0])
    clusters = np.array(["a", "a", "a", "b", "c", "c"])  # sizes 3, 1, 2
    members = {0: [0, 1, 2], 1: [3], 2: [4, 5]}
    expected = [scores[np.concatenate([members[d] for d in drawn])].mean()
                for drawn in resample_indices(3, 200, seed=9)]
    with pytest.warns(UserWarning, match="only 3 documents"):
        np.testing.assert_allclose(clustered_resampled_means(scores, clusters, 200, seed=9)[:, 0], expected)


def test_clustered_interval_is_wider_under_a_document_effect():
    scores, clusters = document_effect_data()
    plain = bootstrap_ci(scores, 4_000, seed=0)
    clustered = clustered_bootstrap_ci(scores, clusters, 4_000, seed=0)
    np.testing.assert_allclose(clustered.mean, plain.mean)
    assert np.all(clustered.high - clustered.low > 1.5 * (plain.high - plain.low))
    table = design_effect(scores, clusters, 4_000, seed=0, names=["a", "b"])
    assert table["cell"].tolist() == ["a", "b"]
    assert (table["width_ratio"] > 1.5).all() and (table["effective_questions"] < 400 / 2.25).all()
    assert table["n_documents"].iloc[0] == 40


def test_without_a_document_effect_the_widths_agree():
    scores, clusters = document_effect_data(doc_sd=0.0, seed=2)
    ratio = design_effect(scores, clusters, 4_000, seed=0)["width_ratio"]
    assert ratio.between(0.75, 1.3).all()


def test_clustered_bad_inputs():
    with pytest.raises(ValueError, match="one document label per question"):
        clustered_bootstrap_ci([0.1, 0.2, 0.3], ["a", "b"])
    with pytest.raises(ValueError, match="at least two documents"):
        clustered_bootstrap_ci([0.1, 0.2, 0.3], ["a", "a", "a"])
