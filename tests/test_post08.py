"""Post 08's report package: the published values file, the report table, neighbour differences
worded by the series' rule, and the builder's tables (verdicts agree with their intervals, which
resample documents where questions share them, as post 02's do), its figure and its sentences."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from chunklab_core.chunking import STRATEGIES
from chunklab_core.reports.post08 import prose as post08_prose, tables as post08
from chunklab_core.stats.claims import interval_side


def test_published_values_load_and_name_registered_strategies():
    published = post08.load_published()
    assert set(published["strategy"]) <= set(STRATEGIES)
    assert set(published["metric"]) <= set(post08.METRICS)
    assert published["source"].str.contains("Chroma technical report").all()
    assert published["source"].str.contains("https://www.trychroma.com/research/evaluating-chunking").all()
    row = published[(published["model"] == "all-MiniLM-L6-v2") & (published["strategy"] == "lc_token_250_125")]
    assert row["metric"].tolist() == list(post08.METRICS)


def test_published_file_has_both_tables_whole_at_the_reports_depth():
    """The shape of the report's two tables: 13 rows (text-embedding-3-large) and 8 (MiniLM),
    four metrics each with a standard deviation, all at 5 retrieved chunks; and the
    transcription agrees with what the report's prose says of its tables (bold values)."""
    published = post08.load_published()
    assert tuple(published["model"].unique()) == post08.PUBLISHED_MODELS
    assert (published["retrieved"] == post08.PUBLISHED_DEPTH).all()
    assert published["sd"].gt(0).all() and published["mean"].between(0, 100).all()
    assert published["mean_tokens"].gt(0).all()
    rows = published.groupby(["model", "chroma_chunker", "size", "overlap"], dropna=False)
    assert all(tuple(metrics) == post08.METRICS for _, metrics in rows["metric"])
    sizes = published.groupby("model")["strategy"].nunique()
    assert sizes.to_dict() == {"text-embedding-3-large": 13, "all-MiniLM-L6-v2": 8}
    assert not published.duplicated(["model", "strategy", "metric"]).any()
    minilm = published[published["model"] == "all-MiniLM-L6-v2"]
    assert set(minilm["strategy"]) == set(post08.MINILM_TABLE_ROWS)
    for model, table in published.groupby("model"):
        best = {m: table.loc[table[table["metric"] == m]["mean"].idxmax(), "strategy"] for m in post08.METRICS}
        assert best["iou"] == best["precision"] == best["precision_omega"] == "cluster_200", model
    assert minilm.loc[minilm[minilm["metric"] == "recall"]["mean"].idxmax(), "strategy"] == "lc_token_250_125"
    large = published[published["model"] == "text-embedding-3-large"]
    assert large.loc[large[large["metric"] == "recall"]["mean"].idxmax(), "strategy"] == "llm_semantic"


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
            "chroma_precision_omega": [0.2] * n, "chroma_precision_omega_summed": [0.15] * n}))
    return pd.concat(frames, ignore_index=True)


def test_report_table_means_and_sd():
    docs = ["a", "a", "b", "b"]
    frame = _per_question({"lc_token_250_125": [1.0, 0.5, 0.0, 0.5], "cluster_200": [1.0, 1.0, 1.0, 1.0]}, docs)
    table = post08.report_table(frame, [5])
    token = table[table["strategy"] == "lc_token_250_125"].iloc[0]
    assert token["recall mean"] == pytest.approx(50.0)
    assert token["recall sd"] == pytest.approx(100 * np.std([1.0, 0.5, 0.0, 0.5]))
    assert token["precision_omega mean"] == pytest.approx(20.0) and token["precision_omega_summed mean"] == pytest.approx(15.0)
    assert "recall published" not in table
    assert list(table["strategy"]) == ["lc_token_250_125", "cluster_200"]  # the report's order


def test_comparison_marks_agreement_only_where_comparable():
    """Hand fixture: 4 questions, recall of TokenText 250/125 = 50 points (published 82.4 ± 36.2,
    SEM 36.2 / sqrt(472)); precision_Ω 20 points for every row. precision_Ω of a chunker no model cuts
    is judged by rounding (deterministic), everything else the same model computes by the SEM."""
    docs = ["a", "a", "b", "b"]
    frame = _per_question({"lc_token_250_125": [1.0, 0.5, 0.0, 0.5], "lc_token_400_0": [1.0] * 4,
                           "cluster_200": [1.0] * 4}, docs)
    published = post08.load_published()
    table = post08.comparison_table(frame, published, "all-MiniLM-L6-v2", 472)
    assert len(table) == len(published) and (table["retrieved"] == 5).all()
    key = table.set_index(["table", "strategy", "metric"])
    token = key.loc[("all-MiniLM-L6-v2", "lc_token_250_125", "recall")]
    assert token["published sem"] == pytest.approx(36.2 / np.sqrt(472))
    assert token["re-run − published"] == pytest.approx(50.0 - 82.4)
    assert token["basis"] == "same model" and token["yardstick"] == "SEM" and token["agrees"] is False
    omega = key.loc[("all-MiniLM-L6-v2", "lc_token_250_125", "precision_omega")]  # 20 against 11.4 ± 6.6
    assert omega["yardstick"] == "rounding" and omega["agrees"] is False
    large = key.loc[("text-embedding-3-large", "lc_token_400_0", "precision_omega")]  # 20 against 12.5
    assert large["basis"] == "chunks only" and large["yardstick"] == "rounding" and large["agrees"] is False
    assert key.loc[("text-embedding-3-large", "lc_token_400_0", "recall"), "basis"] == "other retrieval model"
    assert np.isnan(key.loc[("text-embedding-3-large", "lc_token_400_0", "recall"), "agrees"])
    cut = key.loc[("text-embedding-3-large", "cluster_200", "precision_omega")]
    assert cut["basis"] == "chunks cut with the other model" and np.isnan(cut["agrees"])
    assert key.loc[("all-MiniLM-L6-v2", "cluster_200", "precision_omega"), "yardstick"] == "SEM"  # cut by the model
    assert key.loc[("text-embedding-3-large", "kamradt", "recall"), "basis"] == "not re-run here"
    # rounding: 12.54 agrees with 12.5, 12.56 does not; the SEM: 82.4 within 36.2 / sqrt(472)
    for value, agrees in ((0.1254, True), (0.1256, False)):
        near = _per_question({"lc_token_400_0": [1.0] * 4}, docs).assign(chroma_precision_omega=value)
        row = post08.comparison_table(near, published, "all-MiniLM-L6-v2", 472).set_index(["table", "strategy", "metric"])
        assert row.loc[("text-embedding-3-large", "lc_token_400_0", "precision_omega"), "agrees"] is agrees
    close = _per_question({"lc_token_250_125": [0.824] * 4}, docs)
    row = post08.comparison_table(close, published, "all-MiniLM-L6-v2", 472).set_index(["table", "strategy", "metric"])
    assert row.loc[("all-MiniLM-L6-v2", "lc_token_250_125", "recall"), "agrees"] is True
    wide = post08.comparison_wide(table, "all-MiniLM-L6-v2")
    assert len(wide) == 8 and wide.iloc[1]["recall report"] == "82.4 ± 36.2"
    assert wide.iloc[1]["recall agrees"] == "✗ SEM" and wide.iloc[1]["precision_omega agrees"] == "✗ rounding"
    assert wide.iloc[0]["recall re-run"] == ""
    counts = post08.agreement_counts(table).set_index(["table", "yardstick"])
    # re-run here: TokenText 250/125 (3 retrieval metrics by the SEM, Ω by rounding), Cluster 200 (all 4 by the SEM)
    assert counts.loc[("all-MiniLM-L6-v2", "SEM"), "values"] == 3 + 4
    assert counts.loc[("all-MiniLM-L6-v2", "rounding"), "values"] == 1
    assert counts.loc[("text-embedding-3-large", "rounding"), "values"] == 1  # TokenText 400/0's Ω


def test_chunk_sizes_agree_to_the_published_whole_token_only_where_measured():
    comparison = pd.DataFrame({"strategy": ["lc_recursive_tok_200_0", "lc_recursive_tok_250_125", "lc_token_200_0"],
                               "chunker": ["RecursiveCharacterTextSplitter", "RecursiveCharacterTextSplitter",
                                           "TokenTextSplitter"],
                               "published mean tokens": [137.0, 180.0, 200.0]})
    sizes = pd.DataFrame({"strategy": ["lc_recursive_tok_200_0", "lc_recursive_tok_250_125", "lc_token_200_0"],
                          "mean tokens": [137.4, 195.2, 199.6]})
    out = post08.with_chunk_tokens(comparison, sizes)
    assert out["tokens agree"].tolist()[:2] == [True, False] and np.isnan(out["tokens agree"].iloc[2])


def _claims_frame(n=60, seed=0):
    """MiniLM rows: TokenText 250/125 recall clearly highest; Cluster 200 IoU level with the next."""
    rng = np.random.default_rng(seed)
    docs = [f"d{i % 6}" for i in range(n)]
    base = rng.uniform(0.2, 0.6, n)
    values = {s: base for s in post08.MINILM_TABLE_ROWS}
    values = {**values, "lc_token_250_125": base + 0.3}
    frame = _per_question(values, docs)
    iou = {s: base * 0.1 for s in post08.MINILM_TABLE_ROWS}
    iou["cluster_200"] = base * 0.1 + rng.normal(0, 0.01, n)
    iou["lc_token_250_125"] = base * 0.1 - 0.05  # overlap row: lower IoU than 250/0
    for s, v in iou.items():
        frame.loc[frame["strategy"] == s, "chroma_iou@5"] = v
    return frame


def test_claims_outcomes_follow_the_paired_intervals():
    claims = post08.claims_table(_claims_frame(), post08.load_published(), resamples=500, seed=0)
    by = {(r["claim"], r["a"]): r for _, r in claims.iterrows()}
    label = STRATEGIES["lc_token_250_125"].label
    assert by[("best recall", label)]["outcome"] == post08.REPRODUCED
    assert by[("best recall", label)]["published a"] == 82.4 and by[("best recall", label)]["compared with"] == 7
    assert by[("best IoU", STRATEGIES["cluster_200"].label)]["outcome"] == post08.UNDECIDED
    overlap = by[("overlap costs IoU", STRATEGIES["lc_token_250_0"].label)]
    assert overlap["outcome"] == post08.REPRODUCED and overlap["low"] > 0
    helps = by[("overlap helps recall at small sizes", label)]
    assert helps["outcome"] == post08.REPRODUCED
    for _, row in claims.iterrows():  # the outcome agrees with the deciding interval's side
        side = interval_side(row["low"], row["high"])
        assert row["outcome"] == {1: post08.REPRODUCED, -1: post08.NOT_REPRODUCED, 0: post08.UNDECIDED}[side] \
            or row["compared with"] > 1


def test_claims_not_reproduced_when_another_row_is_ahead():
    frame = _claims_frame()
    frame.loc[frame["strategy"] == "lc_token_200_0", "chroma_recall@5"] += 0.6
    claims = post08.claims_table(frame, post08.load_published(), resamples=500, seed=0)
    row = claims[claims["claim"] == "best recall"].iloc[0]
    assert row["outcome"] == post08.NOT_REPRODUCED and row["closest"] == STRATEGIES["lc_token_200_0"].label
    assert row["high"] < 0


def test_llm_rows_name_what_ran():
    sizes = pd.DataFrame({"strategy": ["llm_semantic", "cluster_200"],
                          "label": [STRATEGIES["llm_semantic"].label, STRATEGIES["cluster_200"].label],
                          "chunks": [1112, 500], "mean tokens": [41.2, 103.0], "median tokens": [40.0, 100.0]})

    class Corpus:
        documents = [object()] * 3
        questions = [object()] * 276

    pairs = pd.DataFrame({"a": [STRATEGIES["llm_semantic"].label], "b": [STRATEGIES["cluster_200"].label]})
    named = post08.name_llm_rows(pairs, sizes, Corpus())
    assert named["a"].iloc[0] == f"{STRATEGIES['llm_semantic'].label}: 1,112 chunks of 41 tokens on average, 3 corpora"
    assert "Qwen2.5-Coder 1.5B" in STRATEGIES["llm_semantic"].label


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



def _builder_frame(cells: dict, docs: list[str], k: int = 5) -> pd.DataFrame:
    """``cells``: (corpus, retriever) -> {strategy: (recall per question, tokens)}."""
    frames = []
    for (corpus, retriever), strategies in cells.items():
        for strategy, (recall, tokens) in strategies.items():
            frames.append(pd.DataFrame({"corpus": corpus, "retriever": retriever, "model": "m", "strategy": strategy,
                                        "qid": [f"{corpus}-q{i}" for i in range(len(recall))], "doc_id": docs,
                                        f"recall@{k}": recall, f"tokens@{k}": tokens}))
    return pd.concat(frames, ignore_index=True)



def _two_cells():
    docs = [f"d{i // 2}" for i in range(40)]
    ones, half = np.ones(40), np.array([1.0, 0.0] * 20)
    return _builder_frame({
        ("squad", "bm25"): {"recursive_500": (ones, 500.0), "lc_recursive_default": (ones, 4000.0),
                            "semchunk_512": (half, 300.0)},
        ("cuad", "bm25"): {"recursive_500": (half, 500.0), "lc_recursive_default": (ones, 4000.0),
                           "semchunk_512": (ones, 300.0)}}, docs)



def test_hnsw_same_sets_ignore_order_and_padding():
    from chunklab_core.reports.post08.hnsw import same_sets

    exact = np.array([[1, 2, 3], [4, 5, -1], [7, 8, 9]])
    approx = np.array([[3, 2, 1], [5, 4, -1], [7, 8, 6]])
    assert same_sets(exact, approx).tolist() == [True, True, False]


def test_hnsw_sentence_counts_the_table():
    hnsw = pd.DataFrame({"questions": [472, 472], "same top-k": [470, 460], "recall hnsw − exact": [-0.5, 0.0],
                         "iou hnsw − exact": [-0.01, 0.02]})
    text = post08_prose.hnsw_text(hnsw, 5, 50)
    assert "930 of the 944 (question, row) pairs of 2 rows" in text and "-0.50 to +0.00 points" in text


def test_kamradt_break_counts_differ_only_where_the_average_divides_the_tokens():
    from chunklab_core.core.corpus import Corpus, Document

    text = " ".join(f"Sentence {i} is about item {i}." for i in range(400))
    table = post08.kamradt_breaks(Corpus("c", [Document("d", text, "d")], []), avg_tokens=300)
    row = table.iloc[0]
    assert row["breaks in Chroma's code"] == row["tokens"] // 300
    expected = -(-row["tokens"] // 300) - 1
    assert row["breaks here"] == expected
    assert (row["breaks in Chroma's code"] - row["breaks here"]) == (1 if row["tokens"] % 300 == 0 else 0)


def test_the_published_tables_precision_omega_of_shared_rows():
    pairs = post08.published_omega_pairs(post08.load_published())
    assert pairs["strategy"].tolist() == ["lc_recursive_tok_200_0", "lc_token_200_0"]  # the rows both tables have
    text = post08_prose.published_omega_text(pairs)
    assert "2 of the 2 rows" in text and "TokenText 200 tokens / 0: 21.0 and 19.1" in text


def test_claims_made_on_another_models_table_say_they_are_checked_with_the_re_runs_model():
    from chunklab_core.core.corpus import Corpus, Document, Question

    made = [{"claim": "c1", "kind": "pair", "metric": "recall", "a": "lc_token_250_125", "b": "lc_token_250_0",
             "table": "all-MiniLM-L6-v2"},
            {"claim": "c2", "kind": "pair", "metric": "recall", "a": "lc_token_250_125", "b": "lc_token_250_0",
             "table": "text-embedding-3-large"}]
    claims = post08.claims_table(_claims_frame(), post08.load_published(), made, resamples=300, seed=0,
                                 model="all-MiniLM-L6-v2")
    assert list(claims["same model"]) == [True, False]
    assert (claims["checked with"] == "all-MiniLM-L6-v2").all()
    assert (claims["same model"] == (claims["table"] == "all-MiniLM-L6-v2")).all()
    other = int((~claims["same model"]).sum())
    assert 0 < other < len(claims)
    corpus = Corpus("chroma", [Document("d", "text")], [Question("q", "?", "d", (("text",),))])
    text = post08_prose.claims_text(claims, corpus)
    assert "Made on the text-embedding-3-large table and checked here with all-MiniLM-L6-v2, the re-run's " \
           "model: 1 claim." in text
    assert "not that the report's own numbers" in text


def test_report_figure_draws_the_re_runs_interval_and_names_the_metrics():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from chunklab_core.reports.post08.figures import plot_report

    rows = []
    for metric in ("recall", "precision_omega", "iou"):
        for label, table in (("A", "all-MiniLM-L6-v2"), ("B", "text-embedding-3-large")):
            rows.append({"label": label, "metric": metric, "table": table, "retrieved": 5, "re-run mean": 50.0,
                         "re-run sd": 20.0, "questions": 400, "published mean": 52.0,
                         "basis": "same model" if table == "all-MiniLM-L6-v2" else "other retrieval model"})
    fig = plot_report(pd.DataFrame(rows))
    labels = [ax.get_xlabel() for ax in fig.axes]
    assert labels[1].startswith("precision_Ω") and labels[2].startswith("IoU")
    from matplotlib.container import ErrorbarContainer

    bars = [c for c in fig.axes[0].containers if isinstance(c, ErrorbarContainer)]
    assert bars  # 1.96 × 20 / √400 = 1.96 points either side
    segments = bars[0].lines[2][0].get_segments()
    assert np.allclose([s[1][0] - s[0][0] for s in segments], 2 * 1.96)
    plt.close(fig)


def test_appendix_file_is_checked_and_complete():
    from chunklab_core.reports.post08 import reproduction

    appendix = reproduction.load_appendix()
    omega = appendix[appendix["metric"] == "precision_omega"]
    # text-embedding-3-large: 11 rows in the all-corpora and five per-corpus tables; MiniLM: 8 rows in six tables
    assert omega.groupby("model").size().to_dict() == {"text-embedding-3-large": 66, "all-MiniLM-L6-v2": 48}
    assert appendix["source"].str.contains("appendix 'All Results'").all()


def test_appendix_loader_names_the_line_of_a_bad_value(tmp_path):
    from chunklab_core.reports.post08 import reproduction

    bad = tmp_path / "appendix.csv"
    lines = reproduction.APPENDIX_CSV.read_text(encoding="utf-8").splitlines()
    lines[3] = lines[3].replace(",precision_omega,", ",precision_omg,", 1) if ",precision_omega," in lines[3] else \
        lines[3].replace(",precision,", ",precision_omg,", 1)
    bad.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match="line 4, field metric"):
        reproduction.load_appendix(bad)


def test_per_corpus_omega_judges_deterministic_rows_by_rounding():
    """Hand fixture: precision_Ω 0.257 and 0.299 on two chat-log questions (mean 27.8 points), one
    finance question at 0.271; the appendix says 25.7 (chat logs), 27.1 (finance), 29.9 (all)."""
    from chunklab_core.reports.post08 import reproduction

    frame = pd.DataFrame({"strategy": ["lc_recursive_tok_200_0"] * 3 + ["cluster_200"],
                          "doc_id": ["chroma-chatlogs", "chroma-chatlogs", "chroma-finance", "chroma-finance"],
                          "chroma_precision_omega": [0.257, 0.299, 0.271, 0.5]})
    table = reproduction.per_corpus_omega(frame, reproduction.load_appendix())
    rec = table[(table["strategy"] == "lc_recursive_tok_200_0") & (table["table"] == "text-embedding-3-large")]
    got = dict(zip(rec["corpus"], rec["agrees"]))
    assert got["chat logs"] is False and got["finance"] is True  # 27.8 against 25.7; 27.1 against 27.1
    assert rec.set_index("corpus").loc["all corpora", "re-run"] == pytest.approx(100 * (0.257 + 0.299 + 0.271) / 3)
    assert rec.set_index("corpus")["re-run"].isna().sum() == 3  # no question of pubmed, SOTU, wikitexts here
    assert rec.set_index("corpus")["agrees"].isna().sum() == 3  # nothing to compare: no verdict
    cluster = table[table["strategy"] == "cluster_200"]
    assert cluster["agrees"].isna().all()  # cut by an embedding model: no rounding verdict
    counts = reproduction.omega_counts(table).set_index("table")
    assert counts.loc["text-embedding-3-large", "agree"] == 1


def test_main_and_appendix_tables_are_set_side_by_side():
    from chunklab_core.reports.post08 import reproduction

    table = reproduction.main_vs_appendix(post08.load_published(), reproduction.load_appendix())
    row = table.set_index("strategy")
    assert len(table) == 11  # every appendix row but the two Kamradt rows the appendix omits
    assert row.loc["lc_recursive_tok_800_400", "metrics that differ"] == 0
    assert row.loc["cluster_400", "recall main"] == "91.3 ± 25.4" and row.loc["cluster_400", "recall appendix"] == "92.1 ± 25.2"
    assert row.loc["cluster_400", "metrics that differ"] == 4
