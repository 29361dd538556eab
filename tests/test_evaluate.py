"""The post-01 pipeline end to end on a hand-checkable corpus, and its clear errors."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from chunklab_core.reports.post01 import benchmark as bench, tables as post01_tables
from chunklab_core.core.corpus import Corpus, Document, Question
from chunklab_core.evaluation.scoring import ContextGoldIndex, evaluate, run_cell, score_run, summarize
from chunklab_core.retrieval.run import collapse_to_contexts


def _tiny_corpus() -> Corpus:
    filler = "Lorem ipsum dolor sit amet. " * 20  # 560 characters of noise
    docs = [
        Document("d0", "The capital of France is Paris. " + filler),
        Document("d1", filler + "The tallest mountain is Everest, in Nepal."),
        Document("d2", "Bananas are yellow fruit. " + filler),
    ]
    questions = [
        Question("q0", "What is the capital of France?", "d0", (("Paris",),)),
        Question("q1", "Which is the tallest mountain?", "d1", (("Everest",),)),
        Question("q2", "What colour are bananas?", "d2", (("purple",),)),  # gold nowhere
    ]
    return Corpus("tiny", docs, questions)


def test_gold_index_finds_normalised_containment():
    index = ContextGoldIndex(["The  Eiffel\nTower", "tower of babel", "nothing"])
    assert index.containing(["eiffel tower"]).tolist() == [0]
    assert index.containing(["TOWER"]).tolist() == [0, 1]
    assert index.containing(["absent", ""]).tolist() == []


def test_collapse_keeps_first_rank_of_each_context():
    chunk_context = np.array([0, 0, 1, 1, 2])  # chunks 0,1 share context 0 ...
    ranked = collapse_to_contexts(np.array([[1, 0, 3, 4, 2]]), chunk_context, 3)
    assert ranked.tolist() == [[0, 1, 2]]
    assert collapse_to_contexts(np.array([[1, 0]]), chunk_context, 3).tolist() == [[0, -1, -1]]


def test_end_to_end_metrics_by_hand():
    corpus = _tiny_corpus()
    run = run_cell(corpus, "fixed_500", "bm25", k_max=3)
    table = score_run(run, ks=(1, 3)).set_index("qid")
    # q0: "Paris" is in the first 500 characters of d0; BM25 ranks that chunk first
    assert table.loc["q0", "hit@1"] == 1 and table.loc["q0", "rr@3"] == 1.0
    assert table.loc["q0", "n_relevant"] == 1 and table.loc["q0", "ndcg@3"] == 1.0
    assert table.loc["q0", "p@3"] == pytest.approx(1 / 3)
    # q1: Everest sits at the end of d1, in its second chunk, which must be found
    assert table.loc["q1", "hit@3"] == 1
    # q2: the gold occurs nowhere: every metric is 0 and nothing is relevant
    assert table.loc["q2", ["hit@1", "hit@3", "rr@3", "ndcg@3", "p@3"]].sum() == 0
    assert table.loc["q2", "n_relevant"] == 0 and np.isnan(table.loc["q2", "first_rank"])
    # tokens@k is the sum of the returned contexts' token counts
    assert table.loc["q0", "tokens@3"] >= table.loc["q0", "tokens@1"] > 0


def test_parent_document_contexts_are_collapsed():
    corpus = _tiny_corpus()
    run = run_cell(corpus, "parent_doc_250_1000", "bm25", k_max=3)
    for row in run.ranked:
        valid = row[row >= 0]
        assert len(valid) == len(set(valid.tolist()))  # each parent returned at most once


def test_summary_and_context_cost():
    per_question = evaluate(_tiny_corpus(), ["fixed_500", "fixed_1000"], "bm25", (1, 3), progress=False)
    summary = summarize(per_question, (1, 3))
    assert list(summary["strategy"]) == ["fixed_500", "fixed_1000"]
    assert (summary["questions"] == 3).all()
    # 2 of 3 questions can ever be answered: recall never exceeds 0.90, so the cost is n/a
    assert summary["context_cost_tokens"].isna().all()


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda c: bench.run_benchmark(c, ["no_such_strategy"]), "unknown strategies"),
        (lambda c: bench.run_benchmark(c, []), "STRATEGIES is empty"),
        (lambda c: bench.run_benchmark(c, ["fixed_500"], ks=[0, 10]), "k must be an integer >= 1"),
        (lambda c: run_cell(c, "fixed_500", k_max=0), "k must be >= 1"),
        (lambda c: run_cell(Corpus("empty", c.documents, []), "fixed_500"), "no questions"),
        (lambda c: run_cell(c, "fixed_500", retriever="tfidf"), "unknown retriever"),
    ],
)
def test_clear_errors(call, message):
    with pytest.raises(ValueError, match=message):
        call(_tiny_corpus())


def test_empty_sample_is_a_clear_error(use_mirror):
    with pytest.raises(ValueError, match="sample must be non-empty"):
        bench.load_squad_sample(40, 0, 1)


def test_results_with_intervals_bracket_the_mean():
    result = bench.run_benchmark(_tiny_corpus(), ["fixed_500", "fixed_1000"], ks=[1, 3], progress=False)
    table = post01_tables.results_with_intervals(result, resamples=500, seed=3, metrics=("hit@1", "hit@3", "rr@3"))
    for metric in ("hit@1", "hit@3", "rr@3"):
        assert (table[f"{metric}_low"] <= table[metric]).all() and (table[metric] <= table[f"{metric}_high"]).all()
    again = post01_tables.results_with_intervals(result, resamples=500, seed=3, metrics=("hit@1", "hit@3", "rr@3"))
    pd.testing.assert_frame_equal(table, again)  # deterministic


def test_summary_counts_unmeasured_questions_apart():
    per_question = pd.DataFrame({
        "corpus": "c", "strategy": "s", "retriever": "bm25", "qid": ["a", "b", "c"],
        "hit@1": [1.0, 0.0, np.nan], "hit@3": [1.0, 1.0, np.nan],
        "tokens@1": [10, 10, 10], "tokens@3": [30, 30, 30]})
    row = summarize(per_question, (1, 3)).iloc[0]
    assert row["questions"] == 2 and row["unmeasured"] == 1
    assert row["hit@1"] == 0.5  # the unmeasured question is not scored as a miss
