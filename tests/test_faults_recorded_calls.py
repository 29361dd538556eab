"""Fault injection, recorded LLM calls, second round (issue 30): a field given twice in one
record, one call recorded twice with different outputs, another model's records under this
model's file name, and recorders' errors printed as their message alone."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings

import pytest

from chunklab_core.core.cli_errors import user_errors
from chunklab_core.core.paths import PROJ_ROOT
from chunklab_core.llm.record_schema import RecordsError, conflicting_keys, read_records
from chunklab_core.llm.records import CallStore, RecordedLLM, RecordsOfAnotherModel, ReplayMiss
from chunklab_core.llm.testing import ScriptedLLM

ENV = {**os.environ, "PYTHONPATH": str(PROJ_ROOT)}


def ask(llm, i):
    return llm.call([{"role": "user", "content": f"question {i:03d}"}])


def recorded(folder, stage="judges_qwen15", model="scripted", n=4):
    llm = RecordedLLM(ScriptedLLM(lambda m, s, o: "A:" + m[-1]["content"], model=model),
                      CallStore.for_stage(stage, folder))
    for i in range(n):
        ask(llm, i)
    return folder / f"{stage}.jsonl"


def test_a_record_giving_a_field_twice_is_an_error_naming_line_and_field(tmp_path):
    path = recorded(tmp_path)
    lines = path.read_text().splitlines()
    record = json.loads(lines[1])
    lines[1] = lines[1][:-1] + ', "output": ' + json.dumps("another reply") + "}"
    assert json.loads(lines[1])["output"] == "another reply" != record["output"]  # json keeps the last
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(RecordsError, match=r"line 2: field 'output' is given twice"):
        read_records(path, "replay")


def test_a_call_recorded_twice_with_different_outputs_is_reported_and_the_last_served(tmp_path):
    path = recorded(tmp_path)
    lines = path.read_text().splitlines()
    again = json.loads(lines[0])
    again["output"] = "a different reply"
    same = json.loads(lines[2])  # recorded twice, same output: no conflict
    path.write_text("\n".join(lines + [json.dumps(again), json.dumps(same)]) + "\n")
    assert [numbers for _, numbers in conflicting_keys(read_records(path)[0])] == [[1, 5]]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        llm = RecordedLLM(ScriptedLLM(lambda m, s, o: "unused"), CallStore.for_stage("judges_qwen15", tmp_path),
                          mode="replay")
    [warning] = [w for w in caught if "different outputs" in str(w.message)]
    assert "1 call(s)" in str(warning.message) and "lines 1, 5" in str(warning.message)
    assert ask(llm, 0).text == "a different reply"


@pytest.mark.parametrize("mode", ["replay", "replay_or_record"])
def test_another_models_records_are_named_as_such_not_as_a_miss(tmp_path, mode):
    recorded(tmp_path, model="qwen-0.5b")  # the 0.5B judge's calls under the 1.5B judge's name
    backend = ScriptedLLM(lambda m, s, o: "fresh", model="qwen-1.5b")
    llm = RecordedLLM(backend, CallStore.for_stage("judges_qwen15", tmp_path), mode=mode)
    with pytest.raises(RecordsOfAnotherModel) as err:
        ask(llm, 0)
    assert not isinstance(err.value, ReplayMiss)  # a miss would be read as "not recorded yet"
    assert "['qwen-0.5b']" in str(err.value) and "'qwen-1.5b'" in str(err.value)
    assert "judges_qwen15.jsonl" in str(err.value) and backend.calls == []


@pytest.mark.heavy
def test_a_recorders_user_error_is_its_message_alone_with_a_non_zero_exit(tmp_path, use_mirror):
    env = {**ENV, "CHUNKLAB_DATA_MIRROR": str(use_mirror)}
    result = subprocess.run([sys.executable, "-m", "chunklab_core.questions.generation", "--records",
                             str(tmp_path / "nowhere"), "--squad", "1", "--nq", "1", "--mode", "replay"],
                            env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 2, result.stderr[-2000:]
    assert "Traceback" not in result.stderr and "records folder" in result.stderr and "nowhere" in result.stderr
    path = recorded(tmp_path)
    path.write_text(path.read_text().replace('"output"', '"outptu"', 1))
    result = subprocess.run([sys.executable, "-m", "chunklab_core.questions.generation", "--records",
                             str(tmp_path), "--stage", "judges_qwen15", "--squad", "1", "--nq", "1",
                             "--mode", "replay"], env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "line 1: field 'output' is missing" in result.stderr


def test_user_errors_lets_a_bug_raise_with_its_traceback():
    @user_errors(ValueError)
    def main():
        raise KeyError("a bug")

    with pytest.raises(KeyError):
        main()
