"""Post 08's report package: the published values file, the report table, neighbour differences
worded by the series' rule, and the builder's tables (verdicts agree with their intervals, which
resample documents where questions share them, as post 02's do), its figure and its sentences."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from chunklab_core.chunking import STRATEGIES
from chunklab_core.reports.post08 import builder, prose as post08_prose, tables as post08
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
    table = builder.builder_table(frame, 5, ["lc_recursive_default", "semchunk_512"], ["recursive_500"],
                                 resamples=500, seed=0)
    words = dict(zip(table["strategy"], table["verdict"]))
    assert words["semchunk_512"] == "ruled out"
    assert words["recursive_500"] == words["lc_recursive_default"] == "cannot be ruled out"
    cheapest = builder.cheapest_adequate(table, 5)
    assert cheapest["label"].tolist() == [STRATEGIES["recursive_500"].label]


def _builder_frame(cells: dict, docs: list[str], k: int = 5) -> pd.DataFrame:
    """``cells``: (corpus, retriever) -> {strategy: (recall per question, tokens)}."""
    frames = []
    for (corpus, retriever), strategies in cells.items():
        for strategy, (recall, tokens) in strategies.items():
            frames.append(pd.DataFrame({"corpus": corpus, "retriever": retriever, "model": "m", "strategy": strategy,
                                        "qid": [f"{corpus}-q{i}" for i in range(len(recall))], "doc_id": docs,
                                        f"recall@{k}": recall, f"tokens@{k}": tokens}))
    return pd.concat(frames, ignore_index=True)


def test_builder_intervals_resample_documents_where_questions_share_them():
    """Four documents of ten questions: the default misses every question of two documents.
    leader − default is 1 on those 20 questions and 0 on the others (mean 0.5, by hand). Over
    questions the interval excludes 0 (ruled out); over documents a resample of only the two
    good documents (probability 1/16 > 2.5%) gives 0, so the interval reaches 0: cannot be
    ruled out. The interval is post 02's, ``paired_difference_clustered_ci``."""
    from chunklab_core.stats.clustered import paired_difference_clustered_ci

    docs = [d for d in "abcd" for _ in range(10)]
    default = np.array([0.0] * 20 + [1.0] * 20)
    frame = _builder_frame({("squad", "bm25"): {"recursive_500": (np.ones(40), 500.0),
                                                "semchunk_512": (default, 300.0)}}, docs)
    table = builder.builder_table(frame, 5, ["semchunk_512"], ["recursive_500"], resamples=2000, seed=0).set_index("strategy")
    row = table.loc["semchunk_512"]
    assert row["leader − this"] == pytest.approx(0.5)
    with pytest.warns(UserWarning, match="only 4 documents"):
        expected = paired_difference_clustered_ci(np.ones(40), default, docs, 2000, 0)
    assert (row["diff low"], row["diff high"]) == pytest.approx((expected.low, expected.high))
    assert row["diff low"] == 0.0 and row["design"] == "documents (4)" and row["documents"] == 4
    assert row["verdict"] == "cannot be ruled out" and row["question verdict"] == "ruled out"
    assert table.loc["recursive_500", "verdict"] == "cannot be ruled out"
    assert table.loc["recursive_500", "leader"] == "Recursive 500 chars" == table.loc["semchunk_512", "series' best"]
    cheapest = builder.cheapest_adequate(table.reset_index(), 5)
    assert cheapest[["sample", "label", "tokens@5"]].values.tolist() == [
        ["SQuAD v1.1, 40 questions from 4 articles", STRATEGIES["semchunk_512"].label, 300.0]]


def test_builder_without_shared_documents_resamples_questions():
    from chunklab_core.stats.bootstrap import paired_difference_ci

    rng = np.random.default_rng(1)
    lead, other = (rng.uniform(size=30) < 0.8).astype(float), (rng.uniform(size=30) < 0.5).astype(float)
    frame = _builder_frame({("nq", "dense"): {"fixed_500": (lead, 400.0), "lc_token_default": (other, 900.0)}},
                           [f"d{i}" for i in range(30)])
    table = builder.builder_table(frame, 5, ["lc_token_default"], ["fixed_500"], resamples=1000, seed=3)
    row = table.set_index("strategy").loc["lc_token_default"]
    order = np.argsort([f"nq-q{i}" for i in range(30)])  # the table pairs questions in qid order
    expected = paired_difference_ci(lead[order], other[order], 1000, 3)
    assert (row["diff low"], row["diff high"]) == pytest.approx((expected.low, expected.high))
    assert row["design"] == "questions" and row["verdict"] == row["question verdict"]


def _two_cells():
    docs = [f"d{i // 2}" for i in range(40)]
    ones, half = np.ones(40), np.array([1.0, 0.0] * 20)
    return _builder_frame({
        ("squad", "bm25"): {"recursive_500": (ones, 500.0), "lc_recursive_default": (ones, 4000.0),
                            "semchunk_512": (half, 300.0)},
        ("cuad", "bm25"): {"recursive_500": (half, 500.0), "lc_recursive_default": (ones, 4000.0),
                           "semchunk_512": (ones, 300.0)}}, docs)


def test_compact_table_one_row_per_setting_and_a_column_per_default():
    table = builder.builder_table(_two_cells(), 5, ["lc_recursive_default", "semchunk_512"], ["recursive_500"],
                                  resamples=500, seed=0)
    compact = builder.compact_table(table)
    recursive, lc, semchunk = (STRATEGIES[s].label for s in ("recursive_500", "lc_recursive_default", "semchunk_512"))
    assert compact.columns.tolist() == ["sample", "retriever", "series' best", f"{lc}, kept in 2 of 2 settings",
                                        f"{semchunk}, kept in 1 of 2 settings"]
    assert compact.values.tolist() == [
        ["SQuAD v1.1, 40 questions from 20 articles", "bm25", recursive, "cannot be ruled out", "ruled out"],
        ["CUAD, 40 questions from 20 contracts", "bm25", f"{recursive}: ruled out", "leader", "cannot be ruled out"]]
    summary = builder.cell_summary(table, 5)
    assert summary["sample"].tolist() == ["SQuAD v1.1, 40 questions from 20 articles",
                                          "CUAD, 40 questions from 20 contracts"]
    assert summary["leader"].tolist() == [recursive, lc]
    assert summary["library defaults kept"].tolist() == ["1 of 2", "2 of 2"]
    assert summary["cheapest kept"].tolist() == [recursive, semchunk]
    assert summary["its tokens@5"].tolist() == [500, 300]


def test_builder_sentence_counts_the_table_and_a_wrong_value_set_fails():
    from chunklab_core.reports.templates import TemplateError

    table = builder.builder_table(_two_cells(), 5, ["lc_recursive_default", "semchunk_512"], ["recursive_500"],
                                  resamples=500, seed=0)
    assert post08_prose.builder_text(table, 5, "data/08_builder.csv") == (
        "Over 2 settings (2 corpora × 1 retriever), the 2 library defaults lead in 1 setting, cannot be ruled "
        "out in 2 and are ruled out in 1 of their 4 results; the series' own strategies lead in 1 setting. "
        "Every strategy's recall@5 with its interval, its difference to the leader and both verdicts "
        "(documents and questions resampled) are in `data/08_builder.csv`.")
    with pytest.raises(TemplateError, match="values not passed"):
        post08_prose.PROSE.fill("setup", sample="x", model="m")


def test_builder_figure_draws_every_setting_and_names_the_samples():
    import matplotlib

    matplotlib.use("Agg")
    from chunklab_core.reports.post08.figures import plot_builder

    table = builder.builder_table(_two_cells(), 5, ["lc_recursive_default", "semchunk_512"], ["recursive_500"],
                                  resamples=500, seed=0)
    fig = plot_builder(table, 5)
    titles = [ax.get_title() for ax in fig.axes]
    assert titles[0].startswith("SQuAD v1.1, 40 questions from 20 articles") and "leader" in titles[0]
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()][0] == "series' best"
