"""Post 02's answer (reports/post02/answer.py): the outcome per setting on a hand-made guide, the
words and table it gives, and ``decide`` computing exactly what the post computed section by section
before the answer moved to the top (scope -> matrix -> pool -> decision), on a tiny BM25-only fixture."""

from __future__ import annotations

from types import SimpleNamespace

import pandas as pd
import pytest

from chunklab_core.core.corpus import Corpus, Document, Question
from chunklab_core.reports.post02 import answer as post02_answer

GUIDE = pd.DataFrame([
    # decided outright below the largest budget: more context stops paying at 1,024
    {"corpus": "squad", "retriever": "bm25", "model": "—", "use": "A", "tokens": 1024, "score": 0.9,
     "equivalents": "", "ties": "", "verdict": "decided", "what would decide": "—", "still rising": False,
     "last gain": 0.004},
    # a decided tie at the largest budget, not rising (the last doubling under δ, no smaller budget equivalent)
    {"corpus": "squad", "retriever": "dense", "model": "m", "use": "A", "tokens": 8192, "score": 0.95,
     "equivalents": "B; C", "ties": "", "verdict": "decided", "what would decide": "—", "still rising": "False",
     "last gain": 0.012},
    # undecided, still rising by more than δ at the largest budget (read back from a CSV: flags as text)
    {"corpus": "cuad", "retriever": "bm25", "model": "—", "use": "B", "tokens": 8192, "score": 0.4,
     "equivalents": float("nan"), "ties": float("nan"), "verdict": "undecided", "what would decide": "1,234",
     "still rising": "True", "last gain": 0.05},
    {"corpus": "cuad", "retriever": "dense", "model": "m", "use": "C", "tokens": 512, "score": 0.1,
     "equivalents": "", "ties": "", "verdict": "below floor", "what would decide": "—", "still rising": False,
     "last gain": 0.001},
])


def test_outcomes_name_each_setting_decided_equivalent_undecided_or_below_floor():
    found = post02_answer.outcomes(GUIDE, 8192)
    assert list(found["outcome"]) == ["decided", post02_answer.EQUIVALENT_TIE, "undecided", "below floor"]
    assert list(found["equivalents"]) == [0, 2, 0, 0]
    assert list(found["stops"]) == [True, False, False, True]
    assert list(found["rising"]) == [False, False, True, False]
    assert list(found["questions"]) == ["", "", "1,234", ""]
    assert list(found["measure"]) == ["containment", "containment", "span", "span"]


def _evidence(guide=GUIDE):
    corpora = {"squad": Corpus("squad", [], []), "cuad": Corpus("cuad", [], [])}
    corpora["cuad"].scope = "document"
    counts = pd.DataFrame({"corpus": ["squad", "cuad"], "no measure": [0, 3]})
    table = pd.DataFrame({"budget": [256, 8192]})
    return SimpleNamespace(pool_table=table, pool_guide=guide, corpora=corpora,
                           well_posed=SimpleNamespace(counts=counts))


def test_the_answer_counts_outcomes_says_where_context_stops_paying_and_the_scope():
    text = post02_answer.answer(_evidence())
    assert "4 settings (2 kinds of documents × 2 retrievers)" in text
    assert "reads 256 to 8,192 cl100k_base tokens" in text and "δ = 0.02" in text
    assert "Decided: 2 (1 with every other candidate ruled out, 1 by equivalence: the pick and the candidates " in text
    assert "within ±0.02, the simplest taken); undecided: 1; below floor: 1." in text
    assert "More context stops paying below the largest budget in 2 settings (at 512, 1,024 tokens)." in text
    assert "In 1 setting recall still rises by more than 0.02 at 8,192 tokens (last doubling: up to +0.050)" in text
    assert "Corpora are read by containment recall, CUAD by token span recall." in text
    assert "CUAD questions are searched within their own document" in text and "3 questions no measure" in text
    assert len(text.split()) <= 150


def test_the_answer_table_has_one_row_per_setting_in_words():
    table = post02_answer.answer_table(_evidence())
    assert list(table["setting"]) == ["SQuAD v1.1 · bm25", "SQuAD v1.1 · dense", "CUAD · bm25", "CUAD · dense"]
    assert list(table["at ±0.02"]) == ["decided", "equivalent within ±0.02 (2 others)",
                                       "undecided (1,234 questions would settle it)", "below floor"]
    assert list(table["more context"]) == ["stops paying at 1,024",
                                           "largest; no smaller budget shown equivalent (last doubling +0.012)",
                                           "still rising (+0.050 at the last doubling)", "stops paying at 512"]
    assert list(table["tokens"]) == ["1,024", "8,192", "8,192", "512"]
    assert table["score"].iloc[2] == "0.400 (span)"


MODEL = "all-MiniLM-L6-v2"  # its tokenizer counts the window share; BM25 embeds nothing
FILLER = "Lorem ipsum dolor sit amet, consectetur adipiscing elit. " * 12


def _loaded() -> dict[str, Corpus]:
    docs = [Document("a", "Returns are accepted within 30 days of purchase. " + FILLER + "The manager signs refunds."),
            Document("b", FILLER + "Shipping takes 5 business days. " + FILLER),
            Document("c", "Gift cards never expire. " + FILLER)]
    questions = [Question("q1", "How long is the return window?", "a", (("within 30 days",),)),
                 Question("q2", "Who signs refunds?", "a", (("manager",),)),
                 Question("q3", "Do gift cards expire?", "c", (("never expire",),)),
                 Question("q4", "How long does shipping take?", "b", (("5 business days",),)),
                 Question("q5", "What is the warranty?", "b", (("a lifetime warranty",),))]  # no measure can score it
    scoped = Corpus("cuad", docs, questions)
    scoped.scope = "document"
    return {"squad": Corpus("squad", docs, questions), "cuad": scoped}


def test_decide_computes_what_the_sections_computed_one_after_another(monkeypatch):
    from chunklab_core.decision import candidates
    from chunklab_core.evaluation.matrix import run_matrix
    from chunklab_core.reports import pool
    from chunklab_core.reports.post02 import scope
    from chunklab_core.reports.samples import labels_for

    strategies = ["fixed_500", "fixed_1000", "recursive_500"]
    small = (*strategies, "lc_recursive_1000_200")  # one library splitter the matrix lacks: extend runs it
    monkeypatch.setattr(candidates, "POOL", small)
    monkeypatch.setattr(pool, "POOL", small)
    evidence = post02_answer.decide(_loaded(), strategies, ["bm25"], [MODEL], (1, 5, 10), 5, 0.90, 60, 3)
    state = scope.well_posed(_loaded(), 0.90)
    matrix = run_matrix(state.corpora, strategies, ["bm25"], [MODEL], None, (1, 5, 10), 0.90, progress=False)
    extended = pool.extend(matrix, state.corpora, ["bm25"], MODEL, 5)
    table, guide = pool.pool_tables(extended, MODEL, 5, 60, 3, labels_for(state.corpora), source="02_pool.csv")
    assert [q.qid for q in evidence.corpora["cuad"].questions] == ["q1", "q2", "q3", "q4"]  # q5 dropped
    assert evidence.corpora["cuad"].scope == "document"
    assert evidence.labels == labels_for(state.corpora)
    pd.testing.assert_frame_equal(evidence.matrix.per_question, matrix.per_question)
    assert "lc_recursive_1000_200" in set(evidence.pool_table["strategy"])
    pd.testing.assert_frame_equal(evidence.pool_table, table)
    pd.testing.assert_frame_equal(evidence.pool_guide, guide)
    text = post02_answer.answer(evidence)
    assert "2 settings (2 kinds of documents × 1 retriever)" in text
    assert "CUAD questions are searched within their own document" in text
    assert len(post02_answer.answer_table(evidence)) == len(guide) == 2
