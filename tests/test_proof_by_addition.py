"""Issues 36 and 47, proof by addition: a retriever, a fused retriever with its own fusion, a
chunking strategy and a measure, each added the way a user adds one: a module dropped into the
member folder of a copy of the package (``retrieval/retrievers/``, ``chunking/strategies/``), and
a measure from an outside distribution's entry point (group ``chunklab.measures``). A fresh
Python process imports the copy and runs them through ``run_matrix`` (recorded, replayed),
the own-documents config and the strategy listing. The added files are ``tests/additions/``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from chunklab_core import chunking

ROOT = Path(__file__).resolve().parents[1]
ADDITIONS = Path(__file__).with_name("additions")

SCRIPT = r"""
import json, sys
import numpy as np, pandas as pd
from chunklab_core.core.corpus import Corpus, Document, Question
from chunklab_core.evaluation.matrix import run_matrix
from chunklab_core.evaluation.measures import MEASURES
from chunklab_core.own.config import parse_config, strategy_table
from chunklab_core.retrieval.cell_search import search_cell
from chunklab_core.retrieval.recorded_runs import RunStore, corpus_sample_label
from chunklab_core.retrieval.registry import registered

WORDS = ["river", "bank", "money", "loan", "water", "fish", "bread", "cold", "stone", "green", "light", "tower"]
rng = np.random.default_rng(7)
text = " ".join(" ".join(rng.choice(WORDS, 5)).capitalize() + f" item{i}." for i in range(120))
questions = [Question(f"q{i}", f"which item{i} {WORDS[i % 12]}", "d0", ((f"item{i}",),)) for i in range(0, 120, 12)]
corpora = {"tiny": Corpus("tiny", [Document("d0", text)], questions)}
tmp = sys.argv[1]
args = dict(corpora=corpora, strategies=["fixed_500", "sentence_pack_300"],
            retrievers=["bm25", "tfidf", "bm25_tfidf_first"], ks=(1, 3), progress=False)
live = run_matrix(**args, store=RunStore(tmp + "/live", "live"))
recorded = run_matrix(**args, store=RunStore(tmp + "/runs", "record"))
replayed = run_matrix(**args, store=RunStore(tmp + "/runs", "replay"))
pd.testing.assert_frame_equal(replayed.per_question, recorded.per_question)
pd.testing.assert_frame_equal(live.per_question, recorded.per_question)
table = replayed.per_question
run = replayed.runs[("tiny", "all-MiniLM-L6-v2", "sentence_pack_300", "bm25_tfidf_first")]
texts = [c.text(text) for c in replayed.chunks[("tiny", "sentence_pack_300")]]
queries = [q.text for q in questions]
label = corpus_sample_label(corpora["tiny"])
parts = [search_cell(label, "sentence_pack_300", name, texts, queries, 100, store=RunStore(tmp + "/runs", "replay")).ids
         for name in ("bm25", "tfidf")]
from chunklab_core.retrieval.hybrid import rrf_fuse
from chunklab_core.retrieval.retrievers.bm25_tfidf_first import tfidf_then_bm25
fused = search_cell(label, "sentence_pack_300", "bm25_tfidf_first", texts, queries, 10,
                    store=RunStore(tmp + "/runs", "replay")).ids
config = parse_config({"strategies": ["sentence_pack_300"], "retrievers": ["tfidf"]})
print(json.dumps({
    "retrievers": sorted(set(table["retriever"])), "strategies": sorted(set(table["strategy"])),
    "columns": list(table.columns), "registered": list(registered()), "measures": list(MEASURES),
    "stored": sorted(str(p.relative_to(tmp + "/runs/" + label)) for p in __import__("pathlib").Path(tmp + "/runs").rglob("*.npz")),
    "tfidf_recall_1": float(table[(table.strategy == "sentence_pack_300") & (table.retriever == "tfidf")]["recall@1"].mean()),
    "ap_1": float(table[(table.strategy == "sentence_pack_300") & (table.retriever == "tfidf")]["ap@1"].mean()),
    "fused_is_its_fuse": bool((fused == tfidf_then_bm25(parts, 10)[0]).all()),
    "fused_is_rrf": bool((fused == rrf_fuse(parts, k=10)[0]).all()),
    "own_config": [config.strategies, config.retrievers],
    "listed": [name for name, _ in strategy_table() if name == "sentence_pack_300"],
}))
"""


@pytest.fixture(scope="module")
def added(tmp_path_factory):
    """A copy of the package with three modules dropped into its folders, and a tiny installed
    distribution whose entry point (group ``chunklab.measures``) adds AP@k."""
    root = tmp_path_factory.mktemp("clone")
    shutil.copytree(ROOT / "chunklab_core", root / "chunklab_core", ignore=shutil.ignore_patterns("__pycache__"))
    for name, folder in (("tfidf.py", "retrieval/retrievers"), ("bm25_tfidf_first.py", "retrieval/retrievers"),
                         ("sentence_packing.py", "chunking/strategies")):
        shutil.copy(ADDITIONS / name, root / "chunklab_core" / folder / name)
    plugin = tmp_path_factory.mktemp("plugin")
    shutil.copy(ADDITIONS / "chunklab_ap_plugin.py", plugin / "chunklab_ap_plugin.py")
    info = plugin / "chunklab_ap_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: chunklab-ap-plugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[chunklab.measures]\nap = chunklab_ap_plugin\n")
    return root, plugin


def run_in(root: Path, plugin: Path, code: str, *argv: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), str(plugin)])}
    return subprocess.run([sys.executable, "-c", code, *argv], cwd=root, env=env, capture_output=True, text=True,
                          timeout=600)


def test_dropped_modules_and_an_entry_point_run_through_the_matrix_record_replay_and_config(added, tmp_path):
    root, plugin = added
    done = run_in(root, plugin, SCRIPT, str(tmp_path))
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert {"tfidf", "bm25_tfidf_first"} <= set(found["registered"]) and "ap" in found["measures"]
    assert found["retrievers"] == ["bm25", "bm25_tfidf_first", "tfidf"]
    assert found["strategies"] == ["fixed_500", "sentence_pack_300"]
    assert {"ap@1", "ap@3", "recall@1", "hit@3"} <= set(found["columns"])
    # stored under the new retriever's name; the fused one is never stored, but fused from its parts
    assert {"sentence_pack_300/tfidf.npz", "sentence_pack_300/bm25.npz"} <= set(found["stored"])
    assert not any("bm25_tfidf_first" in name for name in found["stored"])
    assert found["fused_is_its_fuse"] and not found["fused_is_rrf"], "the matrix fuses with the spec's own fuse"
    # every question's gold token is in one sentence, which TF-IDF ranks first: recall@1 = AP@1 = 1
    assert found["tfidf_recall_1"] == 1.0 and found["ap_1"] == 1.0
    assert found["own_config"] == [["sentence_pack_300"], ["tfidf"]] and found["listed"] == ["sentence_pack_300"]


@pytest.mark.parametrize("first", ["chunklab_core.evaluation.slot_metrics", "chunklab_core.evaluation.measures.rr",
                                   "chunklab_core.chunking.strategies.fixed_tokens",
                                   "chunklab_core.retrieval.retrievers.hybrid", "chunklab_core.retrieval.cell_search"])
def test_importing_any_module_first_completes_every_registry(added, first):
    root, plugin = added
    code = (f"import {first}\n"
            "from chunklab_core.chunking import STRATEGIES\n"
            "from chunklab_core.evaluation.measures import MEASURES\n"
            "from chunklab_core.retrieval.registry import RETRIEVER_SPECS\n"
            "print(('sentence_pack_300' in STRATEGIES, 'tfidf' in RETRIEVER_SPECS,"
            " 'ap' in MEASURES, all(m.compute for m in MEASURES.values())))")
    done = run_in(root, plugin, code)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "(True, True, True, True)"


def test_a_broken_dropped_module_is_an_error_naming_it(added, tmp_path):
    root, plugin = added
    broken = tmp_path / "clone"
    shutil.copytree(root / "chunklab_core", broken / "chunklab_core")
    (broken / "chunklab_core" / "retrieval/retrievers" / "broken.py").write_text("import no_such_module_b47\n")
    done = run_in(broken, plugin, "import chunklab_core.retrieval")
    assert done.returncode != 0
    assert "the retrievers module chunklab_core.retrieval.retrievers.broken failed to import" in done.stderr


def test_the_scoped_registries_undo_a_registration_and_a_taken_name_is_an_error():
    from chunklab_core.retrieval import registry

    with registry.RETRIEVER_SPECS.scoped():
        registry.register_retriever(registry.RetrieverSpec("scoped_b47", "x", needs_model=False,
                                                           factory=lambda **o: None, version=1))
        assert "scoped_b47" in registry.registered()
        with pytest.raises(ValueError, match="already registered"):
            registry.register_retriever(registry.RETRIEVER_SPECS["scoped_b47"])
    assert "scoped_b47" not in registry.registered()
    with pytest.raises(ValueError, match="needs its fuse"):
        registry.register_retriever(registry.RetrieverSpec("fused_b47", "x", needs_model=False, version=None,
                                                           fused_from=("bm25",)))


def test_a_measure_is_a_parameterised_value():
    from chunklab_core.evaluation.measures import MEASURES

    recall = MEASURES["recall"]
    assert (recall @ 10).column == "recall@10" and str(MEASURES["ndcg"] @ 5) == "ndcg@5"
    assert recall.with_params(threshold=0.8).params == {"threshold": 0.8} and recall.params == {"threshold": 0.90}
    with pytest.raises(ValueError, match="no parameter"):
        recall.with_params(rel=2)


def words_of(text, size=6):
    """Pieces of ``size`` words (character spans), each its own context."""
    bounds = [m.span() for m in re.finditer(r"\S+", text)]
    return [(bounds[i][0], bounds[min(i + size, len(bounds)) - 1][1]) * 2 for i in range(0, len(bounds), size)]


def test_a_strategy_declares_whether_it_needs_an_embedding_model_and_its_variants_inherit_it():
    from chunklab_core.evaluation.matrix import needs_embedding

    assert chunking.STRATEGIES["semantic_embedding"].needs_embedding and needs_embedding("semantic_no_floor")
    assert not needs_embedding("fixed_500") and not chunking.STRATEGIES["semantic_tfidf"].needs_embedding
    with chunking.STRATEGIES.scoped():
        name = chunking.register_variant("semantic_floor_test_b36", "semantic_embedding", {"min_chars": 50}, "test")
        assert needs_embedding(name)
    assert name not in chunking.STRATEGIES, "the scoped registry undid the variant"


def sentence_pieces(text, sentences=3):
    """Pieces of ``sentences`` sentences (split after ``.``), each its own context."""
    ends = [m.end() for m in re.finditer(r"\.\s*|\Z", text) if m.end() > 0]
    starts = [0, *ends[:-1]]
    cuts = [(starts[i], ends[min(i + sentences, len(ends)) - 1]) for i in range(0, len(ends), sentences)]
    return [(s, e, s, e) for s, e in cuts if e > s]


@pytest.fixture
def sized_strategy():
    """A strategy declaring a sizeable parameter (in sentences) and the config kind it answers to."""
    chunking.register_strategy("sentence_pieces_3", sentence_pieces, {"sentences": 3}, "Three sentences",
                               sizes={"sentences": "sentences"},
                               sizing=chunking.Sizing("pieces", {"size": "sentences"}, "pieces_{size}",
                                                      "Pieces of {size} sentences"))
    yield  # (the autouse registries_scoped fixture removes it afterwards)


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


def test_names_are_resolved_once_at_the_edge_and_specs_travel_below(tmp_path, monkeypatch):
    """run_matrix resolves each retriever and strategy name once; run_cell, cell_search and
    make_retriever take the retriever's spec it passes on (the run store its version), chunk_corpus
    the strategy's: one lookup each, computed live, recorded or replayed."""
    from collections import Counter

    from chunklab_core.core.corpus import Corpus, Document, Question
    from chunklab_core.core.members import Registry
    from chunklab_core.evaluation.matrix import run_matrix
    from chunklab_core.retrieval.recorded_runs import RunStore

    lookups = Counter()
    original = Registry.__getitem__

    def counted(self, name):
        if self.kind in ("retriever", "strategy"):
            lookups[name] += 1
        return original(self, name)

    monkeypatch.setattr(Registry, "__getitem__", counted)
    text = " ".join(f"Sentence number {i} mentions item{i} and a river." for i in range(30))
    documents = [Document(f"d{i}", text) for i in range(3)]  # the strategy's spec cuts every document
    corpus = Corpus("tiny", documents, [Question("q1", "which item7", "d0", (("item7",),))])
    for mode, expected in (("live", 1), ("record", 1), ("replay", 1)):
        lookups.clear()
        run_matrix({"tiny": corpus}, ["fixed_500"], ["bm25"], ks=(1, 3), progress=False,
                   store=RunStore(tmp_path / "runs", mode))
        assert lookups == {"bm25": expected, "fixed_500": 1}, (mode, lookups)
