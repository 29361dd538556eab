"""Answering: the prompt (numbered contexts, context-only instruction), "not in the context"
detection, answer results through a recorded backend, and ``run_batch``."""

from __future__ import annotations

import pytest

from chunklab_core.llm.answering import (ANSWER_SYSTEM, NOT_IN_CONTEXT, answer_messages,
                                         answer_question, format_contexts, run_batch,
                                         says_not_in_context)
from chunklab_core.llm.records import CallStore, RecordedLLM
from chunklab_core.llm.testing import ScriptedLLM


def test_contexts_are_numbered_from_one():
    assert format_contexts([" alpha ", "beta\n"]) == "[1] alpha\n\n[2] beta"
    messages = answer_messages("Who?", ["A", "B", "C"])
    assert messages[0] == {"role": "system", "content": ANSWER_SYSTEM}
    assert messages[1]["content"] == "Context:\n[1] A\n\n[2] B\n\n[3] C\n\nQuestion: Who?"
    assert "only" in ANSWER_SYSTEM and NOT_IN_CONTEXT in ANSWER_SYSTEM
    assert "(no passages)" in answer_messages("Who?", [])[1]["content"]


@pytest.mark.parametrize("question, contexts, match", [
    ("", ["a"], "question"), ("   ", ["a"], "question"),
    ("q", "a single string", "list of strings"), ("q", ["ok", 3], "list of strings"),
])
def test_bad_inputs(question, contexts, match):
    with pytest.raises(ValueError, match=match):
        answer_messages(question, contexts)


@pytest.mark.parametrize("text, expected", [
    ("not in the context", True), ("Not in the  Context.", True),
    ("The answer is not in the context.", True), ("Paris", False), ("", False),
    ("not in context", False),
])
def test_not_in_context_detection(text, expected):
    assert says_not_in_context(text) is expected


def test_answer_question_passes_max_tokens_and_reports_cost(tmp_path):
    backend = ScriptedLLM("  Paris \n")
    llm = RecordedLLM(backend, CallStore(tmp_path / "a.jsonl"))
    result = answer_question(llm, "Capital of France?", ["Paris is the capital of France."])
    assert result.text == "Paris" and not result.not_in_context
    assert backend.calls[0][2]["max_tokens"] == 64 and backend.calls[0][1] is None
    assert result.completion_tokens == 1 and result.key and not result.replayed
    again = answer_question(llm, "Capital of France?", ["Paris is the capital of France."])
    assert again.replayed and again.text == "Paris" and len(backend.calls) == 1
    bare = answer_question(ScriptedLLM(NOT_IN_CONTEXT), "q", ["c"], max_tokens=8)
    assert bare.not_in_context and bare.key is None and bare.latency_s >= 0


def test_run_batch_keeps_order_and_counts_new_calls(tmp_path, capsys):
    store = CallStore(tmp_path / "b.jsonl")
    backend = ScriptedLLM(lambda m, s, o: m[-1]["content"][-1])
    llm = RecordedLLM(backend, store)
    fn = lambda i: answer_question(llm, f"q{i}", ["c"]).text  # noqa: E731
    assert run_batch(range(5), fn, store, desc="first") == ["0", "1", "2", "3", "4"]
    assert run_batch(range(7), fn, store, desc="again") == ["0", "1", "2", "3", "4", "5", "6"]
    assert len(backend.calls) == 7
    err = capsys.readouterr().err
    assert "again" in err and "new=2" in err
