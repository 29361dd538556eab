"""The decision engine (chunklab_core.decision) on hand-made per-question tables: equivalence at the
margin, the budget rule that stops below the largest budget, ties by the simplicity order, floors per
budget, the margin arithmetic cross-checked against scipy, and one verdict for the posts and chunklab-own."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from chunklab_core.decision import engine, guide
from chunklab_core.decision.candidates import parameters, simplicity
from chunklab_core.decision.margin import DEFAULT_MARGIN, clears_zero, inside_margin, questions_to_settle

D = engine.margin_column


def _frame(values, docs, corpus="squad", retriever="bm25", model="—"):
    n = len(docs)
    return pd.concat([pd.DataFrame({
        "corpus": corpus, "model": model, "strategy": s, "retriever": retriever, "qid": [f"q{i}" for i in range(n)],
        "doc_id": docs, "budget": b, "recall": v, "token_recall": v, "tokens_used": b * 0.9, "depth_binds": False,
        "contexts_read": 3}) for (s, b), v in values.items()], ignore_index=True)


@pytest.fixture(scope="module")
def fixture_table():
    """400 questions, one per document. At 256 the best scores 0.056 (below the 0.15 floor). At 512
    Fixed 500 chars leads (0.5625) and Recursive 500 chars differs on 4 questions of 400 (−0.005 on
    average: inside ±0.02), Semantic (embedding) scores half (ruled out). At 1,024 all three are equal
    on every question, so 512's pick is equivalent to the best at every larger budget: the budget rule
    stops at 512, below the largest budget."""
    rng = np.random.default_rng(0)
    n = 400
    base = (rng.random(n) < 0.6).astype(float)
    flip = base.copy()
    flip[:4] = 1 - flip[:4]
    values = {("fixed_500", 256): base * 0, ("recursive_500", 256): base * 0.1,
              ("fixed_500", 512): base, ("recursive_500", 512): flip, ("semantic_embedding", 512): base * 0.5,
              ("fixed_500", 1024): base, ("recursive_500", 1024): base, ("semantic_embedding", 1024): base}
    return _frame(values, [f"q{i}" for i in range(n)]), base, flip


def test_margin_arithmetic_by_hand():
    assert inside_margin(-0.0194, 0.0194) and not inside_margin(-0.01, 0.0201) and not inside_margin(-0.02, 0.0)
    assert not inside_margin(float("nan"), 0.0)
    assert clears_zero(0.0006, 0.2) and not clears_zero(0.0004, 0.2)
    # d = 0.01, se = 0.02/(2·1.95996) on 100 questions: equivalence needs (1.95996 + 0.84162)·se ≤ 0.01,
    # ruling out needs (1.95996 + 0.84162)·se ≤ 0.01 too: n = ceil(100·(2.80158·0.0051021/0.01)²) = 205
    assert questions_to_settle(100, 0.01, 0.0, 0.02) == 205
    assert questions_to_settle(100, 0.02, -0.01, 0.05) is not None


def test_tost_by_interval_equals_scipy_two_one_sided_tests():
    """The engine's rule (the 1 − 2α interval inside ±δ) is the two one-sided tests: checked with
    scipy's one-sample t tests on paired differences and its t interval at 95% (α = 2.5% per side)."""
    rng = np.random.default_rng(5)
    for shift in (0.0, 0.005, 0.012, 0.02, 0.03):
        diffs = rng.normal(shift, 0.05, 300)
        p_low = stats.ttest_1samp(diffs, -DEFAULT_MARGIN, alternative="greater").pvalue
        p_high = stats.ttest_1samp(diffs, DEFAULT_MARGIN, alternative="less").pvalue
        low, high = stats.t.interval(0.95, len(diffs) - 1, loc=diffs.mean(), scale=stats.sem(diffs))
        assert inside_margin(low, high, digits=12) == (max(p_low, p_high) < 0.025), shift


def test_equivalence_pick_floor_and_budget_stop(fixture_table):
    frame, base, flip = fixture_table
    table = engine.setting_table(frame, None, None, 5, 500, 0)
    rows = table.set_index(["strategy", "budget"])
    # equivalence at 512: the interval of leader − Recursive lies inside ±0.02 under both designs
    rec = rows.loc[("recursive_500", 512)]
    assert rec[D("decision", 0.02)] == engine.EQUIVALENT
    assert -0.02 < rec["low"] and rec["high"] < 0.02
    assert rows.loc[("semantic_embedding", 512), D("decision", 0.02)] == engine.RULED_OUT
    # no margin: the same interval is undecided (it contains 0 and nothing is equivalent)
    assert rec[D("decision", 0.0)] == engine.UNDECIDED
    # the pick is the simplest of leader and equivalents: Recursive 500 (1 parameter) before Fixed 500 (2)
    assert parameters("recursive_500") < parameters("fixed_500")
    assert bool(rec[D("pick", 0.02)]) and rows.loc[("fixed_500", 512), D("decision", 0.02)] == engine.LEADER
    per_budget = guide.budget_guide(table).set_index("budget")
    assert per_budget.loc[256, "verdict"] == engine.BELOW_FLOOR  # floors per budget
    assert per_budget.loc[512, "verdict"] == engine.DECIDED
    found = guide.setting_guide(table).iloc[0]
    assert found["tokens"] == 512 < table["budget"].max()  # the budget rule stops below the largest budget
    assert found["strategy"] == "recursive_500" and found["verdict"] == engine.DECIDED
    assert found["equivalents"] == "Fixed 500 chars"
    assert found[D("verdict", 0.0)] == engine.UNDECIDED  # without a margin the rule cannot stop
    assert {"at 256", "at 512", "at 1,024"} <= set(found.index)
    robust = guide.robustness(table).set_index("margin")
    assert robust.loc[0.02, "decided"] == 1 and robust.loc[0.0, "decided"] == 0


def test_exact_ties_go_to_the_simplest(fixture_table):
    frame, _, _ = fixture_table
    table = engine.setting_table(frame, None, None, 5, 500, 0)
    at = table[table["budget"] == 1024].set_index("strategy")
    # three identical columns: the leader is the simplest (no model, fewest parameters), not list order
    assert at.loc["recursive_500", D("decision", 0.02)] == engine.LEADER
    assert at.loc["semantic_embedding", D("decision", 0.02)] == engine.EQUIVALENT
    assert simplicity("semantic_embedding", 10.0) > simplicity("fixed_500", 10.0)


def test_a_candidate_too_large_for_a_budget_is_not_compared():
    n = 60
    docs = [f"d{i // 3}" for i in range(n)]  # 20 documents, 3 questions each: both designs
    frame = _frame({("fixed_500", 512): np.ones(n), ("recursive_500", 512): np.ones(n)}, docs)
    frame.loc[(frame["strategy"] == "recursive_500"), "contexts_read"] = 0
    table = engine.setting_table(frame, None, None, 5, 300, 0)
    assert (table.set_index("strategy").loc["recursive_500", "verdict"]) == engine.DOES_NOT_FIT
    assert table["design"].iloc[0].startswith("documents")


def test_posts_and_own_decide_one_table_identically(fixture_table):
    """One per-question table through the posts' path (reports.pool) and chunklab-own's
    (own.recommendation.matched_cost): the same picks, budgets and verdicts."""
    from chunklab_core.own.recommendation import matched_cost
    from chunklab_core.reports import pool

    frame, _, _ = fixture_table
    posts = pool.setting_guide(pool.setting_table(frame, None, None, 5, 500, 0))
    own = matched_cost(frame.assign(corpus="own"), resamples=500, seed=0)
    columns = ["strategy", "tokens", "verdict", "equivalents", D("verdict", 0.0), D("verdict", 0.04)]
    assert posts[columns].reset_index(drop=True).equals(own[columns].reset_index(drop=True))
    own_rows = own.iloc[0]
    assert own_rows["tokens"] == 512 and own_rows["verdict"] == engine.DECIDED


def test_intervals_read_from_shared_resamples_equal_the_pairwise_bootstraps():
    """The engine draws each design's resamples once for every candidate; each pair's interval equals
    ``paired_difference_ci`` / ``paired_difference_clustered_ci`` on the pair alone."""
    from chunklab_core.stats.bootstrap import paired_difference_ci
    from chunklab_core.stats.clustered import paired_difference_clustered_ci

    rng = np.random.default_rng(7)
    n = 90
    wide = pd.DataFrame({"a": rng.random(n), "b": rng.random(n), "c": (rng.random(n) < 0.4).astype(float)})
    docs = np.array([f"d{i // 3}" for i in range(n)])
    intervals = engine._Intervals(wide, docs, 700, 3)
    for x, y in (("a", "b"), ("c", "a")):
        got = intervals(x, y)
        diff, q_low, q_high = paired_difference_ci(wide[x].to_numpy(), wide[y].to_numpy(), 700, 3)
        _, low, high = paired_difference_clustered_ci(wide[x].to_numpy(), wide[y].to_numpy(), docs, 700, 3)
        assert got["diff"] == pytest.approx(diff, abs=1e-12)
        assert (got["question low"], got["question high"]) == pytest.approx((q_low, q_high), abs=1e-12)
        assert (got["low"], got["high"]) == pytest.approx((low, high), abs=1e-12)


def test_a_models_window_is_read_from_the_model_or_its_declaration():
    """Post 00 reads committed tables on machines without the second model: the declared window stands in,
    and where the model is here the two agree."""
    from chunklab_core.decision import scores

    assert scores.model_window("all-MiniLM-L6-v2") == scores.DECLARED_WINDOWS["all-MiniLM-L6-v2"] == 256
    from chunklab_core.retrieval import dense

    def missing(model):
        raise FileNotFoundError(model)

    original = dense.window_tokenizer
    dense.window_tokenizer = missing
    try:
        assert scores.model_window("all-mpnet-base-v2") == 384
        with pytest.raises(FileNotFoundError):
            scores.model_window("some-other-model")
    finally:
        dense.window_tokenizer = original
