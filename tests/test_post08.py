"""Post 08's report module: the published values file, the report table, neighbour differences
worded by the series' rule, and the builder's table (verdicts agree with their intervals)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from chunklab_core.chunking import STRATEGIES
from chunklab_core.reports import post08
from chunklab_core.stats.claims import interval_side


def test_published_values_load_and_name_registered_strategies():
    published = post08.load_published()
    assert len(published) >= 6
    assert set(published["strategy"]) <= set(STRATEGIES)
    assert set(published["metric"]) <= set(post08.METRICS)
    assert published["source"].str.contains("Chroma technical report").all()
    row = published[(published["model"] == "all-MiniLM-L6-v2") & (published["strategy"] == "lc_token_250_125")]
    assert row["metric"].tolist() == ["recall"] and row["mean"].tolist() == [82.4]


def test_bad_published_file_names_line_and_field(tmp_path):
    good = post08.PUBLISHED_CSV.read_text(encoding="utf-8").splitlines()
    bad = tmp_path / "bad.csv"
    bad.write_text("\n".join([good[0], good[1].replace(",recall,", ",recal,")]) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"line 2, field metric"):
        post08.load_published(bad)
    bad.write_text("\n".join([good[0], good[1].replace(",85.4,", ",85,4x,")]) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"line 2"):
        post08.load_published(bad)


def _per_question(values: dict[str, list[float]], docs: list[str], k: int = 5) -> pd.DataFrame:
    frames = []
    for strategy, recall in values.items():
        n = len(recall)
        frames.append(pd.DataFrame({
            "corpus": "chroma", "model": "all-MiniLM-L6-v2", "strategy": strategy, "retriever": "dense",
            "qid": [f"q{i}" for i in range(n)], "doc_id": docs,
            f"chroma_recall@{k}": recall, f"chroma_precision@{k}": [0.1] * n, f"chroma_iou@{k}": [0.05] * n,
            "chroma_precision_omega": [0.2] * n}))
    return pd.concat(frames, ignore_index=True)


def test_report_table_means_sd_and_published_value():
    docs = ["a", "a", "b", "b"]
    frame = _per_question({"lc_token_250_125": [1.0, 0.5, 0.0, 0.5], "cluster_200": [1.0, 1.0, 1.0, 1.0]}, docs)
    table = post08.report_table(frame, [5], post08.load_published())
    token = table[table["strategy"] == "lc_token_250_125"].iloc[0]
    assert token["recall mean"] == pytest.approx(50.0)
    assert token["recall sd"] == pytest.approx(100 * np.std([1.0, 0.5, 0.0, 0.5]))
    assert token["recall published"] == 82.4 and np.isnan(token["iou published"])
    cluster = table[table["strategy"] == "cluster_200"].iloc[0]
    assert cluster["iou published"] == 7.2 and cluster["iou mean"] == pytest.approx(5.0)
    assert list(table["strategy"]) == ["lc_token_250_125", "cluster_200"]  # the report's order


def test_neighbour_differences_follow_the_more_cautious_interval():
    rng = np.random.default_rng(3)
    docs = [f"d{i % 12}" for i in range(120)]
    base = rng.uniform(0, 1, 120)
    frame = _per_question({"lc_token_250_125": base, "kamradt": np.clip(base - 0.3, 0, 1),
                           "cluster_200": np.clip(base - 0.3, 0, 1)}, docs)
    table = post08.neighbour_differences(frame, [5], "recall", resamples=500, seed=0)
    assert len(table) == 2
    for _, row in table.iterrows():
        side = interval_side(min(row["clustered low"], row["plain low"]), max(row["clustered high"], row["plain high"]))
        assert row["verdict"] == {1: f"{row['a']} ahead", -1: f"{row['b']} ahead", 0: "cannot be told apart"}[side]
    assert table.iloc[0]["verdict"].endswith("ahead") and table.iloc[1]["verdict"] == "cannot be told apart"


def test_builder_table_verdicts_and_cheapest():
    n = 60
    rng = np.random.default_rng(0)
    good = (rng.uniform(size=n) < 0.9).astype(float)
    rows = []
    for strategy, recall, tokens in [("recursive_500", good, 500.0), ("lc_recursive_default", good, 4000.0),
                                     ("semchunk_512", np.zeros(n), 300.0)]:
        rows.append(pd.DataFrame({"corpus": "nq", "retriever": "bm25", "model": "—", "strategy": strategy,
                                  "qid": [f"q{i}" for i in range(n)], "recall@5": recall, "tokens@5": tokens}))
    frame = pd.concat(rows, ignore_index=True)
    table = post08.builder_table(frame, 5, ["lc_recursive_default", "semchunk_512"], ["recursive_500"],
                                 resamples=500, seed=0)
    words = dict(zip(table["strategy"], table["verdict"]))
    assert words["semchunk_512"] == "ruled out"
    assert words["recursive_500"] == words["lc_recursive_default"] == "cannot be ruled out"
    cheapest = post08.cheapest_adequate(table, 5)
    assert cheapest["label"].tolist() == [STRATEGIES["recursive_500"].label]
