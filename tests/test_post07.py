"""Post 07's report tables: intervals and verdict words on hand-made per-question rows."""

import numpy as np
import pandas as pd

from chunklab_core.reports import post07


def rows(scorer, depth, before, after, qids=None):
    n = len(before)
    return pd.DataFrame({
        "corpus": "c", "strategy": "s", "first_stage": "bm25", "scorer": scorer, "depth": depth,
        "qid": qids or [f"q{i}" for i in range(n)], "k": 5,
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
    from chunklab_core.reports.post07 import plot_footprint

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
