"""The measures of judged ids, ``id_recall``, ``f1`` and ``map`` (evaluation/measures/): each one
module registering itself, pinned on a hand-computed fixture and cross-checked against pytrec_eval,
scikit-learn and ranx (reference libraries of the dev extra: missing = failure, never a skip)."""

from __future__ import annotations

import importlib

import numpy as np
import pytest
import pytrec_eval
from ranx import Qrels, Run, evaluate as ranx_evaluate
from sklearn.metrics import f1_score

from chunklab_core.evaluation.measures import MEASURES, column, matrix_functions
from chunklab_core.evaluation.ranking_metrics import JudgedIds

NAMES = ("id_recall", "f1", "map")

# Four questions, depth 5, by hand: q0 relevant at ranks 2 and 4 (R = 3: one relevant id never
# returned), q1 nothing relevant returned (R = 1), q2 at rank 1 (R = 1), q3 a perfect top 2 with
# R = 5, q4 no relevant id at all (R = 0: not measured).
REL = np.array([[0, 1, 0, 1, 0], [0, 0, 0, 0, 0], [1, 0, 0, 0, 0], [1, 1, 0, 0, 0], [0, 0, 0, 0, 0]], dtype=float)
N_RELEVANT = np.array([3, 1, 1, 5, 0])
NAN = float("nan")
HAND = {
    # recall@k = relevant in top k / R
    ("id_recall", 1): [0, 0, 1, 1 / 5, NAN],
    ("id_recall", 3): [1 / 3, 0, 1, 2 / 5, NAN],
    ("id_recall", 5): [2 / 3, 0, 1, 2 / 5, NAN],
    # F1@k = 2PR / (P + R): q0@3 P = R = 1/3; q0@5 P = 2/5, R = 2/3 -> (8/15) / (16/15); q3@5 P = R = 2/5
    ("f1", 1): [0, 0, 1, 2 * 1 * (1 / 5) / (1 + 1 / 5), NAN],
    ("f1", 3): [1 / 3, 0, 2 * (1 / 3) / (4 / 3), 2 * (2 / 3) * (2 / 5) / (2 / 3 + 2 / 5), NAN],
    ("f1", 5): [1 / 2, 0, 2 * (1 / 5) / (6 / 5), 2 / 5, NAN],
    # AP@k = sum P@i rel_i / min(R, k): q0@3 (1/2) / 3, q0@5 (1/2 + 2/4) / 3; q3@1 1 / 1, @3 and @5 (1 + 1) / 2 ... / min(5, k)
    ("map", 1): [0, 0, 1, 1, NAN],
    ("map", 3): [1 / 6, 0, 1, 2 / 3, NAN],
    ("map", 5): [1 / 3, 0, 1, 2 / 5, NAN],
}


def ours(name: str, k: int, rel=REL, n_relevant=N_RELEVANT) -> np.ndarray:
    return MEASURES[name](JudgedIds(rel, n_relevant), [k])[column(name, k)].to_numpy()


def test_each_is_one_self_registering_module_with_its_formula_and_source_not_in_the_matrix():
    assert set(NAMES) <= set(MEASURES)
    for name in NAMES:
        module = importlib.import_module(f"chunklab_core.evaluation.measures.{name}")
        assert module.MEASURE is MEASURES[name] and not MEASURES[name].matrix
        assert "Source" in module.__doc__ and MEASURES[name].source
    scored = {n for _, names in matrix_functions() for n in names}
    assert not set(NAMES) & scored  # run_matrix's tables keep their columns


@pytest.mark.parametrize("name,k", sorted(HAND))
def test_hand_computed_fixture(name, k):
    np.testing.assert_allclose(ours(name, k), HAND[(name, k)], atol=1e-12, equal_nan=True)


def test_a_table_has_one_column_per_k_in_order_and_one_row_per_question():
    table = MEASURES["map"](JudgedIds(REL, N_RELEVANT), [1, 3, 5])
    assert list(table.columns) == ["map@1", "map@3", "map@5"] and len(table) == len(REL)


def _trec_fixture(rel: np.ndarray, n_relevant: np.ndarray):
    qrels, run = {}, {}
    for q, (row, r) in enumerate(zip(rel, n_relevant)):
        run[f"q{q}"] = {f"d{q}_{i}": float(rel.shape[1] - i) for i in range(rel.shape[1])}
        relevant = [f"d{q}_{i}" for i in np.flatnonzero(row)]
        relevant += [f"unreturned{q}_{i}" for i in range(int(r) - len(relevant))]
        qrels[f"q{q}"] = {d: 1 for d in relevant} or {"nothing": 0}  # R = 0: judged, none relevant
    return qrels, run


def random_judged(seed: int, n: int = 200, depth: int = 10):
    rng = np.random.default_rng(seed)
    rel = (rng.random((n, depth)) < 0.25).astype(float)
    n_relevant = rel.sum(axis=1).astype(int) + rng.integers(0, 4, n)  # some relevant ids never returned
    n_relevant[:5] = 0
    rel[:5] = 0
    return rel, n_relevant


@pytest.mark.parametrize("k", [1, 3, 5, 10])
def test_against_pytrec_eval(k):
    """id_recall is trec_eval's recall_k; map is its map_cut_k times R / min(R, k); queries with
    R = 0 are NaN here (trec_eval gives them 0: it is told they have no relevant document)."""
    rel, n_relevant = random_judged(11)
    qrels, run = _trec_fixture(rel, n_relevant)
    trec = pytrec_eval.RelevanceEvaluator(qrels, {f"recall_{k}", f"map_cut_{k}"}).evaluate(run)
    measured = n_relevant > 0
    qids = [f"q{q}" for q in range(len(rel))]
    recall = np.array([trec[q][MEASURES["id_recall"].trec_eval_name(k)] for q in qids])
    np.testing.assert_allclose(ours("id_recall", k, rel, n_relevant)[measured], recall[measured], atol=1e-12)
    scale = n_relevant[measured] / np.minimum(n_relevant[measured], k)
    ap = np.array([trec[q][f"map_cut_{k}"] for q in qids])[measured] * scale
    np.testing.assert_allclose(ours("map", k, rel, n_relevant)[measured], ap, atol=1e-12)
    for name in NAMES:
        assert np.isnan(ours(name, k, rel, n_relevant)[~measured]).all()


@pytest.mark.parametrize("k", [1, 3, 5, 10])
def test_f1_against_scikit_learn(k):
    """Per question, scikit-learn's F1 of "returned in the top k" against "relevant" over every id
    (returned or relevant): full rankings, so its precision is P@k."""
    rel, n_relevant = random_judged(12)
    got = ours("f1", k, rel, n_relevant)
    for q in np.flatnonzero(n_relevant > 0):
        returned = np.r_[np.ones(k), np.zeros(rel.shape[1] - k + int(n_relevant[q] - rel[q].sum()))]
        relevant = np.r_[rel[q, :k], rel[q, k:], np.ones(int(n_relevant[q] - rel[q].sum()))]
        assert got[q] == pytest.approx(f1_score(relevant, returned, zero_division=0.0), abs=1e-12), q


@pytest.mark.heavy  # ranx compiles its measures with numba on first use: about 30 s in a fresh environment
def test_against_ranx():
    rel, n_relevant = random_judged(13)
    measured = n_relevant > 0
    qrels, run = _trec_fixture(rel[measured], n_relevant[measured])
    for k in (1, 5, 10):
        names = [MEASURES["id_recall"].ranx_name(k), MEASURES["f1"].ranx_name(k), f"map@{k}"]
        got = ranx_evaluate(Qrels(qrels), Run(run), names, return_mean=False)
        order = np.argsort([f"q{q}" for q in range(int(measured.sum()))])  # ranx: sorted qids
        np.testing.assert_allclose(ours("id_recall", k, rel, n_relevant)[measured][order], got[names[0]], atol=1e-12)
        np.testing.assert_allclose(ours("f1", k, rel, n_relevant)[measured][order], got[names[1]], atol=1e-12)
        scale = (n_relevant[measured] / np.minimum(n_relevant[measured], k))[order]
        np.testing.assert_allclose(ours("map", k, rel, n_relevant)[measured][order], got[f"map@{k}"] * scale, atol=1e-12)
