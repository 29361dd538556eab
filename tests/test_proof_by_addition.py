"""Issue 36, proof by addition: a new retriever, strategy and measure, each added through the
public registries from this file alone, run through ``run_matrix``, recorded, replayed and scored.

The retriever is a tiny TF-IDF one (cosine on raw term frequency x smoothed idf) written here;
the strategy cuts every text into pieces of a fixed number of words; the measure is the
share of the top k returned contexts that hold a gold slot (a made-up one, to show the route).
"""

from __future__ import annotations

import re
from collections import Counter

import numpy as np
import pandas as pd
import pytest

from chunklab_core import chunking
from chunklab_core.core.corpus import Corpus, Document, Question
from chunklab_core.evaluation import measures
from chunklab_core.evaluation.matrix import run_matrix
from chunklab_core.retrieval import registry
from chunklab_core.retrieval.recorded_runs import RunStore


class TinyTfidf:
    """TF-IDF cosine retrieval; ties broken by the lower index."""

    def fit(self, texts):
        self.docs = [Counter(re.findall(r"\w+", t.lower())) for t in texts]
        df = Counter(term for doc in self.docs for term in doc)
        self.idf = {t: np.log((1 + len(self.docs)) / (1 + n)) + 1 for t, n in df.items()}
        self.vectors = [self._vector(doc) for doc in self.docs]
        return self

    def _vector(self, counts):
        v = {t: c * self.idf.get(t, 0.0) for t, c in counts.items()}
        norm = np.sqrt(sum(x * x for x in v.values())) or 1.0
        return {t: x / norm for t, x in v.items()}

    def search(self, queries, k):
        k = min(k, len(self.docs))
        ids, scores = [], []
        for q in queries:
            qv = self._vector(Counter(re.findall(r"\w+", q.lower())))
            s = np.array([sum(w * d.get(t, 0.0) for t, w in qv.items()) for d in self.vectors])
            order = np.lexsort((np.arange(len(s)), -s))[:k]
            ids.append(order)
            scores.append(s[order])
        return np.array(ids, dtype=np.int64), np.array(scores)


def words_of(text, size=6):
    """Pieces of ``size`` words (character spans), each its own context."""
    bounds = [m.span() for m in re.finditer(r"\S+", text)]
    return [(bounds[i][0], bounds[min(i + size, len(bounds)) - 1][1]) * 2 for i in range(0, len(bounds), size)]


def slot_share(run, ks, **context):
    """Per question: share of the top k contexts holding a gold alternative (lower-cased)."""
    rows = {measures.column("slot_share", k): np.full(len(run.corpus.questions), np.nan) for k in ks}
    for row, q in enumerate(run.corpus.questions):
        golds = [alt.lower() for slot in q.gold_slots for alt in slot]
        for k in ks:
            top = [i for i in run.ranked[row, :k] if i >= 0]
            rows[measures.column("slot_share", k)][row] = np.mean(
                [any(g in run.context_text(i).lower() for g in golds) for i in top]) if top else 0.0
    return pd.DataFrame(rows)


@pytest.fixture
def added():
    registry.register_retriever(registry.RetrieverSpec("tfidf", "TF-IDF", needs_model=False,
                                                       factory=lambda **options: TinyTfidf(), version=1))
    registry.register_retriever(registry.RetrieverSpec("bm25_tfidf", "BM25 + TF-IDF (RRF)", needs_model=False,
                                                       factory=registry.RETRIEVER_SPECS["hybrid"].factory,
                                                       version=None, fused_from=("bm25", "tfidf")))
    chunking.register_strategy("words_6", words_of, {"size": 6}, "Six words", tiles=False)
    measures.register_measure(measures.Measure("slot_share", "share of the top k holding a gold slot",
                                               measures.EVERY_K, "this test", compute=slot_share))
    try:
        yield
    finally:
        for name in ("tfidf", "bm25_tfidf"):
            registry.RETRIEVER_SPECS.pop(name)
        chunking._REGISTRY.pop("words_6")
        measures.MEASURES.pop("slot_share")


WORDS = ["river", "bank", "money", "loan", "water", "fish", "bread", "cold", "stone", "green", "light", "tower"]


def tiny_corpus():
    rng = np.random.default_rng(7)
    text = " ".join(" ".join(rng.choice(WORDS, 5)) + f" item{i}." for i in range(40))
    questions = [Question(f"q{i}", f"which item{i} {WORDS[i % 12]}", "d0", ((f"item{i}",),)) for i in range(0, 40, 4)]
    return {"tiny": Corpus("tiny", [Document("d0", text)], questions)}


def test_a_new_retriever_strategy_and_measure_run_through_the_matrix_record_and_replay(added, tmp_path, monkeypatch):
    corpora = {**tiny_corpus()}
    retrievers = ["bm25", "tfidf", "bm25_tfidf"]
    args = dict(corpora=corpora, strategies=["fixed_500", "words_6"], retrievers=retrievers, ks=(1, 3),
                progress=False)
    live = run_matrix(**args, store=RunStore(tmp_path / "live", "live"))
    recorded = run_matrix(**args, store=RunStore(tmp_path / "runs", "record"))
    names = sorted(p.name for p in (tmp_path / "runs").rglob("*.npz"))
    assert names == ["bm25.npz", "bm25.npz", "tfidf.npz", "tfidf.npz"], "stored under its name; fused not stored"

    monkeypatch.setitem(registry.RETRIEVER_SPECS, "tfidf", registry.RetrieverSpec(
        "tfidf", "TF-IDF", needs_model=False, factory=lambda **o: pytest.fail("a replay builds no retriever"), version=1))
    replayed = run_matrix(**args, store=RunStore(tmp_path / "runs", "replay"))
    pd.testing.assert_frame_equal(replayed.per_question, recorded.per_question)
    pd.testing.assert_frame_equal(live.per_question, recorded.per_question)

    table = replayed.per_question
    assert set(table["retriever"]) == set(retrievers) and set(table["strategy"]) == {"fixed_500", "words_6"}
    assert {"slot_share@1", "slot_share@3", "recall@3"} <= set(table.columns)
    # scored: every question's gold token is unique to one six-word piece, which TF-IDF ranks first
    words = table[(table["strategy"] == "words_6") & (table["retriever"] == "tfidf")]
    assert words["recall@1"].mean() == 1.0 and words["slot_share@1"].mean() == 1.0

    monkeypatch.setitem(registry.RETRIEVER_SPECS, "tfidf", registry.RetrieverSpec(
        "tfidf", "TF-IDF", needs_model=False, factory=lambda **o: TinyTfidf(), version=2))
    with pytest.raises(Exception, match="scoring version changed"):
        run_matrix(**args, store=RunStore(tmp_path / "runs", "replay"))


def test_an_unknown_retriever_is_an_error_naming_the_registered_ones(added):
    from chunklab_core.retrieval.run import make_retriever

    with pytest.raises(ValueError, match="known: bm25, dense, hybrid, tfidf, bm25_tfidf"):
        make_retriever("splade")
    assert isinstance(make_retriever("tfidf"), TinyTfidf)
    with pytest.raises(ValueError, match="already registered"):
        registry.register_retriever(registry.RETRIEVER_SPECS["tfidf"])


def test_a_strategy_declares_whether_it_needs_an_embedding_model_and_its_variants_inherit_it():
    from chunklab_core.evaluation.matrix import needs_embedding

    assert chunking.STRATEGIES["semantic_embedding"].needs_embedding and needs_embedding("semantic_no_floor")
    assert not needs_embedding("fixed_500") and not chunking.STRATEGIES["semantic_tfidf"].needs_embedding
    name = chunking.register_variant("semantic_floor_test_b36", "semantic_embedding", {"min_chars": 50}, "test")
    try:
        assert needs_embedding(name)
    finally:
        chunking._REGISTRY.pop(name)


def sentence_pieces(text, sentences=3):
    """Pieces of ``sentences`` sentences (split after ``.``), each its own context."""
    ends = [m.end() for m in re.finditer(r"\.\s*|\Z", text) if m.end() > 0]
    starts = [0, *ends[:-1]]
    cuts = [(starts[i], ends[min(i + sentences, len(ends)) - 1]) for i in range(0, len(ends), sentences)]
    return [(s, e, s, e) for s, e in cuts if e > s]


@pytest.fixture
def sized_strategy():
    """A strategy declaring a sizeable parameter (in sentences) and the config kind it answers to."""
    from chunklab_core import chunking

    saved = dict(chunking._REGISTRY)
    chunking.register_strategy("sentence_pieces_3", sentence_pieces, {"sentences": 3}, "Three sentences",
                               sizes={"sentences": "sentences"},
                               sizing=chunking.Sizing("pieces", {"size": "sentences"}, "pieces_{size}",
                                                      "Pieces of {size} sentences"))
    yield
    chunking._REGISTRY.clear()
    chunking._REGISTRY.update(saved)


def test_a_strategy_with_a_declared_sizeable_parameter_is_sizeable_in_the_own_documents_config(sized_strategy):
    from chunklab_core.data.loaders import ValidationError
    from chunklab_core.own.config import parse_config

    config = parse_config({"strategies": [{"kind": "pieces", "size": 2}, {"kind": "pieces", "size": 4, "unit": "sentences"},
                                          {"kind": "fixed", "size": 300}]})
    assert config.strategies == ["pieces_2", "pieces_4", "fixed_chars_300"]
    spec = chunking.STRATEGIES["pieces_2"]
    assert spec.label == "Pieces of 2 sentences" and spec.params == {"sentences": 2} and spec.sizes == {"sentences": "sentences"}
    text = "One. Two. Three. Four. Five."
    assert [text[s:e].strip() for s, e, *_ in chunking.document_spans(text, "pieces_2")] == ["One. Two.", "Three. Four.", "Five."]
    with pytest.raises(ValidationError) as caught:
        parse_config({"strategies": [{"kind": "pieces", "size": 0}, {"kind": "pieces", "size": 2, "unit": "tokens"},
                                     {"kind": "pieces", "max": 2}, {"kind": "nope"}]})
    problems = caught.value.problems
    assert "sizes must be positive integers, got size=0" in problems[0]
    assert "the pieces cap is in sentences (unit: sentences)" in problems[1]
    assert "unknown key(s) max for kind pieces (allowed: size, unit)" in problems[2]
    assert "kind must be one of fixed, pieces, recursive, semantic" in problems[-1]


def test_the_config_kinds_are_the_declared_sizings_and_units_are_checked():
    from chunklab_core.own.config import sized_kinds

    assert sized_kinds() == {
        "fixed": {"characters": "fixed_500", "tokens": "fixed_tokens_256"},
        "recursive": {"characters": "recursive_500", "tokens": "recursive_tokens_512"},
        "semantic": {"characters": "semantic_embedding", "tokens": "semantic_embedding_tokens"},
        "structure": {"tokens": "structure_aware"}, "structure_sections": {"tokens": "structure_sections"}}
    assert chunking.STRATEGIES["fixed_tokens_512_o64"].sizes == {"size": "tokens", "overlap": "tokens"}
    assert chunking.STRATEGIES["sentence_window_2"].sizes == {"window": "sentences"}
    with pytest.raises(ValueError, match="size units must be one of chars, tokens, sentences"):
        chunking.register_strategy("bad_units_b36", words_of, {"size": 6}, "bad", sizes={"size": "words"})
    with pytest.raises(ValueError, match="one unit"):
        chunking.register_strategy("bad_sizing_b36", words_of, {"size": 6}, "bad",
                                   sizing=chunking.Sizing("words", {"size": "size"}, "w{size}", "w"))
    assert "bad_units_b36" not in chunking.STRATEGIES and "bad_sizing_b36" not in chunking.STRATEGIES
