"""Fault injection, recorded LLM calls: bad lines, missing fields, a mistyped records folder,
two recording processes, and kill -9 at random points of a recording (issue 15).

Every model here is the scripted test backend (``llm.testing.ScriptedLLM``), never a real one.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

from chunklab_core.llm.record_schema import RecordsError, read_records
from chunklab_core.llm.records import CallStore, RecordedLLM, RecordsFolderMissing
from chunklab_core.llm.testing import ScriptedLLM
from chunklab_core.llm.wiring import make_models
from chunklab_core.core.paths import PROJ_ROOT

ENV = {**os.environ, "PYTHONPATH": str(PROJ_ROOT)}


def ask(llm, i):
    return llm.call([{"role": "user", "content": f"question {i:03d}"}])


def recorded_stage(folder, stage="answers_qwen15", n=6):
    """A records file as a real run writes it (scripted backend)."""
    llm = RecordedLLM(ScriptedLLM(lambda m, s, o: "A:" + m[-1]["content"]), CallStore.for_stage(stage, folder))
    for i in range(n):
        ask(llm, i)
    return folder / f"{stage}.jsonl"


def rewrite_line(path, number, change):
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[number - 1] = change(lines[number - 1])
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def edit_record(**fields):
    def change(line):
        record = json.loads(line)
        for name, value in fields.items():
            if value is KeyError:
                del record[name]
            else:
                record[name] = value
        return json.dumps(record)
    return change


# ---- bad lines are errors naming file, line and field, before any work ----------------------
def test_unreadable_middle_line_stops_replay_before_any_work(tmp_path):
    path = recorded_stage(tmp_path)
    rewrite_line(path, 3, lambda line: line[:40])  # damaged in the middle, not a torn tail
    with pytest.raises(RecordsError) as err:
        make_models(mode="replay", root=tmp_path)  # post 05's first step: nothing else has run
    message = str(err.value)
    assert f"{path}: 1 bad recorded call(s)" in message and "line 3: not valid JSON" in message
    assert "Replay mode calls no model" in message and "made again" not in message


def test_in_recording_mode_the_message_says_nothing_was_called(tmp_path):
    path = recorded_stage(tmp_path, stage="s")
    rewrite_line(path, 2, lambda line: "{oops")
    backend = ScriptedLLM(fail=True)
    with pytest.raises(RecordsError, match=r"line 2: not valid JSON[\s\S]*Nothing was called"):
        RecordedLLM(backend, CallStore(path), mode="replay_or_record")


@pytest.mark.parametrize("change, expected", [
    (edit_record(output=KeyError), "line 4: field 'output' is missing"),
    (edit_record(output=None), "line 4: field 'output' is null, must be a string"),
    (edit_record(output=42), "line 4: field 'output' is 42, must be a string"),
    (edit_record(prompt_tokens=KeyError), "line 4: field 'prompt_tokens' is missing"),
    (edit_record(completion_tokens="12"), "line 4: field 'completion_tokens' is \"12\", must be an integer"),
    (edit_record(latency_s=KeyError), "line 4: field 'latency_s' is missing"),
    (edit_record(latency_s=-1), "line 4: field 'latency_s' is -1, must be a number of seconds >= 0"),
    (edit_record(key="abc"), "line 4: field 'key' is \"abc\""),
    (lambda line: "[1, 2]", "line 4: the line is a JSON list, not an object"),
])
def test_each_bad_field_is_named_with_its_line(tmp_path, change, expected):
    path = recorded_stage(tmp_path, stage="s")
    rewrite_line(path, 4, change)
    with pytest.raises(RecordsError) as err:
        CallStore(path).load()
    assert str(path) in str(err.value) and expected in str(err.value)


def test_every_bad_line_is_listed_at_once(tmp_path):
    path = recorded_stage(tmp_path, stage="s")
    rewrite_line(path, 2, edit_record(output=KeyError, latency_s=KeyError))
    rewrite_line(path, 5, lambda line: line[:-5])
    with pytest.raises(RecordsError) as err:
        read_records(path, "replay")
    assert err.value.problems[0].startswith("line 2: field 'output'") and len(err.value.problems) == 3
    assert err.value.problems[2].startswith("line 5: not valid JSON")


def test_torn_last_line_is_the_one_tolerated_fault_counted_and_worded_for_replay(tmp_path):
    path = recorded_stage(tmp_path, stage="s")
    with open(path, "ab") as handle:
        handle.write(b'{"key": "0123", "outp')
    store = CallStore(path)
    with pytest.warns(RuntimeWarning, match=r"line 7 is a torn last record.*reported missing, never run"):
        RecordedLLM(ScriptedLLM(fail=True), store, mode="replay")
    assert len(store) == 6 and store.torn_lines == 1
    # a complete last line that does not parse is not what a kill leaves: an error
    path.write_bytes(path.read_bytes() + b"\n")
    with pytest.raises(RecordsError, match="line 7: not valid JSON"):
        CallStore(path).load()


def test_a_mistyped_records_folder_is_an_error_in_every_mode(tmp_path):
    missing = tmp_path / "llm_cals"
    with pytest.raises(RecordsFolderMissing, match=r"llm_cals does not exist \(replay mode\).*nothing was run"):
        make_models(mode="replay", root=missing)
    with pytest.raises(RecordsFolderMissing, match=r"no model was called.*mkdir -p .*llm_cals"):
        make_models(mode="replay_or_record", root=missing)
    assert not missing.exists()


# ---- two recording processes on one records folder -----------------------------------------
_RECORDER = textwrap.dedent("""
    import sys
    from chunklab_core.llm.records import CallStore, RecordedLLM
    from chunklab_core.llm.testing import ScriptedLLM
    folder, start, stop, delay = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
    store = CallStore.for_stage("answers", folder)
    llm = RecordedLLM(ScriptedLLM(lambda m, s, o: "A:" + m[-1]["content"], delay_s=delay), store)
    for i in range(start, stop):
        llm.call([{"role": "user", "content": f"question {i:03d}"}])
""")


def test_two_recording_processes_on_one_folder_lose_and_tear_nothing(tmp_path):
    children = [subprocess.Popen([sys.executable, "-c", _RECORDER, str(tmp_path), str(a), str(b), "0"], env=ENV)
                for a, b in ((0, 150), (100, 250))]  # 50 calls overlap
    for child in children:
        assert child.wait(timeout=120) == 0
    records, torn = read_records(tmp_path / "answers.jsonl")
    assert torn is None
    outputs = {r["output"] for _, r in records}
    assert outputs == {f"A:question {i:03d}" for i in range(250)}
    assert 250 <= len(records) <= 300  # an overlapping call may be made by both: both records valid


# ---- kill -9 at random points of a recording -------------------------------------------------
def test_kill_9_at_random_points_of_a_recording_loses_no_finished_call(tmp_path):
    rng = np.random.default_rng(15)
    path = tmp_path / "answers.jsonl"
    n, mid_run = 60, 0
    for _ in range(8):
        child = subprocess.Popen([sys.executable, "-c", _RECORDER, str(tmp_path), "0", str(n), "0.01"], env=ENV)
        time.sleep(rng.uniform(0.3, 1.2))
        child.send_signal(signal.SIGKILL)
        child.wait()
        if path.exists():
            records, torn = read_records(path)  # never an error: at most a torn last line
            keys = [r["key"] for _, r in records]
            assert len(keys) == len(set(keys))  # a resumed run never re-records a finished call
            mid_run += 0 < len(keys) < n
            if len(keys) == n:  # finished before the kill: start over so later kills land mid-run
                path.unlink()
    assert mid_run >= 3  # the kills did land in the middle of recordings
    backend = ScriptedLLM(lambda m, s, o: "A:" + m[-1]["content"])
    store = CallStore.for_stage("answers", tmp_path)
    done_before = len(store)
    llm = RecordedLLM(backend, store)
    assert [ask(llm, i).text for i in range(n)] == [f"A:question {i:03d}" for i in range(n)]
    assert len(backend.calls) == n - done_before and llm.hits == done_before
    records, torn = read_records(path)
    assert torn is None and len(records) == n
