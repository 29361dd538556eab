"""Post 07's report tables: intervals and verdict words on hand-made per-question rows."""

import numpy as np
import pytest
import pandas as pd

from chunklab_core.reports.post07 import prose as post07_prose, tables as post07


def rows(scorer, depth, before, after, qids=None):
    n = len(before)
    return pd.DataFrame({
        "corpus": "c", "strategy": "s", "first_stage": "bm25", "scorer": scorer, "depth": depth,
        "qid": qids or [f"q{i}" for i in range(n)], "k": 5, "doc_id": [f"d{i}" for i in range(n)],
        "ndcg_before": before, "ndcg_after": after, "rr_before": before, "rr_after": after,
        "p_before": 0.2, "p_after": 0.2, "hit_before": 1.0, "hit_after": 1.0, "ceiling": 1.0,
        "same_set": 1.0, "rescued": 0.0, "pushed_out": 0.0, "tokens_read": 100.0})


def test_a_uniform_gain_is_worded_reranked_ahead_and_no_change_cannot_be_told_apart():
    up = rows("m", 10, [0.5] * 20, [0.7] * 20)
    flat = rows("m", 20, [0.5] * 20, [0.5] * 20)
    table = post07.stage_table(pd.concat([up, flat]), resamples=500, seed=1)
    assert table["d_ndcg"].round(9).tolist() == [0.2, 0.0]
    assert table["verdict"].tolist() == ["reranked ahead", "cannot be told apart"]
    assert (table["d_ndcg_low"] <= table["d_ndcg"]).all() and (table["d_ndcg"] <= table["d_ndcg_high"]).all()


def test_a_loss_is_worded_first_stage_ahead_and_depths_pair_by_question():
    rng = np.random.default_rng(0)
    before = rng.random(30)
    shallow = rows("m", 5, before, before)
    deep = rows("m", 50, before, before - 0.1)
    table = post07.stage_table(deep, 500, 2)
    assert table["verdict"].tolist() == ["first stage ahead"]
    depth = post07.depth_comparison(pd.concat([shallow, deep]), 50, 5, 500, 2)
    assert depth["difference"].round(9).tolist() == [-0.1] and depth["verdict"].tolist() == ["N=5 ahead"]


def test_scorer_comparison_uses_only_the_questions_of_the_first_scorer():
    llm = rows("llm", 10, [0.5] * 3, [1.0, 1.0, 1.0], qids=["q0", "q1", "q2"])
    emb = rows("emb", 10, [0.5] * 6, [0.0, 0.0, 0.0, 1.0, 1.0, 1.0])
    out = post07.slice_comparisons(pd.concat([llm, emb]), 500, 3)
    assert out[["a", "b", "questions"]].values.tolist() == [["llm", "emb", 3]]
    assert out["difference"].tolist() == [1.0] and out["verdict"].tolist() == ["llm ahead"]


def test_footprint_figure_names_strategies_legibly():
    """07_footprint.png: strategy names (not ids) on the y axis, tick labels of at least 8 points,
    compact x tick labels (no overlap), from the same table."""
    import matplotlib

    matplotlib.use("Agg")
    from chunklab_core.chunking import strategy_label
    from chunklab_core.reports.post07.figures import plot_footprint

    rows = []
    for corpus in ("squad", "nq"):
        for i, strategy in enumerate(("fixed_500", "fixed_1000", "parent_doc_250_1000")):
            rows.append({"corpus": corpus, "strategy": strategy, "chunks": 1200 * (i + 1),
                         "indexed_tokens": 350_000 * (i + 1), "duplication": 1.0 + 0.1 * i,
                         "bm25_MB": 2.5 * (i + 1), "vectors_MB_all-mpnet-base-v2": 3.7 * (i + 1)})
    fig = plot_footprint(pd.DataFrame(rows))
    first = fig.axes[0]
    fig.canvas.draw()
    assert [t.get_text() for t in first.get_yticklabels()] == [strategy_label(s) for s in
                                                               ("fixed_500", "fixed_1000", "parent_doc_250_1000")]
    assert all(t.get_fontsize() >= 8 for ax in fig.axes for t in ax.get_xticklabels() + ax.get_yticklabels())
    tokens = fig.axes[1]
    labels = [t.get_text() for t in tokens.get_xticklabels() if t.get_text()]
    assert labels and all(len(label) <= 5 for label in labels), labels  # "500k", "1M": no overlap
    renderer = fig.canvas.get_renderer()
    for ax in fig.axes:
        boxes = [t.get_window_extent(renderer) for t in ax.get_xticklabels() if t.get_text()]
        assert not any(a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1:])


def test_sample_labels_count_the_questions_and_documents_each_scorer_scored():
    llm = rows("llm", 10, [0.5] * 3, [1.0] * 3, qids=["q0", "q1", "q2"]).assign(corpus="squad", doc_id=["a", "a", "b"])
    emb = rows("emb", 10, [0.5] * 4, [0.5] * 4).assign(corpus="squad", doc_id=["a", "b", "c", "c"])
    labels = post07.sample_labels(pd.concat([llm, emb]))
    assert labels == {("squad", "llm"): "SQuAD v1.1, 3 questions from 2 articles",
                      ("squad", "emb"): "SQuAD v1.1, 4 questions from 3 articles"}
    shown = post07.display_stage_table(post07.stage_table(emb, 200, 0), labels)
    assert shown["sample"].tolist() == ["SQuAD v1.1, 4 questions from 3 articles"]


def test_reading_fills_its_templates_with_hand_made_tables():
    stage = pd.DataFrame({"corpus": "squad", "first_stage": "bm25", "scorer": "m", "strategy": ["fixed_500"] * 3,
                          "verdict": ["first stage ahead", "first stage ahead", "cannot be told apart"],
                          "depth": [5, 10, 20], "hit_before": [0.5, 0.5, 0.7],
                          "hit_after": [0.5, 0.6, 0.8], "ceiling": [0.5, 0.6, 0.9], "rescued": [3, 0, 1],
                          "pushed_out": [1, 1, 0]})
    depths = pd.DataFrame({"verdict": ["N=5 ahead"]})
    pairs = pd.DataFrame([{"a": "llm", "b": "m", "corpus": "squad", "strategy": "recursive_500", "depth": 10,
                           "ndcg_a": 0.6274, "ndcg_b": 0.668, "difference": -0.0416, "low": -0.285, "high": 0.092,
                           "verdict": "cannot be told apart"}])
    slice_stage = pd.DataFrame([{"scorer": "llm", "corpus": "squad", "strategy": "recursive_500", "depth": 10,
                                 "d_ndcg": 0.045, "d_ndcg_low": -0.067, "d_ndcg_high": 0.179,
                                 "verdict": "cannot be told apart"}])
    text = post07_prose.reading(stage, depths, slice_stage, pairs, 5, {("squad", "m"): "SQuAD v1.1, 9 questions from 4 articles"},
                                {("squad", "llm"): "SQuAD v1.1, 7 questions from 6 articles"})
    assert text.split("\n") == [
        "* **SQuAD v1.1, 9 questions from 4 articles, bm25 candidates, re-scored by m**: over 3 (strategy, N) cells, "
        "ΔnDCG@5 is *first stage ahead* in 2, *cannot be told apart* in 1. Reranking can lift hit@5 only up to "
        "hit@N, the first stage's ceiling (checked, not counted). Where N > 5 (2 cells), it filled 75% of the room "
        "below that ceiling on average (+50% to +100% per cell; point estimates) and reached it in 1. "
        "4 relevant contexts were rescued into the top 5 and 2 pushed out, summed over cells.",
        "* **Depth**: nDCG@5 after reranking at the deepest N against the shallowest: *N=5 ahead* in 1 of 1 cell.",
        "* **llm against m** (SQuAD v1.1, 7 questions from 6 articles; Recursive 500 chars, N = 10): nDCG@5 0.627 against "
        "0.668, difference -0.042 [-0.285, +0.092]: *cannot be told apart*.",
        "* **llm against the first stage** (SQuAD v1.1, 7 questions from 6 articles; Recursive 500 chars, N = 10): "
        "ΔnDCG@5 +0.045 [-0.067, +0.179]: *cannot be told apart*."]


def test_coverage_and_setup_sentences_and_a_wrong_value_set_fails():
    from chunklab_core.reports.templates import TemplateError

    coverage = pd.DataFrame([{"questions_recorded": 7, "questions_planned": 20, "corpus": "squad",
                              "strategy": "recursive_500", "first_stage": "bm25"}])
    calls = pd.DataFrame({"seconds": [30.0, 40.0, 50.0], "score_kind": ["p_yes", "p_yes", "label"],
                          "label": ["YES", "unparsed", "NO"]})
    llm_rows = rows("llm", 10, [0.5] * 2, [0.5] * 2).assign(corpus="squad", doc_id=["a", "a"])
    assert post07_prose.coverage_text(coverage, calls, llm_rows) == (
        "The LLM reranker covers **7 of 20** planned questions (SQuAD v1.1, 2 questions from 1 article; "
        "Recursive 500 chars, first stage bm25). Recording its 3 calls took 2.0 minutes of model time (40.0 s per call, "
        "median; 2 calls scored by p(YES), 1 unparsed).")
    assert post07_prose.coverage_text(coverage.iloc[:0], calls, llm_rows) == "No LLM reranking run was planned."
    assert post07_prose.setup_text("m", 5, [5, 10]) == "Re-scorer: **m**; k = 5; depths [5, 10]."
    with pytest.raises(TemplateError, match="values not passed"):
        post07_prose.PROSE.fill("setup", scorer="m", k=5)
    with pytest.raises(TemplateError, match="passed but not used"):
        post07_prose.PROSE.fill("setup", scorer="m", k=5, depths=[5], n=3)


def test_footprint_headings_do_not_overlap_and_ticks_have_no_milli_prefix():
    import matplotlib

    matplotlib.use("Agg")
    from chunklab_core.reports.post07.figures import compact, plot_footprint

    assert [compact(v) for v in (0, 0.5, 1.6, 15, 4000, 400_000, 1.2e6)] == ["0", "0.5", "1.6", "15", "4k", "400k", "1.2M"]
    table = pd.DataFrame([{"corpus": corpus, "strategy": s, "chunks": 1000 * (i + 1), "indexed_tokens": 3e5,
                           "duplication": 1.0 + 0.2 * i, "bm25_MB": 0.8 * (i + 1), "vectors_MB_all-mpnet-base-v2": 4.0}
                          for corpus in ("squad", "nq") for i, s in enumerate(("fixed_500", "fixed_500_o125"))])
    labels = {"squad": "SQuAD v1.1, 2000 questions from 48 articles", "nq": "Natural Questions, 102 questions from 20 pages"}
    fig = plot_footprint(table, labels)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    headings = [sub._suptitle for sub in fig.subfigs]
    assert [h.get_text() for h in headings] == list(labels.values())
    texts = headings + [ax.title for ax in fig.axes]
    boxes = [t.get_window_extent(renderer) for t in texts]
    assert not any(a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1:])
    ticks = [t.get_text() for ax in fig.axes for t in ax.get_xticklabels() if t.get_text()]
    assert ticks and not any(label.endswith("m") for label in ticks), ticks


def test_the_ceiling_is_checked_not_counted_and_its_counts_can_fail():
    """Review finding: "at or below the ceiling in 24 of 24" held by construction (a reranker only
    re-orders the top N). The invariant is now an error when broken, and the sentence counts what can
    come out either way: cells reaching the ceiling, and the share of the room filled."""
    base = {"depth": [5, 10, 10], "hit_before": [0.5, 0.5, 0.5], "ceiling": [0.5, 0.7, 0.9]}
    none = pd.DataFrame({**base, "hit_after": [0.5, 0.5, 0.5]})  # reranking moved nothing in: 0 reached
    full = pd.DataFrame({**base, "hit_after": [0.5, 0.7, 0.9]})  # every N > k cell at its ceiling
    low = post07_prose.ceiling_counts(none, 5)
    high = post07_prose.ceiling_counts(full, 5)
    assert (low["deeper"], low["reached"], low["recovered"][0]) == (2, 0, 0.0)  # the N = k cell is not counted
    assert (high["reached"], high["recovered"]) == (2, (1.0, 1.0, 1.0))
    worse = pd.DataFrame({**base, "hit_after": [0.5, 0.4, 0.5]})
    assert post07_prose.ceiling_counts(worse, 5)["recovered"][1] == pytest.approx(-0.5)
    with pytest.raises(ValueError, match="above the first stage's hit@N"):
        post07_prose.ceiling_counts(pd.DataFrame({**base, "hit_after": [0.5, 0.8, 0.5]}), 5)
    only_k = pd.DataFrame({"depth": [5], "hit_before": [0.5], "ceiling": [0.5], "hit_after": [0.5]})
    assert "cannot change hit@5" in post07_prose.ceiling_text(only_k, 5)
    # on the committed table: the old count held in every cell; the new one is not 24 of 24
    from chunklab_core.core.paths import DATA_DIR

    stage = pd.read_csv(DATA_DIR / "07_stage.csv")
    found = post07_prose.ceiling_counts(stage, int(stage["k"].iloc[0]))
    assert int((stage["hit_after"] <= stage["ceiling"] + 1e-12).sum()) == len(stage)
    assert found["deeper"] == int((stage["depth"] > int(stage["k"].iloc[0])).sum())
