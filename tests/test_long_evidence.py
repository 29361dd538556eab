"""Token span recall for long evidence, and the rule that picks a corpus's measure."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from chunklab_core.core.corpus import Chunk, Corpus, Document, Question
from chunklab_core.retrieval.run import RetrievalRun
from chunklab_core.reports.post02.long_evidence import LONG_GOLD_SHARE, corpus_measures, token_span_recall
from chunklab_core.evaluation.span_metrics import span_overlap

TEXT = "alpha beta gamma delta epsilon zeta eta theta"
#       0     6    11    17    23      31   36  40


def _run(questions, contexts, ranked):
    corpus = Corpus("c", [Document("d", TEXT)], questions)
    chunks = [Chunk(i, d, s, e, s, e) for i, (d, s, e) in enumerate(contexts)]
    return RetrievalRun(corpus, "s", "bm25", chunks, contexts, np.asarray(ranked), None)


def test_token_span_recall_by_hand():
    # gold "gamma delta epsilon zeta" = 4 tokens at [11, 35); chunk [0, 23) holds gamma, delta;
    # chunk [23, 33) cuts "zeta" (31-35) so only epsilon is inside
    question = Question("q", "?", "d", (("gamma delta epsilon zeta",),))
    run = _run([question], [("d", 0, 23), ("d", 23, 33), ("d", 36, 46)], [[0, 2, 1]])
    table = token_span_recall(run, [1, 2, 3])
    assert table.loc[0, "token_recall@1"] == pytest.approx(2 / 4)
    assert table.loc[0, "token_recall@2"] == pytest.approx(2 / 4)
    assert table.loc[0, "token_recall@3"] == pytest.approx(3 / 4)
    # character span recall counts the cut word's characters: 12 + 10 - 1 of 24 (a space, "zeta" partly)
    chars = span_overlap([("d", 0, 23), ("d", 23, 33)], [("d", 11, 35)]).recall
    assert chars == pytest.approx(22 / 24)


def test_given_evidence_spans_win_and_unlocatable_gold_is_nan():
    given = Question("g", "?", "d", (("not in text",),), evidence_spans=(("d", 0, 10),))
    missing = Question("m", "?", "d", (("not in text",),))
    run = _run([given, missing], [("d", 0, 6)], [[0], [0]])
    table = token_span_recall(run, [1])
    assert table.loc[0, "token_recall@1"] == 0.5  # alpha of alpha, beta
    assert np.isnan(table.loc[1, "token_recall@1"])


def test_corpus_measure_rule():
    shares = pd.DataFrame({"corpus": ["a", "a", "b", "b"], "strategy": ["x", "y", "x", "y"],
                           "median chunk chars": [400, 900, 400, 900], "median gold chars": [900, 900, 20, 20],
                           "gold longer than chunk": [0.5, 0.0, 0.1, 0.0],
                           "gold cut by chunking": [LONG_GOLD_SHARE * 2, 0.0, LONG_GOLD_SHARE, 0.0]})
    table = corpus_measures(shares).set_index("corpus")
    # a: mean cut share = LONG_GOLD_SHARE (span); b: half of it (containment)
    assert table.loc["a", "measure"] == "span" and table.loc["b", "measure"] == "containment"
    assert table.loc["a", "gold cut by chunking"] == pytest.approx(LONG_GOLD_SHARE)


def test_gold_cut_by_chunking_share():
    from chunklab_core.reports.post02.long_evidence import long_gold_shares
    from chunklab_core.evaluation.matrix import MatrixResult

    questions = [Question("q1", "?", "d", (("gamma delta",),)), Question("q2", "?", "d", (("zeta eta",),))]
    corpus = Corpus("c", [Document("d", TEXT)], questions)
    chunks = [Chunk(0, "d", 0, 23, 0, 23), Chunk(1, "d", 23, 40, 23, 40), Chunk(2, "d", 40, 46, 40, 46)]
    shares = long_gold_shares(MatrixResult(pd.DataFrame(), {}, {("c", "s"): chunks}), {"c": corpus})
    # "gamma delta" [11, 22) is inside chunk 0; "zeta eta" [31, 39) inside chunk 1: nothing cut
    assert shares.loc[0, "gold cut by chunking"] == 0.0
    chunks = [Chunk(0, "d", 0, 15, 0, 15), Chunk(1, "d", 15, 46, 15, 46)]
    shares = long_gold_shares(MatrixResult(pd.DataFrame(), {}, {("c", "s"): chunks}), {"c": corpus})
    assert shares.loc[0, "gold cut by chunking"] == 0.5  # "gamma delta" straddles 15
