"""Slot metrics on hand-built runs: slots and alternatives, fuzzy gold, graded and pooled nDCG."""

from __future__ import annotations

import math

import numpy as np
import pytest

from chunklab_core.evaluation import gold_slots, slot_metrics
from chunklab_core.core.corpus import Corpus, Document, Question
from chunklab_core.retrieval.run import RetrievalRun

SEGMENTS = [
    "Refunds are issued within 30 days of purchase.",  # c0: "within 14 days" must not match
    "You need the original receipt and a photo ID to claim it.",  # c1: both slots
    "The store opens at nine.",  # c2
    "Bring the orignal receipt when you return goods.",  # c3: typo, receipt only
    "Keep the original receipt.",  # c4: receipt only
]
TOKENS = [20, 10, 5, 8, 4]  # context token counts set by hand
RECEIPT_ID = (("original receipt",), ("photo ID", "passport"))


def make_run(questions, ranked, retriever="bm25", tokens=TOKENS) -> RetrievalRun:
    text = " ".join(SEGMENTS)
    contexts, pos = [], 0
    for segment in SEGMENTS:
        contexts.append(("d0", pos, pos + len(segment)))
        pos += len(segment) + 1
    corpus = Corpus("hand", [Document("d0", text)], list(questions))
    return RetrievalRun(corpus=corpus, strategy="sentences", retriever=retriever, chunks=[],
                        contexts=contexts, ranked=np.array(ranked), context_tokens=np.array(tokens))


def q(qid, slots) -> Question:
    return Question(qid, f"question {qid}", "d0", slots)


def test_contexts_are_the_hand_segments():
    run = make_run([q("a", RECEIPT_ID)], [[0, 1, 2]])
    assert [run.context_text(i) for i in range(5)] == SEGMENTS


def test_required_plus_alternatives_recall():
    # c1 holds "original receipt" and "photo ID": 2/2; c3 (typo) holds only the receipt: 1/2
    run = make_run([q("both", RECEIPT_ID), q("only", RECEIPT_ID)], [[1, 2, 0], [3, 2, 0]])
    table = slot_metrics.score_slots(run, ks=(1, 3)).set_index("qid")
    assert table.loc["both", "recall@1"] == 1.0 and table.loc["both", "complete@1"] == 1.0
    assert table.loc["only", "recall@1"] == 0.5 and table.loc["only", "complete@1"] == 0.0
    assert table.loc["only", "hit@1"] == 1.0  # one slot filled is a hit
    assert table.loc["both", "n_slots"] == 2 and table["has_gold"].all()


def test_adding_alternatives_never_lowers_recall():
    ranked = [[0, 3, 2, 1, 4]]
    narrow = [(("original receipt",), ("passport",)), (("orignal receipt",),), (("photo ID",),)]
    wide = [(("original receipt",), ("passport", "photo ID")), (("orignal receipt", "store"),),
            (("photo ID", "purchase"),)]
    for fewer, more in zip(narrow, wide):
        low = slot_metrics.score_slots(make_run([q("x", fewer)], ranked), ks=(1, 2, 3, 4, 5))
        high = slot_metrics.score_slots(make_run([q("x", more)], ranked), ks=(1, 2, 3, 4, 5))
        cols = [f"recall@{k}" for k in range(1, 6)]
        assert (high[cols].to_numpy() >= low[cols].to_numpy()).all()
    # and it strictly helps here: "photo ID" (in c1, rank 4) fills the second slot
    more = slot_metrics.score_slots(make_run([q("x", wide[0])], ranked), ks=(3, 4))
    assert more.loc[0, "recall@3"] == 0.5 and more.loc[0, "recall@4"] == 1.0


def test_fuzzy_typo_found_and_number_guard():
    run = make_run([q("typo", (("original receipt",),)), q("days", (("within 14 days",),))],
                   [[3, 2, 4], [0, 2, 4]])
    table = slot_metrics.score_slots(run, ks=(1, 3), threshold=0.90).set_index("qid")
    assert table.loc["typo", "hit@1"] == 1.0  # "orignal receipt" at 0.90
    # "within 14 days" is not in "within 30 days": no hit, no recall ...
    assert table.loc["days", ["hit@3", "recall@3"]].sum() == 0.0
    # ... and though 2 of its 3 words are there, p@k and rr use the hit definition: no credit
    assert table.loc["days", "p@1"] == 0.0 and table.loc["days", "rr@3"] == 0.0
    strict = slot_metrics.score_slots(run, ks=(1,), threshold=1.0).set_index("qid")
    assert strict.loc["typo", "hit@1"] == 0.0


def test_grades_equal_relevance_grade_and_first_alternative():
    slots = (("original receipt",), ("passport", "photo ID"))
    run = make_run([q("x", slots)], [[0, 1, 2, 3, 4]])
    judged = slot_metrics.judge_run(run)
    expected = [gold_slots.relevance_grade(s, slots) for s in SEGMENTS]
    assert judged.grades[0].tolist() == expected == [0, 2, 0, 1, 1]
    # c1 fills slot 1 with its second alternative ("photo ID"), the first found
    assert judged.first_alternative[0, 1].tolist() == [0, 1]
    assert judged.first_alternative[0, 0].tolist() == [-1, -1]


def test_graded_ndcg_by_hand_and_pytrec_eval():
    # ranking c3 (grade 1), c2 (0), c1 (2): DCG = 1/log2(2) + 0 + 2/log2(4) = 2
    run = make_run([q("x", RECEIPT_ID)], [[3, 2, 1]])
    returned = slot_metrics.score_slots(run, ks=(1, 3))
    ideal_returned = 2 + 1 / math.log2(3)  # sorted returned grades [2, 1, 0]
    assert returned.loc[0, "ndcg@3"] == pytest.approx(2 / ideal_returned)
    assert returned.loc[0, "ndcg_ideal"] == "returned"
    # a second retriever returned c4 (grade 1) and c0 (0): the pool is [2, 1, 1, 0, 0]
    other = make_run([q("x", RECEIPT_ID)], [[4, 1, 0]], retriever="dense")
    pool = slot_metrics.pool_judgments([run, other])
    assert pool == {"x": [2, 1, 1, 0, 0]}
    pooled = slot_metrics.score_slots(run, ks=(1, 3), pool_grades=pool)
    ideal_pooled = 2 + 1 / math.log2(3) + 1 / 2
    assert pooled.loc[0, "ndcg@3"] == pytest.approx(2 / ideal_pooled)
    assert pooled.loc[0, "ndcg@3"] < returned.loc[0, "ndcg@3"]  # returned-only is an upper bound
    import pytrec_eval  # reference library (dev extra): missing = failure, not a skip
    qrels = {"x": {"c3": 1, "c1": 2, "c4": 1, "c2": 0, "c0": 0}}
    result = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut_3"}).evaluate(
        {"x": {"c3": 3.0, "c2": 2.0, "c1": 1.0}})
    assert pooled.loc[0, "ndcg@3"] == pytest.approx(result["x"]["ndcg_cut_3"])


def test_pool_missing_this_run_is_refused():
    run = make_run([q("x", RECEIPT_ID)], [[1, 2, 0]])
    with pytest.raises(ValueError, match="lacks contexts"):
        slot_metrics.score_slots(run, ks=(1,), pool_grades={"x": [1, 0]})
    with pytest.raises(ValueError, match="no entry"):
        slot_metrics.score_slots(run, ks=(1,), pool_grades={})
    other = make_run([q("x", RECEIPT_ID)], [[1, 2, 0]])
    other.strategy = "fixed_500"
    with pytest.raises(ValueError, match="one \\(corpus, strategy\\)"):
        slot_metrics.pool_judgments([run, other])


def test_single_slot_recall_equals_hit():
    questions = [q("a", (("opens at nine",),)), q("b", (("original receipt", "receipt"),)),
                 q("c", (("passport",),)), q("d", (("within 14 days",),))]
    ranked = [[0, 2, 1, 3, 4], [2, 0, 4, 1, 3], [0, 1, 2, 3, 4], [4, 3, 2, 1, 0]]
    table = slot_metrics.score_slots(make_run(questions, ranked), ks=(1, 2, 3, 4, 5))
    for k in range(1, 6):
        np.testing.assert_array_equal(table[f"recall@{k}"], table[f"hit@{k}"])
    assert table[[f"hit@{k}" for k in range(1, 6)]].sum(axis=1).tolist() == [4, 3, 0, 0]


def test_context_efficiency_by_hand():
    # "original receipt" = 2 tokens, "photo ID" = 2 tokens (cl100k_base)
    run = make_run([q("x", RECEIPT_ID)], [[4, 1, 0]])
    table = slot_metrics.score_slots(run, ks=(1, 2, 3))
    assert table.loc[0, "tokens@1"] == 4 and table.loc[0, "tokens@2"] == 14 and table.loc[0, "tokens@3"] == 34
    assert table.loc[0, "context_efficiency@1"] == pytest.approx(2 / 4)
    assert table.loc[0, "context_efficiency@2"] == pytest.approx(4 / 14)
    assert table.loc[0, "context_efficiency@3"] == pytest.approx(4 / 34)
    zero = slot_metrics.score_slots(make_run([q("x", RECEIPT_ID)], [[4, 1, 0]], tokens=[0] * 5), ks=(1,))
    assert np.isnan(zero.loc[0, "context_efficiency@1"])


def test_questions_without_gold_are_nan_and_counted():
    run = make_run([q("gold", RECEIPT_ID), q("none", ())], [[1, 0, 2], [1, -1, -1]])
    table = slot_metrics.score_slots(run, ks=(1, 3)).set_index("qid")
    assert table["has_gold"].sum() == 1
    slot_cols = ["recall@1", "complete@3", "hit@3", "p@1", "rr@3", "ndcg@3", "context_efficiency@1"]
    assert table.loc["none", slot_cols].isna().all()
    assert table.loc["none", "tokens@3"] == 10  # tokens are still counted; padding adds 0
    assert table.loc["gold", slot_cols].notna().all()


def test_each_context_question_pair_is_judged_once(monkeypatch):
    calls = []
    original = slot_metrics.judge_context

    def counting(context, slots, threshold=0.90):
        calls.append(context)
        return original(context, slots, threshold)

    monkeypatch.setattr(slot_metrics, "judge_context", counting)
    questions = [q("a", RECEIPT_ID), q("b", (("opens at nine",),))]
    bm25 = make_run(questions, [[0, 1, 2], [2, 1, 0]])
    dense = make_run(questions, [[1, 3, 0], [2, 4, -1]], retriever="dense")
    cache: dict = {}
    pool = slot_metrics.pool_judgments([bm25, dense], cache=cache)
    distinct = {("a", c) for c in (0, 1, 2, 3)} | {("b", c) for c in (0, 1, 2, 4)}
    assert len(calls) == len(distinct) == 8
    slot_metrics.score_slots(bm25, ks=(1,), pool_grades=pool, cache=cache)
    slot_metrics.score_slots(dense, ks=(1,), pool_grades=pool, cache=cache)
    assert len(calls) == 8  # everything came from the shared cache


def test_bad_input():
    run = make_run([q("a", RECEIPT_ID)], [[0, 1, 2]])
    with pytest.raises(ValueError, match="every k"):
        slot_metrics.score_slots(run, ks=(5,))
    with pytest.raises(ValueError, match="outside"):
        slot_metrics.score_slots(make_run([q("a", RECEIPT_ID)], [[0, 9, 2]]), ks=(1,))
    with pytest.raises(ValueError, match="n_questions"):
        slot_metrics.score_slots(make_run([q("a", RECEIPT_ID)], [[0, 1], [1, 0]]), ks=(1,))
