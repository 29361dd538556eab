"""Judges: constrained-verdict parsing, the single retry, and ``unparsed`` verdicts."""

from __future__ import annotations

import json

import pytest

from chunklab_core.llm.judges import (JUDGE_USER, THREE_WAY_LABELS, THREE_WAY_SCHEMA, UNPARSED,
                                      YES_NO_LABELS, YES_NO_SCHEMA, judge_three_way, judge_yes_no,
                                      parse_verdict, verdict_counts)
from chunklab_core.llm.records import CallStore, RecordedLLM
from chunklab_core.llm.testing import ScriptedLLM


@pytest.mark.parametrize("raw, expected", [
    ('{"verdict": "correct"}', "correct"),
    ('  {"verdict":"partial"}\n', "partial"),
    ('{"Verdict": "WRONG"}', "wrong"),
    ('```json\n{"verdict": "correct"}\n```', "correct"),
    ('```\n"partial"\n```', "partial"),
    ('"wrong"', "wrong"),
    ("Correct", "correct"),
    ("correct.", "correct"),
    ("", None),
    ("   \n", None),
    ("garbage", None),
    ('{"verdict": "right"}', None),
    ('{"verdict": "correct"', None),          # truncated JSON
    ('{"label": "correct"}', None),
    ('{"verdict": ["correct"]}', None),
    ("not correct", None),                    # free text naming a label is not a verdict
    ("The answer is correct", None),
    ('{"verdict": "correct", "VERDICT": "wrong"}', None),
    ("42", None),
])
def test_parse_three_way(raw, expected):
    assert parse_verdict(raw, THREE_WAY_LABELS) == expected


@pytest.mark.parametrize("raw, expected", [
    ('{"verdict": "YES"}', "YES"), ('{"verdict": "no"}', "NO"), ("yes", "YES"),
    ("```json\n{\"verdict\":\"No\"}\n```", "NO"), ("maybe", None), ('{"verdict": "correct"}', None),
])
def test_parse_yes_no(raw, expected):
    assert parse_verdict(raw, YES_NO_LABELS) == expected


def test_schemas_constrain_to_labels():
    assert THREE_WAY_SCHEMA["properties"]["verdict"]["enum"] == ["correct", "partial", "wrong"]
    assert YES_NO_SCHEMA["properties"]["verdict"]["enum"] == ["YES", "NO"]
    assert THREE_WAY_SCHEMA["required"] == ["verdict"]


def test_first_reply_parsed_sends_schema_and_prompt():
    llm = ScriptedLLM('{"verdict": "partial"}')
    result = judge_three_way(llm, "Who wrote X?", "Ann Lee", "Ann")
    assert (result.label, result.raw, result.attempts) == ("partial", '{"verdict": "partial"}', 1)
    (messages, schema, options), = llm.calls
    assert schema == THREE_WAY_SCHEMA and options["temperature"] == 0.0
    assert messages[1]["content"] == JUDGE_USER.format(question="Who wrote X?",
                                                       reference="Ann Lee", answer="Ann")


@pytest.mark.parametrize("replies, label, attempts", [
    (["garbage", '{"verdict": "NO"}'], "NO", 2),
    (["", ""], UNPARSED, 2),
    (["garbage", "still garbage"], UNPARSED, 2),
    (["", "YES"], "YES", 2),
])
def test_retry_once_then_unparsed(replies, label, attempts):
    llm = ScriptedLLM(replies)
    result = judge_yes_no(llm, "q", "ref", "ans")
    assert (result.label, result.attempts, result.raw) == (label, attempts, replies[-1])
    assert len(llm.calls) == 2
    retry_messages = llm.calls[1][0]
    assert retry_messages[2] == {"role": "assistant", "content": replies[0]}
    assert '{"verdict": "YES"}' in retry_messages[3]["content"]


def test_retry_is_a_distinct_recorded_call_and_unparsed_is_kept(tmp_path):
    store = CallStore(tmp_path / "judge.jsonl")
    llm = RecordedLLM(ScriptedLLM(["nonsense", "more nonsense"]), store)
    result = judge_three_way(llm, "q", "ref", "ans")
    assert result.label == UNPARSED and result.attempts == 2
    records = [json.loads(line) for line in (tmp_path / "judge.jsonl").read_text().splitlines()]
    assert [r["attempt"] for r in records] == [1, 2]
    assert records[0]["key"] != records[1]["key"]
    # replaying gives the same unparsed verdict without a model
    replay = RecordedLLM(ScriptedLLM(fail=True), CallStore(tmp_path / "judge.jsonl"), mode="replay")
    assert judge_three_way(replay, "q", "ref", "ans") == result


def test_bad_inputs_raise():
    with pytest.raises(ValueError, match="answer"):
        judge_three_way(ScriptedLLM(), "q", "ref", None)


def test_verdict_counts_keep_unparsed_and_zeros():
    results = [judge_three_way(ScriptedLLM(r), "q", "ref", "a")
               for r in (["x", "y"], ['{"verdict": "wrong"}'], ['"correct"'], ['{"verdict":"wrong"}'])]
    assert verdict_counts(results, THREE_WAY_LABELS) == \
        {"correct": 1, "partial": 0, "wrong": 2, "unparsed": 1}
    with pytest.raises(ValueError, match="YES"):
        verdict_counts(results + [judge_yes_no(ScriptedLLM("YES"), "q", "r", "a")], THREE_WAY_LABELS)
