"""LLM judges: grade an answer against the reference answer with a constrained verdict.

Handles: two judges, each a prompt template (module constants below) plus a JSON schema that
constrains the reply to the allowed labels (Ollama ``format=`` / llama.cpp grammar):
three-way ``correct`` / ``partial`` / ``wrong``, and binary ``YES`` / ``NO`` ("is the answer
correct?"). The reply is parsed leniently but never guessed: surrounding whitespace, a
Markdown code fence, a bare JSON string or a bare label, and letter case are tolerated; a
reply that does not name exactly one allowed label is unparseable. An unparseable reply is
retried once as a distinct recorded call (``attempt=2`` in the options, and the bad reply is
shown back to the model with the allowed labels); if that fails too the verdict is
``unparsed``: counted, never dropped.

Not handled: aggregating verdicts, agreement with the audit's grades (see the grading modules).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from collections import Counter
from typing import Any, Iterable

from chunklab_core.llm.base import ChatModel

UNPARSED = "unparsed"
THREE_WAY_LABELS = ("correct", "partial", "wrong")
YES_NO_LABELS = ("YES", "NO")
JUDGE_MAX_TOKENS = 24


def verdict_schema(labels: tuple[str, ...]) -> dict:
    """JSON schema of ``{"verdict": <one of labels>}``."""
    return {"type": "object",
            "properties": {"verdict": {"type": "string", "enum": list(labels)}},
            "required": ["verdict"]}


THREE_WAY_SCHEMA = verdict_schema(THREE_WAY_LABELS)
YES_NO_SCHEMA = verdict_schema(YES_NO_LABELS)

THREE_WAY_SYSTEM = """\
You grade answers to questions. Compare the answer with the reference answer and choose one verdict:
- "correct": the answer gives the information in the reference answer (paraphrases, synonyms and harmless extra detail are fine).
- "partial": the answer gives part of the reference information but misses or gets wrong another part.
- "wrong": the answer contradicts the reference, gives different information, or gives no answer (for example "not in the context").
Reply with JSON only: {"verdict": "correct"}, {"verdict": "partial"} or {"verdict": "wrong"}."""

YES_NO_SYSTEM = """\
You grade answers to questions. Decide whether the answer is correct given the reference answer: YES if it gives the information in the reference answer (paraphrases and harmless extra detail are fine), NO if it is wrong, incomplete in an essential part, or gives no answer.
Reply with JSON only: {"verdict": "YES"} or {"verdict": "NO"}."""

JUDGE_USER = """\
Question: {question}
Reference answer: {reference}
Answer to grade: {answer}"""

RETRY_USER = """\
That reply could not be read. Reply with JSON only, exactly one of: {choices}."""


@dataclass(frozen=True)
class JudgeResult:
    """A verdict: ``label`` is an allowed label or ``"unparsed"``; ``raw`` the last reply."""

    label: str
    raw: str
    attempts: int


_FENCE = re.compile(r"^```[a-zA-Z]*\s*(.*?)\s*```$", re.DOTALL)


def strip_fence(raw: str | None) -> str:
    """``raw`` stripped of surrounding whitespace and of one Markdown code fence around it."""
    text = (raw or "").strip()
    fenced = _FENCE.match(text)
    return fenced.group(1).strip() if fenced else text


def parse_verdict(raw: str, labels: tuple[str, ...]) -> str | None:
    """The allowed label named by ``raw`` (canonical spelling), or None when unparseable.

    Accepted: ``{"verdict": "<label>"}`` (key and label in any case), a JSON string
    ``"<label>"``, or the bare label, each optionally inside a code fence and whitespace.
    Free text that merely contains a label ("not correct") is rejected on purpose.
    """
    text = strip_fence(raw)
    try:
        value: Any = json.loads(text)
    except ValueError:
        value = text.strip(" .\"'")
    if isinstance(value, dict):
        verdicts = [v for k, v in value.items() if str(k).lower() == "verdict"]
        value = verdicts[0] if len(verdicts) == 1 else None
    if not isinstance(value, str):
        return None
    by_lower = {label.lower(): label for label in labels}
    return by_lower.get(value.strip().lower())


def judge_messages(system: str, question: str, reference: str, answer: str) -> list[dict]:
    """The chat messages of one grading request."""
    for name, value in (("question", question), ("reference", reference), ("answer", answer)):
        if not isinstance(value, str):
            raise ValueError(f"{name} must be a string, got {type(value).__name__}")
    user = JUDGE_USER.format(question=question.strip(), reference=reference.strip(),
                             answer=answer.strip() or "(empty answer)")
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def run_judge(llm: ChatModel, messages: list[dict], labels: tuple[str, ...], schema: dict,
              **options) -> JudgeResult:
    """Ask for a verdict, retry an unparseable reply once, else return ``unparsed``."""
    options = {"max_tokens": JUDGE_MAX_TOKENS, **options}
    raw = llm.complete(messages, schema, **options)
    label = parse_verdict(raw, labels)
    if label is not None:
        return JudgeResult(label, raw, 1)
    choices = ", ".join(json.dumps({"verdict": lab}) for lab in labels)
    retry = [*messages, {"role": "assistant", "content": raw},
             {"role": "user", "content": RETRY_USER.format(choices=choices)}]
    raw = llm.complete(retry, schema, **options, attempt=2)
    label = parse_verdict(raw, labels)
    return JudgeResult(label if label is not None else UNPARSED, raw, 2)


def judge_three_way(llm: ChatModel, question: str, reference: str, answer: str,
                    **options) -> JudgeResult:
    """Three-way verdict ``correct`` / ``partial`` / ``wrong`` (or ``unparsed``)."""
    messages = judge_messages(THREE_WAY_SYSTEM, question, reference, answer)
    return run_judge(llm, messages, THREE_WAY_LABELS, THREE_WAY_SCHEMA, **options)


def judge_yes_no(llm: ChatModel, question: str, reference: str, answer: str,
                 **options) -> JudgeResult:
    """Binary verdict ``YES`` (the answer is correct) / ``NO`` (or ``unparsed``)."""
    messages = judge_messages(YES_NO_SYSTEM, question, reference, answer)
    return run_judge(llm, messages, YES_NO_LABELS, YES_NO_SCHEMA, **options)


def verdict_counts(results: Iterable[JudgeResult], labels: tuple[str, ...]) -> dict[str, int]:
    """How many verdicts carry each label, ``unparsed`` included (zeros kept, nothing dropped).

    Raises ``ValueError`` for a label outside ``labels`` + ``unparsed`` (a mixed-up judge).
    """
    counts = Counter(r.label for r in results)
    stray = set(counts) - set(labels) - {UNPARSED}
    if stray:
        raise ValueError(f"labels {sorted(stray)} are not among {labels} or {UNPARSED!r}")
    return {label: counts.get(label, 0) for label in (*labels, UNPARSED)}
