"""Post-02 orchestration on a tiny corpus with BM25 only (no model is loaded)."""

from __future__ import annotations

import pandas as pd
import pytest

from chunklab_core.reports.post02 import prose as post02_prose, tables as post02
from chunklab_core.evaluation import matrix as rm
from chunklab_core.core.corpus import Corpus, Document, Question
from chunklab_core.data.corpora import load_corpus, subsample_documents

FILLER = "Lorem ipsum dolor sit amet, consectetur adipiscing elit. " * 12


def _corpus() -> Corpus:
    docs = [
        Document("a", "Returns are accepted within 30 days of purchase. " + FILLER + "The store manager signs refunds."),
        Document("b", FILLER + "Shipping takes 5 business days. " + FILLER),
        Document("c", "Gift cards never expire. " + FILLER),
    ]
    questions = [
        Question("q1", "How long is the return window?", "a", (("within 30 days",),), evidence_spans=(("a", 21, 35),)),
        Question("q2", "Who signs refunds and how long is shipping?", "a",
                 (("store manager",), ("5 business days",))),
        Question("q3", "Do gift cards expire?", "c", (("never expire",),)),
        Question("q4", "How long does shipping take?", "b", (("15 business days",),)),  # number guard: not found
    ]
    return Corpus("tiny", docs, questions)


@pytest.fixture(scope="module")
def matrix():
    corpora = {"tiny": _corpus()}
    return corpora, rm.run_matrix(corpora, ["fixed_500", "fixed_1000", "recursive_500"], ["bm25"],
                                  ks=(1, 3, 5, 10), progress=False)


def test_per_question_table(matrix):
    _, result = matrix
    pq = result.per_question
    assert set(pq["strategy"]) == {"fixed_500", "fixed_1000", "recursive_500"}
    assert (pq["model"] == "—").all() and (pq["retriever"] == "bm25").all()
    by_q = pq[pq.strategy == "fixed_1000"].set_index("qid")
    assert by_q.loc["q1", "recall@1"] == 1.0
    assert by_q.loc["q4", "recall@10"] == 0.0          # "5 business days" is not "15 business days"
    assert by_q.loc["q2", "recall@10"] in (0.5, 1.0)   # two slots
    assert not pd.isna(by_q.loc["q1", "span_recall@5"]) and pd.isna(by_q.loc["q3", "span_recall@5"])


def test_sections_run_and_agree(matrix):
    corpora, result = matrix
    summary = post02.summary_with_intervals(result.per_question, 5, resamples=200, seed=1)
    assert (summary["recall@5_low"] <= summary["recall@5"]).all()
    balanced = post02.balanced_matrix(summary, 5, 0.05)
    assert balanced["tokens / T_min"].min() == pytest.approx(1.0)
    assert post02.paired_retrievers(result.per_question, 5, "all-MiniLM-L6-v2", 200, 1).empty
    assert "No paired comparison" in post02_prose.describe_paired(pd.DataFrame(), {})
    budget = post02.budget_table(result, [100, 1000], "all-MiniLM-L6-v2")
    assert (budget.xs(1000, axis=1, level="budget") >= budget.xs(100, axis=1, level="budget")).all().all()
    health = post02.chunk_health(result, corpora, ["fixed_500", "fixed_1000", "recursive_500"])
    assert list(health["strategy"]) == ["fixed_500", "fixed_1000", "recursive_500"]
    stability = post02.stability(result.per_question, 5, (1, 10), ["all-MiniLM-L6-v2"], 200, 1)
    assert set(stability["across"]) <= {"k", "retrievers", "embedding models", "corpora"}


def test_bad_inputs():
    corpora = {"tiny": _corpus()}
    with pytest.raises(ValueError, match="unknown strategies"):
        rm.run_matrix(corpora, ["nope"], ["bm25"], progress=False)
    with pytest.raises(ValueError, match="unknown retrievers"):
        rm.run_matrix(corpora, ["fixed_500"], ["splade"], progress=False)
    with pytest.raises(ValueError, match="unknown corpus"):
        load_corpus("wikipedia")
    with pytest.raises(ValueError, match="needs DOCS"):
        load_corpus("own")


def test_subsample_documents_is_seeded():
    corpus = _corpus()
    a = subsample_documents(corpus, 2, seed=3)
    b = subsample_documents(corpus, 2, seed=3)
    assert [d.doc_id for d in a.documents] == [d.doc_id for d in b.documents]
    assert {q.doc_id for q in a.questions} <= {d.doc_id for d in a.documents}
    assert subsample_documents(corpus, None, 1) is corpus


def test_truncation_text_sums_per_model_and_names_the_worst_cell():
    from chunklab_core.reports.post02.truncation import truncation_text

    truncated = pd.DataFrame({
        "corpus": ["squad", "nq", "squad"], "model": ["m1", "m1", "m2"],
        "strategy": ["fixed_500", "fixed_1000", "fixed_500"],
        "chunks": [100, 50, 100], "truncated": [0, 10, 5]})
    truncated["share truncated"] = truncated["truncated"] / truncated["chunks"]
    text = truncation_text(truncated, {"nq": "Natural Questions, 3 questions from 2 pages"})
    assert "m1: 10 of 150 chunks (6.7%)" in text and "m2: 5 of 100 chunks (5.0%)" in text
    # nq · fixed_1000 is the worst cell, named by its sample
    assert "Fixed 1000 chars on Natural Questions, 3 questions from 2 pages under m1: 20.0% of its chunks" in text
    assert "nothing was truncated" in truncation_text(pd.DataFrame(), {})


def test_miss_examples_without_dense_runs_says_none_was_found(matrix):
    from chunklab_core.reports.post02.truncation import miss_examples

    _, result = matrix
    assert miss_examples(result, "all-MiniLM-L6-v2", 5, {"tiny": "tiny"}) == [
        "No truncation miss was found in the top 5 under all-MiniLM-L6-v2."]


def test_summary_reads_rank_measures_at_the_largest_k_when_it_is_not_10():
    """With ks up to 5, rr and nDCG are rr@5/ndcg@5; the summary keeps them (it used to look for
    rr@10/ndcg@10 and leave them out silently), and a missing one is an error, not a gap."""
    corpora = {"tiny": _corpus()}
    result = rm.run_matrix(corpora, ["fixed_500", "fixed_1000"], ["bm25"], ks=(1, 3, 5), progress=False)
    pq = result.per_question
    assert "rr@5" in pq and "ndcg@5" in pq and "rr@10" not in pq
    summary = post02.summary_with_intervals(pq, 3, resamples=200, seed=1)
    metrics = [c for c in summary.columns if "@" in c]
    assert metrics == ["recall@3", "complete@3", "hit@3", "rr@5", "ndcg@5", "tokens@3", "context_efficiency@3",
                       "recall@3_low", "recall@3_high"]
    by_strategy = summary.set_index("strategy")
    for strategy, group in pq.groupby("strategy"):
        assert by_strategy.loc[strategy, "rr@5"] == pytest.approx(group["rr@5"].mean())
    with pytest.raises(ValueError, match=r"lacks the metric columns \['ndcg@5'\]"):
        post02.summary_with_intervals(pq.drop(columns=["ndcg@5"]), 3, resamples=200, seed=1)


def test_summary_columns_are_the_committed_matrix_columns():
    """The default run (k up to 10, K = 5): the summary's metric columns, in order, are those of
    the committed data/02_matrix.csv, derived from the committed per-question table's columns."""
    import gzip
    from pathlib import Path

    data = Path(__file__).resolve().parents[1] / "data"
    with gzip.open(data / "02_per_question.csv.gz", "rt") as handle:
        per_question_columns = handle.readline().strip().split(",")
    matrix_columns = (data / "02_matrix.csv").read_text().splitlines()[0].split(",")
    assert post02.summary_metrics(per_question_columns, 5) + ["recall@5_low", "recall@5_high"] == \
        [c for c in matrix_columns if "@" in c]
