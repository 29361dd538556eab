"""The OpenAI-compatible backend's contract against scripted HTTP answers (``httpx.MockTransport``):
request body, identity from ``/v1/models``, constraint forms and their fallback, counted
retries with exponential backoff, the API key sent but never recorded, clear errors.
The same backend against a real server (llama-cpp-python's) is tests/test_llm_server.py."""

from __future__ import annotations

import json

import httpx
import pytest

from chunklab_core.llm.base import LLM, BackendUnavailable, IdentityUnavailable
from chunklab_core.llm.judges import THREE_WAY_SCHEMA, judge_three_way
from chunklab_core.llm.openai_backend import OpenAIBackend, public_url, resolve_base_url
from chunklab_core.llm.records import CallStore, RecordedLLM
from chunklab_core.llm.wiring import make_backend

MSGS = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Say hi"}]
MODELS = {"object": "list", "data": [{"id": "qwen", "object": "model", "owned_by": "vllm",
                                      "root": "/models/qwen-0.5b", "created": 1}]}


def reply(text: str, model: str = "qwen", fingerprint: str | None = "fp_1") -> dict:
    return {"id": "c1", "object": "chat.completion", "model": model, "system_fingerprint": fingerprint,
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": 11, "completion_tokens": 3, "total_tokens": 14}}


class Server:
    """Scripted answers: ``chat`` is a list of (status, payload) or exceptions, served in turn."""

    def __init__(self, chat, models=MODELS):
        self.chat = list(chat)
        self.models = models
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        if request.url.path.endswith("/models"):
            return httpx.Response(200, json=self.models)
        step = self.chat.pop(0)
        if isinstance(step, Exception):
            raise step
        status, payload = step
        return httpx.Response(status, json=payload)

    def bodies(self) -> list[dict]:
        return [json.loads(r.content) for r in self.requests if r.url.path.endswith("/chat/completions")]


def backend(server: Server, **kwargs) -> OpenAIBackend:
    kwargs = {"base_url": "http://gpu-host:8000/v1", "backoff_s": 0.001, **kwargs}
    return OpenAIBackend("qwen", transport=httpx.MockTransport(server), **kwargs)


def test_contract_body_identity_and_served_facts(tmp_path):
    server = Server([(200, reply("hello"))])
    llm = backend(server, digest="sha256:abc")
    assert isinstance(llm, LLM) and server.requests == []  # construction contacts nothing
    assert llm.normalize_options({"max_tokens": 5}) == {"temperature": 0.0, "seed": 0, "max_tokens": 5}
    with pytest.raises(ValueError, match="unknown option"):
        llm.normalize_options({"num_ctx": 4096})
    store = CallStore(tmp_path / "s.jsonl")
    result = RecordedLLM(llm, store).call(MSGS, max_tokens=5, top_k=3, repeat_penalty=1.1)
    assert result.text == "hello" and (result.prompt_tokens, result.completion_tokens) == (11, 3)
    (body,) = server.bodies()
    assert body == {"model": "qwen", "messages": MSGS, "stream": False, "temperature": 0.0,
                    "seed": 0, "max_tokens": 5, "top_k": 3, "repeat_penalty": 1.1,
                    "repetition_penalty": 1.1}
    (record,) = store.records()
    assert record["identity"] == {"backend": "openai", "model": "qwen", "digest": "sha256:abc",
                                  "served": {"id": "qwen", "owned_by": "vllm",
                                             "root": "/models/qwen-0.5b"}}
    assert record["served"] == {"model": "qwen", "system_fingerprint": "fp_1", "finish_reason": "stop",
                                "constraint": None, "rejected_constraints": [], "retries": []}
    assert record["runtime"]["base_url"] == "http://gpu-host:8000/v1"


def test_json_schema_constraint_is_sent_the_openai_way():
    server = Server([(200, reply('{"verdict": "partial"}'))])
    verdict = judge_three_way(backend(server), "q", "ref", "ans")
    assert verdict.label == "partial" and verdict.attempts == 1
    assert server.bodies()[0]["response_format"] == {
        "type": "json_schema", "json_schema": {"name": "reply", "schema": THREE_WAY_SCHEMA, "strict": True}}


def test_auto_falls_back_to_json_object_then_keeps_it(tmp_path):
    """llama-cpp-python's server rejects the json_schema form (422) but takes json_object."""
    server = Server([(500, {"error": {"message": "1 validation error: ('body', 'response_format', "
                                                "'type') Input should be 'text' or 'json_object'"}}),
                     (200, reply('{"verdict": "wrong"}')), (200, reply('{"verdict": "correct"}'))])
    store = CallStore(tmp_path / "s.jsonl")
    llm = RecordedLLM(backend(server), store)
    assert judge_three_way(llm, "q", "ref", "first").label == "wrong"
    assert judge_three_way(llm, "q", "ref", "second").label == "correct"
    forms = [b["response_format"]["type"] for b in server.bodies()]
    assert forms == ["json_schema", "json_object", "json_object"]
    assert server.bodies()[1]["response_format"]["schema"] == THREE_WAY_SCHEMA
    first, second = store.records()
    assert first["served"]["constraint"] == second["served"]["constraint"] == "json_object"
    assert [r["mode"] for r in first["served"]["rejected_constraints"]] == ["json_schema"]
    assert second["served"]["rejected_constraints"] == []  # counted once, where it happened


def test_without_constraint_an_unreadable_verdict_is_retried_then_unparsed():
    server = Server([(200, reply("I think it is fine")), (200, reply("still prose"))])
    verdict = judge_three_way(backend(server, schema_mode="none"), "q", "ref", "ans")
    assert verdict.label == "unparsed" and verdict.attempts == 2
    assert all("response_format" not in b for b in server.bodies())


def test_retries_back_off_exponentially_and_are_recorded(tmp_path, monkeypatch):
    waits = []
    monkeypatch.setattr("chunklab_core.llm.openai_backend.time.sleep", waits.append)
    server = Server([httpx.ReadTimeout("slow"), (503, {"error": "loading"}),
                     httpx.ConnectError("refused"), (200, reply("ok"))])
    store = CallStore(tmp_path / "s.jsonl")
    RecordedLLM(backend(server, backoff_s=0.5, max_retries=3), store).call(MSGS)
    assert waits == [0.5, 1.0, 2.0]
    (record,) = store.records()
    reasons = [r["reason"] for r in record["served"]["retries"]]
    assert reasons[0].startswith("timeout") and reasons[1] == "http 503"
    assert reasons[2].startswith("connection") and [r["wait_s"] for r in record["served"]["retries"]] == waits


def test_exhausted_retries_raise_and_record_nothing(tmp_path, monkeypatch):
    monkeypatch.setattr("chunklab_core.llm.openai_backend.time.sleep", lambda s: None)
    server = Server([(503, {})] * 3)
    store = CallStore(tmp_path / "s.jsonl")
    with pytest.raises(BackendUnavailable, match=r"failed 3 time\(s\); last: http 503"):
        RecordedLLM(backend(server, max_retries=2), store).call(MSGS)
    assert len(store) == 0 and not (tmp_path / "s.jsonl").exists()


def test_client_error_is_raised_with_the_servers_message():
    server = Server([(400, {"error": {"message": "prompt is longer than the context"}})])
    with pytest.raises(RuntimeError, match="400: prompt is longer than the context"):
        backend(server).complete(MSGS)


def test_api_key_is_sent_but_never_recorded(tmp_path, monkeypatch):
    secret = "sk-test-do-not-record-123"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    server = Server([(200, reply("hi")), (200, reply("hi"))])
    store = CallStore(tmp_path / "s.jsonl")
    RecordedLLM(backend(server), store).call(MSGS)
    assert {r.headers["authorization"] for r in server.requests} == {f"Bearer {secret}"}
    # credentials in the URL (httpx sends them as basic auth) are not recorded either
    RecordedLLM(backend(server, base_url="http://user:pw@gpu-host:8000/v1"), store).call(MSGS, seed=1)
    text = (tmp_path / "s.jsonl").read_text()
    assert text.count("\n") == 2
    assert secret not in text and "pw@" not in text
    assert "pw" not in repr(backend(server, base_url="http://user:pw@h:1/v1"))
    monkeypatch.delenv("OPENAI_API_KEY")
    server.chat.append((200, reply("hi")))
    backend(server).complete(MSGS)
    assert "authorization" not in server.requests[-1].headers


def test_identity_errors_and_settings_from_environment(monkeypatch):
    with pytest.raises(BackendUnavailable, match=r"serves \['qwen'\], not 'llama'"):
        OpenAIBackend("llama", base_url="http://h/v1", transport=httpx.MockTransport(Server([]))).identity()

    def refuse(request):
        raise httpx.ConnectError("refused")

    down = OpenAIBackend("qwen", base_url="http://127.0.0.1:9/v1", max_retries=0,
                         transport=httpx.MockTransport(refuse))
    with pytest.raises(IdentityUnavailable, match="127.0.0.1:9"):
        down.identity()
    monkeypatch.setenv("OPENAI_BASE_URL", "http://env-host:8000/v1/")
    monkeypatch.setenv("OPENAI_MODEL", "env-model")
    from_env = make_backend("openai", None)
    assert (from_env.model, from_env.base_url) == ("env-model", "http://env-host:8000/v1")
    monkeypatch.delenv("OPENAI_MODEL")
    with pytest.raises(ValueError, match="OPENAI_MODEL"):
        OpenAIBackend()
    monkeypatch.delenv("OPENAI_BASE_URL")
    assert resolve_base_url() == "http://127.0.0.1:8000/v1"
    assert public_url("https://u:p@host:9/v1") == "https://host:9/v1"
    with pytest.raises(ValueError, match="schema_mode"):
        OpenAIBackend("m", schema_mode="grammar")


def test_replay_needs_no_server(tmp_path):
    server = Server([(200, reply("recorded"))])
    store = CallStore(tmp_path / "s.jsonl")
    RecordedLLM(backend(server), store).call(MSGS)

    def refuse(request):
        raise httpx.ConnectError("refused")

    offline = OpenAIBackend("qwen", base_url="http://gpu-host:8000/v1", max_retries=0,
                            transport=httpx.MockTransport(refuse))
    again = RecordedLLM(offline, CallStore(tmp_path / "s.jsonl"), mode="replay").call(MSGS)
    assert again.text == "recorded" and again.replayed


def test_make_models_takes_one_server_per_model(tmp_path):
    from chunklab_core.llm.wiring import make_models

    models = make_models(root=tmp_path, backend="openai", answerer=("big", "qwen-1.5b"),
                         judges={"big": "qwen-1.5b", "small": "qwen-0.5b"},
                         base_url={"qwen-1.5b": "http://gpu:8000/v1", "qwen-0.5b": "http://gpu:8001/v1"})
    urls = {name: m.recorded.backend.base_url for name, m in models.items()}
    assert urls == {"answerer": "http://gpu:8000/v1", "big": "http://gpu:8000/v1",
                    "small": "http://gpu:8001/v1"}
    assert models["answerer"].recorded.backend is models["big"].recorded.backend  # one per model
    with pytest.raises(ValueError, match="openai"):
        make_models(root=tmp_path, backend="vllm")
