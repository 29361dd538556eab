"""Chunk health: every metric pinned on hand-made fixtures, the lexical proxies cross-checked
against scikit-learn's TfidfVectorizer, and the span invariants on every registered strategy."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.feature_extraction.text import TfidfVectorizer

from chunklab_core.chunking.health import (
    CorpusProfile,
    chunk_health,
    chunk_health_table,
    cl100k_counts,
    coefficient_of_variation,
    strategy_limits,
)
from chunklab_core.chunking import STRATEGIES, chunk_corpus, strategy_names
from chunklab_core.core.corpus import Chunk, Document
from chunklab_core.core.tokens import count_tokens, count_tokens_many

THREE = "Alpha beta gamma. Delta epsilon zeta. Eta theta iota."  # sentences [0,18) [18,38) [38,53)
TWO_TOPICS = ("Cats purr softly. Cats sleep on warm beds. Cats chase small mice. "
              "Stocks fell sharply today. Stocks lost value quickly. Investors sold stocks.")
TOPIC_SENTENCES = [(0, 18), (18, 43), (43, 66), (66, 93), (93, 120), (120, 142)]
MARKDOWN = "# Title\n\nIntro paragraph here.\n\n| a | b |\n| 1 | 2 |\n| 3 | 4 |\n\nClosing words.\n"
# blocks: heading [0,7), text [9,30), table [32,61) (second row starts at 42), text [63,77)


def chunks(doc_id: str, *spans: tuple[int, int]) -> list[Chunk]:
    return [Chunk(i, doc_id, s, e, s, e) for i, (s, e) in enumerate(spans)]


def health(text: str, *spans: tuple[int, int], **kwargs) -> dict:
    return chunk_health([Document("d", text)], chunks("d", *spans), **kwargs)


def tfidf_cosine(fitted: TfidfVectorizer, a: str, b: str) -> float:
    va, vb = fitted.transform([a, b]).toarray()
    return float(va @ vb)


# --------------------------------------------------------------------------- boundaries


def test_boundary_ok_at_sentence_edges_is_one():
    assert health(THREE, (0, 18), (18, 38), (38, 53))["boundary_ok"] == 1.0


def test_boundary_ok_mid_word_is_zero():
    # [0,3) ends inside "Alpha"; [3,25) starts and ends mid-word; [25,53) starts mid-word.
    assert health(THREE, (0, 3), (3, 25), (25, 53))["boundary_ok"] == 0.0


def test_boundary_ok_ignores_surrounding_whitespace_and_counts_each_chunk():
    # [0,17) ends at "gamma." without its space; [17,38) starts on that space.
    assert health(THREE, (0, 17), (17, 38), (38, 53))["boundary_ok"] == 1.0
    assert health(THREE, (0, 18), (18, 25), (25, 53))["boundary_ok"] == pytest.approx(1 / 3)


# --------------------------------------------------------------------------- coverage, redundancy


def test_coverage_with_a_gap_counts_visible_characters_only():
    # "aaaa bbbb cccc": 12 visible characters; [0,5) and [10,14) hold 8 of them.
    row = health("aaaa bbbb cccc", (0, 5), (10, 14))
    assert row["coverage"] == pytest.approx(8 / 12)
    assert row["redundancy"] == 1.0


def test_redundancy_of_overlapping_chunks():
    row = health("x" * 100, (0, 60), (40, 100))
    assert row["redundancy"] == pytest.approx(120 / 100)
    assert row["coverage"] == 1.0


# --------------------------------------------------------------------------- evidence


def test_evidence_inside_one_chunk_vs_across_two():
    text = "y" * 100
    across = health(text, (0, 20), (20, 100), evidence=[("d", 10, 30)])
    assert (across["evidence_completeness"], across["evidence_fragmentation"]) == (0.0, 2.0)
    inside = health(text, (0, 50), (50, 100), evidence=[("d", 10, 30)])
    assert (inside["evidence_completeness"], inside["evidence_fragmentation"]) == (1.0, 1.0)
    # Half-open spans: [0,20) ends where a chunk ends, [20,30) starts where one starts.
    mixed = health(text, (0, 20), (20, 100), evidence=[("d", 10, 30), ("d", 25, 35), ("d", 0, 20), ("d", 20, 30)])
    assert mixed["evidence_completeness"] == pytest.approx(3 / 4)
    assert mixed["evidence_fragmentation"] == pytest.approx(5 / 4)


def test_evidence_in_an_overlap_is_complete_but_touches_two_chunks():
    row = health("z" * 100, (0, 60), (40, 100), evidence=[("d", 45, 55)])
    assert (row["evidence_completeness"], row["evidence_fragmentation"]) == (1.0, 2.0)


def test_evidence_and_chunks_of_other_documents_never_mix():
    docs = [Document("a", "a" * 100), Document("b", "b" * 100)]
    cs = chunks("a", (0, 50), (50, 100)) + [Chunk(2, "b", 0, 30, 0, 30), Chunk(3, "b", 30, 100, 30, 100)]
    row = chunk_health(docs, cs, evidence=[("a", 40, 60), ("b", 40, 60)])
    assert row["evidence_completeness"] == 0.5
    assert row["evidence_fragmentation"] == 1.5
    assert row["n_chunks"] == 4 and row["redundancy"] == 1.0 and row["coverage"] == 1.0


def test_a_document_start_is_not_a_boundary():
    docs = [Document("a", "Cats purr. Cats nap."), Document("b", "Cats purr. Cats nap.")]
    row = chunk_health(docs, [Chunk(0, "a", 0, 20, 0, 20), Chunk(1, "b", 0, 20, 0, 20)])
    assert row["lexical_boundary_clarity"] is None and row["lexical_stickiness"] is None
    # Per document: idf(cats) = ln(3/3) + 1 = 1, idf(purr) = idf(nap) = ln(3/2) + 1, so
    # cos("Cats purr.", "Cats nap.") = 1 / (1 + (1 + ln 1.5)^2).
    assert row["lexical_cohesion"] == pytest.approx(1 / (1 + (1 + np.log(1.5)) ** 2))


# --------------------------------------------------------------------------- sizes


def test_size_cv_on_known_token_counts():
    text = "hello hello hello hello"  # chunks "hello" and " hello hello hello"
    assert count_tokens(text[0:5]) == 1 and count_tokens(text[5:23]) == 3
    row = health(text, (0, 5), (5, 23))
    assert row["size_cv"] == pytest.approx(0.5)  # sizes 1, 3: mean 2, population std 1
    assert row["median_tokens"] == 2.0
    assert coefficient_of_variation(np.array([1, 2, 3, 4])) == pytest.approx(np.sqrt(1.25) / 2.5)
    assert coefficient_of_variation(np.array([])) is None


def test_tiny_by_tokens_versus_fragments_by_characters():
    text = "word " * 30 + "word " * 50  # 150 + 250 characters
    row = health(text, (0, 150), (150, 400))
    assert row["pct_fragments"] == 50.0  # only the 150-character chunk is under 200 characters
    assert row["pct_tiny"] == 100.0  # both are far under 200 tokens
    assert health(text, (0, 150), (150, 400), tiny_tokens=40)["pct_tiny"] == 50.0


def test_oversize_against_strategy_ceiling_and_model_limit_separately():
    text = "one two. three four five six. seven eight nine ten eleven."
    spans = [(0, 9), (9, 30), (30, 58)]  # 2, 4 and 5 words; 9, 21 and 28 characters
    words = lambda t: len(t.split())  # a fake model tokenizer: one token per word
    row = health(text, *spans, max_chars=25, model_max_tokens=3, tokenizer_count=words)
    assert row["pct_over_strategy_max"] == pytest.approx(100 / 3)  # only the 28-character chunk
    assert row["pct_over_model_max"] == pytest.approx(200 / 3)  # the 4- and 5-word chunks
    assert row["pct_oversized"] == pytest.approx(200 / 3)  # union of the two
    assert row["size_compliance"] == pytest.approx(2 / 3)
    assert health(text, *spans, max_chars=25, min_chars=10)["size_compliance"] == pytest.approx(1 / 3)


def test_registered_ceiling_and_no_ceiling():
    assert strategy_limits("fixed_500") == (500, None)
    assert strategy_limits("structure_aware") == (None, 512)
    assert strategy_limits("whole_document") == (None, None)
    assert strategy_limits("my_own") == (None, None)
    text = "a" * 600
    assert health(text, (0, 600), strategy="fixed_500")["pct_over_strategy_max"] == 100.0
    whole = health(text, (0, 600), strategy="whole_document")
    assert whole["pct_oversized"] is None and whole["size_compliance"] is None
    assert whole["pct_over_model_max"] is None


# --------------------------------------------------------------------------- structure


def test_structural_integrity_and_tables_on_markdown():
    cut = health(MARKDOWN, (0, 42), (42, 78))  # boundary inside the table
    assert cut["structural_integrity"] == 0.75 and cut["tables_intact"] == 0.0
    whole = health(MARKDOWN, (0, 32), (32, 78))  # boundary at the table's start
    assert whole["structural_integrity"] == 1.0 and whole["tables_intact"] == 1.0
    overlapping = health(MARKDOWN, (0, 42), (32, 78))  # the second chunk holds the table whole
    assert overlapping["structural_integrity"] == 1.0 and overlapping["tables_intact"] == 1.0


def test_undefined_metrics_are_none():
    row = health("Just one paragraph. Two sentences.", (0, 20), (20, 34))
    assert row["structural_integrity"] is None  # one block only
    assert row["tables_intact"] is None
    assert row["evidence_completeness"] is None and row["evidence_fragmentation"] is None
    assert row["lexical_cohesion"] is None  # every chunk has one sentence
    assert row["pct_oversized"] is None


# --------------------------------------------------------------------------- lexical proxies


@pytest.fixture(scope="module")
def topic_vectorizer() -> TfidfVectorizer:
    return TfidfVectorizer().fit([TWO_TOPICS[s:e] for s, e in TOPIC_SENTENCES])


def sentence(i: int) -> str:
    return TWO_TOPICS[slice(*TOPIC_SENTENCES[i])]


def test_boundary_between_topics_is_clearer_than_inside_one(topic_vectorizer):
    between = health(TWO_TOPICS, (0, 66), (66, 142))
    inside = health(TWO_TOPICS, (0, 18), (18, 142))
    assert between["lexical_boundary_clarity"] == 1.0  # the two sentences share no term
    expected = 1 - tfidf_cosine(topic_vectorizer, sentence(0), sentence(1))
    assert inside["lexical_boundary_clarity"] == pytest.approx(expected)
    assert 0 < expected < 1


def test_boundary_inside_a_sentence_has_zero_clarity():
    assert health(TWO_TOPICS, (0, 70), (70, 142))["lexical_boundary_clarity"] == 0.0


def test_stickiness_and_cohesion_match_tfidf_by_hand(topic_vectorizer):
    between = health(TWO_TOPICS, (0, 66), (66, 142))
    assert between["lexical_stickiness"] == 0.0
    inside = health(TWO_TOPICS, (0, 18), (18, 142))
    assert inside["lexical_stickiness"] == pytest.approx(
        tfidf_cosine(topic_vectorizer, TWO_TOPICS[0:18], TWO_TOPICS[18:142]))
    adjacent = [tfidf_cosine(topic_vectorizer, sentence(i), sentence(i + 1)) for i in range(5)]
    assert adjacent[2] == 0.0
    assert between["lexical_cohesion"] == pytest.approx(np.mean([np.mean(adjacent[0:2]), np.mean(adjacent[3:5])]))
    assert inside["lexical_cohesion"] == pytest.approx(np.mean(adjacent[1:5]))  # chunk 1 has 1 sentence
    assert between["lexical_cohesion"] > inside["lexical_cohesion"]


def test_overlap_is_analysed_by_chunk_starts():
    # Chunks [s0..s3] and [s3..s5] overlap on s3; segments by starts are [s0..s2] and [s3..s5].
    row = health(TWO_TOPICS, (0, 93), (66, 142))
    assert row["lexical_stickiness"] == 0.0
    assert row["lexical_boundary_clarity"] == 1.0


def test_span_vectors_equal_sklearn_transform_on_word_aligned_spans(topic_vectorizer):
    profile = CorpusProfile([Document("d", TWO_TOPICS)])
    spans = [(0, 42), (18, 142), (66, 93), (120, 142)]
    ours = profile.lexical.span_vectors(*map(np.array, zip(*spans))).toarray()
    theirs = topic_vectorizer.transform([TWO_TOPICS[s:e] for s, e in spans]).toarray()
    np.testing.assert_allclose(ours, theirs, atol=1e-12)  # same fit, same column order


# --------------------------------------------------------------------------- strategies, table, errors


MIXED = [
    Document("md", MARKDOWN * 3),
    Document("prose", (TWO_TOPICS + "\n\n") * 8 + THREE),
    Document("blank", "   \n "),
]


def test_every_registered_strategy_covers_its_documents():
    names = strategy_names() + ["fixed_tokens_256", "structure_aware", "whole_document"]
    table = chunk_health_table(MIXED, {n: chunk_corpus(MIXED, n) for n in names})
    assert list(table["strategy"]) == names
    assert (table["coverage"] == 1.0).all()
    for name, redundancy in zip(table["strategy"], table["redundancy"]):
        assert redundancy == 1.0 if STRATEGIES[name].tiles else redundancy > 1.0
    assert (table["evidence_completeness"].isna()).all()
    boundary = table.set_index("strategy")["boundary_ok"]
    assert boundary["sentence_window_2"] == 1.0 and boundary["whole_document"] == 1.0


def test_token_counts_equal_the_shared_counter():
    texts = ["", "hello", "Ünïcode 漢字 <|endoftext|>", MARKDOWN]
    np.testing.assert_array_equal(cl100k_counts(texts), count_tokens_many(texts))


def test_empty_chunk_list_gives_a_row_of_nones():
    row = health(THREE)
    assert row["n_chunks"] == 0 and row["coverage"] == 0.0
    assert row["median_tokens"] is None and row["boundary_ok"] is None and row["redundancy"] is None


@pytest.mark.parametrize("bad, message", [
    (dict(chunk=Chunk(0, "nope", 0, 5, 0, 5)), "unknown document"),
    (dict(chunk=Chunk(0, "d", 5, 5, 5, 5)), "empty or outside"),
    (dict(chunk=Chunk(0, "d", 0, 999, 0, 999)), "empty or outside"),
    (dict(evidence=[("d", 0, 999)]), "empty or outside"),
    (dict(evidence=[("nope", 0, 5)]), "unknown document"),
    (dict(evidence=[(0, 5)]), "tuples"),
    (dict(model_max_tokens=10), "both"),
    (dict(tiny_tokens=0), "positive integer"),
])
def test_bad_input_raises_value_error(bad, message):
    chunk = bad.pop("chunk", Chunk(0, "d", 0, 5, 0, 5))
    with pytest.raises(ValueError, match=message):
        chunk_health([Document("d", THREE)], [chunk], **bad)


def test_table_rejects_duplicate_documents_and_unknown_options():
    with pytest.raises(ValueError, match="duplicate"):
        chunk_health_table([Document("d", "a"), Document("d", "b")], {"x": []})
    with pytest.raises(ValueError, match="unknown option"):
        chunk_health_table([Document("d", "a")], {"x": []}, tiny=3)
    with pytest.raises(ValueError, match="empty"):
        chunk_health_table([Document("d", "a")], {})
