"""Post 02's window control (``reports.post02.window``) on a fixture: two SQuAD articles, three windows of
the shipped all-MiniLM-L6-v2 recorded into a scratch run store, one cell left out.

The intervals are the project's paired bootstrap (``stats.bootstrap``, through ``post02.tables.paired_models``);
the test checks which cells are read, that the parts add up to the model difference, that each interval is the
one the stats module gives on the same per-question recall, and that a missing cell is named with its command.
"""

from __future__ import annotations

import numpy as np
import pytest

from chunklab_core.evaluation.matrix import run_matrix
from chunklab_core.evaluation.measures import column
from chunklab_core.reports.post02 import window
from chunklab_core.retrieval.recorded_runs import RunStore
from chunklab_core.stats.bootstrap import paired_difference_ci

TRIO = ("all-MiniLM-L6-v2@32", "all-MiniLM-L6-v2", "all-MiniLM-L6-v2@64")  # first, second, second cut short
STRATEGIES = ["fixed_500", "fixed_1000"]
K, RESAMPLES, SEED = 3, 300, 11


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    from chunklab_core.data.corpora import load_corpus

    root = tmp_path_factory.mktemp("runs")
    corpora = {"squad": load_corpus("squad", squad_articles=2, squad_questions=12)}
    matrix = run_matrix(corpora, STRATEGIES, ["dense"], list(TRIO), ks=(K,), progress=False,
                        store=RunStore(root, "record"))
    left_out = next(root.rglob("fixed_1000/dense@all-MiniLM-L6-v2@64.npz"))
    left_out.unlink()
    return corpora, root, matrix.per_question


def test_the_control_pairs_the_second_model_cut_to_the_firsts_window():
    assert window.control_models(["all-MiniLM-L6-v2", "all-mpnet-base-v2"]) == (
        "all-MiniLM-L6-v2", "all-mpnet-base-v2", "all-mpnet-base-v2@256")
    assert window.control_models(["all-mpnet-base-v2", "all-MiniLM-L6-v2"]) is None  # no longer window to cut
    assert window.control_models(["all-MiniLM-L6-v2"]) is None
    assert "no such pair" in window.window_text(window.WindowControl(None), {})


def test_cells_are_read_where_all_three_are_recorded_and_the_missing_one_is_named(recorded):
    corpora, root, _ = recorded
    control = window.window_control(corpora, TRIO, STRATEGIES, K, 0.9, RESAMPLES, SEED, RunStore(root, "replay"))
    assert len(control.cells) == 6 and control.cells["recorded"].sum() == 5
    assert set(control.intervals["strategy"]) == {"Fixed 500"} or set(control.intervals["strategy"]) == {
        window.strategy_label("fixed_500")}
    assert list(control.intervals["part"]) == list(window.PARTS)
    labels = {"squad": "SQuAD (fixture)"}
    text = window.window_text(control, labels)
    assert "Still being recorded: all-MiniLM-L6-v2@64 on SQuAD (fixture) (" in text
    assert window.strategy_label("fixed_1000") in text.split("Still being recorded")[1]
    assert "`make window-control`" in text
    assert "On SQuAD (fixture), over 1 strategy" in text
    view = window.window_view(control, labels)
    assert len(view) == 1 and view.loc[0, "questions"] == 12 and "chunks beyond 32" in view.columns


def test_each_part_is_the_paired_bootstrap_of_the_same_questions_and_the_parts_add_up(recorded):
    corpora, root, per_question = recorded
    control = window.window_control(corpora, TRIO, STRATEGIES, K, 0.9, RESAMPLES, SEED, RunStore(root, "replay"))
    first, second, variant = TRIO
    recall = per_question[per_question["strategy"] == "fixed_500"].pivot(index="qid", columns="model",
                                                                        values=column("recall", K))
    rows = control.intervals.set_index("part")
    for part, (a, b) in zip(window.PARTS, ((variant, first), (second, variant), (second, first))):
        diff, low, high = paired_difference_ci(recall[a].to_numpy(), recall[b].to_numpy(), RESAMPLES, SEED)
        assert rows.loc[part, "comparison"] == f"{a} − {b}"
        assert rows.loc[part, "difference"] == pytest.approx(diff, abs=1e-12)
        assert (rows.loc[part, "question low"], rows.loc[part, "question high"]) == pytest.approx((low, high))
    assert rows.loc["same window", "difference"] + rows.loc["window", "difference"] == pytest.approx(
        rows.loc["model and window", "difference"], abs=1e-12)
    beyond = control.beyond.set_index("strategy").loc["fixed_500"]
    assert 0 < beyond["beyond"] <= beyond["chunks"]  # fixed_500 chunks run past 32 word pieces
    assert np.isfinite(rows["low"]).all()


def test_no_table_is_shown_while_no_corpus_has_its_three_cells():
    """Review finding: an empty table under 'Model or window?' said nothing; the prose names what is missing."""
    assert window.window_view(window.WindowControl(trio=None), {}) is None
