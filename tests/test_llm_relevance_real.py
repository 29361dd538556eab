"""The one-forward-pass YES/NO backend on the real 0.5B model (slow tier).

Checks the contract against plain llama-cpp-python: its label equals the reply of a
``"YES" | "NO"`` grammar-constrained greedy completion of the same prompt, its two
log-probabilities are real log-probabilities, and the prompt-prefix cache does not change a
score (the same call after a different one gives the same numbers). Skips without the model
unless ``CHUNKLAB_REQUIRE_REAL_MODEL=1``.
"""

from __future__ import annotations

import json
import os

import pytest

from chunklab_core.llm.models import MODELS, model_path
from chunklab_core.llm.relevance import RELEVANCE_SCHEMA, LlamaCppYesNoBackend, relevance_messages

pytestmark = pytest.mark.slow

QUESTION = "Which city hosted the 1900 Summer Olympics?"
PASSAGES = ["The 1900 Summer Olympics were held in Paris, France, as part of the World's Fair.",
            "Athens hosted the first modern Olympic Games in 1896.",
            "The Eiffel Tower was completed in 1889."]


@pytest.fixture(scope="module")
def backend():
    try:
        import llama_cpp  # noqa: F401
    except ImportError as err:
        if os.environ.get("CHUNKLAB_REQUIRE_REAL_MODEL") == "1":
            pytest.fail(str(err))
        pytest.skip("llama-cpp-python is not installed")
    path = model_path("qwen-0.5b")
    if not path.exists() or path.stat().st_size != MODELS["qwen-0.5b"].size_bytes:
        if os.environ.get("CHUNKLAB_REQUIRE_REAL_MODEL") == "1":
            pytest.fail(f"{path} is not assembled")
        pytest.skip(f"{path} is not assembled (make llm-models)")
    return LlamaCppYesNoBackend("qwen-0.5b", n_ctx=4096, n_threads=1)


def test_label_matches_a_grammar_constrained_completion(backend):
    from llama_cpp import LlamaGrammar

    grammar = LlamaGrammar.from_string('root ::= "YES" | "NO"', verbose=False)
    for passage in PASSAGES:
        messages = relevance_messages(QUESTION, passage)
        reply = json.loads(backend.call(messages, RELEVANCE_SCHEMA, max_tokens=1).text)
        plain = backend.llama().create_chat_completion(messages=messages, grammar=grammar, max_tokens=1,
                                                       temperature=0.0, seed=0)
        assert reply["verdict"] == plain["choices"][0]["message"]["content"]
        assert reply["logprob_YES"] < 0 and reply["logprob_NO"] < 0


def test_prefix_cache_does_not_change_a_score(backend):
    first = backend.call(relevance_messages(QUESTION, PASSAGES[0]), RELEVANCE_SCHEMA, max_tokens=1).text
    backend.call(relevance_messages("Who built it?", PASSAGES[2]), RELEVANCE_SCHEMA, max_tokens=1)
    again = backend.call(relevance_messages(QUESTION, PASSAGES[0]), RELEVANCE_SCHEMA, max_tokens=1).text
    a, b = json.loads(first), json.loads(again)
    assert a["verdict"] == b["verdict"]
    assert a["logprob_YES"] == pytest.approx(b["logprob_YES"], abs=1e-3)
