"""Post-03 section functions on small synthetic per-question tables."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from chunklab_core.reports.post03 import tables as ur


def _per_question(seed: int = 0, n: int = 200) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rates = {"fixed_500": 0.6, "fixed_1000": 0.8, "whole_document": 0.99}
    tokens = {"fixed_500": 1000.0, "fixed_1000": 2000.0, "whole_document": 50000.0}
    rows = []
    for strategy, rate in rates.items():
        hits = (rng.random(n) < rate).astype(float)
        for i in range(n):
            rows.append({"strategy": strategy, "qid": f"q{i}", "doc_id": f"d{i % 10}", "n_relevant": 1 + i % 3,
                         "hit@10": hits[i], "rr@10": hits[i] * 0.5, "ndcg@10": hits[i] * 0.4,
                         "p@10": hits[i] / 10, "tokens@10": tokens[strategy]})
    return pd.DataFrame(rows)


def test_score_matrix_errors():
    pq = _per_question()
    assert ur.score_matrix(pq, "hit@10").shape == (200, 3)
    with pytest.raises(ValueError, match="unknown metric"):
        ur.score_matrix(pq, "hit@99")
    with pytest.raises(ValueError, match="not in the per-question table"):
        ur.score_matrix(pq, "hit@10", ["fixed_500", "nope"])


def test_balanced_ranks_whole_document_last():
    summary = _per_question().groupby("strategy", sort=False)[["hit@10", "tokens@10"]].mean().reset_index()
    table = ur.balanced_table(summary, 10, 0.05)
    whole = table[table.strategy == "Whole document"].iloc[0]
    assert whole["recall rank"] == 1 and whole["balanced rank"] == 3
    cheap = table[table.strategy == "Fixed 500 chars"].iloc[0]
    assert cheap["balanced"] == pytest.approx(cheap["recall@10"])  # T_min strategy pays nothing


def test_width_shrinks_like_square_root():
    matrix = ur.score_matrix(_per_question(n=400), "hit@10")
    widths = ur.width_by_sample_size(matrix, [25, 100, 400], resamples=2000, seed=1)
    assert widths["mean width"].is_monotonic_decreasing
    ratio = widths["mean width"].iloc[0] / widths["mean width"].iloc[-1]
    assert 2.5 < ratio < 6  # sqrt(400/25) = 4


def test_paired_against_leader_and_needed_text():
    matrix = ur.score_matrix(_per_question(), "hit@10")
    table = ur.paired_against_leader(matrix, 2000, 1)
    assert set(table["minus"]) == {"Whole document"}
    assert (table["excludes 0"]).all() and (table["questions needed"] == "already separated").all()
    assert ur.describe_needed(None, False).startswith("no difference")
    assert ur.describe_needed(1234, False) == "1,234"


def test_missing_per_question_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="run notebook 01 first"):
        ur.load_per_question(tmp_path / "absent.csv")
