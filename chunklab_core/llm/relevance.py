"""A local LLM as a pointwise relevance judge: "does this passage answer the question?" YES/NO.

Handles: the prompt (:data:`RELEVANCE_SYSTEM`, :func:`relevance_messages`; the question comes
before the passage so that llama.cpp reuses the cached prompt prefix across the candidates of
one question), the constraint (:data:`RELEVANCE_SCHEMA`: the reply is exactly one of
``YES``/``NO``), parsing a reply into ``(label, p_yes)`` (:func:`parse_relevance`), and
:class:`LlamaCppYesNoBackend`, an embedded backend that answers a YES/NO schema with *one*
forward pass and no sampling:

    p(YES) = exp(l_YES) / (exp(l_YES) + exp(l_NO))

where ``l_YES``/``l_NO`` are the model's logits, at the first reply position, of the first
token of each label (the softmax restricted to the two allowed labels: the constrained
distribution). The label is the one with the higher logit, i.e. the greedy constrained reply.
The reply text it returns (and that ``llm.records`` stores as the call's output) is the JSON
``{"verdict": ..., "logprob_YES": ..., "logprob_NO": ...}`` (log-probabilities over the whole
vocabulary), so a replayed run recomputes the same score with no model. Written by hand
because llama-cpp-python returns log-probabilities only for a context built with
``logits_all=True``, which keeps (n_ctx x 152k) floats and computes logits at every prompt
position; here only the last position's logits are read (``Llama._ctx.get_logits``; pinned
llama-cpp-python 0.3.x).

Any other backend (Ollama, the scripted test backend) answers the same schema with a label;
its score is then the label itself (YES = 1, NO = 0) and ``score_kind`` says so.

Not handled: listwise or pairwise prompts, labels whose first tokens coincide (rejected).
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from chunklab_core.llm.base import Completion, canonical_json
from chunklab_core.llm.judges import UNPARSED, parse_verdict, strip_fence
from chunklab_core.llm.llamacpp_backend import LlamaCppBackend

LABELS = ("YES", "NO")
RELEVANCE_SCHEMA = {"type": "string", "enum": list(LABELS)}
PASSAGE_CHARS = 2000  # a longer passage is cut (never the case for the 500-1000 character chunks)

RELEVANCE_SYSTEM = """\
You judge search results. Given a question and a passage, reply YES if the passage contains the answer to the question, NO if it does not. Reply with one word: YES or NO."""

RELEVANCE_USER = """\
Question: {question}

Passage: {passage}

Does the passage contain the answer to the question?"""


def relevance_messages(question: str, passage: str) -> list[dict]:
    """The chat messages of one relevance judgement (question first, then the passage)."""
    for name, value in (("question", question), ("passage", passage)):
        if not isinstance(value, str):
            raise ValueError(f"{name} must be a string, got {type(value).__name__}")
    user = RELEVANCE_USER.format(question=question.strip(), passage=passage.strip()[:PASSAGE_CHARS])
    return [{"role": "system", "content": RELEVANCE_SYSTEM}, {"role": "user", "content": user}]


def p_yes_from_logprobs(logprob_yes: float, logprob_no: float) -> float:
    """exp(a) / (exp(a) + exp(b)) = expit(a - b), computed stably: the two-label softmax."""
    from scipy.special import expit

    return float(expit(logprob_yes - logprob_no))


def parse_relevance(raw: str) -> tuple[str, float | None, str]:
    """``(label, score, score_kind)`` from a reply.

    A :class:`LlamaCppYesNoBackend` reply gives ``p(YES)`` (kind ``"p_yes"``); a plain label
    (JSON string, ``{"verdict": ...}`` or bare word) gives 1.0 / 0.0 (kind ``"label"``); a
    reply naming no allowed label gives ``("unparsed", None, "unparsed")``.
    """
    text = strip_fence(raw)
    try:
        value: Any = json.loads(text)
    except ValueError:
        value = None
    if isinstance(value, dict) and "logprob_YES" in value and "logprob_NO" in value:
        label = parse_verdict(json.dumps({"verdict": value.get("verdict")}), LABELS)
        if label is None:
            return UNPARSED, None, UNPARSED
        return label, p_yes_from_logprobs(float(value["logprob_YES"]), float(value["logprob_NO"])), "p_yes"
    label = parse_verdict(raw, LABELS)
    if label is None:
        return UNPARSED, None, UNPARSED
    return label, 1.0 if label == "YES" else 0.0, "label"


def _schema_labels(schema: dict | None) -> tuple[str, ...]:
    if not isinstance(schema, dict):
        raise ValueError("the YES/NO backend needs a schema naming its labels, got none")
    enum = schema.get("enum") or (schema.get("properties", {}).get("verdict", {}) or {}).get("enum")
    if not enum or len(enum) != 2:
        raise ValueError(f"the YES/NO backend scores exactly two labels; schema gives {enum!r}")
    return tuple(enum)


class LlamaCppYesNoBackend(LlamaCppBackend):
    """An embedded GGUF model that answers a two-label schema by one forward pass (see module doc).

    Its identity says ``backend: llamacpp-yesno``, so its records never mix with generated replies.
    """

    backend_name = "llamacpp-yesno"

    def _label_tokens(self, labels: tuple[str, ...]) -> list[int]:
        llama = self.llama()
        first = [llama.tokenize(label.encode("utf-8"), add_bos=False, special=False)[0] for label in labels]
        if len(set(first)) != len(first):
            raise ValueError(f"labels {labels} start with the same token; their probabilities cannot be told apart")
        return first

    def prompt_tokens(self, messages: list[dict]) -> list[int]:
        """The chat-template prompt (with the assistant turn opened) as token ids."""
        from llama_cpp import llama_chat_format

        llama = self.llama()
        template = llama.metadata["tokenizer.chat_template"]
        eos = llama.detokenize([llama.token_eos()]).decode("utf-8", errors="ignore")
        bos = llama.detokenize([llama.token_bos()]).decode("utf-8", errors="ignore") if llama.token_bos() >= 0 else ""
        formatter = llama_chat_format.Jinja2ChatFormatter(template=template, eos_token=eos, bos_token=bos)
        prompt = formatter(messages=messages).prompt
        return llama.tokenize(prompt.encode("utf-8"), add_bos=False, special=True)

    def last_logits(self, tokens: list[int]) -> np.ndarray:
        """Logits after ``tokens``, re-using the cached prefix of the previous call (llama.cpp KV cache)."""
        llama = self.llama()
        cached = llama.input_ids[: llama.n_tokens].tolist()
        keep = min(llama.longest_token_prefix(cached, tokens), len(tokens) - 1)
        llama.n_tokens = keep
        llama.eval(tokens[keep:])
        return np.ctypeslib.as_array(llama._ctx.get_logits(), shape=(llama.n_vocab(),)).astype(np.float64)

    def _generate(self, messages: list[dict], schema: dict | None, options: dict[str, Any]) -> Completion:
        labels = _schema_labels(schema)
        with self._lock:
            label_ids = self._label_tokens(labels)
            tokens = self.prompt_tokens(messages)
            logits = self.last_logits(tokens)
        top = logits.max()
        log_norm = top + np.log(np.exp(logits - top).sum())
        logprobs = {label: float(logits[i] - log_norm) for label, i in zip(labels, label_ids)}
        verdict = max(labels, key=lambda label: logprobs[label])
        text = canonical_json({"verdict": verdict, **{f"logprob_{label}": round(lp, 6) for label, lp in logprobs.items()}})
        return Completion(text=text, prompt_tokens=len(tokens), completion_tokens=1)
