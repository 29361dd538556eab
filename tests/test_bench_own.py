"""``scripts/bench_own.py``: the cells are matched like for like, and the whole-run and
like-for-like blocks have their format (no peer tool is run here)."""

from __future__ import annotations

import importlib.util
import json

import pytest

from chunklab_core.core.paths import PROJ_ROOT


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_own", PROJ_ROOT / "scripts" / "bench_own.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_cell_names_its_peer_strategy_and_structure_is_packed(bench):
    peers = [peer["name"] for _, _, peer in bench.CELLS]
    assert len(set(peers)) == len(peers)  # one cell per peer strategy
    structure = next(ours for _, ours, peer in bench.CELLS if peer["name"] == "structure")
    assert structure["kind"] == "structure"  # section packing (structure_aware, pack), not structure_sections


def test_configs_put_every_cell_in_one_command_per_tool(bench, tmp_path):
    import yaml

    ours, peer = bench.configs(tmp_path, bench.CELLS, ["bm25", "dense", "hybrid"], "/models/minilm", "auto")
    ours, peer = yaml.safe_load(ours.read_text()), yaml.safe_load(peer.read_text())
    assert len(ours["strategies"]) == len(peer["strategies"]) == len(bench.CELLS)
    assert ours["retrievers"] == peer["retrieval"]["compare"] == ["bm25", "dense", "hybrid"]
    single = yaml.safe_load(bench.configs(tmp_path / "one", bench.CELLS[:1], ["bm25"], "/m", "auto")[1].read_text())
    assert "compare" not in single["retrieval"] and single["retrieval"]["mode"] == "bm25"


ROWS = [  # two alternated repeats: ours first in the first, the peer first in the second
    {"repeat": 1, "tool": "ours", "phase": "cold", "seconds": 10.0, "load": 2.0},
    {"repeat": 1, "tool": "ours", "phase": "warm", "seconds": 4.0, "load": 2.0},
    {"repeat": 1, "tool": "peer", "phase": "cold", "seconds": 40.0, "load": 3.0},
    {"repeat": 1, "tool": "peer", "phase": "warm", "seconds": 10.0, "load": 3.0},
    {"repeat": 2, "tool": "peer", "phase": "cold", "seconds": 30.0, "load": 4.0},
    {"repeat": 2, "tool": "peer", "phase": "warm", "seconds": 8.0, "load": 4.0},
    {"repeat": 2, "tool": "ours", "phase": "cold", "seconds": 12.0, "load": 1.0},
    {"repeat": 2, "tool": "ours", "phase": "warm", "seconds": 6.0, "load": 1.0},
]


def test_ratio_summary_by_hand(bench):
    cold = bench.ratio_summary(ROWS, "cold")
    assert cold["fastest ratio"] == pytest.approx(10 / 30)
    assert cold["median ratio"] == pytest.approx((10 / 40 + 12 / 30) / 2)
    warm = bench.ratio_summary(ROWS, "warm")
    assert warm["fastest ratio"] == pytest.approx(4 / 8) and warm["median ratio"] == pytest.approx((0.4 + 0.75) / 2)
    assert warm["load"] == (1.0, 4.0)


def test_whole_run_lines_format(bench):
    lines = bench.whole_run_lines("corpus X", 15, ROWS)
    assert lines[0] == "whole run (corpus X): one command per tool, 15 cells, both tools alternated"
    assert len(lines) == 1 + len(ROWS) + 2
    assert lines[1] == "  repeat 1 cold ours    10.0 s  (load 2.0)"
    assert lines[-2] == ("  cold: ours 10.0 s / peer 30.0 s = 0.33x fastest of 2; median of paired ratios 0.33x; "
                         "target <= 0.50x met; load 1.0-4.0")
    assert lines[-1].startswith("  warm: ours 4.0 s / peer 8.0 s = 0.50x fastest of 2; median of paired ratios 0.57x")
    assert "NOT met" in lines[-1]


def test_comparability_reads_both_tools_outputs(bench, tmp_path):
    cells = bench.CELLS[:2]
    (tmp_path / "chunk_health.csv").write_text(
        "corpus,strategy,n_chunks,median_tokens\nown,fixed_tokens_512_o64,100,400.0\n"
        "own,recursive_tokens_512_o64,60,200.0\n", encoding="utf-8")
    report = {"strategy_results": [
        {"strategy": "fixed", "retriever": r, "chunk_health": {"num_chunks": 90, "tokens_median": 420}}
        for r in ("bm25", "dense")] + [
        {"strategy": "recursive", "retriever": "bm25", "chunk_health": {"num_chunks": 100, "tokens_median": 210}}]}
    (tmp_path / "report.json").write_text(json.dumps(report), encoding="utf-8")
    rows = bench.comparability(tmp_path / "chunk_health.csv", tmp_path / "report.json", cells)
    assert [r["comparable"] for r in rows] == [True, False]  # 100/90 and 400/420 within 25%; 60/100 is -40%
    assert rows[1]["count off"] == pytest.approx(-0.4)
    lines = bench.comparability_lines(rows)
    assert lines[1].endswith("comparable") and "NOT comparable: -40% chunks, -5% median size" in lines[2]
