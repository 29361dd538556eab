"""A real OpenAI-compatible server in the loop (slow tier): llama-cpp-python's server with
Qwen2.5-Coder-0.5B on 127.0.0.1, started and stopped by the fixtures here.

* a record-then-replay round trip of a few post-05 items (SQuAD, post 05's seed) recorded at
  concurrency 2: the tables replayed with no server equal the ones the recording run built;
* a server killed (SIGKILL) mid-run: the run stops with ``BackendUnavailable``, and the records
  hold exactly the calls that finished, each one whole line with the server's facts; a new
  server then completes the run without repeating a recorded call.

Run: ``pytest -m slow tests/test_llm_server.py`` (``.ci/run`` does, with
``CHUNKLAB_REQUIRE_REAL_MODEL=1`` so a missing server extra or model fails instead of skipping).
On 2 shared cores the module takes a few minutes; contexts are cut to the top 2 chunks to keep
the prompts short.
"""

from __future__ import annotations

import json
import os
import threading
import time

import pandas as pd
import pytest

from chunklab_core.reports.post05 import tables as post05
from chunklab_core.answers.study import load_study
from chunklab_core.data.corpora import load_corpus
from chunklab_core.llm.base import BackendUnavailable
from chunklab_core.llm.models import MODELS, model_path
from chunklab_core.llm.openai_backend import OpenAIBackend
from chunklab_core.llm.records import CallStore, RecordedLLM
from chunklab_core.llm.wiring import MeteredLLM
from chunklab_core.llm.local_server import LlamaServer, free_port

pytestmark = [pytest.mark.slow,  # two questions make only two clusters: the interval warns, rightly
              pytest.mark.filterwarnings("ignore:only 2 documents:UserWarning")]

SEED = 20260729  # post 05's
STRATEGIES = ["fixed_500", "fixed_1000"]
ALIAS = "qwen-0.5b"


def unavailable(reason: str):
    if os.environ.get("CHUNKLAB_REQUIRE_REAL_MODEL") == "1":
        pytest.fail(reason)
    pytest.skip(reason)


@pytest.fixture(scope="module")
def gguf():
    try:
        import llama_cpp.server.app  # noqa: F401  (the `server` extra: fastapi, uvicorn, ...)
    except ImportError as err:
        unavailable(f"llama-cpp-python's server extra is not installed ({err}); "
                    "pip install 'llama-cpp-python[server]==0.3.36'")
    path = model_path(ALIAS)
    if not path.exists() or path.stat().st_size != MODELS[ALIAS].size_bytes:
        unavailable(f"{path} is not assembled (python -m chunklab_core.llm.models {ALIAS})")
    return path


@pytest.fixture(scope="module")
def squad(mirror):
    os.environ.setdefault("CHUNKLAB_DATA_MIRROR", str(mirror))
    return load_corpus("squad", squad_articles=40, seed=SEED)


def models(root, base_url, mode="replay_or_record", max_retries=2):
    """Post 05's roles with the 0.5B model answering and judging, identity pinned by its sha256."""
    backend = OpenAIBackend(ALIAS, base_url=base_url, digest=MODELS[ALIAS].sha256,
                            timeout_s=300, max_retries=max_retries, backoff_s=0.5)
    os.makedirs(root, exist_ok=True)  # a records folder must exist

    def role(stage):
        return MeteredLLM(RecordedLLM(backend, CallStore.for_stage(stage, root), mode))
    return {"answerer": role("answers_qwen05"), "qwen05": role("judges_qwen05")}


def lines(root) -> list[dict]:
    out = []
    for path in sorted(root.glob("*.jsonl")):
        out += [json.loads(line) for line in path.read_text().splitlines()]  # raises on a torn line
    return out


def test_round_trip_at_concurrency_two_replays_identical_tables(gguf, squad, tmp_path):
    corpora = {"squad": (squad, 2)}
    with LlamaServer(gguf, ALIAS) as server:
        recorded = load_study(corpora, STRATEGIES, SEED, models(tmp_path, server.base_url),
                              yes_no_judges=("qwen05",), k=2, concurrency=2)
    assert recorded.coverage["questions_recorded"].tolist() == [2] and len(recorded.table) == 4
    records = lines(tmp_path)
    assert {r["identity"]["served"]["id"] for r in records} == {ALIAS}
    assert {r["identity"]["digest"] for r in records} == {MODELS[ALIAS].sha256}
    assert all(r["served"]["model"] == ALIAS for r in records)
    judged = [r for r in records if r["served"]["constraint"] is not None]
    assert judged and {r["served"]["constraint"] for r in judged} == {"json_object"}  # auto fallback
    assert sum(len(r["served"]["rejected_constraints"]) for r in records) == 1  # met once, counted once
    verdicts = recorded.table["judge_qwen05_3way"].tolist() + recorded.table["judge_qwen05_yesno"].tolist()
    assert set(verdicts) <= {"correct", "partial", "wrong", "YES", "NO"}  # constrained: never unparsed

    offline = f"http://127.0.0.1:{free_port()}/v1"  # nothing listens there: replay needs no server
    for concurrency in (1, 2):
        replayed = load_study(corpora, STRATEGIES, SEED, models(tmp_path, offline, "replay"),
                              yes_no_judges=("qwen05",), k=2, concurrency=concurrency)
        pd.testing.assert_frame_equal(replayed.table, recorded.table)
        pd.testing.assert_frame_equal(replayed.coverage, recorded.coverage)
        pd.testing.assert_frame_equal(replayed.calls, recorded.calls)
        pd.testing.assert_frame_equal(post05.answer_table(replayed, 200, SEED),
                                      post05.answer_table(recorded, 200, SEED))
        pd.testing.assert_frame_equal(post05.cost_per_stage(replayed), post05.cost_per_stage(recorded))
    assert len(lines(tmp_path)) == len(records)  # replay wrote nothing


def test_server_killed_mid_run_leaves_only_finished_calls(gguf, squad, tmp_path):
    corpora, strategies = {"squad": (squad, 2)}, STRATEGIES[:1]  # 2 items: at most 6 calls
    with LlamaServer(gguf, ALIAS) as server:
        roles = models(tmp_path, server.base_url, max_retries=1)
        failure: list[BaseException] = []

        def run():
            try:
                load_study(corpora, strategies, SEED, roles, yes_no_judges=("qwen05",), k=2,
                           concurrency=2)
            except BaseException as err:  # noqa: BLE001 - handed to the test thread
                failure.append(err)

        worker = threading.Thread(target=run)
        worker.start()
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and len(roles["answerer"].store) < 1:
            time.sleep(0.1)
        server.kill()
        worker.join(timeout=120)
    assert not worker.is_alive()
    assert failure and isinstance(failure[0], BackendUnavailable), failure
    made = sum(role.recorded.new_calls for role in roles.values())
    finished = lines(tmp_path)  # every line parses: no torn or partial record
    assert 1 <= len(finished) == made < 6  # fewer than the 6 calls the full run needs
    assert all(r["output"] is not None and r["served"]["model"] == ALIAS for r in finished)
    assert len({r["key"] for r in finished}) == len(finished)

    with LlamaServer(gguf, ALIAS) as server:  # a new server finishes the run
        resumed_roles = models(tmp_path, server.base_url)
        resumed = load_study(corpora, strategies, SEED, resumed_roles, yes_no_judges=("qwen05",),
                             k=2, concurrency=2)
    assert resumed.coverage["questions_recorded"].tolist() == [2]
    assert sum(r.recorded.hits for r in resumed_roles.values()) >= len(finished)
    after = lines(tmp_path)
    assert len({r["key"] for r in after}) == len(after)  # no recorded call was made again
    assert {r["key"] for r in finished} <= {r["key"] for r in after}
