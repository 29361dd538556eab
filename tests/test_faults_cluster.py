"""Class 5 of issue 49: the claim protocol of ``make runs RUNS_CLUSTER=...`` cannot hang.

An unreadable claim (empty, torn, not a JSON object, a folder) is stale or bounded; waiting says who
holds which claim and since when, and ends; a claim is alive only while its very process runs
(host, boot id, pid and the pid's start time); a bad address is named with the fix in seconds.
Runs with a stand-in executor and a stand-in ``ray`` module: no cluster, no recording.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
import types

import pytest

from chunklab_core.reports import cluster_claims, run_cluster
from chunklab_core.retrieval.recorded_runs import Cell, RunStore, RunStoreError

CELL = Cell("fixture-1d-1q-00000000", "fixed_500", "bm25")


def spec(cell: Cell = CELL) -> dict:
    return {"cell": {"corpus": cell.corpus, "strategy": cell.strategy, "retriever": cell.retriever,
                     "model": cell.model}, "depth": 10, "texts": {"n": 1, "sha256": "t"},
            "queries": {"n": 1, "sha256": "q"}, "corpus_source": {}, "strategy_options": {}}


class Failing:
    """An executor whose every task fails (the claim protocol is what is tested, not the ranking)."""

    name = "stand-in"

    def __init__(self) -> None:
        self.sent = 0

    def run(self, jobs):
        for index, _ in enumerate(jobs):
            self.sent += 1
            yield index, RuntimeError("not computed in this test")


def bounded(function, seconds: float):
    """``function()`` in a thread; fails the test (instead of hanging it) when it has not returned in time."""
    out: dict = {}
    thread = threading.Thread(target=lambda: out.setdefault("value", function()), daemon=True)
    started = time.monotonic()
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"still running after {seconds} s: a loop without a bound"
    return out["value"], time.monotonic() - started


@pytest.mark.parametrize("content", [b"", b"{", b'{"host": "h", "pid"', b"[]", b'"driver"', b"\xff\xfe\x00",
                                     b'{"host": "elsewhere"}', b"null"])
def test_an_unreadable_claim_is_stale_and_taken_over(tmp_path, content):
    store = RunStore(tmp_path, mode="record", log=lambda line: None)
    claims = run_cluster.Claims(store)
    path = claims.path(CELL)
    path.parent.mkdir(parents=True)
    path.write_bytes(content)
    assert claims.claim(CELL) and claims.holds(CELL)
    assert json.loads(path.read_text())["driver"] == claims.me["driver"]


@pytest.mark.parametrize("content", [b"", b"{torn", b"[1, 2]"])
def test_a_driver_facing_a_torn_claim_records_and_ends(tmp_path, content):
    store = RunStore(tmp_path, mode="record", log=lambda line: None)
    path = run_cluster.Claims(store).path(CELL)
    path.parent.mkdir(parents=True)
    path.write_bytes(content)
    executor = Failing()
    counts, seconds = bounded(lambda: run_cluster.run_cells([spec()], store, executor, progress=False,
                                                            wait_poll=0.05, wait_limit=2.0, log=lambda line: None), 20)
    assert executor.sent == 1 and counts["failed"] == 1, counts  # it was claimed and sent, not waited for
    assert not path.exists(), "the claim is released"


def test_waiting_says_who_holds_which_claim_since_when_and_is_bounded(tmp_path):
    store = RunStore(tmp_path, mode="record", log=lambda line: None)
    other = run_cluster.Claims(store)  # another driver of this very process: alive
    assert other.claim(CELL)
    lines: list[str] = []
    executor = Failing()
    counts, seconds = bounded(lambda: run_cluster.run_cells(
        [spec()], store, executor, progress=False, claims=run_cluster.Claims(store), wait_poll=0.05,
        wait_limit=1.0, report_every=0.3, log=lines.append), 20)
    assert counts["claimed elsewhere"] == 1 and executor.sent == 0 and seconds < 10
    waiting = [line for line in lines if line.startswith("waiting for 1 cell(s) another driver is recording")]
    assert len(waiting) >= 2, lines  # said again while waiting
    since = time.strftime("%Y-%m-%d", time.gmtime())
    assert f"host {other.me['host']}, pid {os.getpid()}, driver {other.me['driver'][:8]}, since {since}" in waiting[0]
    assert CELL.describe() in waiting[0] and "at most" in waiting[0]
    assert any("still claimed by" in line and "left to that driver" in line for line in lines)
    assert other.holds(CELL), "another driver's live claim is never taken"


def test_a_claim_that_cannot_be_read_at_all_ends_within_the_bound(tmp_path):
    store = RunStore(tmp_path, mode="record", log=lambda line: None)
    path = run_cluster.Claims(store).path(CELL)
    path.mkdir(parents=True)  # a folder where the claim file should be: never readable, never removable by replace
    lines: list[str] = []
    counts, seconds = bounded(lambda: run_cluster.run_cells([spec()], store, Failing(), progress=False,
                                                            wait_poll=0.05, wait_limit=1.0, log=lines.append), 20)
    assert counts["claimed elsewhere"] == 1 and seconds < 10
    assert any("could not be claimed before the wait's bound" in line for line in lines), lines


@pytest.mark.parametrize("change, alive", [
    ({}, True),
    ({"pid_start": "1"}, False),  # the pid was reused by another process
    ({"boot": "another-boot"}, False),  # written before this machine rebooted
    ({"pid": 2**22 + 12345}, False),  # no such process
    ({"pid": "x"}, False),
    ({"pid_start": None, "boot": None}, True),  # an older claim: the pid alone
])
def test_liveness_is_the_drivers_identity_not_only_its_pid(tmp_path, change, alive):
    store = RunStore(tmp_path, mode="record")
    mine = run_cluster.Claims(store)
    claim = {**dict(mine.me, driver="another", started=time.time()), **change}
    path = mine.path(CELL)
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(claim))
    assert mine.me["boot"] and mine.me["pid_start"], "this machine has a boot id and process start times"
    assert mine.claimed_by_other(CELL) is alive
    assert mine.claim(CELL) is (not alive)


def test_a_claim_is_written_whole(tmp_path, monkeypatch):
    """Another driver never sees a half-written claim: it is linked into place complete."""
    store = RunStore(tmp_path, mode="record")
    seen = []
    real_link = os.link

    def link(source, target):
        seen.append(json.loads(open(source, encoding="utf-8").read()))
        return real_link(source, target)

    monkeypatch.setattr(cluster_claims.os, "link", link)
    claims = run_cluster.Claims(store)
    assert claims.claim(CELL)
    assert seen and seen[0]["driver"] == claims.me["driver"] and "started" in seen[0]
    assert sorted(p.name for p in claims.path(CELL).parent.iterdir()) == [claims.path(CELL).name]


@pytest.mark.parametrize("address, message", [
    ("http://x", "is not a Ray address (auto, local, ray://host:port or host:port)"),
    ("ray://host", "is not a Ray address"),
    ("ray://127.0.0.1:99999", "is not a Ray address"),
    ("ray://127.0.0.1:1", "127.0.0.1 port 1: Connection refused"),
    ("no-such-host.invalid:6379", "no-such-host.invalid port 6379"),
])
def test_a_bad_address_is_named_with_the_fix_in_seconds(address, message):
    started = time.monotonic()
    with pytest.raises(RunStoreError) as caught:
        run_cluster.check_address(address)
    assert time.monotonic() - started < run_cluster.CONNECT_TIMEOUT + 5
    text = str(caught.value)
    assert address in text and message in text and "ray start --head" in text and "RUNS_CLUSTER=local" in text


def _fake_ray(monkeypatch, init):
    ray = types.SimpleNamespace(is_initialized=lambda: False, init=init, cluster_resources=lambda: {"CPU": 2},
                                remote=lambda f: f, shutdown=lambda: None)
    monkeypatch.setitem(sys.modules, "ray", ray)
    monkeypatch.setattr(run_cluster, "check_address", lambda address: None)  # the TCP probe passed (a proxy)
    return ray


def test_ray_that_does_not_answer_is_reported_within_the_bound(monkeypatch):
    _fake_ray(monkeypatch, lambda **options: time.sleep(60))
    started = time.monotonic()
    with pytest.raises(RunStoreError, match=r"no Ray cluster answered at RUNS_CLUSTER=ray://10.0.0.9:10001 within 1 s"):
        run_cluster.RayCluster("ray://10.0.0.9:10001", init_timeout=1.0)
    assert time.monotonic() - started < 5


def test_rays_connection_error_is_the_projects_message(monkeypatch):
    def refuse(**options):
        raise ConnectionError("Could not find any running Ray instance. " * 50)

    _fake_ray(monkeypatch, refuse)
    with pytest.raises(RunStoreError) as caught:
        run_cluster.RayCluster("auto", init_timeout=5.0)
    text = str(caught.value)
    assert text.startswith("cannot connect to the Ray cluster at RUNS_CLUSTER=auto (ConnectionError: Could not find")
    assert len(text) < 1000 and "ray start --head" in text


def test_the_command_prints_the_message_and_exits_1(capsys):
    assert run_cluster.main(["record", "--address", "ray://127.0.0.1:1"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("run_cluster: cannot reach the Ray cluster at RUNS_CLUSTER=ray://127.0.0.1:1")
    assert "Traceback" not in err


def test_record_on_cluster_connects_before_the_planning_pass(monkeypatch):
    from chunklab_core.reports import run_recording

    planned = []
    monkeypatch.setattr(run_recording, "record", lambda *a, **k: planned.append(1) or 0)
    with pytest.raises(RunStoreError, match="Connection refused"):
        run_cluster.record_on_cluster(["02_retrievers"], "ray://127.0.0.1:1")
    assert planned == [], "no post was executed before the address was checked"
