"""The config of a run on your own documents: defaults, sized variants, every problem at once."""

from __future__ import annotations

import os
import shutil

import pytest

from chunklab_core.chunking import STRATEGIES, document_spans
from chunklab_core.data.loaders import ValidationError
from chunklab_core.own.config import DEFAULT_STRATEGIES, OwnConfig, load_config, parse_config
from chunklab_core.core.paths import PROJ_ROOT
from chunklab_core.core.tokens import count_tokens

TEXT = ("# Title\n\nA first paragraph with a few sentences. It goes on for a while. And a bit more.\n\n"
        "| a | b |\n|---|---|\n| 1 | 2 |\n\n" + "Another sentence about lighthouses and lamps. " * 60)


def test_no_config_gives_the_defaults_with_fixed_tokens_512():
    config = load_config("")
    assert config == OwnConfig()
    assert "fixed_tokens_512" in config.strategies and list(config.strategies) == list(DEFAULT_STRATEGIES)
    assert config.ks == [1, 3, 5, 10] and parse_config(None) == OwnConfig()


def test_sized_variants_are_registered_with_their_sizes():
    config = parse_config({"strategies": [
        "recursive_500",
        {"kind": "fixed", "size": 300, "overlap": 60},
        {"kind": "fixed", "size": 64, "unit": "tokens"},
        {"kind": "fixed", "size": 512, "unit": "tokens"},
        {"kind": "recursive", "size": 40, "unit": "tokens"},
        {"kind": "recursive", "size": 250},
        {"kind": "structure", "max": 48},
    ], "k": 3})
    assert config.strategies == ["recursive_500", "fixed_chars_300_o60", "fixed_tokens_64", "fixed_tokens_512",
                                 "recursive_tokens_40", "recursive_chars_250", "structure_tokens_48"]
    assert config.ks == [1, 3, 5, 10]
    spans = document_spans(TEXT, "fixed_chars_300_o60")
    assert [s for s, *_ in spans[:3]] == [0, 240, 480] and spans[0][1] == 300
    assert max(count_tokens(TEXT[s:e]) for s, e, *_ in document_spans(TEXT, "fixed_tokens_64")) == 64
    assert max(count_tokens(TEXT[s:e]) for s, e, *_ in document_spans(TEXT, "recursive_tokens_40")) <= 40
    assert max(e - s for s, e, *_ in document_spans(TEXT, "recursive_chars_250")) <= 250
    assert max(count_tokens(TEXT[s:e]) for s, e, *_ in document_spans(TEXT, "structure_tokens_48")) <= 48
    assert STRATEGIES["fixed_tokens_512"].params == {"size": 512}  # the registered one, reused


def test_semantic_variant_keeps_its_floor_and_max():
    config = parse_config({"strategies": [{"kind": "semantic", "floor": 120, "max": 700}]})
    spec = STRATEGIES[config.strategies[0]]
    assert config.strategies == ["semantic_floor120_max700"]
    assert spec.params["min_chars"] == 120 and spec.params["max_chars"] == 700 and "embed" in spec.params


def test_every_problem_is_listed_at_once(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text(
        "strategies: [nope, {kind: fixed, size: -3}, {kind: semantic, floor: 900, max: 800},\n"
        "  {kind: fixed, size: 100, unit: tokens, overlap: 100}, {kind: blob}, {kind: structure, max: 9, unit: characters}]\n"
        "retrievers: [bm25, splade]\nk: 0\nmodels: [/nonexistent/model]\nbackend: tf\nrecall_target: 1.5\n"
        "budgets: [0]\nfoo: 1\n", encoding="utf-8")
    with pytest.raises(ValidationError) as error:
        load_config(path)
    problems = error.value.problems
    expected = [
        "bad.yaml: unknown key(s) foo",
        "bad.yaml: strategies item 1: unknown strategy 'nope'",
        "bad.yaml: strategies item 2: sizes must be positive integers, got size=-3",
        "bad.yaml: strategies item 3: floor (900) must be below max (800)",
        "bad.yaml: strategies item 4: overlap (100) must be smaller than size (100)",
        "bad.yaml: strategies item 5: kind must be one of fixed, recursive, semantic, structure, structure_sections",
        "bad.yaml: strategies item 6: the structure cap is in tokens",
        "bad.yaml: retrievers must be a non-empty list of bm25, dense, hybrid",
        "bad.yaml: model '/nonexistent/model' is neither a shipped model",
        "bad.yaml: backend must be auto, torch or onnx",
        "bad.yaml: k must be an integer from 1 to 10,000, got 0",
        "bad.yaml: budgets must be a non-empty list of positive integers",
        "bad.yaml: recall_target must be a number in (0, 1], got 1.5",
    ]
    assert len(problems) == len(expected)
    for want in expected:
        assert sum(p.startswith(want) for p in problems) == 1, want


def test_unreadable_and_invalid_yaml_are_problems(tmp_path):
    with pytest.raises(ValidationError, match="cannot be read"):
        load_config(tmp_path / "missing.yaml")
    broken = tmp_path / "broken.yaml"
    broken.write_text("strategies: [a\n", encoding="utf-8")
    with pytest.raises(ValidationError, match="broken.yaml: invalid YAML"):
        load_config(broken)
    listed = tmp_path / "list.yaml"
    listed.write_text("- a\n", encoding="utf-8")
    with pytest.raises(ValidationError, match="expected a mapping"):
        load_config(listed)


def test_the_documented_example_config_is_valid():
    config = load_config(PROJ_ROOT / "examples" / "own_config.yaml")
    assert "fixed_tokens_512_o64" in config.strategies and config.models == ["all-MiniLM-L6-v2"]


def test_a_local_model_folder_is_accepted(tmp_path):
    from chunklab_core.retrieval.model_assembly import minilm_path

    folder = tmp_path / "my-model"  # a copy of the shipped MiniLM folder (its files linked)
    shutil.copytree(minilm_path(), folder, copy_function=os.symlink)
    assert parse_config({"models": [str(folder)]}).models == [str(folder)]
