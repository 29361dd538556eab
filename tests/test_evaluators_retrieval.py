"""Retrieval evaluator: hand-computed fixtures, the shared rules, and pytrec_eval / ranx cross-checks."""

from __future__ import annotations

import math

import numpy as np
import pytest
import pytrec_eval
from ranx import Qrels, Run, evaluate as ranx_evaluate

from chunklab_core.evaluators.common import encode_ranked, measured_mean, percentile, word_tokens
from chunklab_core.evaluation.measures.map import map_at_k
from chunklab_core.evaluators.retrieval import evaluate_retrieval


def test_word_token_rule():
    assert word_tokens("Hello, WORLD_2 it's 3.5 ünïcode") == ["hello", "world_2", "it", "s", "3", "5", "ünïcode"]
    assert word_tokens("") == []


def test_percentile_rule_is_linear_interpolation():
    assert percentile([100, 300], 50) == 200
    assert percentile([100, 300], 95) == pytest.approx(290)
    values = [5.0, 1.0, 9.0, 3.0, None, 7.0]
    assert percentile(values, 95) == pytest.approx(float(np.percentile([5, 1, 9, 3, 7], 95)))
    assert percentile([None, None], 50) is None
    with pytest.raises(ValueError):
        percentile([1.0], 101)


def test_not_measured_is_left_out_of_means():
    assert measured_mean([1.0, None, 0.0, float("nan")]) == 0.5
    assert measured_mean([None, None]) is None  # never 0


def test_a_repeated_id_counts_once_at_its_first_rank():
    enc = encode_ranked([["a", "x", "a", "b"]], [{"a", "b"}], depth=4)
    assert enc.rel.tolist() == [[1.0, 0.0, 0.0, 1.0]]  # the repeat keeps its slot, credits nothing
    assert enc.returned.tolist() == [3] and enc.n_relevant.tolist() == [2]
    stage = evaluate_retrieval(["q"], [["a", "a", "a"]], [{"a"}], ks=[3])
    assert stage.values["precision@3"][0] == pytest.approx(1 / 3)
    assert stage.values["recall@3"][0] == 1.0


def test_hand_computed_fixture():
    # q1: relevant {a, c}; returned a x c y  -> hits at ranks 1 and 3
    # q2: relevant {b, d, e}; returned x y b -> hit at rank 3
    stage = evaluate_retrieval(["q1", "q2"], [["a", "x", "c", "y"], ["x", "y", "b"]],
                               [["a", "c"], ["b", "d", "e"]], ks=[1, 3])
    v = stage.values
    assert v["hit@1"].tolist() == [1.0, 0.0]
    assert v["precision@3"].tolist() == pytest.approx([2 / 3, 1 / 3])
    assert v["recall@3"].tolist() == pytest.approx([1.0, 1 / 3])
    assert v["rr@3"].tolist() == pytest.approx([1.0, 1 / 3])
    assert v["f1@3"].tolist() == pytest.approx([2 * (2 / 3) / (2 / 3 + 1), 2 * (1 / 9) / (2 / 3)])
    # AP@3 bounded by min(R, 3): q1 (1/1 + 2/3) / 2, q2 (1/3) / 3
    assert v["map@3"].tolist() == pytest.approx([(1 + 2 / 3) / 2, (1 / 3) / 3])
    idcg1 = 1 + 1 / math.log2(3)
    idcg2 = 1 + 1 / math.log2(3) + 1 / math.log2(4)
    assert v["ndcg@3"].tolist() == pytest.approx([(1 + 1 / math.log2(4)) / idcg1, (1 / math.log2(4)) / idcg2])
    assert stage.means()["hit@1"] == 0.5


def test_map_bound_is_min_relevant_k():
    rel = np.array([[1.0, 1.0]])
    assert map_at_k(rel, np.array([5]), 2).tolist() == [1.0]  # a perfect top 2 with R = 5 scores 1


def test_missing_gold_is_none_and_stays_out_of_the_mean():
    stage = evaluate_retrieval(["q1", "q2", "q3"], [["a"], ["b"], ["c"]], [["a"], None, []], ks=[1])
    per = stage.per_query()
    assert per["hit@1"].tolist() == [1.0, None, None]
    assert stage.means()["hit@1"] == 1.0 and stage.n_measured("hit@1") == 1
    nothing = evaluate_retrieval(["q1"], ks=[1])
    assert nothing.means()["hit@1"] is None and "retrieved_ids" in nothing.not_measured["hit@1"]
    assert nothing.means()["latency_p95_ms"] is None


def test_snippet_relevance_measures_only_what_it_can():
    stage = evaluate_retrieval(["q1", "q2"], retrieved_texts=[["The  Cat sat", "dog"], ["nothing"]],
                               gold_snippets=[["cat SAT"], None], ks=[1, 2])
    assert stage.per_query()["hit@2"].tolist() == [1.0, None]
    assert stage.means()["recall@2"] is None and "gold_ids" in stage.not_measured["recall@2"]


def test_latency_percentiles():
    stage = evaluate_retrieval(["a", "b", "c"], latency_ms=[100.0, None, 300.0])
    assert stage.means()["latency_p50_ms"] == 200 and stage.means()["latency_p95_ms"] == pytest.approx(290)


def random_run(seed: int, n: int = 300, pool: int = 40, depth: int = 10):
    rng = np.random.default_rng(seed)
    ranked, gold = [], []
    for _ in range(n):
        ranked.append([f"d{i}" for i in rng.choice(pool, size=int(rng.integers(1, depth + 1)), replace=False)])
        gold.append([f"d{i}" for i in rng.choice(pool, size=int(rng.integers(1, 12)), replace=False)])
    return ranked, gold


def _random_stage():
    ranked, gold = random_run(7)
    qids = [f"q{i:04d}" for i in range(len(ranked))]  # ranx returns per-query scores in sorted qid order
    stage = evaluate_retrieval(qids, ranked, gold, ks=[1, 5, 10])
    qrels = {q: {d: 1 for d in g} for q, g in zip(qids, gold)}
    run = {q: {d: float(len(r) - i) for i, d in enumerate(r)} for q, r in zip(qids, ranked)}
    return qids, gold, stage, qrels, run


def test_against_pytrec_eval():
    qids, gold, stage, qrels, run = _random_stage()
    trec = pytrec_eval.RelevanceEvaluator(qrels, {"P.1,5,10", "recall.1,5,10", "ndcg_cut.1,5,10", "map_cut.1,5,10",
                                                  "recip_rank"}).evaluate(run)
    for k in (1, 5, 10):
        ours = stage.values
        np.testing.assert_allclose(ours[f"precision@{k}"], [trec[q][f"P_{k}"] for q in qids], atol=1e-12)
        np.testing.assert_allclose(ours[f"recall@{k}"], [trec[q][f"recall_{k}"] for q in qids], atol=1e-12)
        np.testing.assert_allclose(ours[f"ndcg@{k}"], [trec[q][f"ndcg_cut_{k}"] for q in qids], atol=1e-12)
        # trec_eval divides AP by R; ours by min(R, k)
        scale = np.array([len(g) / min(len(g), k) for g in gold])
        np.testing.assert_allclose(ours[f"map@{k}"], np.array([trec[q][f"map_cut_{k}"] for q in qids]) * scale, atol=1e-12)
    np.testing.assert_allclose(stage.values["rr@10"], [trec[q]["recip_rank"] for q in qids], atol=1e-12)


@pytest.mark.heavy  # ranx compiles its measures with numba on first use: about 30 s in a fresh environment
def test_against_ranx():
    qids, gold, stage, qrels, run = _random_stage()
    ranx_q, ranx_r = Qrels(qrels), Run(run)
    for k in (1, 5, 10):
        ours = stage.values
        got = ranx_evaluate(ranx_q, ranx_r, [f"f1@{k}", f"mrr@{k}", f"hit_rate@{k}"], return_mean=False)
        np.testing.assert_allclose(ours[f"f1@{k}"], got[f"f1@{k}"], atol=1e-12)
        np.testing.assert_allclose(ours[f"rr@{k}"], got[f"mrr@{k}"], atol=1e-12)
        np.testing.assert_allclose(ours[f"hit@{k}"], got[f"hit_rate@{k}"], atol=1e-12)
