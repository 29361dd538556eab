"""The measure registry: column names, their parsing, trec_eval/ranx names, and the committed tables."""

from __future__ import annotations

import gzip
import importlib
from pathlib import Path

import numpy as np
import pytest
import pytrec_eval  # reference library (dev extra): missing = failure, not a skip

from chunklab_core.evaluation import measures
from chunklab_core.evaluation import ranking_metrics as rm
from chunklab_core.evaluation.measures import (KS, MEASURES, column, columns, depth_columns, interval_columns,
                                               is_metric_column, largest_k, metric_columns, parse, require_columns)

DATA = Path(__file__).resolve().parents[1] / "data"


def test_column_names_written_out():
    assert column("hit", 5) == "hit@5"
    assert column("rr", 10) == "rr@10"
    assert column("ndcg", 10) == "ndcg@10"
    assert column("span_recall", 1) == "span_recall@1"
    assert column("context_efficiency", np.int64(3)) == "context_efficiency@3"
    assert columns("p", (1, 3)) == ["p@1", "p@3"]
    assert KS == (1, 3, 5, 10)


@pytest.mark.parametrize("name", list(MEASURES))
@pytest.mark.parametrize("k", [*KS, 20, 100])
def test_name_and_k_round_trip(name, k):
    assert parse(column(name, k)) == (name, k)
    assert is_metric_column(column(name, k))


def test_parse_by_hand():
    assert parse("hit@10") == ("hit", 10)
    assert parse("complete_evidence@5") == ("complete_evidence", 5)
    assert parse("token_recall@3") == ("token_recall", 3)


@pytest.mark.parametrize("bad", ["mrr@10", "recall_at@5", "hit@0", "hit@", "hit5", "@5", "hit@10_low", "hit@-1",
                                 "hit@05", "Hit@5", "hit@1.5", "", "qid", 5])
def test_parse_rejects(bad):
    with pytest.raises(ValueError):
        parse(bad)
    assert not is_metric_column(bad)


def test_unknown_measure_and_bad_k_raise():
    with pytest.raises(ValueError, match="unknown measure 'mrr'; known: recall, complete, hit"):
        column("mrr", 10)
    with pytest.raises(ValueError, match="unknown measure 'err'"):
        parse("err@10")
    for k in (0, -1, 2.0, "5", True, None):
        with pytest.raises(ValueError, match="k must be an integer >= 1"):
            column("hit", k)


def test_trec_eval_and_ranx_names():
    assert MEASURES["hit"].trec_eval_name(10) == "success_10"
    assert MEASURES["p"].trec_eval_name(5) == "P_5"
    assert MEASURES["rr"].trec_eval_name(10) == "recip_rank"
    assert MEASURES["ndcg"].trec_eval_name(10) == "ndcg_cut_10"
    assert MEASURES["hit"].ranx_name(3) == "hit_rate@3"
    assert MEASURES["p"].ranx_name(5) == "precision@5"
    assert MEASURES["rr"].ranx_name(10) == "mrr@10"
    assert MEASURES["ndcg"].ranx_name(10) == "ndcg@10"
    assert MEASURES["id_recall"].trec_eval_name(5) == "recall_5" and MEASURES["id_recall"].ranx_name(5) == "recall@5"
    assert MEASURES["f1"].ranx_name(3) == "f1@3"
    without = {n for n, m in MEASURES.items() if m.trec_eval is None}
    assert {"recall", "complete", "tokens", "context_efficiency", "span_recall", "span_precision", "span_iou",
            "complete_evidence", "token_recall", "f1", "map"} <= without
    with pytest.raises(ValueError, match="'tokens' has no trec_eval counterpart"):
        MEASURES["tokens"].trec_eval_name(5)
    with pytest.raises(ValueError, match="'recall' has no ranx counterpart"):
        MEASURES["recall"].ranx_name(5)


def test_every_measure_is_one_module_of_the_folder_bound_to_its_formula_module():
    from chunklab_core.evaluation.span_metrics import SPAN_MEASURES

    slot = ["recall", "complete", "hit", "p", "rr", "ndcg", "tokens", "context_efficiency"]
    series = [*slot, *SPAN_MEASURES, "token_recall"]
    assert set(series) <= set(MEASURES)
    for name in series:  # each registered by its own module: evaluation/measures/<name>.py
        assert importlib.import_module(f"chunklab_core.evaluation.measures.{name}").MEASURE is MEASURES[name]
    functions = {tuple(names)[0]: names for _, names in measures.matrix_functions()}
    assert functions["recall"][:len(slot)] == slot and functions["span_recall"][:4] == list(SPAN_MEASURES)
    assert not MEASURES["token_recall"].matrix
    assert MEASURES["recall"].params == {"threshold": 0.90} and MEASURES["span_recall"].params == {}
    with pytest.raises(ValueError, match="needs its function"):
        measures.register_measure(measures.Measure("nothing", "no function", measures.EVERY_K, "none"))
    for m in MEASURES.values():
        assert m.title and m.source
        assert m.cutoff in (measures.EVERY_K, measures.DEPTH)
    assert [n for n, m in MEASURES.items() if m.cutoff == measures.DEPTH][:2] == ["rr", "ndcg"]


# Three questions, depth 5, binary relevance by hand: q0 relevant at ranks 2 and 4 (3 relevant
# contexts in the collection), q1 nothing relevant returned (1 in the collection), q2 at rank 1.
REL = np.array([[0, 1, 0, 1, 0], [0, 0, 0, 0, 0], [1, 0, 0, 0, 0]], dtype=float)
N_RELEVANT = np.array([3, 1, 1])


def _ours(name: str, k: int) -> np.ndarray:
    if name == "hit":
        return rm.hit_at_k(REL, k)
    if name == "p":
        return rm.precision_at_k(REL, k)
    if name == "rr":
        return rm.reciprocal_rank_at_k(REL, k)
    if name == "ndcg":
        return rm.ndcg_at_k(REL, k, rm.binary_ideal_gains(N_RELEVANT, k))
    if name == "id_recall":  # a measure of judged ids: its registered function, on the fixture as one
        return MEASURES[name](rm.JudgedIds(REL, N_RELEVANT), [k])[column(name, k)].to_numpy()
    raise AssertionError(name)


def test_hand_values_of_the_fixture():
    np.testing.assert_allclose(_ours("hit", 1), [0, 0, 1])
    np.testing.assert_allclose(_ours("p", 5), [0.4, 0, 0.2])
    np.testing.assert_allclose(_ours("rr", 5), [0.5, 0, 1])
    idcg = 1 + 1 / np.log2(3) + 1 / np.log2(4)
    np.testing.assert_allclose(_ours("ndcg", 5), [(1 / np.log2(3) + 1 / np.log2(5)) / idcg, 0, 1])


SERIES_NAMED = {"hit", "p", "rr", "ndcg", "id_recall"}


@pytest.mark.parametrize("k", [1, 3, 5])
def test_trec_eval_names_are_pytrec_evals_same_quantities(k):
    """Each registered trec_eval name, evaluated by pytrec_eval, equals our formula at k."""
    qrels, run = {}, {}
    for q, (rel, n_relevant) in enumerate(zip(REL, N_RELEVANT)):
        returned = {f"d{q}_{r}": float(REL.shape[1] - r) for r in range(REL.shape[1])}
        relevant = [f"d{q}_{r}" for r in np.flatnonzero(rel)]
        relevant += [f"unreturned{q}_{i}" for i in range(n_relevant - len(relevant))]
        qrels[f"q{q}"] = {d: 1 for d in relevant}
        run[f"q{q}"] = returned
    named = {n: m for n, m in MEASURES.items() if m.trec_eval is not None and n in SERIES_NAMED}
    # trec_eval's recip_rank has no cut-off: it is rr at the run's depth (5 here)
    at = {n: REL.shape[1] if n == "rr" else k for n in named}
    reference = pytrec_eval.RelevanceEvaluator(qrels, {m.trec_eval_name(at[n]) for n, m in named.items()}).evaluate(run)
    assert set(named) == SERIES_NAMED  # every series measure with a trec_eval name (a user's may add more)
    for n, m in named.items():
        expected = [reference[f"q{q}"][m.trec_eval_name(at[n])] for q in range(len(REL))]
        np.testing.assert_allclose(_ours(n, at[n]), expected, atol=1e-12, err_msg=f"{n}@{at[n]}")


def test_depth_columns_and_largest_k():
    assert depth_columns(10)[:2] == ["rr@10", "ndcg@10"]
    assert depth_columns(5, ["hit", "rr", "ndcg", "p"]) == ["rr@5", "ndcg@5"]  # a summary's own measures
    assert largest_k(["qid", "hit@1", "hit@5", "rr@5", "hit@5_low", "ndcg_ideal"]) == 5
    with pytest.raises(ValueError, match="no metric column"):
        largest_k(["qid", "strategy"])


def test_interval_and_required_columns():
    assert interval_columns("hit@10") == ("hit@10_low", "hit@10_high")
    with pytest.raises(ValueError):
        interval_columns("hit@10_low")
    assert require_columns(["hit@5", "rr@5"], ["rr@5"]) == ["rr@5"]
    with pytest.raises(ValueError, match=r"lacks the metric columns \['ndcg@10'\]"):
        require_columns(["hit@5", "rr@5"], ["rr@5", "ndcg@10"])
    assert metric_columns(["qid", "hit@1", "n_relevant", "rr@10"]) == ["hit@1", "rr@10"]
    with pytest.raises(ValueError, match="unknown measure 'err'"):
        metric_columns(["qid", "err@10"])


def _header(path: Path) -> list[str]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as handle:
        return handle.readline().rstrip("\n").split(",")


def test_committed_post01_per_question_columns_come_from_the_registry():
    header = _header(DATA / "01_per_question.csv")
    metrics = [c for c in header if "@" in c]
    assert all(is_metric_column(c) for c in metrics)
    assert metrics == columns("hit", KS) + columns("p", KS) + depth_columns(max(KS), ["rr", "ndcg"]) + columns("tokens", KS)


def test_committed_post02_per_question_columns_come_from_the_registry():
    header = _header(DATA / "02_per_question.csv.gz")
    metrics = [c for c in header if "@" in c]
    assert all(is_metric_column(c) for c in metrics)
    expected = (columns("recall", KS) + columns("complete", KS) + columns("hit", KS) + columns("p", KS)
                + depth_columns(max(KS), ["rr", "ndcg"]) + columns("tokens", KS) + columns("context_efficiency", KS)
                + [column(n, k) for n in ("span_recall", "span_precision", "span_iou", "complete_evidence")
                   for k in KS])
    assert metrics == expected
