"""Chroma's three chunkers, reproduced: small pieces, Kamradt, modified Kamradt, cluster DP, LLM.

Fixtures are hand-computed; the cluster chunker's dynamic programme (Chroma's code's rule: at
most ``max_tokens // piece_tokens`` pieces a group, a strict improvement over a start of 0) is
checked against brute force over every partition; the LLM chunker runs through the recorded-call layer with the
scripted test backend and replays with a backend that fails if it is used.
"""

from __future__ import annotations

import itertools
import json
import math
import re
import zlib

import numpy as np
import pytest

from chunklab_core.chunking import document_spans
from chunklab_core.chunking.chroma_semantic import (centred_similarity, chroma_partition, cluster_semantic,
                                                    kamradt_modified, kamradt_semantic, small_pieces)
from chunklab_core.chunking.llm_split import LLMSplitStats, llm_semantic, parse_splits
from chunklab_core.core.tokens import count_tokens
from chunklab_core.llm.records import CallStore, RecordedLLM
from chunklab_core.llm.testing import BackendUsed, ScriptedLLM


def topic_embed(texts):
    """Two axes: words about cats and words about markets (a hand-made embedding)."""
    out = np.zeros((len(texts), 3))
    for i, text in enumerate(texts):
        words = re.findall(r"\w+", text.lower())
        out[i, 0] = sum(w in {"cats", "purr", "nap", "whiskers"} for w in words)
        out[i, 1] = sum(w in {"stocks", "bonds", "market", "prices"} for w in words)
        out[i, 2] = 0.01
    return out / np.linalg.norm(out, axis=1, keepdims=True)


def hashed_embed(texts, dim=16):
    out = np.zeros((len(texts), dim))
    for i, text in enumerate(texts):
        for word in re.findall(r"\w+", text.lower()):
            out[i, zlib.crc32(word.encode()) % dim] += 1.0
    return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)


CATS = "Cats purr. Cats nap. Whiskers twitch on cats. "
MARKETS = "Stocks fell. Bonds rose. Market prices moved. "
TWO_TOPICS = CATS + MARKETS


def test_small_pieces_tile_under_the_limit():
    text = " ".join(f"Sentence number {i} is here." for i in range(200))
    pieces = small_pieces(text, 50)
    assert pieces[0][0] == 0 and pieces[-1][1] == len(text)
    assert all(a[1] == b[0] for a, b in zip(pieces, pieces[1:]))
    assert max(count_tokens(text[s:e]) for s, e in pieces) <= 50
    assert small_pieces("  \n ", 50) == []


def test_kamradt_breaks_at_the_topic_change():
    # six sentences, buffer 0: distances ~0 within a topic and ~1 between sentence 3 and 4;
    # the 95th percentile of [0, 0, 1, 0, 0] is 0.8, so the only break is after sentence 3
    spans = kamradt_semantic(TWO_TOPICS, topic_embed, percentile=95.0, buffer=0)
    assert [TWO_TOPICS[s:e] for s, e, _, _ in spans] == [CATS, MARKETS]


def test_kamradt_modified_makes_ceil_total_over_average_chunks():
    text = " ".join(f"Cats purr {i}." if (i // 10) % 2 == 0 else f"Stocks fell {i}." for i in range(120))
    pieces = small_pieces(text, 50)
    total = sum(count_tokens(text[s:e]) for s, e in pieces)
    for avg in (100, 300):
        spans = kamradt_modified(text, topic_embed, avg_tokens=avg, piece_tokens=50, buffer=0)
        assert len(spans) == min(len(pieces), math.ceil(total / avg))
        assert spans[0][0] == 0 and spans[-1][1] == len(text)


def test_chroma_partition_hand_fixture():
    # two blocks: pieces 0-1 alike, 2-3 alike, the blocks opposed; reward counts both triangles
    s = np.array([[0, 1, -1, -1], [1, 0, -1, -1], [-1, -1, 0, 1], [-1, -1, 1, 0]], dtype=float)
    assert chroma_partition(s, 2) == [2, 4]  # {0,1} {2,3}: 2 + 2 = 4
    assert chroma_partition(s, 4) == [2, 4]  # the whole: 2 + 2 - 8 = -4 loses
    assert chroma_partition(s, 3) == [2, 4]  # {0,1,2}: 2 - 4 = -2 loses too
    # a tie: three equal pieces, cap 3: {0,1,2} scores 6 = {0,1} + ... no other partition ties it
    even = np.ones((3, 3)) - np.eye(3)
    assert chroma_partition(even, 3) == [3]
    # a tie between a singleton and a pair whose pair reward is 0: the smaller last group wins
    tie = np.array([[0, 1, 0], [1, 0, 0], [0, 0, 0]], dtype=float)
    assert chroma_partition(tie, 3) == [2, 3]  # {0,1} {2} = 2 and {0,1,2} = 2: strict '>' keeps {2} alone


def test_chroma_partition_keeps_start_zero_when_nothing_is_positive():
    # Chroma's dp starts at 0 and its group start at 0: with every pair opposed, no candidate is
    # strictly positive, so the group of piece i runs from 0, past the cap (its code's behaviour)
    opposed = -(np.ones((3, 3)) - np.eye(3))
    assert chroma_partition(opposed, 1) == [3]
    # once a positive total exists the cap holds: pieces 0-1 alike, then singletons
    s = np.array([[0, 1, -1], [1, 0, -1], [-1, -1, 0]], dtype=float)
    assert chroma_partition(s, 2) == [2, 3]
    assert chroma_partition(s, 1) == [3]  # cap 1: every candidate is 0, dp stays 0, start stays 0


def _brute_force(s, cap):
    n, best = len(s), -np.inf
    for cuts in itertools.product([0, 1], repeat=n - 1):
        ends = [i + 1 for i, c in enumerate(cuts) if c] + [n]
        starts = [0] + ends[:-1]
        if any(b - a > cap for a, b in zip(starts, ends)):
            continue
        best = max(best, sum(s[a:b, a:b].sum() for a, b in zip(starts, ends)))
    return best


@pytest.mark.parametrize("seed", range(6))
def test_chroma_partition_matches_brute_force_under_the_piece_cap(seed):
    rng = np.random.default_rng(seed)
    n, cap = 9, 3
    vectors = rng.normal(size=(n, 4))
    vectors[1] = vectors[0] + 0.1 * rng.normal(size=4)  # pieces 0 and 1 alike: a positive start
    s = centred_similarity(vectors)
    assert s[0, 1] > 0
    ends = chroma_partition(s, cap)
    starts = [0] + ends[:-1]
    assert ends[-1] == n and all(0 < b - a <= cap for a, b in zip(starts, ends))
    score = sum(s[a:b, a:b].sum() for a, b in zip(starts, ends))
    assert score == pytest.approx(_brute_force(s, cap))


def test_centred_similarity_has_zero_mean_off_diagonal():
    s = centred_similarity(np.random.default_rng(1).normal(size=(5, 3)))
    off = s[~np.eye(5, dtype=bool)]
    assert off.mean() == pytest.approx(0.0) and np.all(np.diag(s) == 0)


def test_cluster_semantic_groups_topics_under_the_piece_cap():
    text = "".join((CATS if i % 2 == 0 else MARKETS) * 3 for i in range(6))
    pieces = small_pieces(text, 10)
    for max_tokens, cap in ((60, 6), (40, 4), (25, 2)):  # Chroma: max_chunk_size // min_chunk_size
        spans = cluster_semantic(text, topic_embed, max_tokens=max_tokens, piece_tokens=10)
        assert spans[0][0] == 0 and spans[-1][1] == len(text)
        assert all(a[1] == b[0] for a, b in zip(spans, spans[1:]))
        counts = [sum(s <= p[0] and p[1] <= e for p in pieces) for s, e, _, _ in spans]
        assert sum(counts) == len(pieces) and max(counts) == cap, (max_tokens, counts)
        mixed = [text[s:e] for s, e, _, _ in spans if "Cats" in text[s:e] and "Stocks" in text[s:e]]
        assert len(mixed) <= 5, "groups follow the topics"
    with pytest.raises(ValueError, match="piece_tokens"):
        cluster_semantic(text, topic_embed, max_tokens=5, piece_tokens=10)


def test_parse_splits():
    assert parse_splits('{"split_after": [3, 1, 5, 9, 5]}', 0, 9) == [3, 5]
    assert parse_splits('{"split_after": []}', 0, 9) == []
    assert parse_splits("no json", 0, 9) is None
    assert parse_splits('{"other": 1}', 0, 9) is None


def every_other(messages, schema, options):
    numbers = [int(n) for n in re.findall(r"<\|start_chunk_(\d+)\|>", messages[-1]["content"])]
    return json.dumps({"split_after": numbers[1::2]})


def test_llm_chunker_records_then_replays_without_a_model(tmp_path):
    text = " ".join(f"Sentence {i} talks about item {i}." for i in range(120))
    store = CallStore(tmp_path / "llm_chunker.jsonl")
    recorded = RecordedLLM(ScriptedLLM(every_other, model="scripted-splitter"), store, mode="replay_or_record")
    stats = LLMSplitStats()
    spans = llm_semantic(text, recorded.complete, window_tokens=200, piece_tokens=20, stats=stats)
    pieces = small_pieces(text, 20)
    assert stats.calls == recorded.new_calls > 1 and stats.fallbacks == 0
    assert spans[0][0] == 0 and spans[-1][1] == len(text)
    assert all(a[1] == b[0] for a, b in zip(spans, spans[1:]))
    assert len(spans) > len(pieces) // 3  # splits after every other piece of each window
    replay = RecordedLLM(ScriptedLLM(fail=True, model="scripted-splitter"), CallStore(tmp_path / "llm_chunker.jsonl"),
                         mode="replay")
    assert llm_semantic(text, replay.complete, window_tokens=200, piece_tokens=20) == spans
    assert replay.hits == stats.calls
    with pytest.raises(BackendUsed):
        llm_semantic(text + " One more.", RecordedLLM(ScriptedLLM(fail=True, model="scripted-splitter"),
                                                       CallStore(tmp_path / "llm_chunker.jsonl"),
                                                       mode="replay_or_record").complete,
                     window_tokens=200, piece_tokens=20)


def test_llm_chunker_falls_back_at_the_window_end_on_garbage():
    text = " ".join(f"Sentence {i} talks about item {i}." for i in range(60))
    stats = LLMSplitStats()
    spans = llm_semantic(text, lambda m, s=None, **o: "not json", window_tokens=100, piece_tokens=20, stats=stats)
    assert stats.fallbacks == stats.calls >= 2
    assert spans[0][0] == 0 and spans[-1][1] == len(text)
    assert max(count_tokens(text[s:e]) for s, e, _, _ in spans) <= 100 + 20


def test_registered_chroma_chunkers_need_their_inputs():
    with pytest.raises(ValueError, match="embed"):
        document_spans(TWO_TOPICS, "cluster_400")
    with pytest.raises(ValueError, match="complete"):
        document_spans(TWO_TOPICS, "llm_semantic")
    assert document_spans(TWO_TOPICS, "kamradt", embed=hashed_embed)
