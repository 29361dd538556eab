"""Real embedded-model calls with Qwen2.5-Coder-0.5B-Instruct (slow tier).

Run with ``pytest -m slow tests/test_llm_real.py``; CI's "at least one real embedded call"
is ``pytest -m slow tests/test_llm_real.py::test_embedded_05b_constrained_verdict``.
Without llama-cpp-python or the assembled model (``make llm-models``) these tests skip with the
reason; set ``CHUNKLAB_REQUIRE_REAL_MODEL=1`` to make that a failure instead (for CI).
Assertions check the contract (constrained labels, records, replay), not the model's
judgement, except for one question a reader can check at a glance.
"""

from __future__ import annotations

import json
import os

import pytest

from fake_ollama_server import FakeOllamaServer, model_responder
from chunklab_core.llm.answering import answer_question
from chunklab_core.llm.judges import (THREE_WAY_LABELS, YES_NO_LABELS, judge_three_way,
                                      judge_yes_no)
from chunklab_core.llm.llamacpp_backend import LlamaCppBackend
from chunklab_core.llm.models import MODELS, model_path
from chunklab_core.llm.ollama_backend import OllamaBackend
from chunklab_core.llm.records import CallStore, RecordedLLM

pytestmark = pytest.mark.slow

QUESTION = "Which city hosted the 1900 Summer Olympics?"
CONTEXTS = [
    "The 1900 Summer Olympics were held in Paris, France, as part of the World's Fair.",
    "The 1904 Summer Olympics took place in St. Louis, Missouri, in the United States.",
    "Athens hosted the first modern Olympic Games in 1896.",
    "The Eiffel Tower was completed in 1889 for the Exposition Universelle in Paris.",
    "London hosted the Summer Olympics in 1908, 1948 and 2012.",
]


def unavailable(reason: str):
    if os.environ.get("CHUNKLAB_REQUIRE_REAL_MODEL") == "1":
        pytest.fail(reason)
    pytest.skip(reason)


@pytest.fixture(scope="module")
def qwen05():
    try:
        import llama_cpp  # noqa: F401
    except ImportError:
        unavailable("llama-cpp-python is not installed (pip install -e '.[llm]')")
    path = model_path("qwen-0.5b")
    if not path.exists() or path.stat().st_size != MODELS["qwen-0.5b"].size_bytes:
        unavailable(f"{path} is not assembled (make llm-models)")
    return LlamaCppBackend("qwen-0.5b", n_ctx=4096)


def test_embedded_05b_constrained_verdict(qwen05, tmp_path):
    """One real embedded call: the grammar forces a parseable verdict, the call is recorded
    with token counts, and replay returns it without the model."""
    store = CallStore(tmp_path / "judge.jsonl")
    result = judge_yes_no(RecordedLLM(qwen05, store, mode="record"),
                          QUESTION, "Paris", "It was held in Paris.")
    assert result.attempts == 1 and result.label in YES_NO_LABELS
    assert json.loads(result.raw)["verdict"] in YES_NO_LABELS  # valid JSON, not just parseable
    (record,) = store.records()
    assert record["identity"]["sha256"] == MODELS["qwen-0.5b"].sha256
    assert record["prompt_tokens"] > 50 and 1 <= record["completion_tokens"] <= 24
    fresh = LlamaCppBackend("qwen-0.5b", n_ctx=4096)
    replay = RecordedLLM(fresh, CallStore(tmp_path / "judge.jsonl"), mode="replay")
    assert judge_yes_no(replay, QUESTION, "Paris", "It was held in Paris.") == result
    assert fresh._llama is None  # replay never loaded the model


def test_embedded_05b_three_way_is_deterministic(qwen05):
    first = judge_three_way(qwen05, QUESTION, "Paris", "St. Louis")
    again = judge_three_way(qwen05, QUESTION, "Paris", "St. Louis")
    assert first.label in THREE_WAY_LABELS and first == again


def test_embedded_05b_answers_from_five_contexts(qwen05):
    result = answer_question(qwen05, QUESTION, CONTEXTS)
    assert "paris" in result.text.lower() and not result.not_in_context
    assert result.prompt_tokens > 100 and result.completion_tokens <= 64
    missing = answer_question(qwen05, "Who designed the Sydney Opera House?", CONTEXTS[2:3])
    assert missing.completion_tokens <= 64  # what the weak 0.5B says here is not asserted


def test_fake_ollama_server_backed_by_05b(qwen05):
    """The Ollama backend through the real client, answered by the real embedded model."""
    with FakeOllamaServer(models={"qwen2.5-coder:0.5b": "sha256:" + "cd" * 32},
                          responder=model_responder(qwen05)) as server:
        backend = OllamaBackend("qwen2.5-coder:0.5b", host=server.host)
        verdict = judge_yes_no(backend, QUESTION, "Paris", "Paris")
        direct = judge_yes_no(qwen05, QUESTION, "Paris", "Paris")
        assert verdict == direct and verdict.label in YES_NO_LABELS
