"""Chunking strategies: the span contract on every strategy x edge input, hand-checked
fixtures, and cross-checks against tiktoken and the TF-IDF formula."""

from __future__ import annotations

import gzip
import json
import re
import zlib

import numpy as np
import pytest

from chunklab_core.chunking import (
    LIBRARY_STRATEGIES,
    STRATEGIES,
    chunk_corpus,
    chunk_document,
    document_spans,
    strategy_label,
    strategy_names,
    structure_blocks,
    tables_intact,
)
from chunklab_core.chunking import token_windows
from chunklab_core.chunking.semantic import (
    adjacent_cosine_distances,
    merge_small_groups,
    percentile_breaks,
    tfidf_vectors,
)
from chunklab_core.chunking.spans import check_spans
from chunklab_core.core.corpus import Document
from chunklab_core.core.tokens import count_tokens, encoding

# --------------------------------------------------------------------------- fixtures


def fake_embed(texts: list[str], dim: int = 64) -> np.ndarray:
    """Deterministic hashed bag-of-words vectors (crc32, stable across processes), L2-normalised."""
    out = np.zeros((len(texts), dim))
    for i, text in enumerate(texts):
        for word in re.findall(r"\w+", text.lower()):
            out[i, zlib.crc32(word.encode()) % dim] += 1.0
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    return np.divide(out, norms, out=np.zeros_like(out), where=norms > 0)


def scripted_splits(messages, schema=None, **options) -> str:
    """A stand-in for a recorded model's ``complete``: split after the window's second piece."""
    numbers = [int(n) for n in re.findall(r"<\|start_chunk_(\d+)\|>", messages[-1]["content"])]
    return json.dumps({"split_after": numbers[1:2]})


def options(name: str) -> dict:
    params = STRATEGIES[name].params
    return {**({"embed": fake_embed} if "embed" in params else {}),
            **({"complete": scripted_splits} if "complete" in params else {})}


CJK_SENTENCE = "自然语言处理是计算机科学和人工智能的一个重要领域，它研究如何让计算机理解和生成人类语言。"
EDGE_TEXTS = {
    "empty": "",
    "one_word": "word",
    "unicode": "naïve café — 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 emoji 🙂",
    "cjk_1500": (CJK_SENTENCE * 40)[:1500],
    "short_doc": "A short document. It is shorter than one chunk of any strategy!",
    "whitespace_only": " \n\n\t  \r\n ",
    "crlf": "".join(f"Line {i} of a Windows file ends here.\r\nIt goes on a bit.\r\n\r\n" for i in range(40)),
    "squad": None,  # a few SQuAD paragraphs, loaded from the data mirror
}
ALL_STRATEGIES = list(STRATEGIES)


@pytest.fixture(scope="module")
def squad_text(mirror) -> str:
    with gzip.open(mirror / "squad-v1.1-dev.json.gz", "rt", encoding="utf-8") as handle:
        article = json.load(handle)["data"][0]
    return "\n\n".join(p["context"] for p in article["paragraphs"][:8])


@pytest.fixture(params=list(EDGE_TEXTS))
def edge_text(request) -> str:
    if request.param == "squad":
        return request.getfixturevalue("squad_text")
    return EDGE_TEXTS[request.param]


# ------------------------------------------------------------ contract, every strategy


@pytest.mark.parametrize("name", ALL_STRATEGIES)
def test_span_contract_on_edge_inputs(name, edge_text):
    doc = Document("d", edge_text)
    chunks = chunk_document(doc, name, **options(name))
    text = doc.text
    spec = STRATEGIES[name]
    if not text.strip():
        assert chunks == []
        return
    assert [c.chunk_id for c in chunks] == list(range(len(chunks)))
    assert all(c.doc_id == "d" for c in chunks)
    starts = [c.start for c in chunks]
    assert starts == sorted(starts)
    for c in chunks:
        assert 0 <= c.start < c.end <= len(text)
        assert c.ctx_start <= c.start and c.end <= c.ctx_end <= len(text)
        assert c.text(text) == text[c.start : c.end] and c.text(text).strip(), "no blank chunk"
    if spec.tiles:
        assert starts[0] == 0 and chunks[-1].end == len(text)
        assert all(a.end == b.start for a, b in zip(chunks, chunks[1:]))
        assert "".join(c.text(text) for c in chunks) == text
    covered = np.zeros(len(text), dtype=bool)
    for c in chunks:
        covered[c.start : c.end] = True
    assert all(covered[i] for i, ch in enumerate(text) if not ch.isspace())
    if spec.max_chars:
        assert max(c.end - c.start for c in chunks) <= spec.max_chars
    if spec.max_tokens:
        assert max(count_tokens(c.text(text)) for c in chunks) <= spec.max_tokens
    if spec.func.__name__ == "fixed_characters":
        assert all(c.end - c.start == spec.params["size"] for c in chunks[:-1])
    assert chunk_document(doc, name, **options(name)) == chunks, "deterministic"


def test_registry_names_labels_and_defaults():
    assert set(strategy_names()) >= {
        "fixed_500", "fixed_500_o50", "fixed_500_o125", "recursive_500",
        "sentence_window_2", "parent_doc_250_1000", "semantic_tfidf", "fixed_1000",
    }
    assert set(LIBRARY_STRATEGIES) >= {"lc_recursive_default", "lc_token_default", "llama_sentence_default",
                                       "chonkie_semantic_default", "semchunk_512", "cluster_200", "llm_semantic"}
    assert set(strategy_names(default_only=False)) - set(strategy_names()) - set(LIBRARY_STRATEGIES) >= {
        "fixed_tokens_256", "fixed_tokens_512", "recursive_tokens_512", "structure_aware",
        "structure_sections",
        "semantic_embedding", "semantic_no_floor", "whole_document",
        "fixed_tokens_512_o64", "recursive_tokens_512_o64", "semantic_embedding_tokens",  # issue 26
    }
    assert strategy_label("semantic_tfidf") == "Semantic (TF-IDF proxy, ≤500 chars)"
    assert strategy_label("sentence_window_2") == "Sentence window (±2 sentences)"
    assert strategy_label("parent_doc_250_1000") == "Parent document (250→1000 chars)"
    assert strategy_label("fixed_500_o125") == "Fixed 500 chars / overlap 125"


def test_unknown_strategy_names_the_known_ones():
    with pytest.raises(ValueError, match="fixed_500.*recursive_500"):
        chunk_document(Document("d", "text"), "fixed_501")
    with pytest.raises(ValueError, match="known"):
        strategy_label("nope")


@pytest.mark.parametrize(
    "name, overrides",
    [
        ("fixed_500", {"size": 0}),
        ("fixed_500", {"size": -5}),
        ("fixed_500", {"size": 2.5}),
        ("fixed_500", {"overlap": 500}),
        ("fixed_500_o50", {"overlap": -1}),
        ("fixed_500", {"stride": 3}),  # no such parameter
        ("recursive_500", {"max_chars": 0}),
        ("sentence_window_2", {"window": -1}),
        ("parent_doc_250_1000", {"child_size": 2000}),
        ("semantic_tfidf", {"percentile": 120}),
        ("semantic_embedding", {"min_chars": 2000}),
        ("semantic_embedding", {"embed": None}),
        ("fixed_tokens_256", {"size": 0}),
        ("structure_aware", {"max_tokens": 0}),
    ],
)
def test_bad_parameters_raise_value_error(name, overrides):
    kwargs = {**options(name), **overrides}
    with pytest.raises(ValueError):
        chunk_document(Document("d", "Some text. More text here."), name, **kwargs)
    with pytest.raises(ValueError):  # validated even when there is nothing to chunk
        chunk_document(Document("d", ""), name, **kwargs)


def test_chunk_corpus_numbers_ids_across_documents():
    docs = [Document("a", "x" * 1200), Document("b", ""), Document("c", "y" * 30)]
    chunks = chunk_corpus(docs, "fixed_500")
    assert [(c.chunk_id, c.doc_id, c.start, c.end) for c in chunks] == [
        (0, "a", 0, 500), (1, "a", 500, 1000), (2, "a", 1000, 1200), (3, "c", 0, 30),
    ]


def test_check_spans_catches_a_broken_strategy():
    with pytest.raises(RuntimeError):
        check_spans("abcdef", [(0, 3, 0, 3), (4, 6, 4, 6)], tiles=True)  # gap
    with pytest.raises(RuntimeError):
        check_spans("abcdef", [(0, 3, 1, 3)], tiles=False)  # context misses the span


# ------------------------------------------------------------------ hand-checked fixtures


def spans(text: str, name: str, **overrides) -> list[tuple[int, int]]:
    return [(s, e) for s, e, _, _ in document_spans(text, name, **overrides)]


def test_fixed_500_on_1234_characters():
    assert spans("a" * 1234, "fixed_500") == [(0, 500), (500, 1000), (1000, 1234)]


def test_fixed_overlap_starts_and_last_end():
    text = "b" * 1234
    assert spans(text, "fixed_500_o125") == [(0, 500), (375, 875), (750, 1234)]
    assert spans(text, "fixed_500_o50") == [(0, 500), (450, 950), (900, 1234)]


def test_whitespace_only_windows_are_absorbed_by_a_neighbour():
    text = "a" * 500 + " " * 500 + "b" * 10
    assert spans(text, "fixed_500") == [(0, 1000), (1000, 1010)]
    assert spans(" " * 600 + "x", "fixed_500") == [(0, 601)]


def test_sentence_window_contexts():
    sentences = [f"Sentence number {i} is here. " for i in range(6)]
    text = "".join(sentences).rstrip()
    bounds = np.cumsum([0] + [len(s) for s in sentences])
    ends = [*bounds[1:-1], len(text)]
    got = document_spans(text, "sentence_window_2")
    assert [(s, e) for s, e, _, _ in got] == list(zip(bounds[:-1], ends))
    assert got[0][2:] == (0, ends[2])  # first: itself and the two after
    assert got[2][2:] == (0, ends[4])  # middle: two on each side
    assert got[3][2:] == (bounds[1], len(text))
    assert got[5][2:] == (bounds[3], len(text))  # last: the two before and itself


def test_parent_document_children_map_to_parents():
    got = document_spans("p" * 2600, "parent_doc_250_1000")
    assert len(got) == 11
    parents = {(s, e): (cs, ce) for s, e, cs, ce in got}
    assert parents[(0, 250)] == (0, 1000)
    assert parents[(750, 1000)] == (0, 1000)
    assert parents[(1750, 2000)] == (1000, 2000)
    assert parents[(2500, 2600)] == (2000, 2600)
    assert all(cs <= s and e <= ce and ce - cs <= 1000 for s, e, cs, ce in got)


def test_recursive_prefers_the_paragraph_break():
    first = ("Alpha beta gamma. " * 17)[:300]
    second = ("Delta epsilon zeta. " * 16)[:300]
    text = first + "\n\n" + second
    assert spans(text, "recursive_500") == [(0, 302), (302, 602)]


def test_recursive_falls_back_to_sentences_words_and_hard_cuts():
    sentence = "This sentence has exactly forty-six characters. "
    text = sentence * 15  # 720 characters, one paragraph
    got = spans(text, "recursive_500")
    assert [e for _, e in got] == [480, 720]  # ten whole sentences fit in 500
    words = "word " * 150  # no sentence end: cut at whitespace
    assert all(words[e - 1] == " " for _, e in spans(words, "recursive_500")[:-1])
    assert spans("x" * 1200, "recursive_500") == [(0, 500), (500, 1000), (1000, 1200)]


def test_recursive_on_crlf_paragraphs():
    text = "first paragraph line\r\n" * 15 + "\r\n" + "second paragraph line\r\n" * 15
    cut = len("first paragraph line\r\n" * 15 + "\r\n")
    assert spans(text, "recursive_500") == [(0, cut), (cut, len(text))]


CATS = [
    "The cat sat on the warm mat.",
    "The cat chased a small mouse.",
    "A cat sleeps most of the day.",
    "Every cat likes fresh fish.",
]
VOLCANO = [
    "The volcano erupted with hot lava.",
    "Lava from the volcano reached the sea.",
    "Scientists monitor the volcano closely.",
]


def test_semantic_tfidf_breaks_between_unrelated_halves():
    text = " ".join(CATS + VOLCANO)
    cut = len(" ".join(CATS)) + 1
    assert spans(text, "semantic_tfidf") == [(0, cut), (cut, len(text))]


def test_tfidf_distances_match_the_formula():
    sentences = ["red apple pie", "green apple tart", "blue sky"]
    vocab = sorted({w for s in sentences for w in s.split()})
    counts = np.array([[s.split().count(w) for w in vocab] for s in sentences], dtype=float)
    n, df = len(sentences), (counts > 0).sum(axis=0)
    weights = counts * (np.log((1 + n) / (1 + df)) + 1)  # smoothed idf, raw tf
    weights /= np.linalg.norm(weights, axis=1, keepdims=True)
    expected = 1 - np.einsum("ij,ij->i", weights[:-1], weights[1:])
    got = adjacent_cosine_distances(tfidf_vectors(sentences))
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    assert got[1] == pytest.approx(1.0)  # no shared term


def test_percentile_breaks_and_floor_merge_pinned():
    # sorted 0.1 0.2 0.3 0.9; 80th percentile at position 2.4 -> 0.3 + 0.4 * 0.6 = 0.54
    assert percentile_breaks(np.array([0.1, 0.9, 0.2, 0.3]), 80).tolist() == [1]
    # groups are sentence ranges; the middle one (50 chars) joins the closer left neighbour
    distances = np.array([0.5, 0.2, 0.5, 0.7, 0.5])
    merged = merge_small_groups([(0, 2), (2, 3), (3, 6)], [300, 50, 300], distances, 200)
    assert merged == [(0, 3), (3, 6)]
    merged = merge_small_groups([(0, 2), (2, 3), (3, 6)], [300, 50, 300], distances[::-1], 200)
    assert merged == [(0, 2), (2, 6)]


def test_semantic_floor_removes_fragments(squad_text):
    no_floor = spans(squad_text, "semantic_no_floor", embed=fake_embed)
    floored = spans(squad_text, "semantic_embedding", embed=fake_embed)
    assert min(e - s for s, e in no_floor) < 200  # the fragment trap
    assert min(e - s for s, e in floored) >= 200
    assert len(floored) < len(no_floor)


def test_semantic_embedding_needs_embed_and_checks_its_shape():
    text = " ".join(CATS + VOLCANO)
    with pytest.raises(ValueError, match="embed"):
        chunk_document(Document("d", text), "semantic_embedding")
    with pytest.raises(ValueError, match="shape"):
        chunk_document(Document("d", text), "semantic_embedding", embed=lambda t: np.ones((2, 3)))


# ----------------------------------------------------------------------- token windows


def test_token_boundaries_match_tiktoken_decoding():
    text = EDGE_TEXTS["unicode"] + " " + CJK_SENTENCE + " <|endoftext|> 👩‍👩‍👧"
    ids = encoding().encode(text, disallowed_special=())
    expected = []
    for k in range(len(ids) + 1):
        try:
            expected.append((k, len(encoding().decode_bytes(ids[:k]).decode("utf-8"))))
        except UnicodeDecodeError:
            continue  # the prefix ends inside a character
    n_tokens, offsets = token_windows.token_boundaries(text)
    assert list(zip(n_tokens.tolist(), offsets.tolist())) == expected
    assert len(expected) < len(ids) + 1  # the fixture does split characters


def test_fixed_tokens_pinned_counts():
    text = "hello " * 600
    got = spans(text, "fixed_tokens_256")
    counts = [count_tokens(text[s:e]) for s, e in got]
    assert counts == [256, 256, count_tokens(text) - 512]


def test_fixed_tokens_never_split_a_character():
    text = "𝔘𝔫𝔦𝔠𝔬𝔡𝔢🙂" * 3
    for s, e in spans(text, "fixed_tokens_256", size=2):
        assert count_tokens(text[s:e]) <= 2 or e - s == 1  # one character may need 3 tokens
    assert "".join(text[s:e] for s, e in spans(text, "fixed_tokens_256", size=1)) == text


def test_fixed_tokens_shortens_a_window_whose_standalone_count_is_larger(monkeypatch):
    def inflated(t: str) -> int:
        return count_tokens(t) + 3 * t.count("§")

    monkeypatch.setattr(token_windows, "count_tokens", inflated)
    monkeypatch.setattr(token_windows, "count_tokens_many", lambda ts: np.array([inflated(t) for t in ts]))
    text = "plain words here " * 40 + "§ marked " + "plain words here " * 40
    got = spans(text, "fixed_tokens_256", size=50)
    assert all(inflated(text[s:e]) <= 50 for s, e in got)
    assert got[0][0] == 0 and got[-1][1] == len(text)
    assert all(a[1] == b[0] for a, b in zip(got, got[1:]))


# ---------------------------------------------------------------------- structure-aware

NQ_LIKE = (
    "Page title - wikipedia <H1> Page title </H1> <P> Intro paragraph about the page . </P> "
    "<H2> Cast </H2> <Table> <Tr> <Th> Actor </Th> <Td> Role </Td> </Tr> "
    + " ".join(f"<Tr> <Td> Actor {i} </Td> <Td> <Ul> <Li> Role {i} </Li> </Ul> </Td> </Tr>" for i in range(8))
    + " </Table> ( hide ) <P> After the table . </P> <Ul> <Li> one </Li> <Li> two </Li> </Ul> "
)


def test_structure_blocks_of_nq_markup():
    kinds = [b.kind for b in structure_blocks(NQ_LIKE)]
    assert kinds == ["heading", "paragraph", "heading", "table", "paragraph", "list"]
    table = structure_blocks(NQ_LIKE)[3]
    assert NQ_LIKE[table.start : table.end].startswith("<Table>")
    assert NQ_LIKE[table.start : table.end].endswith("</Table>")


def test_structure_aware_keeps_a_table_whole_and_glues_its_heading():
    section = NQ_LIKE[NQ_LIKE.index("<H2>") : NQ_LIKE.index("<P> After")]  # heading + table unit
    got = spans(NQ_LIKE, "structure_aware", max_tokens=count_tokens(section) + 2)
    texts = [NQ_LIKE[s:e] for s, e in got]
    assert len(texts) >= 3
    holder = next(t for t in texts if "<Table>" in t)
    assert "</Table>" in holder and holder.startswith("<H2> Cast </H2>")
    assert not any(t.rstrip().endswith(("</H1>", "</H2>")) for t in texts)
    assert tables_intact(NQ_LIKE, got) == (2, 2)
    assert tables_intact(NQ_LIKE, spans(NQ_LIKE, "fixed_500", size=100)).broken >= 1


def test_structure_aware_splits_an_oversized_table_at_rows():
    got = spans(NQ_LIKE, "structure_aware", max_tokens=40)
    assert all(count_tokens(NQ_LIKE[s:e]) <= 40 for s, e in got)
    inner = [NQ_LIKE[s:e] for s, e in got if NQ_LIKE.index("<Table>") < s < NQ_LIKE.index("</Table>")]
    assert inner and all(t.startswith(("<Tr>", "<Li>")) for t in inner)
    assert any(NQ_LIKE[s:e].startswith("<H2> Cast </H2> <Table>") for s, e in got)  # heading glued
    assert tables_intact(NQ_LIKE, got).broken == 1


MARKDOWN = (
    "# Title\n\nIntro text.\n\n## Data\n| a | b |\n|---|---|\n| 1 | 2 |\n\n"
    "- item one\n- item two\n\n```python\n# not a heading\n\nx = 1\n```\nClosing words.\n"
)


def test_structure_blocks_of_markdown():
    blocks = structure_blocks(MARKDOWN)
    assert [b.kind for b in blocks] == ["heading", "text", "heading", "table", "list", "code", "text"]
    code = blocks[5]
    assert MARKDOWN[code.start : code.end] == "```python\n# not a heading\n\nx = 1\n```"
    assert tables_intact(MARKDOWN, [(0, len(MARKDOWN))]) == (2, 2)


def test_structure_aware_plain_text_falls_back_to_paragraphs():
    paragraphs = [f"Paragraph {i}. " + "Some filler words go here. " * 12 for i in range(6)]
    text = "\n\n".join(paragraphs)
    starts = {text.index(p) for p in paragraphs}
    got = spans(text, "structure_aware", max_tokens=200)
    assert len(got) > 1 and all(s in starts for s, _ in got)


def test_structure_aware_on_a_real_nq_page(mirror):
    with gzip.open(mirror / "leval-nq-longdocs.jsonl.gz", "rt", encoding="utf-8") as handle:
        text = json.loads(handle.readline())["input"]
    got = spans(text, "structure_aware")
    assert max(count_tokens(text[s:e]) for s, e in got) <= 512
    for block in structure_blocks(text):  # every table or list that fits is kept whole
        if block.kind in ("table", "list") and count_tokens(text[block.start : block.end]) <= 480:
            assert any(s <= block.start and block.end <= e for s, e in got), text[block.start : block.end][:80]
