"""Post 07's study on a tiny corpus: depth sweep with a scripted scorer, LLM subset replay."""

import json

import numpy as np

from chunklab_core.core.corpus import Corpus, Document, Question
from chunklab_core.llm.records import CallStore, RecordedLLM
from chunklab_core.llm.testing import ScriptedLLM
from chunklab_core.rerank.scorers import LLMRelevanceScorer
from chunklab_core.rerank.study import depth_sweep, first_stage_runs, llm_sweep


def tiny_corpus():
    facts = [f"Fact {i}: the river number {i} flows through town {i}. " * 3 for i in range(12)]
    docs = [Document("d0", "\n\n".join(facts[:6])), Document("d1", "\n\n".join(facts[6:]))]
    questions = [Question(f"q{i}", f"Which river flows through town {i}?", "d0" if i < 6 else "d1",
                          ((f"river number {i} flows",),)) for i in (1, 4, 7, 10)]
    return Corpus("tiny", docs, questions)


class OracleScorer:
    """Scores a candidate 1 when it holds the question's number: a perfect reranker."""

    name = "oracle"

    def score_many(self, questions, candidates):
        out = []
        for q, texts in zip(questions, candidates):
            number = q.split("town ")[1].rstrip("?")
            out.append(np.array([float(f"river number {number} flows" in t) for t in texts]))
        return out


def test_a_perfect_scorer_reaches_the_ceiling_and_never_beats_it():
    runs = first_stage_runs(tiny_corpus(), ["fixed_500"], ["bm25"], depth=6)
    table = depth_sweep(runs, OracleScorer(), depths=[2, 6], k=1)
    assert set(table["depth"]) == {2, 6}
    assert (table["hit_after"] == table["ceiling"]).all()
    assert (table["hit_after"] >= table["hit_before"]).all()
    assert (table["tokens_read"] > 0).all()


def _reply(messages, schema, options):
    question, passage = messages[1]["content"].split("Passage:")
    number = question.split("town ")[1].split("?")[0]
    yes = f"river number {number} flows" in passage
    return json.dumps({"verdict": "YES" if yes else "NO", "logprob_YES": -0.1 if yes else -2.0,
                       "logprob_NO": -2.0 if yes else -0.1})


def test_llm_subset_replays_and_a_partial_recording_is_a_prefix_of_the_questions(tmp_path):
    runs = first_stage_runs(tiny_corpus(), ["fixed_500"], ["bm25"], depth=4)
    store = tmp_path / "rerank.jsonl"
    recorder = LLMRelevanceScorer(RecordedLLM(ScriptedLLM(_reply), CallStore(store), "record"))
    recorded = llm_sweep(runs, recorder, n_questions=2, depth=4, k=1)
    assert recorded.coverage["questions_recorded"].tolist() == [2]

    replayer = LLMRelevanceScorer(RecordedLLM(ScriptedLLM(fail=True), CallStore(store), "replay"))
    replayed = llm_sweep(runs, replayer, n_questions=4, depth=4, k=1)
    assert replayed.coverage["questions_recorded"].tolist() == [2]
    assert replayed.coverage["questions_planned"].tolist() == [4]
    assert replayed.per_question["qid"].tolist() == recorded.per_question["qid"].tolist()
    assert replayed.per_question.equals(recorded.per_question)
    assert len(replayed.calls) == len(recorded.calls)
