"""Post 04's section calls and retrieval on two question sets, on tiny hand-made corpora (BM25 only)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from chunklab_core.questions import retrieval_comparison as qr
from chunklab_core.reports.post04 import tables as qs
from chunklab_core.core.corpus import Corpus, Document
from chunklab_core.questions.checks import CHECK_NAMES
from chunklab_core.questions.generation import GENERATION_COLUMNS
from chunklab_core.questions.passages import Passage

PARAGRAPHS = [
    "The red bridge over the Elm river was designed by Ann Lee and opened in 1901 after six years of work. "
    "Its towers are made of granite quarried near the northern lakes, and its deck carries trams. ",
    "Every spring the Elm river floods the lower town, so the council built levees along the eastern bank. "
    "The levees were raised again after the great flood of 1952 destroyed the market hall. ",
    "The town library keeps the original drawings of the bridge, donated by the Lee family in 1960. "
    "Visitors can ask to see them on Tuesdays, when the archive room is open to the public. ",
]
TEXT = "\n\n".join(PARAGRAPHS)
DOC = Document("d1", TEXT)
OTHER = Document("d2", "A quiet village far away has a small bakery and a pond with ducks. " * 8)


def _passage(i: int, question: str, answer: str) -> Passage:
    start = TEXT.index(PARAGRAPHS[i])
    end = start + len(PARAGRAPHS[i].rstrip())
    s = TEXT.index(answer, start)
    return Passage(f"d1-p{i:03d}", "squad", "d1", start, end, TEXT[start:end], f"h{i}", question, (answer,),
                   ((s, s + len(answer)),))


PASSAGES = [
    _passage(0, "Who designed the red bridge?", "Ann Lee"),
    _passage(1, "What did the great flood destroy?", "the market hall"),
    _passage(2, "On which day is the archive open?", "Tuesdays"),
]


def _generations(rows) -> pd.DataFrame:
    table = []
    for p, (question, answer, status) in zip(PASSAGES, rows):
        table.append({"passage_id": p.passage_id, "corpus": p.corpus, "doc_id": p.doc_id, "human_qid": p.human_qid,
                      "human_question": p.human_question, "human_answer": p.human_answers[0],
                      "generated_question": question, "generated_answer": answer, "status": status,
                      "attempts": 1 if status == "ok" else 2, "raw": ""})
    return pd.DataFrame(table, columns=GENERATION_COLUMNS)


GENERATIONS = _generations([
    ("Who designed the red bridge over the Elm river?", "Ann Lee", "ok"),
    ("Which building did the flood of 1952 destroy?", "the old market", "ok"),   # answer not in its passage
    ("", "", "unparsed"),
])


# --------------------------------------------------------------------------- relevance

def test_relevant_contexts_hand_fixture():
    contexts = [("d", 0, 10), ("d", 10, 20), ("d", 20, 30), ("e", 0, 10)]
    # span [8, 14): 6 characters, half = 3; ctx0 holds 2, ctx1 holds 4
    assert qr.relevant_contexts(contexts, "d", [(8, 14)], "answer span").tolist() == [1]
    # span [8, 12): half = 2; ctx0 and ctx1 hold 2 each
    assert qr.relevant_contexts(contexts, "d", [(8, 12)], "answer span").tolist() == [0, 1]
    # two occurrences: any of them
    assert qr.relevant_contexts(contexts, "d", [(8, 14), (22, 24)], "answer span").tolist() == [1, 2]
    # passage overlap: any shared character; the other document never counts
    assert qr.relevant_contexts(contexts, "d", [(5, 21)], "passage overlap").tolist() == [0, 1, 2]
    assert qr.relevant_contexts(contexts, "e", [(30, 40)], "passage overlap").tolist() == []
    with pytest.raises(ValueError, match="unknown relevance rule"):
        qr.relevant_contexts(contexts, "d", [(0, 1)], "contains")


def test_question_sets_spans_fallback_and_unparsed():
    table = qr.question_sets(PASSAGES, GENERATIONS)
    assert list(table["qid"]) == ["human:d1-p000", "generated:d1-p000", "human:d1-p001", "generated:d1-p001",
                                  "human:d1-p002"]
    gen0 = table.iloc[1]
    start = TEXT.index("Ann Lee")
    assert gen0["spans"] == ((start, start + len("Ann Lee")),) and gen0["relevance"] == "answer span"
    gen1 = table.iloc[3]
    assert gen1["relevance"] == "passage overlap" and gen1["spans"] == ((PASSAGES[1].start, PASSAGES[1].end),)


def test_question_sets_find_an_answer_that_differs_only_in_spacing():
    # NQ-style tokenised answer: the validity check finds it, so relevance must not fall back
    spaced = GENERATIONS.copy()
    spaced.loc[1, "generated_answer"] = "flood of19 52"
    row = qr.question_sets(PASSAGES, spaced).iloc[3]
    start = TEXT.index("flood of 1952")
    assert row["relevance"] == "answer span" and row["spans"] == ((start, start + len("flood of 1952")),)


# --------------------------------------------------------------------------- retrieval

def test_retrieval_scores_one_run_per_cell_for_both_sets():
    corpus = Corpus("squad", [DOC, OTHER], [])
    questions = qr.question_sets(PASSAGES, GENERATIONS)
    scores = qr.retrieval_scores({"squad": corpus}, questions, ["fixed_500", "fixed_1000"], ["bm25"], progress=False)
    assert len(scores) == 2 * len(questions)
    assert set(scores["set"]) == {"human", "generated"} and scores["retriever"].eq("bm25").all()
    # the bridge questions name the bridge's own words: BM25 puts its chunk first
    first = scores[scores["qid"].str.endswith("d1-p000")]
    assert first["hit@1"].eq(1.0).all()
    # the fallback question counts every chunk overlapping its passage as relevant
    fallback = scores[scores["qid"] == "generated:d1-p001"]
    assert (fallback["n_relevant"] >= 1).all()


def test_set_comparison_is_paired_by_passage():
    cell = {"corpus": "squad", "strategy": "s", "retriever": "bm25"}
    rows = []
    for pid, human, generated in [("a", 1, 1), ("b", 0, 1), ("c", 1, 1), ("d", 0, 0)]:
        rows += [{**cell, "passage_id": pid, "set": "human", "hit@5": human},
                 {**cell, "passage_id": pid, "set": "generated", "hit@5": generated}]
    rows.append({**cell, "passage_id": "e", "set": "human", "hit@5": 1})
    table = qr.set_comparison(pd.DataFrame(rows), "hit@5", resamples=2000, seed=0)
    row = table.iloc[0]
    assert row["passages"] == 4                       # "e" has no generated question
    assert row["human"] == pytest.approx(0.5) and row["generated"] == pytest.approx(0.75)
    assert row["generated − human"] == pytest.approx(0.25)
    assert row["low"] <= 0.25 <= row["high"] and row["low"] >= 0  # differences are 0 or +1


def test_bm25_advantage_averages_strategies():
    rows = []
    for strategy, bm25, dense in [("s1", 1.0, 0.0), ("s2", 1.0, 1.0)]:
        for retriever, value in (("bm25", bm25), ("dense", dense)):
            rows.append({"corpus": "squad", "set": "human", "passage_id": "a", "qid": "human:a",
                         "strategy": strategy, "retriever": retriever, "hit@5": value})
    advantage = qr.bm25_advantage(pd.DataFrame(rows), "hit@5")
    assert advantage["bm25 − dense"].tolist() == [0.5]
    with pytest.raises(ValueError, match="both retrievers"):
        qr.bm25_advantage(pd.DataFrame([r for r in rows if r["retriever"] == "bm25"]), "hit@5")


# --------------------------------------------------------------------------- study sections

def test_generation_summary_counts_unparsed():
    summary = qs.generation_summary(GENERATIONS)
    row = summary.loc[qs.CORPUS_LABELS["squad"]]
    assert (row["passages"], row["parsed at once"], row["parsed after the retry"], row["unparsed"]) == (3, 2, 0, 1)


def test_overlap_table_summary_and_pairs():
    overlaps = qs.overlap_table(PASSAGES, GENERATIONS)
    by_qid = overlaps.set_index("qid")["overlap"]
    # designed, red, bridge: all in paragraph 0
    assert by_qid["human:d1-p000"] == 1.0
    # designed, red, bridge, elm, river: all in paragraph 0
    assert by_qid["generated:d1-p000"] == 1.0
    # great, flood, destroy: "destroyed" is not "destroy" -> 2/3
    assert by_qid["human:d1-p001"] == pytest.approx(2 / 3)
    # building, flood, 1952, destroy: flood and 1952 -> 2/4
    assert by_qid["generated:d1-p001"] == pytest.approx(0.5)
    summary = qs.overlap_summary(overlaps, resamples=500, seed=0).set_index("set")
    assert summary.loc["generated", "questions"] == 2 and summary.loc["human", "questions"] == 3
    assert summary.loc["generated", "mean overlap"] == pytest.approx(0.75)
    paired = qs.overlap_paired(overlaps, resamples=500, seed=0).iloc[0]
    assert paired["passages"] == 2
    assert paired["generated − human"] == pytest.approx(((1 - 1) + (0.5 - 2 / 3)) / 2)
    assert (paired["generated higher on"], paired["human higher on"]) == (0, 1)


def test_advantage_trend_recovers_a_known_slope():
    overlaps = pd.DataFrame({"qid": [f"q{i}" for i in range(6)], "overlap": [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]})
    advantage = pd.DataFrame({"corpus": ["squad"] * 3 + ["nq"] * 3, "set": "human",
                              "passage_id": [f"p{i // 2}" for i in range(6)], "qid": overlaps["qid"],
                              "bm25 − dense": 0.5 * overlaps["overlap"] - 0.1})
    trend = qs.advantage_trend(advantage, overlaps, resamples=500, seed=0).set_index("corpus")
    assert list(trend.index) == ["squad", "nq", "both"]
    assert trend["slope"].tolist() == pytest.approx([0.5, 0.5, 0.5])
    assert trend.loc["both", "low"] == pytest.approx(0.5) and trend.loc["both", "excludes 0"]


def test_check_table_examples_and_read_sample():
    checks = qs.check_table(PASSAGES, GENERATIONS)
    assert len(checks) == 5 and set(CHECK_NAMES) <= set(checks.columns)
    flagged = checks.set_index("qid")
    assert flagged.loc["generated:d1-p001", "answer not in passage"]
    assert not flagged.loc["human:d1-p001", "answer not in passage"]
    summary = qs.check_summary(checks)
    assert summary.loc["answer not in passage", "squad · generated"] == "1 of 2"
    examples = qs.check_examples(checks, "answer not in passage", 5, seed=1)
    assert examples["passage_id"].tolist() == ["d1-p001"]
    with pytest.raises(ValueError, match="unknown check"):
        qs.check_examples(checks, "spelling", 1, seed=1)
    sample = qs.read_sample(PASSAGES, checks, 10, seed=3)
    assert len(sample) == 2 and sample.equals(qs.read_sample(PASSAGES, checks, 10, seed=3))
    assert set(sample["human question"]) == {PASSAGES[0].human_question, PASSAGES[1].human_question}


def test_figures_draw_one_panel_per_corpus():
    from chunklab_core.reports.post04 import figures as qp

    overlaps = qs.overlap_table(PASSAGES, GENERATIONS)
    fig = qp.plot_overlap(overlaps, qs.HUMAN_LABELS, qs.CORPUS_LABELS)
    assert len(fig.axes) == 1 and fig.axes[0].get_title() == qs.CORPUS_LABELS["squad"]
    assert len(fig.axes[0].get_lines()) == 2                      # human and generated ECDFs
    comparison = pd.DataFrame({"corpus": ["squad", "nq"], "strategy": ["fixed_500"] * 2, "retriever": ["bm25"] * 2,
                               "generated − human": [0.1, -0.2], "low": [0.0, -0.3], "high": [0.2, -0.1]})
    fig = qp.plot_set_differences(comparison, "hit@5", qs.CORPUS_LABELS)
    assert len(fig.axes[0].get_yticklabels()) == 2
    data = pd.DataFrame({"corpus": ["squad"] * 4 + ["nq"] * 2, "set": ["human", "generated"] * 3,
                         "overlap": [0.1, 0.9, 0.4, 1.0, 0.5, 0.6], "bm25 − dense": [0, 1, 0, 1, -1, 0]})
    fig = qp.plot_overlap_vs_advantage(data, np.array([0, 0.5, 1.0]), qs.CORPUS_LABELS)
    assert [ax.get_title() for ax in fig.axes] == [qs.CORPUS_LABELS["squad"], qs.CORPUS_LABELS["nq"]]
    bin_means = next(line for line in fig.axes[0].get_lines() if line.get_label() == "bin mean").get_ydata()
    assert list(bin_means) == [0.0, 1.0]                          # squad: bin [0, .5) holds 0, 0; [.5, 1] holds 1, 1


def test_check_examples_with_nothing_flagged_is_empty():
    checks = qs.check_table(PASSAGES, GENERATIONS)
    assert qs.check_examples(checks, "near-duplicate", 3, seed=0).empty
