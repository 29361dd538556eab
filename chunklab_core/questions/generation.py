"""Post 04: one generated question per passage, through recorded LLM calls.

Handles: the generation prompt (a plain instruction: "write one question this passage
answers, and its answer, a short phrase copied from the passage"), a
JSON schema constraining the reply to ``{"question": str, "answer": str}`` (Ollama
``format=`` / llama.cpp grammar), lenient parsing (whitespace, a Markdown code fence, key
case), one retry of an unreadable reply as a distinct recorded call (``attempt=2``, the bad
reply shown back), then the status ``unparsed``: counted in every table, never dropped.
Calls go through ``RecordedLLM`` into the stage ``questions_qwen15``
(``data/records/questions_qwen15.jsonl``): ``mode="replay"`` (the notebook's default) never
loads a model and a missing record raises ``ReplayMiss`` naming ``make llm-questions``.

Note: the embedded backend compiles the schema from its canonical, key-sorted JSON, so its
grammar emits ``"answer"`` before ``"question"``: the model picks an answer span first and then
writes a question for it.

CLI (``make llm-questions``): ``chunklab-record-questions [--squad 60] [--nq N]
[--seed S] [--limit N] [--threads T] [--records DIR]`` records every generation with Qwen2.5-Coder-1.5B,
temperature 0, seed 0, resumably (``replay_or_record``: a killed run continues where it stopped).

Not handled: judging whether a generated question is any good (``questions.checks`` flags
what rules can see; the notebook shows a sample to read), other generators.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import pandas as pd

from chunklab_core.core import bounds
from chunklab_core.core.cli_errors import user_errors
from chunklab_core.data.registry import DataError
from chunklab_core.llm.records import user_error_types
from chunklab_core.core.seeds import DEFAULT_SEED
from chunklab_core.llm.base import ChatModel
from chunklab_core.llm.judges import strip_fence
from chunklab_core.questions.passages import Passage, sample_nq_passages, sample_squad_passages

STAGE = "questions_qwen15"
MAKE_TARGET = "llm-questions"
UNPARSED = "unparsed"
GENERATION_MAX_TOKENS = 160
DEFAULT_SQUAD_PASSAGES = 60

QUESTION_SCHEMA = {
    "type": "object",
    "properties": {"question": {"type": "string"}, "answer": {"type": "string"}},
    "required": ["question", "answer"],
}

GENERATION_SYSTEM = """\
You write test questions for a search engine. Read the passage and write one question that the passage answers, and the answer to it.
The answer must be a short phrase copied exactly from the passage: a name, a number, a date or a few words, never a whole sentence.
Reply with JSON only: {"question": "...", "answer": "..."}"""

GENERATION_USER = """\
Passage:
{passage}"""

RETRY_USER = """\
That reply could not be read. Reply with JSON only: one object with a non-empty "question" and a \
non-empty "answer" copied from the passage, like {"question": "...", "answer": "..."}."""


GENERATION_COLUMNS = ("passage_id", "corpus", "doc_id", "human_qid", "human_question", "human_answer",
                      "generated_question", "generated_answer", "status", "attempts", "raw")


@dataclass(frozen=True)
class Generation:
    """A generated question: ``status`` is ``"ok"`` or ``"unparsed"`` (question and answer
    then empty); ``raw`` is the last reply; ``attempts`` 1 or 2."""

    question: str
    answer: str
    status: str
    raw: str
    attempts: int


def parse_generation(raw: str) -> tuple[str, str] | None:
    """``(question, answer)`` from a reply, or None when it cannot be read.

    Accepted: one JSON object (optionally in a code fence, with surrounding whitespace) with
    exactly one key ``question`` and one key ``answer`` in any letter case, both non-empty
    strings after stripping; other keys are ignored. Anything else (free text, truncated JSON,
    empty strings, lists, numbers) is unreadable: nothing is guessed.
    """
    try:
        value: Any = json.loads(strip_fence(raw))
    except ValueError:
        return None
    if not isinstance(value, dict):
        return None
    fields = {}
    for name in ("question", "answer"):
        matches = [v for k, v in value.items() if str(k).lower() == name]
        if len(matches) != 1 or not isinstance(matches[0], str) or not matches[0].strip():
            return None
        fields[name] = " ".join(matches[0].split())
    return fields["question"], fields["answer"]


def generation_messages(passage: str) -> list[dict]:
    """The chat messages asking for one question about ``passage``."""
    if not isinstance(passage, str) or not passage.strip():
        raise ValueError("passage must be a non-empty string")
    return [{"role": "system", "content": GENERATION_SYSTEM},
            {"role": "user", "content": GENERATION_USER.format(passage=passage.strip())}]


def generate_question(llm: ChatModel, passage: str, **options) -> Generation:
    """Ask ``llm`` for one question about ``passage``; retry an unreadable reply once."""
    options = {"max_tokens": GENERATION_MAX_TOKENS, **options}
    messages = generation_messages(passage)
    raw = llm.complete(messages, QUESTION_SCHEMA, **options)
    parsed = parse_generation(raw)
    if parsed is not None:
        return Generation(*parsed, "ok", raw, 1)
    retry = [*messages, {"role": "assistant", "content": raw}, {"role": "user", "content": RETRY_USER}]
    raw = llm.complete(retry, QUESTION_SCHEMA, **options, attempt=2)
    parsed = parse_generation(raw)
    if parsed is not None:
        return Generation(*parsed, "ok", raw, 2)
    return Generation("", "", UNPARSED, raw, 2)


def generation_row(passage: Passage, generation: Generation) -> dict:
    """One row of the generations table: the passage, its human question and the generation."""
    return {"passage_id": passage.passage_id, "corpus": passage.corpus, "doc_id": passage.doc_id,
            "human_qid": passage.human_qid, "human_question": passage.human_question,
            "human_answer": " | ".join(dict.fromkeys(passage.human_answers)),
            "generated_question": generation.question, "generated_answer": generation.answer,
            "status": generation.status, "attempts": generation.attempts, "raw": generation.raw}


def generate_all(passages: Sequence[Passage], llm: ChatModel, progress: bool = True,
                 concurrency: int = 1) -> pd.DataFrame:
    """Every passage's generation, in passage order, as one table (``unparsed`` rows kept);
    ``concurrency`` passages in flight at once (``llm.pool``)."""
    from chunklab_core.llm.pool import map_bounded

    def one(passage: Passage) -> dict:
        return generation_row(passage, generate_question(llm, passage.text))

    rows = map_bounded(passages, one, concurrency, store=getattr(llm, "store", None),
                       desc="question generation", progress=progress)
    return pd.DataFrame(rows, columns=GENERATION_COLUMNS)


def make_generator(mode: str = "replay", n_threads: int | None = None, root: str | Path | None = None,
                   backend: str = "llamacpp", model: str = "qwen-1.5b", base_url: str | None = None,
                   host: str | None = None, stage: str = STAGE):
    """The recorded generator: by default Qwen2.5-Coder-1.5B in-process (loaded only when a
    call must really run), greedy (temperature 0, seed 0), stage ``questions_qwen15`` under
    ``root`` (default ``data/records``). ``backend``/``model``/``base_url``/``host`` pick
    another model (``llm.wiring.make_backend``); name its ``stage`` after it."""
    from chunklab_core.llm.records import CallStore, RecordedLLM
    from chunklab_core.llm.wiring import make_backend

    store = CallStore.for_stage(stage, root, make_target=MAKE_TARGET)
    return RecordedLLM(make_backend(backend, model, n_threads, host, base_url), store, mode)


def load_passages(n_squad: int | None = DEFAULT_SQUAD_PASSAGES, n_nq: int | None = None,
                  seed: int = DEFAULT_SEED, squad_articles: int = 40, squad_questions: int = 800):
    """The two corpora (post 01's SQuAD sample, the NQ pages) and their sampled passages.

    Returns ``(corpora, passages)``: ``{"squad": Corpus, "nq": Corpus}`` and the SQuAD passages
    followed by the NQ ones. ``None`` for a count takes every eligible paragraph.
    """
    from chunklab_core.data.corpora import load_corpus

    squad = load_corpus("squad", squad_articles=squad_articles, squad_questions=squad_questions, seed=seed)
    nq = load_corpus("nq", seed=seed)
    passages = sample_squad_passages(squad, n_squad, seed) + sample_nq_passages(nq, n_nq, seed)
    return {"squad": squad, "nq": nq}, passages


@user_errors(DataError, *user_error_types())
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Record post 04's generated questions (resumable).")
    parser.add_argument("--squad", type=bounds.int_in("questions"), default=DEFAULT_SQUAD_PASSAGES, help="SQuAD passages")
    parser.add_argument("--nq", type=bounds.int_in("questions"), default=None, help="NQ passages (default: every eligible one)")
    parser.add_argument("--seed", type=bounds.int_in("seed"), default=DEFAULT_SEED)
    parser.add_argument("--limit", type=bounds.int_in("questions"), default=None, help="generate for the first N passages only")
    parser.add_argument("--threads", type=bounds.int_in("threads"), default=None)
    parser.add_argument("--mode", choices=("replay_or_record", "record", "replay"), default="replay_or_record")
    parser.add_argument("--records", default=None, help="folder of the call records (default data/records)")
    parser.add_argument("--concurrency", type=bounds.int_in("concurrency"), default=1, help="passages in flight at once")
    parser.add_argument("--backend", choices=("llamacpp", "ollama", "openai"), default="llamacpp")
    parser.add_argument("--model", default="qwen-1.5b", help="alias/path (llamacpp) or served model name")
    parser.add_argument("--base-url", default=None, help="OpenAI-compatible base URL (default $OPENAI_BASE_URL)")
    parser.add_argument("--host", default=None, help="Ollama host (default $OLLAMA_HOST)")
    parser.add_argument("--stage", default=STAGE, help="record stage (file stem) for another model")
    args = parser.parse_args(argv)
    _, passages = load_passages(args.squad, args.nq, args.seed)
    if args.limit is not None:
        passages = passages[: args.limit]
    generator = make_generator(args.mode, args.threads, args.records, args.backend, args.model,
                               args.base_url, args.host, args.stage)
    table = generate_all(passages, generator, concurrency=args.concurrency)
    print(table.groupby(["corpus", "status"]).size().to_string())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
