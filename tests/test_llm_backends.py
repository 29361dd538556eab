"""The backend contract: both backends behind one interface, the Ollama backend through the
real ``ollama`` client against a local fake server, the unreachable-host error, laziness of
the embedded backend, and backend selection."""

from __future__ import annotations

import socket
import sys

import pytest

from fake_ollama_server import FakeOllamaServer
from chunklab_core.llm import llamacpp_backend, wiring
from chunklab_core.llm.base import LLM, BackendUnavailable, validate_messages
from chunklab_core.llm.wiring import default_backend
from chunklab_core.llm.judges import THREE_WAY_SCHEMA, judge_three_way
from chunklab_core.llm.llamacpp_backend import LlamaCppBackend
from chunklab_core.llm.models import MODELS
from chunklab_core.llm.ollama_backend import OllamaBackend, server_answers
from chunklab_core.llm.records import CallStore, RecordedLLM
from chunklab_core.llm.testing import ScriptedLLM

MSGS = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Say hi"}]
DIGEST = "sha256:" + "ab" * 32


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.parametrize("messages, match", [
    ([], "non-empty"),
    ("hello", "non-empty"),
    ([{"role": "robot", "content": "x"}], "role"),
    ([{"role": "user", "content": 3}], "string"),
    ([{"role": "user", "content": "x", "name": "n"}], "only 'role' and 'content'"),
])
def test_messages_are_validated(messages, match):
    with pytest.raises(ValueError, match=match):
        validate_messages(messages)


@pytest.mark.parametrize("backend", [
    ScriptedLLM("hi"),
    OllamaBackend("qwen2.5-coder:0.5b", host="http://127.0.0.1:9"),
    LlamaCppBackend("qwen-0.5b"),
], ids=["scripted", "ollama", "llamacpp"])
def test_contract_shared_options_and_laziness(backend):
    """Every backend is an LLM, fills the same defaults and rejects unknown options,
    all without loading a model or contacting a server."""
    assert isinstance(backend, LLM)
    effective = backend.normalize_options({"max_tokens": 5})
    assert {k: effective[k] for k in ("temperature", "seed", "max_tokens")} == \
        {"temperature": 0.0, "seed": 0, "max_tokens": 5}
    with pytest.raises(ValueError, match="unknown option"):
        backend.normalize_options({"temprature": 0.1})
    with pytest.raises(ValueError, match="schema"):
        backend.call(MSGS, schema="json")


def test_embedded_identity_is_pinned_sha_and_llama_cpp_is_lazy():
    backend = LlamaCppBackend("qwen-0.5b", n_threads=1)
    assert backend.identity() == {"backend": "llamacpp", "model": "qwen2.5-coder-0.5b-instruct",
                                  "sha256": MODELS["qwen-0.5b"].sha256}
    assert backend._llama is None and backend.n_threads == 1
    assert LlamaCppBackend("qwen-1.5b").n_threads == llamacpp_backend.available_cores()
    with pytest.raises(ValueError, match="4096"):
        LlamaCppBackend("qwen-0.5b", n_ctx=2048)
    with pytest.raises(ValueError, match="registered model"):
        LlamaCppBackend("qwen-7b")
    with pytest.raises(ValueError, match="n_ctx"):
        backend.normalize_options({"num_ctx": 4096})


def test_embedded_missing_llama_cpp_says_how_to_install(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # makes `import llama_cpp` fail
    backend = LlamaCppBackend(tmp_path / "m.gguf")
    with pytest.raises(BackendUnavailable, match=r"pip install -e '\.\[llm\]'.*make llm-models"):
        backend.complete(MSGS)


def test_embedded_missing_file_says_make_models(tmp_path):
    pytest.importorskip("llama_cpp")
    with pytest.raises(BackendUnavailable, match="make llm-models"):
        LlamaCppBackend(tmp_path / "absent.gguf").complete(MSGS)
    with pytest.raises(BackendUnavailable, match="make llm-models"):
        LlamaCppBackend(tmp_path / "absent.gguf").identity()


def test_embedded_identity_of_a_path_is_its_sha256(tmp_path):
    model = tmp_path / "tiny.gguf"
    model.write_bytes(b"GGUF" + bytes(range(256)))
    import hashlib

    expected = hashlib.sha256(model.read_bytes()).hexdigest()
    assert LlamaCppBackend(model).identity()["sha256"] == expected
    assert (tmp_path / "tiny.gguf.sha256.json").exists()  # cached for the next process


def test_ollama_through_real_client_against_fake_server():
    with FakeOllamaServer(models={"qwen2.5-coder:0.5b": DIGEST}) as server:
        backend = OllamaBackend("qwen2.5-coder:0.5b", host=server.host)
        assert backend.identity() == {"backend": "ollama", "model": "qwen2.5-coder:0.5b",
                                      "digest": DIGEST}
        reply = backend.call(MSGS, max_tokens=7, top_k=5)
        assert reply.text.startswith("canned:") and reply.prompt_tokens == 4
        chat_body = [body for path, body in server.requests if path == "/api/chat"][-1]
        assert chat_body["model"] == "qwen2.5-coder:0.5b" and chat_body["stream"] is False
        assert chat_body["messages"] == MSGS
        assert chat_body["options"] == {"temperature": 0.0, "seed": 0, "num_predict": 7,
                                        "top_k": 5, "num_ctx": 8192}
        assert "format" not in chat_body

        verdict = judge_three_way(backend, "q", "ref", "ans")
        assert verdict.label == "correct" and verdict.attempts == 1
        chat_body = [body for path, body in server.requests if path == "/api/chat"][-1]
        assert chat_body["format"] == THREE_WAY_SCHEMA
        assert chat_body["options"]["num_predict"] == 24


def test_ollama_records_digest_and_num_predict_alias(tmp_path):
    with FakeOllamaServer(models={"m:latest": DIGEST}) as server:
        backend = OllamaBackend("m", host=server.host)  # "m" means "m:latest"
        store = CallStore(tmp_path / "o.jsonl")
        reply = RecordedLLM(backend, store).call(MSGS, num_predict=3)
        record = store.get(reply.key)
        assert record["identity"]["digest"] == DIGEST and record["options"]["max_tokens"] == 3
        assert record["runtime"]["host"] == server.host


def test_ollama_missing_model_says_pull():
    with FakeOllamaServer(models={"other:1b": DIGEST}) as server:
        backend = OllamaBackend("qwen2.5-coder:0.5b", host=server.host)
        with pytest.raises(BackendUnavailable, match="ollama pull qwen2.5-coder:0.5b"):
            backend.identity()
        with pytest.raises(BackendUnavailable, match="ollama pull"):
            backend.complete(MSGS)


def test_unreachable_host_names_host_and_embedded_alternative():
    host = f"http://127.0.0.1:{closed_port()}"
    backend = OllamaBackend("qwen2.5-coder:0.5b", host=host)
    with pytest.raises(BackendUnavailable) as err:
        backend.complete(MSGS)
    assert host in str(err.value) and "LlamaCppBackend" in str(err.value)
    assert "ollama serve" in str(err.value)
    with pytest.raises(BackendUnavailable, match=host):
        backend.identity()
    assert not server_answers(host, timeout_s=1.0)


def test_host_from_environment(monkeypatch):
    monkeypatch.setenv("OLLAMA_HOST", "http://127.0.0.1:1234")
    assert OllamaBackend("m").host == "http://127.0.0.1:1234"
    monkeypatch.delenv("OLLAMA_HOST")
    assert OllamaBackend("m").host == "http://127.0.0.1:11434"


def test_default_backend_prefers_a_live_server(monkeypatch):
    with FakeOllamaServer() as server:
        monkeypatch.setenv("OLLAMA_HOST", server.host)
        chosen = default_backend(ollama_model="qwen2.5-coder:0.5b")
        assert isinstance(chosen, OllamaBackend) and chosen.host == server.host
    monkeypatch.setenv("OLLAMA_HOST", f"http://127.0.0.1:{closed_port()}")
    chosen = default_backend(gguf="qwen-0.5b", probe_timeout_s=1.0)
    assert isinstance(chosen, LlamaCppBackend) and chosen.model == "qwen2.5-coder-0.5b-instruct"
    assert wiring.default_backend is default_backend
