"""Verdicts that respect the design (issue 24): document-clustered when questions share documents."""

import numpy as np
import pandas as pd

from chunklab_core.reports.verdict_tables import design_of, leader_verdicts, paired_interval
from chunklab_core.stats.bootstrap import paired_difference_ci
from chunklab_core.stats.clustered import clustered_bootstrap_ci, paired_difference_clustered_ci, shares_documents


def scores_with_documents(n_docs=12, per_doc=5, seed=0):
    rng = np.random.default_rng(seed)
    docs = np.repeat([f"d{i}" for i in range(n_docs)], per_doc)
    doc_effect = np.repeat(rng.normal(0, 0.3, n_docs), per_doc)  # questions of a document move together
    a = np.clip(0.6 + doc_effect + rng.normal(0, 0.1, len(docs)), 0, 1)
    b = np.clip(a - 0.05 + np.repeat(rng.normal(0, 0.2, n_docs), per_doc), 0, 1)
    index = [f"q{i}" for i in range(len(docs))]
    return pd.DataFrame({"A": a, "B": b}, index=index), pd.Series(docs, index=index)


def test_clustered_paired_interval_is_the_clustered_interval_of_the_differences():
    frame, docs = scores_with_documents()
    got = paired_difference_clustered_ci(frame["A"], frame["B"], docs.to_numpy(), 2000, 7)
    want = clustered_bootstrap_ci((frame["A"] - frame["B"]).to_numpy(), docs.to_numpy(), 2000, 7)
    assert (got.mean, got.low, got.high) == (want.mean, want.low, want.high)


def test_hand_computed_two_document_difference():
    # documents d0 (two questions, differences 1 and 0) and d1 (one question, difference 0):
    # a resample draws (d0,d0) -> 2/4, (d0,d1) or (d1,d0) -> 1/3, (d1,d1) -> 0/2; the mean is 1/3
    a, b = np.array([1.0, 0.0, 0.0]), np.zeros(3)
    interval = paired_difference_clustered_ci(a, b, ["d0", "d0", "d1"], 4000, 1)
    assert interval.mean == 1 / 3
    assert interval.low == 0.0 and interval.high == 0.5


def test_leader_verdicts_use_documents_when_questions_share_them_and_keep_the_question_level_beside():
    frame, docs = scores_with_documents()
    table = leader_verdicts(frame, "recall@5", 2000, 3, clusters=docs)
    row = table.iloc[1]
    clustered = paired_interval(frame["A"].to_numpy(), frame["B"].to_numpy(), 2000, 3, docs.to_numpy())
    plain = paired_difference_ci(frame["A"].to_numpy(), frame["B"].to_numpy(), 2000, 3)
    assert (row["low"], row["high"]) == (clustered.low, clustered.high)
    assert (row["question low"], row["question high"]) == (plain.low, plain.high)
    assert table["design"].iloc[0] == "documents (12)"
    assert {"verdict", "question verdict"} <= set(table.columns)
    # documents that move together: the clustered interval is wider than the question-level one
    assert clustered.high - clustered.low > plain.high - plain.low


def test_one_question_per_document_is_the_question_level_design():
    frame, _ = scores_with_documents()
    docs = pd.Series([f"d{i}" for i in range(len(frame))], index=frame.index)
    assert not shares_documents(docs) and design_of(docs) == "questions"
    table = leader_verdicts(frame, "recall@5", 500, 3, clusters=docs)
    plain = leader_verdicts(frame, "recall@5", 500, 3)
    assert table[["low", "high", "verdict"]].equals(plain[["low", "high", "verdict"]])
    assert "question low" not in table
