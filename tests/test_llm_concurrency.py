"""Requests in flight: the bounded pool, whole fsynced record lines under threads, one call per
key in flight, per-item costs, identical tables whatever the concurrency, and resuming after
SIGKILL of a concurrent run."""

from __future__ import annotations

import hashlib
import json
import signal
import textwrap
import threading
import time

import pandas as pd
import pytest

from chunklab_core.answers.study import build_items, load_study, run_study
from chunklab_core.llm.answering import answer_question, run_batch
from chunklab_core.llm.pool import map_bounded
from chunklab_core.llm.records import CallStore, RecordedLLM
from chunklab_core.llm.testing import ScriptedLLM

from tiny_study import STRATEGIES, kill_child_after_lines, scripted_models, tiny_corpus

def jitter(messages) -> float:
    """A delay fixed by the prompt (0-30 ms), so threads finish in an order unlike the plan."""
    digest = hashlib.sha256(json.dumps(messages).encode()).digest()
    return digest[0] / 255 * 0.03


def slow(reply):
    def respond(messages, schema, options):
        time.sleep(jitter(messages))
        return reply(messages, schema, options)
    return respond


def models(root, mode="replay_or_record", fail=False):
    return scripted_models(root, mode, fail, respond=slow)


def test_map_bounded_keeps_order_bounds_threads_and_stops_at_an_error():
    running, peak, lock = [0], [0], threading.Lock()

    def work(i):
        with lock:
            running[0] += 1
            peak[0] = max(peak[0], running[0])
        time.sleep(0.02 * (5 - i % 5))
        with lock:
            running[0] -= 1
        return i * i

    assert map_bounded(range(12), work, 3, progress=False) == [i * i for i in range(12)]
    assert peak[0] == 3
    started = []

    def fail_at_two(i):
        started.append(i)
        time.sleep(0.05)
        if i == 2:
            raise KeyError("item 2")
        return i

    with pytest.raises(KeyError, match="item 2"):
        map_bounded(range(50), fail_at_two, 3, progress=False)
    assert len(started) < 50  # the rest was cancelled, not run
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="concurrency"):
            map_bounded([1], str, bad, progress=False)


def test_threads_append_whole_fsynced_lines(tmp_path):
    store = CallStore(tmp_path / "s.jsonl")
    llm = RecordedLLM(ScriptedLLM(lambda m, s, o: "x" * 5000 + m[-1]["content"]), store)
    prompts = [[{"role": "user", "content": f"q{i}"}] for i in range(120)]
    map_bounded(prompts, llm.call, 8, progress=False)
    lines = (tmp_path / "s.jsonl").read_bytes().split(b"\n")
    assert lines[-1] == b"" and len(lines) == 121
    outputs = sorted(json.loads(line)["output"][5000:] for line in lines[:-1])
    assert outputs == sorted(f"q{i}" for i in range(120))
    assert llm.new_calls == 120 and llm.hits == 0


def test_a_key_in_flight_runs_once_and_the_others_wait_for_it(tmp_path):
    backend = ScriptedLLM("only once", delay_s=0.2)
    store = CallStore(tmp_path / "s.jsonl")
    llm = RecordedLLM(backend, store)
    same = [[{"role": "user", "content": "same"}]] * 4
    replies = map_bounded(same, llm.call, 4, progress=False)
    assert len(backend.calls) == 1 and len(store) == 1 and llm.new_calls == 1 and llm.hits == 3
    assert {r.text for r in replies} == {"only once"} and sum(not r.replayed for r in replies) == 1


def test_a_failed_call_in_flight_is_made_again_by_a_waiting_thread(tmp_path):
    attempts = []

    def flaky(messages, schema, options):
        attempts.append(1)
        time.sleep(0.1)
        if len(attempts) == 1:
            raise ConnectionError("server went away")
        return "second try"

    llm = RecordedLLM(ScriptedLLM(flaky), CallStore(tmp_path / "s.jsonl"))
    results = []

    def call():
        try:
            results.append(llm.call([{"role": "user", "content": "q"}]).text)
        except ConnectionError as err:
            results.append(str(err))

    threads = [threading.Thread(target=call) for _ in range(2)]
    for t in threads:
        t.start()
        time.sleep(0.02)
    for t in threads:
        t.join()
    assert sorted(results) == ["second try", "server went away"] and len(attempts) == 2
    assert len(llm.store) == 1


def test_costs_stay_with_their_item_under_threads(tmp_path):
    items = build_items(tiny_corpus(), STRATEGIES, 3, seed=7)
    sequential = run_study(items, models(tmp_path / "a"), progress=False, yes_no_judges=("big",))
    pooled = run_study(items, models(tmp_path / "b"), progress=False, concurrency=4,
                       yes_no_judges=("big",))
    calls = [c for c in sequential.columns if c.endswith("_calls")]
    pd.testing.assert_frame_equal(sequential[["item_id", *calls]], pooled[["item_id", *calls]])
    assert (pooled["cost_answers_big_calls"] == 1).all()


@pytest.mark.parametrize("concurrency", [2, 5])
def test_tables_are_identical_whatever_the_concurrency(tmp_path, concurrency):
    corpora = {"tiny": (tiny_corpus(), 3)}
    one = load_study(corpora, STRATEGIES, 7, models(tmp_path / "one"), yes_no_judges=("big",))
    many = load_study(corpora, STRATEGIES, 7, models(tmp_path / "many"), yes_no_judges=("big",),
                      concurrency=concurrency)
    replayed = load_study(corpora, STRATEGIES, 7, models(tmp_path / "many", "replay", fail=True),
                          yes_no_judges=("big",))
    for got in (many, replayed):
        pd.testing.assert_frame_equal(got.coverage, one.coverage)
        # latencies are measured, so they differ between the two recordings; all else is equal
        pd.testing.assert_frame_equal(got.calls.drop(columns="seconds"), one.calls.drop(columns="seconds"))
        timing = [c for c in one.table.columns if c.endswith("_seconds") or c.endswith("latency_s")]
        pd.testing.assert_frame_equal(got.table.drop(columns=timing), one.table.drop(columns=timing))
    pd.testing.assert_frame_equal(many.table, replayed.table)  # bit for bit, timings included
    pd.testing.assert_frame_equal(many.calls, replayed.calls)
    for stage in ("answers_big", "judges_big", "judges_small"):
        keys = [{json.loads(line)["key"] for line in (tmp_path / d / f"{stage}.jsonl").open()}
                for d in ("one", "many")]
        assert keys[0] == keys[1]


_CHILD = textwrap.dedent("""
    import sys
    from chunklab_core.llm.answering import answer_question, run_batch
    from chunklab_core.llm.records import CallStore, RecordedLLM
    from chunklab_core.llm.testing import ScriptedLLM
    store = CallStore(sys.argv[1])
    llm = RecordedLLM(ScriptedLLM(lambda m, s, o: "A:" + m[-1]["content"][-3:], delay_s=0.2), store)
    run_batch(range(60), lambda i: answer_question(llm, f"question {i:03d}", ["ctx"]), store, "child",
              concurrency=4)
""")


def test_resume_after_sigkill_of_a_concurrent_run(tmp_path):
    path = tmp_path / "answers.jsonl"
    assert kill_child_after_lines(_CHILD, path, 9) == -signal.SIGKILL
    done = [json.loads(line) for line in path.read_text().splitlines()]  # every line whole
    assert 9 <= len(done) < 60
    backend = ScriptedLLM(lambda m, s, o: "A:" + m[-1]["content"][-3:])
    store = CallStore(path)
    llm = RecordedLLM(backend, store)
    results = run_batch(range(60), lambda i: answer_question(llm, f"question {i:03d}", ["ctx"]),
                        store, "resume", concurrency=3)
    assert [r.text for r in results] == [f"A:{i:03d}" for i in range(60)]
    assert len(backend.calls) == 60 - len(done) and llm.hits == len(done)
    keys = [json.loads(line)["key"] for line in path.read_text().splitlines()]
    assert len(keys) == len(set(keys)) == 60
