"""Post 05's sentences from its templates (``reports/post05/claims.md``, ``judges.md``, ``tables.md``):
hand-made values give the sentence written out here, and a template filled with the wrong values
is an error."""

from __future__ import annotations

import pandas as pd
import pytest

from chunklab_core.reports.post05 import claims, judges, tables
from chunklab_core.reports.templates import TemplateError

ANSWERS = pd.DataFrame({"corpus": "nq", "strategy": ["A", "B"], "measure": "rule-based reference grader",
                        "questions": 20, "documents": 17, "share": [0.35, 0.25], "low": [0.15, 0.1],
                        "high": [0.58, 0.45]})


def test_coverage_names_each_corpus_and_says_when_the_run_is_partial():
    coverage = pd.DataFrame({"corpus": ["squad", "nq"], "questions_recorded": [200, 12],
                             "questions_planned": [200, 20], "items": [600, 36]})
    assert judges.coverage_text(coverage.iloc[:1]) == (
        "Recorded so far — **SQuAD v1.1**: 200 of 200 planned questions (600 items).")
    assert judges.coverage_text(coverage) == (
        "Recorded so far — **SQuAD v1.1**: 200 of 200 planned questions (600 items); **Natural Questions**: 12 of 20 "
        "planned questions "
        "(36 items). The run is partial: the questions are processed in a seeded random order, so the recorded ones "
        "are a uniform random sample of the planned ones, paired across strategies; `make llm-run` records the rest.")


def test_clustering_text_names_the_sample():
    effect = pd.DataFrame({"corpus": "nq", "strategy": ["A", "B"], "n_questions": 20, "n_documents": 17,
                           "width_ratio": [0.97, 1.07], "effective_questions": [18.4, 17.2]})
    assert tables.clustering_text(effect) == (
        "- **Natural Questions, 20 questions from 17 pages**: resampling documents makes the intervals 0.97–1.07 "
        "times as wide as resampling questions; the sample is worth about 17–18 independent questions. A ratio "
        "below 1 is the bootstrap's own noise: there, clustering makes no difference this sample can show.")


def test_corpus_reading_with_the_questions_a_gap_would_need():
    pairs = pd.DataFrame({"corpus": ["nq"], "strategy A": ["A"], "strategy B": ["B"], "questions": [20],
                          "A - B": [0.10], "low": [-0.05], "high": [0.25], "separated": [False],
                          "questions needed": [35]})
    assert claims.corpus_reading("nq", ANSWERS, pairs, "rule-based reference grader") == (
        "- **Natural Questions, 20 questions from 17 pages**: the rule-based reference grader passes 35% [15%, 58%] "
        "of A's answers. No leader: every pair of strategies **cannot be told apart** (each paired 95% interval "
        "contains 0). The largest gap, A − B = +10 points, would need about 35 questions of this design to "
        "separate, if it held.")
    point = pairs.assign(**{"A - B": [0.0], "low": [0.0], "high": [0.0]})
    assert "For 1 pair the interval is a single point: on all 20 questions" in claims.corpus_reading(
        "nq", ANSWERS, point, "rule-based reference grader")


def test_cost_text_names_each_stalled_call(monkeypatch):
    stalled = pd.DataFrame([{"stage": "answers_q", "corpus": "squad", "strategy": "Fixed 500", "seconds": 5288.2,
                             "stage median": 34.1, "mean without it": 24.84}])
    monkeypatch.setattr(claims, "stalled_calls", lambda study: stalled)
    assert claims.cost_text(None, "llamacpp") == (
        "Calls were recorded with llamacpp. The figure shows **medians** per item. One `answers_q` call for "
        "Fixed 500 on SQuAD v1.1 took 5,288 s against a stage median of 34 s, for a prompt of ordinary length — "
        "time the recording process spent waiting rather than computing, most likely; it alone lifts that "
        "strategy's mean, which is 24.8 s per item without it.")
    monkeypatch.setattr(claims, "stalled_calls", lambda study: stalled.iloc[0:0])
    assert claims.cost_text(None, "llamacpp") == "Calls were recorded with llamacpp. The figure shows **medians** per item."


def test_a_template_filled_with_the_wrong_values_is_an_error():
    with pytest.raises(TemplateError, match=r"judges.md, template 'coverage': values not passed: \['partial'\]"):
        judges.PROSE.fill("coverage", corpora="x")
    with pytest.raises(TemplateError, match=r"claims.md, template 'reading.probe': values passed but not used"):
        claims.PROSE.fill("reading.probe", probe="p", k=1, n=2, interval="[0%, 1%]", share="50%")
    with pytest.raises(TemplateError, match="no template 'clustering'"):
        tables.PROSE.fill("clustering")
