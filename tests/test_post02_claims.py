"""Post 02's prose builders (issue 14): labelled budget table, table readings, verdict-worded answer."""

import numpy as np
import pandas as pd

from chunklab_core.stats import claims
from chunklab_core.reports.post02 import tables as post02, claims as post02_claims

LABELS = {"squad": "SQuAD v1.1, 200 questions from 10 articles", "cuad": "CUAD, 20 questions from 5 contracts"}


def test_budget_long_keeps_corpus_strategy_retriever_and_budget():
    index = pd.MultiIndex.from_tuples([("squad", "Fixed 500"), ("nq", "Fixed 1000")], names=["corpus", "strategy"])
    columns = pd.MultiIndex.from_tuples([("bm25", 500), ("bm25", 1000), ("dense", 500)], names=["retriever", "budget"])
    budget = pd.DataFrame([[0.5, 0.6, 0.4], [0.2, np.nan, 0.3]], index=index, columns=columns)
    tidy = post02_claims.budget_long(budget)
    assert list(tidy.columns) == ["corpus", "strategy", "retriever", "budget", "recall"]
    assert len(tidy) == 5  # the missing cell is dropped, not written as an unlabelled gap
    row = tidy[(tidy["corpus"] == "nq") & (tidy["retriever"] == "dense")].iloc[0]
    assert row["strategy"] == "Fixed 1000" and row["budget"] == 500 and row["recall"] == 0.3


def test_stability_reading_flags_tau_outside_its_interval():
    table = pd.DataFrame({"setting a": ["a", "b"], "setting b": ["c", "d"], "tau": [0.854, 0.5],
                          "low": [0.162, 0.1], "high": [0.831, 0.9]})
    text = post02_claims.stability_reading(table, None, LABELS)
    assert "In 1 comparison τ lies outside" in text and "a vs c: τ 0.85, [0.16, 0.83]" in text
    truncated = pd.DataFrame({"corpus": ["squad"], "strategy": ["structure_aware"], "model": ["m"],
                              "share truncated": [0.978]})
    text = post02_claims.stability_reading(table.iloc[1:], truncated, LABELS)
    assert "include 1 cell where at least 25%" in text
    assert f"on {LABELS['squad']} under m 98%" in text


def test_paired_reading_names_the_multiplicity():
    paired = pd.DataFrame({"corpus": "squad", "strategy": list("abcd"), "comparison": "dense − bm25",
                           "difference": [0.1, 0.0, -0.1, 0.01], "low": [0.05, -0.1, -0.2, -0.02],
                           "high": [0.15, 0.1, -0.01, 0.04],
                           "verdict": ["dense ahead", "cannot be told apart", "bm25 ahead", "cannot be told apart"]})
    text = post02_claims.paired_reading(paired, LABELS)
    assert "4 paired tests" in text and "about 0.2 would still exclude 0" in text
    assert len(post02_claims.separated_pairs(paired)) == 2


def test_answer_words_agree_with_the_recall_verdicts():
    rng = np.random.default_rng(1)
    rows = []
    for corpus, n in (("squad", 200), ("cuad", 20)):
        for strategy, p in (("fixed_500", 0.9), ("fixed_1000", 0.88), ("recursive_500", 0.3)):
            for q in range(n):
                rows.append({"corpus": corpus, "model": "—", "retriever": "bm25", "strategy": strategy,
                             "qid": f"{corpus}{q}", "recall@5": float(rng.random() < p)})
    verdicts = post02_claims.recall_verdicts(pd.DataFrame(rows), 5, "m", 1_000, 0)
    for (_, _), table in verdicts.groupby(["corpus", "retriever"]):
        intervals = dict(zip(table["strategy"].iloc[1:], zip(table["low"].iloc[1:], table["high"].iloc[1:])))
        assert dict(zip(table["strategy"], table["verdict"])) == claims.candidate_verdicts(table["strategy"].iloc[0],
                                                                                             intervals)
    stability = pd.DataFrame({"tau": [0.5]})
    balanced = pd.DataFrame({"corpus": ["squad"], "lambda": [0.05], "verdict": ["cannot be ruled out"]})
    text = post02_claims.post02_answer(verdicts, balanced, stability, LABELS)
    assert f"on {LABELS['cuad']} (fewer than 50 questions with gold)" in text
    assert "1 of 1 (corpus, λ) settings" not in text and "0 of 1 (corpus, λ) settings name a winner" in text


def test_heavily_truncated_strategies_are_dropped_from_the_rankings():
    truncated = pd.DataFrame({"corpus": ["squad", "squad", "nq"], "strategy": ["fixed_500", "fixed_1000", "fixed_500"],
                              "model": ["m", "m", "m"], "share truncated": [0.5, 0.1, 0.25]})
    assert post02_claims.heavily_truncated(truncated) == {"squad": {"fixed_500"}, "nq": {"fixed_500"}}
    assert post02_claims.heavily_truncated(None) == {}
    rng = np.random.default_rng(0)
    rows = [{"corpus": "squad", "retriever": r, "model": "m", "strategy": s, "qid": q,
             "recall@5": float(rng.random() < 0.3 + 0.1 * i)}
            for r in ("bm25", "dense") for i, s in enumerate(["fixed_500", "fixed_1000", "recursive_500", "semantic_tfidf", "fixed_500_o50"]) for q in range(40)]
    per_question = pd.DataFrame(rows)
    with_all = post02.stability(per_question, 5, [5], ["m"], 200, 0)
    without = post02.stability(per_question, 5, [5], ["m"], 200, 0, drop={"squad": {"fixed_500"}})
    assert with_all.loc[with_all["across"] == "retrievers", "strategies"].iloc[0] == 5
    assert without.loc[without["across"] == "retrievers", "strategies"].iloc[0] == 4
    text = post02_claims.stability_without_truncation_text(with_all, without, {"squad": {"fixed_500"}}, LABELS)
    assert "without" in text and "(4 strategies)" in text
