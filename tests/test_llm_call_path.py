"""One path per LLM call: ``LLM.prepare`` then ``LLM.run``, for a backend and for ``RecordedLLM``.

Pinned here: validation and option normalisation happen once per call and only in
``LLM.prepare``; ``RecordedLLM`` runs a model only through the backend's public ``run`` and
only on a miss; a replayed call never touches the backend; the record key of a call is the
sha256 of a canonical JSON written out by hand below (so the key did not move when the path
was restructured); and the committed judge records still serve every judged item of post 05's
audit population with no model.
"""

from __future__ import annotations

import csv
import hashlib

import pytest

from chunklab_core.core import paths
from chunklab_core.llm import base
from chunklab_core.llm.base import Request
from chunklab_core.llm.judges import judge_three_way, judge_yes_no
from chunklab_core.llm.llamacpp_backend import LlamaCppBackend
from chunklab_core.llm.records import CallStore, RecordedLLM, ReplayMiss, request_key
from chunklab_core.llm.testing import BackendUsed, ScriptedLLM

MSGS = [{"role": "system", "content": "s"}, {"role": "user", "content": "q"}]


class CountingLLM(ScriptedLLM):
    """A scripted backend that counts option normalisations and runs."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.normalized = 0
        self.runs: list[Request] = []

    def normalize_options(self, options):
        self.normalized += 1
        return super().normalize_options(options)

    def run(self, request):
        self.runs.append(request)
        return super().run(request)


@pytest.fixture
def validations(monkeypatch):
    """How many times ``validate_messages`` ran (wrapped where ``LLM.prepare`` looks it up)."""
    count = {"n": 0}
    real = base.validate_messages

    def counting(messages):
        count["n"] += 1
        return real(messages)

    monkeypatch.setattr(base, "validate_messages", counting)
    return count


def test_backend_call_prepares_once_and_runs_once(validations):
    llm = CountingLLM("r")
    reply = llm.call(MSGS, None, max_tokens=5, attempt=2)
    assert reply.text == "r" and reply.latency_s is not None and reply.latency_s >= 0
    assert (validations["n"], llm.normalized, len(llm.runs), len(llm.calls)) == (1, 1, 1, 1)
    # the model sees the effective options, never the key-only ones
    assert llm.calls[0][2] == {"temperature": 0.0, "seed": 0, "max_tokens": 5}
    assert llm.runs[0].key_only == {"attempt": 2}


def test_recorded_call_prepares_once_and_runs_the_backend_only_on_a_miss(tmp_path, validations):
    llm = CountingLLM("r")
    recorded = RecordedLLM(llm, CallStore(tmp_path / "s.jsonl"))
    first = recorded.call(MSGS, None, max_tokens=5)
    assert (validations["n"], llm.normalized, len(llm.runs), len(llm.calls)) == (1, 1, 1, 1)
    assert llm.runs[0] == llm.prepare(MSGS, None, max_tokens=5)  # the request prepare makes
    again = recorded.call(MSGS, None, max_tokens=5)
    # the second call is prepared (once more) to compute its key, and served from the store
    assert (validations["n"], llm.normalized, len(llm.runs), len(llm.calls)) == (3, 3, 1, 1)
    assert again.replayed and not first.replayed and again.key == first.key
    assert again.text == first.text and again.latency_s == first.latency_s


def test_replay_never_touches_the_backend(tmp_path, monkeypatch):
    path = tmp_path / "s.jsonl"
    made = RecordedLLM(ScriptedLLM("recorded"), CallStore(path), mode="record").call(MSGS)
    idle = ScriptedLLM(fail=True)

    def no_run(request):
        raise AssertionError("replay must not run the backend")

    monkeypatch.setattr(idle, "run", no_run)
    replay = RecordedLLM(idle, CallStore(path), mode="replay")
    served = replay.call(MSGS)
    assert served.text == "recorded" and served.key == made.key and served.replayed
    with pytest.raises(ReplayMiss):
        replay.call([{"role": "user", "content": "never recorded"}])
    assert idle.calls == [] and (replay.hits, replay.new_calls) == (1, 0)


def test_fail_backend_raises_when_run_directly():
    with pytest.raises(BackendUsed):
        ScriptedLLM(fail=True).call(MSGS)


def test_key_is_the_sha256_of_the_hand_written_canonical_json(tmp_path):
    # messages validated, effective options (defaults filled in) plus the key-only attempt,
    # the model identity; sorted keys, no spaces, temperature written as 0.0
    payload = ('{"messages":[{"content":"s","role":"system"},{"content":"q","role":"user"}],'
               '"model":{"backend":"scripted","digest":"v1","model":"scripted"},'
               '"options":{"attempt":2,"max_tokens":5,"seed":0,"temperature":0.0},'
               '"schema":{"type":"object"}}')
    expected = hashlib.sha256(payload.encode("utf-8")).hexdigest()
    store = CallStore(tmp_path / "s.jsonl")
    reply = RecordedLLM(ScriptedLLM("r"), store).call(MSGS, {"type": "object"}, max_tokens=5, attempt=2)
    assert reply.key == expected
    assert request_key(ScriptedLLM().prepare(MSGS, {"type": "object"}, max_tokens=5, attempt=2),
                       ScriptedLLM().identity()) == expected
    record = store.get(expected)
    assert record["options"] == {"temperature": 0.0, "seed": 0, "max_tokens": 5}  # no attempt
    assert record["attempt"] == 2


@pytest.mark.parametrize("bad", [
    {"messages": []},
    {"messages": [{"role": "robot", "content": "x"}]},
    {"messages": MSGS, "schema": "not a dict"},
    {"messages": MSGS, "temprature": 0.1},
])
def test_recorded_and_plain_calls_reject_the_same_bad_input(tmp_path, bad):
    bad = dict(bad)
    messages, schema = bad.pop("messages"), bad.pop("schema", None)
    with pytest.raises(ValueError) as plain:
        ScriptedLLM().call(messages, schema, **bad)
    llm = ScriptedLLM(fail=True)
    with pytest.raises(ValueError) as recorded:
        RecordedLLM(llm, CallStore(tmp_path / "s.jsonl")).call(messages, schema, **bad)
    assert str(recorded.value) == str(plain.value)
    assert llm.calls == []


def test_run_takes_only_a_prepared_request():
    with pytest.raises(TypeError, match="Request from prepare"):
        ScriptedLLM().run(MSGS)


class NoModel(LlamaCppBackend):
    """The embedded backend's identity and options, but a model run is an error."""

    def _generate(self, messages, schema, options):
        raise AssertionError("the committed records must serve every call")


@pytest.mark.parametrize("stage,model,column,judge", [
    ("judges_qwen05", "qwen-0.5b", "judge_qwen05_3way", judge_three_way),
    ("judges_qwen15", "qwen-1.5b", "judge_qwen15_3way", judge_three_way),
    ("judges_qwen15", "qwen-1.5b", "judge_qwen15_yesno", judge_yes_no),
])
def test_committed_judge_records_replay_the_audit_population(stage, model, column, judge):
    """Keys computed today find the calls recorded before: each judged item of post 05's
    audit population (question, reference and answer kept in ``data/audit``) is served from
    the committed records (``data/records``) and gives the verdict the population file holds."""
    population = paths.AUDIT_DIR / "post05_population.csv"
    with population.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) > 0
    llm = RecordedLLM(NoModel(model), CallStore.for_stage(stage), mode="replay")
    labels = [judge(llm, r["question"], r["reference"], r["answer"]).label for r in rows]
    assert labels == [r[column] for r in rows]
    assert llm.new_calls == 0 and llm.hits >= len(rows)
