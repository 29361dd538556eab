"""The report helpers the notebooks call instead of defining their own: md/share, start_post,
post 03's figures and sentences, post 04's sentences, post 06's table writer.

Fixtures are tiny tables typed inline; every expected sentence is written out by hand.
"""

from __future__ import annotations

import warnings

import matplotlib
import numpy as np
import pandas as pd
import pytest

matplotlib.use("Agg")

from chunklab_core.reports import markdown, notebook_setup  # noqa: E402
from chunklab_core.reports.post03 import figures as post03_figures, prose as post03_prose  # noqa: E402
from chunklab_core.reports.post04 import prose as post04_prose  # noqa: E402


@pytest.fixture
def shown(monkeypatch):
    """What IPython's display() received."""
    import IPython.display

    seen = []
    monkeypatch.setattr(IPython.display, "display", lambda obj: seen.append(obj))
    return seen


def test_share_words_a_count():
    assert markdown.share(3, 12) == "3 of 12 (25%)"
    assert markdown.share(1, 3) == "1 of 3 (33%)"
    assert markdown.share(0, 0) == "0 of 0"


def test_md_displays_markdown(shown):
    markdown.md("**bold**")
    assert len(shown) == 1 and type(shown[0]).__name__ == "Markdown" and shown[0].data == "**bold**"


def test_start_post_sets_options_and_shows_versions(shown):
    with pd.option_context("display.max_colwidth", 50, "display.precision", 6), warnings.catch_warnings():
        notebook_setup.start_post(("pandas", "no-such-package-xyz"), quiet=True, max_colwidth=None, precision=3)
        assert pd.get_option("display.max_colwidth") is None
        assert pd.get_option("display.precision") == 3
        from tqdm import TqdmWarning

        assert any(action == "ignore" and category is TqdmWarning for action, _, category, _, _ in warnings.filters)
    (versions,) = shown
    assert list(versions.columns) == ["python", "pandas", "no-such-package-xyz"]
    assert versions.loc["version", "pandas"] == pd.__version__
    assert versions.loc["version", "no-such-package-xyz"] == "not installed"


def test_start_post_leaves_options_it_is_not_given(shown):
    with pd.option_context("display.max_colwidth", 50, "display.precision", 6):
        notebook_setup.start_post(("pandas",))
        assert pd.get_option("display.max_colwidth") == 50 and pd.get_option("display.precision") == 6


@pytest.mark.parametrize("low, high, expected", [(0.1, 0.3, "up"), (-0.3, -0.1, "down"), (0.0, 0.2, "neither"),
                                                 (-0.2, 0.0, "neither"), (-0.1, 0.1, "neither")])
def test_interval_direction(low, high, expected):
    assert post04_prose.interval_direction(low, high, "up", "down", "neither") == expected


def test_interval_direction_rejects_a_broken_interval():
    with pytest.raises(ValueError):
        post04_prose.interval_direction(float("nan"), 0.1, "up", "down", "neither")
    with pytest.raises(ValueError):
        post04_prose.interval_direction(0.3, 0.1, "up", "down", "neither")


def test_separated_cells_counts_each_side():
    cells = pd.DataFrame({"low": [0.1, -0.3, 0.0, -0.1, 0.2], "high": [0.3, -0.1, 0.2, 0.1, 0.4]})
    assert post04_prose.separated_cells(cells) == (2, 1)


CORPUS_LABELS = {"squad": "SQuAD", "nq": "Natural Questions"}
HUMAN_LABELS = {"squad": "crowd questions", "nq": "search queries"}


def test_overlap_text_words_each_corpus():
    summary = pd.DataFrame({"corpus": ["squad", "squad"], "set": ["human", "generated"],
                            "mean overlap": [0.5, 0.7], "low": [0.45, 0.65], "high": [0.55, 0.75]})
    paired = pd.DataFrame({"corpus": ["squad"], "passages": [40], "generated − human": [0.2],
                           "low": [0.1], "high": [0.3]})
    assert post04_prose.overlap_text(summary, paired, CORPUS_LABELS, HUMAN_LABELS) == (
        "* **SQuAD**: crowd questions 0.50 [0.45, 0.55], generated 0.70 [0.65, 0.75]; paired over 40 passages, "
        "generated − human = +0.20 [+0.10, +0.30]: generated questions copy more.")


def test_trend_text_words_each_slope():
    trend = pd.DataFrame({"corpus": ["squad", "both"], "questions": [60, 80], "passages": [60, 80],
                          "slope": [-0.3, 0.05], "low": [-0.5, -0.1], "high": [-0.1, 0.2]})
    assert post04_prose.trend_text(trend, CORPUS_LABELS) == (
        "* **SQuAD** (60 questions, 60 passages): slope -0.30 [-0.50, -0.10]: overlap predicts a *dense* advantage.\n"
        "* **Both corpora pooled** (80 questions, 80 passages): slope +0.05 [-0.10, +0.20]: no trend that this "
        "sample can separate from zero.")


def test_takeaways_are_computed_from_the_tables():
    paired = pd.DataFrame({"corpus": ["nq"], "passages": [20], "generated − human": [-0.1], "low": [-0.2], "high": [-0.05]})
    comparison = pd.DataFrame({"corpus": ["nq"] * 3, "generated − human": [0.1, 0.2, -0.3],
                               "low": [0.05, -0.1, -0.4], "high": [0.2, 0.3, -0.2]})
    text = post04_prose.takeaways(paired, comparison, None, "CLEAN.", (3, 12), "hit@5", CORPUS_LABELS, HUMAN_LABELS)
    assert text == (
        "* On Natural Questions generated questions share -0.10 [-0.20, -0.05] more of their words with the passage "
        "than search queries do: the generator copies less.\n"
        "* On Natural Questions, generated questions score higher than the human ones in 1 and lower in 1 of 3 "
        "strategy × retriever cells (paired intervals excluding 0); mean difference +0.00 hit@5.\n"
        "* Without the generated questions a check flags: CLEAN.\n"
        "* At least one validity check fires on 3 of 12 (25%) generated questions, and the rules miss whole kinds of "
        "error (above): read a sample before trusting a score computed on generated questions, and on your own "
        "documents, where there is no human set, measure the overlap anyway.")


def test_check_counts():
    checks = pd.DataFrame({"set": ["generated", "generated", "human", "generated"],
                           "no_question": [True, False, True, False], "copies_answer": [False, False, False, True]})
    assert post04_prose.flagged_generated(checks, ["no_question", "copies_answer"]) == (2, 3)
    assert post04_prose.check_count_text(checks, "no_question", True) == (
        "**no_question**: 1 of 3 (33%) generated questions, for example:")
    assert post04_prose.check_count_text(checks, "copies_answer", False) == (
        "**copies_answer**: 1 of 3 (33%) generated questions.")


def test_post03_width_text_compares_width_with_the_spread():
    widths = pd.DataFrame({"questions": [20, 800], "mean width": [0.40, 0.06]})
    matrix = pd.DataFrame({"a": [1, 0, 1, 1], "b": [0, 0, 1, 1]})  # means 0.75 and 0.5: spread 0.25
    assert post03_prose.width_text(widths, matrix) == (
        "At 20 questions an interval is 0.40 wide (± 0.20): wider than the whole spread of the 2 strategies' "
        "means (0.250).")


def test_post03_held_out_and_design_text():
    summary = {"mean_selection_score": 0.8, "mean_held_out_score": 0.75, "mean_gap": 0.05,
               "most_frequent_winner": "Fixed 500", "most_frequent_winner_share": 0.6}
    assert post03_prose.held_out_text(summary, 50) == (
        "Over 50 splits the pick scored 0.800 on its selection half and 0.750 on the untouched half: a winner's-curse "
        "gap of +0.0500 (no interval computed). The most frequent pick was Fixed 500 (60% of splits).")
    from chunklab_core.stats.holdout import GapInterval

    gap = GapInterval(0.05, 0.01, 0.09, 1000, 0.95)
    assert post03_prose.held_out_text(summary, 50, gap) == (
        "Over 50 splits the pick scored 0.800 on its selection half and 0.750 on the untouched half: a winner's-curse "
        "gap of +0.0500 [+0.0100, +0.0900] (95% interval from 1,000 resamples of the questions, each split 50 times; "
        "above 0: the curse is measurable on these questions). The most frequent pick was Fixed 500 (60% of splits).")
    assert "containing 0: these questions cannot show a curse" in post03_prose.held_out_text(
        summary, 50, GapInterval(0.05, -0.01, 0.09, 1000, 0.95))
    design = pd.DataFrame({"width_ratio": [1.2, 1.4], "effective_questions": [500, 300]})
    assert post03_prose.design_text(design, 800) == (
        "Clustered intervals are on average 1.30× as wide as the plain ones; the 800 questions are worth about "
        "400 independent ones.")


def test_post03_figures_draw_their_tables():
    widths = pd.DataFrame({"questions": [20, 80, 320], "mean width": [0.4, 0.2, 0.1],
                           "square-root law": [0.42, 0.21, 0.105]})
    fig = post03_figures.plot_width_vs_questions(widths, "hit@10")
    (ax,) = fig.axes
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    assert [t.get_text() for t in ax.get_xticklabels()] == ["20", "80", "320"]
    assert ax.get_ylabel() == "95% interval width of hit@10"
    assert [line.get_ydata().tolist() for line in ax.get_lines()] == [[0.4, 0.2, 0.1], [0.42, 0.21, 0.105]]
    curve = pd.DataFrame({"n_questions": [10, 100], "mean_probability_best": [0.6, 0.9]})
    (ax,) = post03_figures.plot_leader_probability(curve, (0.6, 0.55)).axes
    assert ax.get_ylabel() == "mean probability of being best (true 0.60 vs 0.55)"
    assert ax.get_ylim() == (0.45, 1.01)


def test_post01_sentences():
    from chunklab_core.reports.post01 import benchmark as post01_benchmark, prose as post01

    results = pd.DataFrame({
        "label": ["A", "B", "C"], "strategy": ["a", "b", "c"],
        "hit@1": [0.95, 0.5, 0.4], "hit@1_low": [0.91, 0.45, 0.35], "hit@1_high": [0.97, 0.55, 0.45],
        "hit@10": [0.97, 0.92, 0.8], "hit@10_low": [0.95, 0.89, 0.7], "hit@10_high": [0.99, 0.95, 0.86],
        "tokens@1": [100.0, 50.0, 60.0], "tokens@10": [1000.0, 500.0, 600.0],
        "ndcg@10": [0.6, 0.7, 0.3], "ndcg@10_low": [0.5, 0.65, 0.2], "ndcg@10_high": [0.7, 0.75, 0.4]})
    verdicts = pd.DataFrame({"strategy": ["a", "b", "c"],
                             "verdict": ["cannot be ruled out", "cannot be ruled out", "ruled out"]})
    assert post01.results_reading(results, verdicts, "S, 3 questions") == (
        "On S, 3 questions, **A** has the highest recall@10, 0.970 [0.950, 0.990]; by the paired intervals "
        "(leader − strategy, the same question resamples) it is not the winner: 1 strategy cannot be ruled out "
        "(B), 1 strategy is ruled out (C). The highest nDCG@10 point estimate is **B**'s (0.700 [0.650, 0.750]); "
        "post 03 compares every metric paired.")
    winner = verdicts.assign(verdict=["winner", "ruled out", "ruled out"])
    assert "it is the **winner**: every other strategy is ruled out." in post01.results_reading(results, winner, "S")
    # A lies above 0.90 from k = 1; B's interval at k = 10 holds 0.90; C's lies below it
    assert post01.threshold_reading(results, [1, 10]) == (
        "Recall@k lies above 0.90 by its whole 95% interval for 1 strategy, fewest tokens first: A from k = 1 "
        "(100 tokens returned on average). At k = 10, 1 interval contains 0.90, so the sample cannot say on which "
        "side of it the strategy lies: B 0.920 [0.890, 0.950]. Wholly below 0.90 at k = 10: C 0.800 [0.700, 0.860]. "
        "The token counts are descriptive means without an interval; the table's context cost column reads the "
        "first k whose point estimate exceeds 0.90 and is not a verdict.")
    low = results.assign(**{"hit@1_low": 0.1, "hit@10_low": 0.1})
    assert post01.threshold_reading(low, [1, 10]).startswith(
        "No strategy's recall@k interval lies wholly above 0.90 within k ≤ 10. At k = 10, 2 intervals contain 0.90")
    for text in (post01.threshold_reading(results, [1, 10]), post01.results_reading(results, verdicts, "S")):
        assert "cheapest" not in text and "past" not in text and "reach" not in text
    assert post01.sample_text({"documents": 40, "characters": 123456, "questions": 800}, 7) == (
        "The sample holds **40 articles** (123,456 characters) and **800 questions** (seed 7).")
    assert post01.sample_text({"characters": 123456}, 7, "SQuAD v1.1, 800 questions from 40 articles") == (
        "The sample is **SQuAD v1.1, 800 questions from 40 articles** (123,456 characters, seed 7); every table "
        "and finding below is on it.")
    assert post01.cut_example_text({"question": "Who?", "answer": "Ann", "excerpt": "by Ann"}) == (
        "**Q:** Who?  \n**A:** Ann  \n> …by Ann…")


def test_post01_reading_follows_the_tables_depth():
    """A table whose largest k is 5 is read at 5 (no hard-coded @10 columns, no KeyError)."""
    from chunklab_core.reports.post01 import benchmark as post01_benchmark, prose as post01

    results = pd.DataFrame({"label": ["A", "B"], "strategy": ["a", "b"], "hit@1": [0.4, 0.5], "hit@5": [0.8, 0.6],
                            "hit@5_low": [0.7, 0.5], "hit@5_high": [0.9, 0.72], "ndcg@5": [0.5, 0.55]})
    verdicts = pd.DataFrame({"strategy": ["a", "b"], "verdict": ["winner", "ruled out"]})
    assert post01.results_reading(results, verdicts, "S") == (
        "On S, **A** has the highest recall@5, 0.800 [0.700, 0.900]; by the paired intervals (leader − strategy, "
        "the same question resamples) it is the **winner**: every other strategy is ruled out. The highest nDCG@5 "
        "point estimate is **B**'s (0.550); post 03 compares every metric paired.")


def test_post01_recall_verdicts_are_the_leader_rule_on_the_per_question_hits():
    from types import SimpleNamespace

    from chunklab_core.reports.post01 import benchmark as post01_benchmark, prose as post01
    from chunklab_core.reports.verdict_tables import leader_verdicts

    rng = np.random.default_rng(0)
    per_question = pd.DataFrame({"qid": np.repeat(np.arange(60), 2), "strategy": ["a", "b"] * 60,
                                 "hit@10": (rng.random(120) < np.tile([0.9, 0.4], 60)).astype(float)})
    table = post01_benchmark.recall_verdicts(SimpleNamespace(per_question=per_question), 10, 500, 1)
    wide = per_question.pivot(index="qid", columns="strategy", values="hit@10")
    pd.testing.assert_frame_equal(table, leader_verdicts(wide, "hit@10", 500, 1))
    assert table["verdict"].tolist() == ["winner", "ruled out"]


def test_own_config_text():
    from types import SimpleNamespace

    from chunklab_core.own.report import config_text

    config = SimpleNamespace(strategies=["fixed_500", "recursive_500"], retrievers=["bm25"], models=["m"],
                             backend="onnx", embedding_backend="onnx", k=5, recall_target=0.9, resamples=10000, seed=3)
    assert config_text(config, "", "") == (
        "Config: the defaults; strategies: fixed_500, recursive_500; retrievers: bm25; embedding models: m (onnx); "
        "k = 5; recall target 0.90; 10,000 paired resamples, seed 3.")
    assert config_text(config, "c.yaml", "2 files skipped.").startswith("Config: `c.yaml`; strategies:")
    assert config_text(config, "c.yaml", "2 files skipped.").endswith(" Loader notes: 2 files skipped.")


def test_post03_intervals_text_names_the_sample():
    intervals = pd.DataFrame({"metric": ["hit@10", "hit@10", "rr@10"], "width": [0.04, 0.06, 0.5]})
    assert post03_prose.intervals_text(intervals, 8, 800, "hit@10") == (
        "8 strategies, 800 questions. Mean 95% interval width for hit@10: 0.050.")
    assert post03_prose.intervals_text(intervals, 8, 800, "hit@10", "SQuAD v1.1, 800 questions from 40 articles") == (
        "8 strategies on SQuAD v1.1, 800 questions from 40 articles; every table and finding below is on it. "
        "Mean 95% interval width for hit@10: 0.050.")


def test_recorded_versions_come_from_the_records_not_the_install(tmp_path):
    """The version cell reports llama-cpp-python by the runtime of the recorded calls (issue 51): a
    re-execution without the package reproduces the committed cell."""
    import json

    from chunklab_core.core.versions import package_versions, recorded_versions

    (tmp_path / "a.jsonl").write_text("\n".join(json.dumps(r) for r in [
        {"runtime": {"llama_cpp": "0.3.36"}}, {"runtime": {"llama_cpp": "0.3.35"}}, {"output": "no runtime"}]) + "\n")
    (tmp_path / "b.jsonl").write_text(json.dumps({"runtime": {"llama_cpp": "0.3.36"}}) + "\n")
    assert recorded_versions("llama-cpp-python", tmp_path) == ["0.3.35", "0.3.36"]
    shown = package_versions(("pandas",), recorded=("llama-cpp-python",), records_folder=tmp_path)
    assert shown.loc["version", "llama-cpp-python"] == "0.3.35, 0.3.36 (recorded calls)"
    empty = package_versions((), recorded=("llama-cpp-python",), records_folder=tmp_path / "none")
    assert empty.loc["version", "llama-cpp-python"] == "no recorded calls"
