"""Issue 26: the config keys users mean (token overlap, semantic sizes in tokens, the breakpoint
percentile, floors of 0, sized sections), the top two beginning with the leader, warnings
scoped to the retriever that they concern, the box, and truncation counted without torch."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from chunklab_core.chunking import STRATEGIES, document_spans
from chunklab_core.chunking.token_windows import fixed_tokens
from chunklab_core.core.tokens import count_tokens
from chunklab_core.data.loaders import ValidationError
from chunklab_core.own.config import load_config, parse_config
from chunklab_core.own.recommendation import box, health_warnings, recommend
from chunklab_core.core.paths import PROJ_ROOT
from chunklab_core.stats.selection import select_winner


TEXT = ("# Title\n\nA first paragraph with a few sentences. It goes on for a while. And a bit more.\n\n"
        + "Another sentence about lighthouses and lamps. " * 80 + "\n\n# Second\n\n" + "Short words here. " * 40)


def test_fixed_token_overlap_on_a_hand_counted_text():
    # "a b c d e f g h i j k": 11 one-token words; windows of 4 tokens sharing 2 start every 2 words
    spans = fixed_tokens("a b c d e f g h i j k", 4, 2)
    assert [(s, e) for s, e, *_ in spans] == [(0, 7), (3, 11), (7, 15), (11, 19), (15, 21)]
    with pytest.raises(ValueError, match="overlap"):
        fixed_tokens("a b c", 4, 4)


def test_named_512_o64_windows_share_64_tokens_and_stay_within_512():
    text = TEXT * 3
    spans = document_spans(text, "fixed_tokens_512_o64")
    assert max(count_tokens(text[s:e]) for s, e, *_ in spans) <= 512
    shared = [count_tokens(text[b[0]:a[1]]) for a, b in zip(spans, spans[1:])]
    assert all(60 <= n <= 64 for n in shared), shared  # a token or two lost at seams, never more than 64
    assert STRATEGIES["fixed_tokens_512_o64"].params == {"size": 512, "overlap": 64}


def test_config_keys_register_what_users_mean():
    config = parse_config({"strategies": [
        "fixed_tokens_512_o64",
        {"kind": "fixed", "size": 128, "overlap": 16, "unit": "tokens"},
        {"kind": "recursive", "size": 100, "overlap": 20, "unit": "tokens"},
        {"kind": "semantic", "floor": 0, "max": 120, "unit": "tokens", "percentile": 95},
        {"kind": "semantic", "floor": 0, "max": 600},
        {"kind": "structure_sections", "max": 90},
    ]})
    assert config.strategies == ["fixed_tokens_512_o64", "fixed_tokens_128_o16", "recursive_tokens_100_o20",
                                 "semantic_tokens_floor0_max120_p95", "semantic_floor0_max600",
                                 "structure_sections_tokens_90"]
    spans = document_spans(TEXT, "recursive_tokens_100_o20")
    assert max(count_tokens(TEXT[s:e]) for s, e, *_ in spans) <= 100
    assert any(b[0] < a[1] for a, b in zip(spans, spans[1:]))  # they overlap
    semantic = STRATEGIES["semantic_tokens_floor0_max120_p95"].params
    assert semantic["percentile"] == 95.0 and semantic["min_tokens"] == 0 and semantic["max_tokens"] == 120
    rng = np.random.default_rng(0)
    embed = lambda texts: rng.normal(size=(len(texts), 8))  # noqa: E731
    spans = document_spans(TEXT, "semantic_tokens_floor0_max120_p95", embed=embed)
    assert max(count_tokens(TEXT[s:e]) for s, e, *_ in spans) <= 120
    sections = document_spans(TEXT, "structure_sections_tokens_90")
    assert max(count_tokens(TEXT[s:e]) for s, e, *_ in sections) <= 90
    assert STRATEGIES["structure_sections_tokens_90"].params["mode"] == "section"


def test_new_keys_are_validated_with_every_problem_at_once():
    with pytest.raises(ValidationError) as caught:
        parse_config({"strategies": [
            {"kind": "fixed", "size": 64, "overlap": 64, "unit": "tokens"},
            {"kind": "semantic", "floor": -1, "max": 100},
            {"kind": "semantic", "floor": 0, "max": 100, "percentile": 100},
            {"kind": "recursive", "size": 300, "overlap": 30},
            {"kind": "structure_sections", "max": 0},
            {"kind": "structure_sections", "max": 100, "overlap": 5},
        ]})
    problems = caught.value.problems
    assert len(problems) == 6, problems
    assert "overlap (64) must be smaller than size (64)" in problems[0]
    assert "floor must be a non-negative integer" in problems[1]
    assert "percentile" in problems[2] and "between 0 and 100" in problems[2]
    assert "overlap for recursive splitting is offered in tokens" in problems[3]
    assert "sizes must be positive integers, got max=0" in problems[4]
    assert "unknown key(s) overlap for kind structure_sections" in problems[5]


def test_the_example_config_shows_every_new_key():
    text = (PROJ_ROOT / "examples" / "own_config.yaml").read_text(encoding="utf-8")
    for key in ("fixed_tokens_512_o64", "overlap: 32, unit: tokens", "percentile: 95", "floor: 0",
                "structure_sections"):
        assert key in text
    load_config(PROJ_ROOT / "examples" / "own_config.yaml")


def test_top_two_begin_with_the_leader_when_means_tie():
    # A, B and C have the same mean (0.5); the leader is chosen by probability of being best, and
    # the top two must start with it (before the fix they were the first two columns by mean)
    scores = np.array([[1, 0, 0.5], [0, 1, 0.5], [1, 1, 0.5], [0, 0, 0.5]] * 5, dtype=float)
    verdict = select_winner(scores, ["A", "B", "C"], resamples=500, seed=3)
    assert verdict.top_two[0] == verdict.leader
    assert verdict.top_two_difference.mean == pytest.approx(
        scores[:, verdict.names.index(verdict.top_two[0])].mean() - scores[:, verdict.names.index(verdict.top_two[1])].mean())


def _per_question(scores: dict) -> pd.DataFrame:
    rows = []
    for (strategy, retriever), values in scores.items():
        for q, value in enumerate(values):
            rows.append({"corpus": "own", "strategy": strategy, "retriever": retriever,
                         "model": "—" if retriever == "bm25" else "m", "qid": f"q{q}", "recall@5": value})
    return pd.DataFrame(rows)


def test_truncation_is_warned_only_where_an_embedding_reads_the_chunks():
    rng = np.random.default_rng(1)
    scores = {(s, r): rng.integers(0, 2, 30).astype(float) for s in ("fixed_500", "fixed_1000") for r in ("bm25", "dense")}
    health = pd.DataFrame({"strategy": ["fixed_500", "fixed_1000"], "pct_fragments": [0.0, 0.0],
                           "share truncated": [0.5, 0.5]})
    recs = recommend(_per_question(scores), {}, health, 5, 0.8, 200, 0)
    by_scope = {r.scope: r for r in recs}
    assert set(by_scope) == {"bm25", "dense", "overall"}
    assert not any("length limit" in w for w in by_scope["bm25"].warnings)
    assert any("length limit" in w for w in by_scope["dense"].warnings)
    assert health_warnings(health, ["fixed_500"], embedding=False) == {}


def test_the_box_names_the_engine_pick_with_its_verdict_and_n():
    rng = np.random.default_rng(2)
    scores = {("fixed_500", "bm25"): np.ones(40), ("fixed_1000", "bm25"): rng.integers(0, 2, 40).astype(float)}
    rec = recommend(_per_question(scores), {}, pd.DataFrame(columns=["strategy"]), 5, 0.8, 500, 0)
    lines = dict(box(rec, 5, 0.8))
    v = rec[0].verdict
    assert (v.pick, v.verdict, v.words["Fixed 1000 chars"]) == ("Fixed 500 chars", "decided", "ruled out")
    assert lines["use"].startswith("Fixed 500 chars (decided at recall@5")
    assert lines["verdict"].startswith("decided: use Fixed 500 chars; ruled out: Fixed 1000 chars")
    assert "n = 40 questions" in lines["verdict"] and "to settle it" not in lines


def test_truncation_counts_match_the_models_own_tokenizer():
    from chunklab_core.retrieval.dense import DenseRetriever, fast_tokenizer

    retriever = DenseRetriever("all-MiniLM-L6-v2")
    texts = ["short", "word " * 300, "ünïcödé " * 120, "x" * 2000, "A line.\n\nAnother one. " * 40]
    fast = retriever.truncated_mask(texts)
    assert fast_tokenizer(str(retriever.model_folder)) is not None
    encoded = retriever.model.tokenizer(texts, add_special_tokens=True, truncation=False, verbose=False)["input_ids"]
    assert fast.tolist() == [len(ids) > retriever.model.max_seq_length for ids in encoded]
    assert fast.any() and not fast.all()


def test_an_undecided_box_says_how_many_questions_would_settle_it_and_prices_the_pick():
    from chunklab_core.decision.margin import questions_to_settle
    from chunklab_core.own.recommendation import Recommendation

    scores = {("fixed_500", "bm25"): np.array([1.0, 0.0] * 10), ("fixed_1000", "bm25"): np.array([0.0, 1.0] * 10)}
    rec = recommend(_per_question(scores), {}, pd.DataFrame(columns=["strategy"]), 5, 0.8, 500, 0)[0]
    v = rec.verdict
    assert v.verdict == "undecided" and v.leader == v.pick == "Fixed 500 chars"  # equal means: the simpler leads
    iv = v.intervals["Fixed 1000 chars"]
    assert v.what_would_decide == questions_to_settle(20, iv["diff"], iv["low"], iv["high"], 0.02)
    priced = Recommendation(rec.scope, rec.verdict, rec.cells, {"Fixed 500 chars": 300.0, "Fixed 1000 chars": 120.0},
                            {"Fixed 500 chars": 3.0, "Fixed 1000 chars": 1.0})
    lines = dict(box([priced], 5, 0.8))
    assert f"about {v.what_would_decide:,} questions would settle it at ±0.02 (you have 20)" in lines["verdict"]
    assert lines["cost"].startswith("about 300 tokens per question for the pick")
    assert "cheapest" not in lines
