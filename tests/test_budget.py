"""Token-budget metrics on hand arrays, monotonicity, and the run-level tables."""

from __future__ import annotations

import numpy as np
import pytest

from chunklab_core.evaluation import budget, slot_metrics
from chunklab_core.core.corpus import Corpus, Document, Question
from chunklab_core.retrieval.run import RetrievalRun

TOKENS = np.array([[300, 400, 200], [600, 100, 100], [100, 100, 100]])
REL = np.array([[0, 1, 0], [2, 1, 0], [0, 0, 0]])  # grades per rank, one slot


def test_contexts_within_budget_stops_at_first_misfit():
    assert budget.contexts_within_budget(TOKENS, 500).tolist() == [1, 0, 3]
    assert budget.contexts_within_budget(TOKENS, 1000).tolist() == [3, 3, 3]
    # a smaller context further down is not read once one did not fit
    assert budget.contexts_within_budget(np.array([[100, 900, 50]]), 500).tolist() == [1]
    # padding (0 tokens) neither stops the reading nor uses budget
    assert budget.contexts_within_budget(np.array([[200, 0, 0]]), 200).tolist() == [3]


def test_budget_metrics_by_hand():
    at_500 = budget.budget_metrics(REL, TOKENS, 500)
    assert at_500["tokens_used"].tolist() == [300, 0, 300]
    assert at_500["hit"].tolist() == [0, 0, 0]  # q1's first context (600) is larger than 500
    assert at_500["recall"].tolist() == [0, 0, 0]
    at_700 = budget.budget_metrics(REL, TOKENS, 700)
    assert at_700["contexts_read"].tolist() == [2, 2, 3] and at_700["hit"].tolist() == [1, 1, 0]
    assert at_700["tokens_used"].tolist() == [700, 700, 300]


def test_multi_slot_recall_within_budget():
    fills = np.zeros((2, 3, 2), bool)
    fills[0, 0, 0] = fills[0, 2, 1] = True  # slot 0 at rank 1, slot 1 at rank 3
    fills[1, 1, 0] = True  # question 1 has one slot (padded second column)
    tokens = np.array([[100, 100, 100], [50, 50, 50]])
    small = budget.budget_metrics(fills, tokens, 150, n_slots=[2, 1])
    assert small["recall"].tolist() == [0.5, 1.0] and small["hit"].tolist() == [1.0, 1.0]
    tiny = budget.budget_metrics(fills, tokens, 50, n_slots=[2, 1])
    assert tiny["recall"].tolist() == [0.0, 0.0] and tiny["contexts_read"].tolist() == [0, 1]
    large = budget.budget_metrics(fills, tokens, 300, n_slots=[2, 1])
    assert large["recall"].tolist() == [1.0, 1.0]
    none = budget.budget_metrics(fills, tokens, 300, n_slots=[2, 0])
    assert np.isnan(none["recall"][1]) and np.isnan(none["hit"][1])


def test_recall_never_decreases_with_budget():
    rng = np.random.default_rng(11)
    fills = rng.random((40, 10, 3)) < 0.15
    n_slots = rng.integers(1, 4, size=40)
    fills &= np.arange(3)[None, None, :] < n_slots[:, None, None]
    tokens = rng.integers(0, 800, size=(40, 10))
    previous = None
    for b in range(0, 6000, 250):
        scores = budget.budget_metrics(fills, tokens, b, n_slots)
        assert (scores["tokens_used"] <= b).all()
        if previous is not None:
            for name in ("recall", "hit", "tokens_used", "contexts_read"):
                assert (scores[name] >= previous[name]).all(), name
        previous = scores


def test_bad_input():
    with pytest.raises(ValueError, match="budget"):
        budget.contexts_within_budget(TOKENS, -1)
    with pytest.raises(ValueError, match="must both be"):
        budget.budget_metrics(REL, TOKENS[:, :2], 500)
    with pytest.raises(ValueError, match="RetrievalRun"):
        budget.recall_at_budget({"not": "a run"})


def hand_run(questions, ranked) -> RetrievalRun:
    segments = ["Refunds are issued within 30 days of purchase.",
                "You need the original receipt and a photo ID to claim it.",
                "The store opens at nine.", "Bring the orignal receipt when you return goods."]
    starts = np.cumsum([0] + [len(s) + 1 for s in segments[:-1]])
    contexts = [("d0", int(a), int(a) + len(s)) for a, s in zip(starts, segments)]
    corpus = Corpus("hand", [Document("d0", " ".join(segments))], questions)
    return RetrievalRun(corpus=corpus, strategy="sentences", retriever="bm25", chunks=[], contexts=contexts,
                        ranked=np.array(ranked), context_tokens=np.array([20, 10, 5, 8]))


def test_run_level_tables_agree_with_fixed_k_metrics():
    receipt_id = (("original receipt",), ("photo ID", "passport"))
    run = hand_run([Question("x", "?", "d0", receipt_id), Question("y", "?", "d0", (("opens at nine",),)),
                    Question("none", "?", "d0", ())], [[3, 1, 0], [0, 2, 1], [1, 2, 3]])
    assert run.context_text(2) == "The store opens at nine."
    table = budget.recall_at_budget(run, budgets=(7, 18, 40)).set_index(["qid", "budget"])
    assert table.loc[("x", 7), "recall"] == 0.0 and table.loc[("x", 7), "tokens_used"] == 0
    assert table.loc[("x", 18), "recall"] == 1.0 and table.loc[("x", 18), "tokens_used"] == 18
    assert table.loc[("y", 18), "hit"] == 0.0 and table.loc[("y", 40), "hit"] == 1.0
    assert np.isnan(table.loc[("none", 40), "recall"])
    curve = budget.recall_token_curve(run)
    fixed = slot_metrics.score_slots(run, ks=(1, 2, 3))
    gold = fixed[fixed["has_gold"]]
    assert curve["k"].tolist() == [1, 2, 3] and (curve["questions"] == 2).all()
    for k in (1, 2, 3):
        assert curve.loc[k - 1, "recall"] == pytest.approx(gold[f"recall@{k}"].mean())
        assert curve.loc[k - 1, "mean_tokens"] == pytest.approx(gold[f"tokens@{k}"].mean())
    # judged arrays work as input too and give the same table
    judged = slot_metrics.judge_run(run)
    again = budget.recall_at_budget(judged, budgets=(7, 18, 40)).set_index(["qid", "budget"])
    assert again.drop(columns="depth_binds").equals(table.drop(columns="depth_binds"))
    # 3 of the 4 contexts are ranked: x reads all three (38 tokens) and stops short of 40, so the
    # depth, not the budget, ended its reading; at 18 tokens the budget ends it
    assert table.loc[("x", 40), "depth_binds"] and not table.loc[("x", 18), "depth_binds"]
    assert not again["depth_binds"].any()


def test_a_deep_ranking_fills_the_budget_the_fixed_k_ranking_cannot():
    question = Question("x", "?", "d0", (("opens at nine",),))
    run = hand_run([question], [[0, 1]])  # k_max = 2: the third-ranked context holds the answer
    shallow = budget.recall_at_budget(run, budgets=(40,)).iloc[0]
    assert shallow["recall"] == 0.0 and shallow["depth_binds"]  # 30 tokens read, 2 of 4 contexts ranked
    run.ranked_deep = np.array([[0, 1, 2, 3]])
    deep = budget.recall_at_budget(run, budgets=(40,)).iloc[0]
    assert deep["recall"] == 1.0 and deep["tokens_used"] == 35 and not deep["depth_binds"]
    cut, binds = budget.budget_run(run, 40)
    assert cut.ranked.tolist() == [[0, 1, 2, 3]] and not binds[0]  # 35 fit, the fourth (8) is the first that does not
    cut, _ = budget.budget_run(run, 30)
    assert cut.ranked.tolist() == [[0, 1, 2]]  # 20 + 10 fit; the third is kept to decide the budget
