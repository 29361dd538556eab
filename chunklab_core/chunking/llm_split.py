"""Chroma's LLM chunker, reproduced from the report's description: a model picks split points.

Source: Smith & Troynikov, "Evaluating Chunking Strategies for Retrieval", Chroma technical
report (2024): the text is cut into small pieces (about 50 tokens), the pieces are shown to the
model wrapped in numbered tags, and the model answers after which pieces a new chunk should
start; the text is processed window by window, each window starting after the last split. The
prompt below is ours (their code is not used).

Handles: ``llm_semantic(text, complete, window_tokens, piece_tokens)``. ``complete`` is any
``complete(messages, schema=None, **options) -> str``: in the series a ``llm.records.
RecordedLLM`` (so a run replays with no model; chunking cannot import the LLM stage itself),
in tests ``llm.testing.ScriptedLLM`` behind one. The reply must be JSON ``{"split_after":
[int, ...]}`` (the schema is passed, so a constrained backend keeps to it); indices are the
window's piece numbers. Kept: indices inside the window, strictly increasing, not its last
piece. A reply that does not parse, or keeps no index, ends the chunk at the window's end
(counted in ``LLMSplitStats``); the next window starts after the last kept split. Options are
fixed (``temperature=0``, ``seed=0``), so identical windows make identical calls (one record).

Not handled: models that cannot follow a JSON schema (their replies are counted as fallbacks),
windows larger than the model's context (``window_tokens`` must leave room for the prompt).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Callable

from chunklab_core.chunking.chroma_semantic import small_pieces
from chunklab_core.chunking.spans import ChunkSpan
from chunklab_core.core.tokens import count_tokens_many

Complete = Callable[..., str]
SCHEMA = {
    "type": "object",
    "properties": {"split_after": {"type": "array", "items": {"type": "integer"}}},
    "required": ["split_after"],
}
SYSTEM = ("You split documents into chunks that each keep one topic together. The text is given as "
          "numbered pieces between <|start_chunk_N|> and <|end_chunk_N|> tags. Answer with JSON "
          '{"split_after": [N, ...]}: the numbers of the pieces after which a new chunk should start, '
          "in increasing order. Split where the topic changes; do not split after the last piece.")
OPTIONS = {"temperature": 0.0, "seed": 0, "max_tokens": 200}


@dataclass
class LLMSplitStats:
    """What happened in one ``llm_semantic`` call: model calls and fallbacks to the window end."""

    calls: int = 0
    fallbacks: int = 0


def window_prompt(pieces: list[str], first: int) -> list[dict]:
    """The messages for one window; pieces numbered from ``first``."""
    body = "\n".join(f"<|start_chunk_{first + i}|>{piece}<|end_chunk_{first + i}|>" for i, piece in enumerate(pieces))
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": body}]


def parse_splits(reply: str, first: int, last: int) -> list[int] | None:
    """Valid split indices from a reply: integers in ``[first, last)``, strictly increasing
    (later non-increasing ones dropped); ``None`` when the reply is not the expected JSON."""
    try:
        value = json.loads(reply)
        raw = value["split_after"]
    except (json.JSONDecodeError, TypeError, KeyError):
        return None
    if not isinstance(raw, list):
        return None
    kept: list[int] = []
    for item in raw:
        if isinstance(item, int) and not isinstance(item, bool) and first <= item < last and (not kept or item > kept[-1]):
            kept.append(item)
    return kept


def llm_semantic(text: str, complete: Complete | None, window_tokens: int = 800, piece_tokens: int = 50,
                 stats: LLMSplitStats | None = None) -> list[ChunkSpan]:
    """Chunks whose boundaries a model chose, window by window (module docstring)."""
    if complete is None or not callable(complete):
        raise ValueError("llm_semantic needs complete= (a recorded model's complete function)")
    if not isinstance(window_tokens, int) or isinstance(window_tokens, bool) or window_tokens < piece_tokens:
        raise ValueError(f"window_tokens must be an integer >= piece_tokens ({piece_tokens}), got {window_tokens!r}")
    stats = stats if stats is not None else LLMSplitStats()
    pieces = small_pieces(text, piece_tokens)
    if not pieces:
        return []
    sizes = count_tokens_many(text[s:e] for s, e in pieces)
    breaks: list[int] = []  # split after these piece indices
    start = 0
    while start < len(pieces):
        end, used = start, 0
        while end < len(pieces) and (end == start or used + sizes[end] <= window_tokens):
            used += int(sizes[end])
            end += 1
        if end == len(pieces) and end - start == 1:
            break
        reply = complete(window_prompt([text[s:e] for s, e in pieces[start:end]], start), SCHEMA, **OPTIONS)
        stats.calls += 1
        kept = parse_splits(reply, start, end - 1)
        if not kept:
            stats.fallbacks += kept is None
            if end == len(pieces):
                break
            breaks.append(end - 1)
            start = end
            continue
        breaks.extend(kept)
        if end == len(pieces):
            break
        start = kept[-1] + 1
    bounds = [0, *[b + 1 for b in breaks], len(pieces)]
    return [(pieces[a][0], pieces[b - 1][1], pieces[a][0], pieces[b - 1][1]) for a, b in zip(bounds, bounds[1:]) if b > a]
