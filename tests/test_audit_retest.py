"""The temperature retest's item subset: drawn from the sample's first wave, so a top-up does not move it."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from chunklab_core.audit.retest import retest_items


def _audit(n_first: int, n_second: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    n = n_first + n_second
    population = pd.DataFrame({
        "item_id": [f"p{i}" for i in range(n)], "qid": [f"q{i}" for i in range(n)],
        "question": "q", "reference": "r", "answer": "a",
        "judge_qwen15_3way": "correct", "judge_qwen05_3way": "wrong",
        "wave": [1] * n_first + [2] * n_second})
    key = pd.DataFrame({"item_id": [f"A{i:03d}" for i in range(1, n + 1)],
                        "source_item_id": population["item_id"]})
    return key, population


def test_a_top_up_leaves_the_subset_where_it_was():
    key, population = _audit(12, 0)
    before = retest_items(key, population, 5, seed=13)
    key2, population2 = _audit(12, 6)  # the same first wave, a second wave appended
    after = retest_items(key2, population2, 5, seed=13)
    pd.testing.assert_frame_equal(before, after)
    # drawn from the whole key instead, the seeded draw would differ (the fault this fixes)
    whole = np.sort(np.random.default_rng(13).choice(18, 5, replace=False))
    assert [f"A{i + 1:03d}" for i in whole] != before["item_id"].tolist()


def test_without_a_wave_column_every_item_is_eligible_and_n_is_checked():
    key, population = _audit(8, 0)
    items = retest_items(key, population.drop(columns="wave"), 8, seed=1)
    assert sorted(items["item_id"]) == key["item_id"].tolist()
    with pytest.raises(ValueError, match="first wave"):
        retest_items(key, population, 9, seed=1)
