"""Recorded LLM calls: keys, the fsync'd JSONL store, replay without a model, torn lines,
and resuming a run killed with SIGKILL."""

from __future__ import annotations

import hashlib
import json
import signal
import textwrap

import pytest

from chunklab_core.llm import llamacpp_backend
from chunklab_core.llm.answering import answer_question, run_batch
from chunklab_core.llm.base import canonical_json
from chunklab_core.llm.llamacpp_backend import LlamaCppBackend
from chunklab_core.llm.records import CallStore, RecordedLLM, ReplayMiss, call_key
from chunklab_core.llm.testing import BackendUsed, ScriptedLLM
from tiny_study import kill_child_after_lines

MSGS = [{"role": "system", "content": "s"}, {"role": "user", "content": "q"}]
IDENTITY = {"backend": "scripted", "model": "m", "digest": "v1"}


def echo(messages, schema, options):
    return "echo:" + messages[-1]["content"]


def test_call_key_is_sha256_of_canonical_json():
    options = {"temperature": 0.0, "seed": 0, "max_tokens": 8}
    expected = hashlib.sha256(canonical_json(
        {"messages": MSGS, "schema": None, "options": options, "model": IDENTITY}).encode()).hexdigest()
    assert call_key(MSGS, None, options, IDENTITY) == expected
    # key order in dicts does not matter; any change of prompt, schema, option or model does
    assert call_key(MSGS, None, dict(reversed(list(options.items()))), IDENTITY) == expected
    changed = [call_key(MSGS[:1], None, options, IDENTITY),
               call_key(MSGS, {"type": "object"}, options, IDENTITY),
               call_key(MSGS, None, {**options, "seed": 1}, IDENTITY),
               call_key(MSGS, None, options, {**IDENTITY, "digest": "v2"})]
    assert len({expected, *changed}) == 5


def test_record_then_replay_identical_with_unusable_backend(tmp_path):
    store = CallStore(tmp_path / "stage.jsonl")
    recorder = RecordedLLM(ScriptedLLM(echo, model="m"), store, mode="record")
    prompts = [[{"role": "user", "content": f"q{i}"}] for i in range(3)]
    first = [recorder.call(p, max_tokens=8) for p in prompts]
    assert recorder.new_calls == 3 and not any(c.replayed for c in first)

    replayer = RecordedLLM(ScriptedLLM(fail=True, model="m"), CallStore(tmp_path / "stage.jsonl"),
                           mode="replay")
    again = [replayer.call(p, max_tokens=8) for p in prompts]
    assert [c.text for c in again] == [c.text for c in first] == ["echo:q0", "echo:q1", "echo:q2"]
    assert [c.key for c in again] == [c.key for c in first]
    assert all(c.replayed for c in again) and replayer.hits == 3 and replayer.new_calls == 0
    with pytest.raises(BackendUsed):  # the stand-in really would have failed if used
        RecordedLLM(ScriptedLLM(fail=True, model="m"), store, mode="record").call(prompts[0])


def test_record_fields_and_fsynced_lines(tmp_path):
    store = CallStore(tmp_path / "s.jsonl")
    RecordedLLM(ScriptedLLM("four words right here", model="m"), store).call(MSGS, max_tokens=8, seed=3)
    lines = (tmp_path / "s.jsonl").read_text().splitlines()
    assert len(lines) == 1
    record = json.loads(lines[0])
    assert record["options"] == {"temperature": 0.0, "seed": 3, "max_tokens": 8}
    assert record["identity"] == IDENTITY and record["backend"] == "scripted" and record["model"] == "m"
    assert record["output"] == "four words right here"
    assert record["prompt_tokens"] == 2 and record["completion_tokens"] == 4
    assert record["latency_s"] >= 0 and record["timestamp"].endswith("+00:00")
    assert record["attempt"] == 1
    assert record["key"] == call_key(MSGS, None, record["options"], IDENTITY)


def test_new_model_or_option_is_a_new_call(tmp_path):
    store = CallStore(tmp_path / "s.jsonl")
    RecordedLLM(ScriptedLLM(echo, model="m"), store).call(MSGS)
    other_version = ScriptedLLM(echo, model="m", version="v2")
    RecordedLLM(other_version, store).call(MSGS)
    same = ScriptedLLM(echo, model="m")
    llm = RecordedLLM(same, store)
    llm.call(MSGS)
    llm.call(MSGS, temperature=0.5)
    llm.call(MSGS, attempt=2)  # key-only option: a distinct call, never sent to the model
    assert len(other_version.calls) == 1 and len(same.calls) == 2 and len(store) == 4
    assert all("attempt" not in options for _, _, options in same.calls)


def test_replay_miss_names_stage_and_target(tmp_path):
    store = CallStore.for_stage("judge_1p5b", root=tmp_path, make_target="llm-judges")
    with pytest.raises(ReplayMiss, match=r"judge_1p5b.*make llm-judges"):
        RecordedLLM(ScriptedLLM(fail=True), store, mode="replay").call(MSGS)
    with pytest.raises(ValueError, match="mode"):
        RecordedLLM(ScriptedLLM(), store, mode="replay-only")
    with pytest.raises(ValueError, match="stage"):
        CallStore.for_stage("../escape", root=tmp_path)


def test_torn_last_line_is_reported_then_set_aside_not_glued(tmp_path):
    path = tmp_path / "s.jsonl"
    llm = RecordedLLM(ScriptedLLM(echo), CallStore(path))
    llm.call([{"role": "user", "content": "a"}])
    llm.call([{"role": "user", "content": "b"}])
    fragment = b'{"key": "abc", "output": "half a rec'
    with open(path, "ab") as handle:  # a crash in the middle of writing a third record
        handle.write(fragment)
    store = CallStore(path)
    with pytest.warns(RuntimeWarning, match=r"line 3 is a torn last record.*made again and recorded"):
        assert len(store) == 2
    assert store.torn_lines == 1
    resumed = RecordedLLM(ScriptedLLM(echo), store)
    with pytest.warns(RuntimeWarning, match=r"moved a torn last line"):
        assert resumed.call([{"role": "user", "content": "c"}]).text == "echo:c"
    lines = path.read_bytes().split(b"\n")
    assert len(lines) == 4 and lines[3] == b"" and json.loads(lines[2])["output"] == "echo:c"
    [aside] = tmp_path.glob("s.jsonl.torn-*")
    assert aside.read_bytes() == fragment  # set aside, not lost
    assert len(CallStore(path)) == 3  # clean again: no warning, no error


def test_replay_without_model_file_or_llama_cpp(tmp_path, monkeypatch):
    """An embedded backend whose file is absent replays records and never imports llama_cpp."""
    absent = tmp_path / "absent-model.gguf"

    class RecordingEmbedded(LlamaCppBackend):  # records as if the model were there
        def _generate(self, messages, schema, options):
            return ScriptedLLM(echo)._generate(messages, schema, options)

        def runtime(self):
            return {}

    store = CallStore(tmp_path / "s.jsonl")
    first = RecordedLLM(RecordingEmbedded(absent, sha256="f" * 64), store, mode="record").call(MSGS)

    def no_llama_cpp():
        raise AssertionError("llama_cpp must not be imported during replay")

    monkeypatch.setattr(llamacpp_backend, "import_llama_cpp", no_llama_cpp)
    replay = RecordedLLM(lambda: LlamaCppBackend(absent), CallStore(tmp_path / "s.jsonl"),
                         mode="replay")
    again = replay.call(MSGS)
    assert again.text == first.text == "echo:q" and again.key == first.key
    assert replay.identity()["sha256"] == "f" * 64  # the one identity recorded for that model


_CHILD = textwrap.dedent("""
    import sys
    from chunklab_core.llm.answering import answer_question, run_batch
    from chunklab_core.llm.records import CallStore, RecordedLLM
    from chunklab_core.llm.testing import ScriptedLLM
    store = CallStore(sys.argv[1])
    llm = RecordedLLM(ScriptedLLM(lambda m, s, o: "A:" + m[-1]["content"][-3:], delay_s=0.2), store)
    run_batch(range(40), lambda i: answer_question(llm, f"question {i:03d}", ["ctx"]), store, "child")
""")


def test_resume_after_sigkill(tmp_path):
    path = tmp_path / "answers.jsonl"
    assert kill_child_after_lines(_CHILD, path, 5) == -signal.SIGKILL

    store = CallStore(path)
    done_before = len(store)
    assert 5 <= done_before < 40
    backend = ScriptedLLM(lambda m, s, o: "A:" + m[-1]["content"][-3:])
    llm = RecordedLLM(backend, store)
    results = run_batch(range(40), lambda i: answer_question(llm, f"question {i:03d}", ["ctx"]),
                        store, "resume")
    assert len(backend.calls) == 40 - done_before == llm.new_calls and llm.hits == done_before
    assert [r.text for r in results] == [f"A:{i:03d}" for i in range(40)]
    assert [r.replayed for r in results] == [True] * done_before + [False] * (40 - done_before)
    keys = [json.loads(line)["key"] for line in path.read_text().splitlines()]
    assert len(keys) == len(set(keys)) == 40  # no duplicate records, every item present


def test_replay_without_identity_or_records_is_a_clear_miss(tmp_path):
    store = CallStore.for_stage("answers", root=tmp_path)
    replay = RecordedLLM(LlamaCppBackend(tmp_path / "absent.gguf"), store, mode="replay")
    with pytest.raises(ReplayMiss, match=r"absent.*'answers'.*record the stage first"):
        replay.call(MSGS)
