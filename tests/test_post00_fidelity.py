"""Post 00 says what its sources say: review findings on the summary post, each pinned on a hand-made
pool or audit table (the old behaviour fails every test here).

1. a budget below the floor is marked in post 00's table of picks as post 02 marks it;
2. a setting resting on fewer than ``FEW_DOCUMENTS`` documents carries post 02's caveat in post 00's
   compact sentence too, its count read from the setting;
3. the rule that says which judges can stand in for the audit's grades can come out every way
   (equivalent within ±δ, off the grades, undecided), by the series' interval rule and margin;
5. the margin's reason is stated with the questions it would take to settle the undecided settings.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from chunklab_core.decision.margin import DEFAULT_MARGIN, questions_to_settle
from chunklab_core.reports import pool, post00
from chunklab_core.reports.post00 import prose as post00_prose, tables as post00_tables


def _frame(values: dict[tuple[str, int], np.ndarray], docs: list[str], corpus: str) -> pd.DataFrame:
    frames = []
    for (strategy, budget), scores in values.items():
        frames.append(pd.DataFrame({
            "corpus": corpus, "model": "all-MiniLM-L6-v2", "strategy": strategy, "retriever": "dense",
            "qid": [f"q{i}" for i in range(len(scores))], "doc_id": docs, "budget": budget, "recall": scores,
            "token_recall": scores, "tokens_used": float(budget) * 0.9, "depth_binds": False, "contexts_read": 3}))
    return pd.concat(frames, ignore_index=True)


@pytest.fixture(scope="module")
def pool_fixture():
    """Two settings: CUAD on 40 contracts whose 512-token leader scores under the floor (0.05) and
    whose 1,024-token leader does not (0.6); Chroma on 4 documents (fewer than FEW_DOCUMENTS)."""
    n = 40
    rng = np.random.default_rng(7)
    low = np.r_[np.ones(2), np.zeros(n - 2)]  # 0.05: below the floor of 0.15
    high = (rng.random(n) < 0.6).astype(float)
    cuad = _frame({("fixed_500", 512): low, ("recursive_500", 512): low * 0.5,
                   ("fixed_500", 1024): high, ("recursive_500", 1024): high * (rng.random(n) < 0.7)},
                  [f"c{i}" for i in range(n)], "cuad")
    chroma = _frame({("fixed_500", 512): high, ("recursive_500", 512): (rng.random(n) < 0.5).astype(float)},
                    [f"d{i % 4}" for i in range(n)], "chroma")
    table = pool.setting_table(pd.concat([cuad, chroma], ignore_index=True), None, None, 5, 300, 0,
                               source="02_pool.csv")
    return table, pool.setting_guide(table), pool.budget_guide(table)


def test_post00_marks_a_budget_below_the_floor_as_post02_does(pool_fixture):
    table, guide, budgets = pool_fixture
    below = budgets[budgets["verdict"] == pool.BELOW_FLOOR]
    assert list(zip(below["corpus"], below["budget"])) == [("cuad", 512)]  # the fixture has one such budget
    # post 02: the pick at each budget carries its verdict
    cuad = guide["corpus"].tolist().index("cuad")
    assert ", below floor)" in pool.setting_sentences(guide, budgets)[cuad].split("1,024:")[0]
    # post 00 (and post 02's compact table): the same budget, the same mark; no other budget marked
    for view in (post00.pool_guide_view(guide, budgets), pool.compact_guide(guide, budgets)):
        marked = {(c, b) for c in ("at 512", "at 1,024") for b, v in zip(guide["corpus"], view[c])
                  if str(v).endswith(f" ({pool.BELOW_FLOOR})")}
        assert marked == {("at 512", "cuad")}, marked


def test_post00_keeps_post02s_few_documents_caveat_with_the_count_of_the_setting(pool_fixture):
    table, guide, budgets = pool_fixture
    chroma = guide["corpus"].tolist().index("chroma")
    assert int(guide.iloc[chroma]["documents"]) == 4
    assert "rests on 4 documents" in pool.setting_sentences(guide, budgets)[chroma]  # post 02
    compact = pool.setting_sentences(guide, budgets, compact=True)
    assert "Rests on 4 documents" in compact[chroma]  # post 00's sentence
    assert "documents (fewer than" not in compact[guide["corpus"].tolist().index("cuad")]  # 40 contracts: no caveat
    text = post00.pool_guide_text(guide.assign(**{"kind of document": guide["corpus"]}), budgets, table)
    assert "Rests on 4 documents" in text


def test_the_margin_reason_is_stated_with_the_questions_that_would_settle_it(pool_fixture):
    table, guide, _ = pool_fixture
    undecided = guide[guide["verdict"] == pool.UNDECIDED]
    needed = pool.settle_counts(guide)
    assert len(needed) == len(undecided)
    text = pool.margin_text(guide)
    if needed:
        known = [n for n in needed if n is not None]
        assert f"about {min(known):,} to {max(known):,}" in text or f"about {min(known):,} questions" in text
    # a guide where nothing is undecided says so, and a hand-made one gives its own range
    assert "is decided at it" in pool.margin_text(guide.assign(verdict=pool.DECIDED))
    made = pd.DataFrame({"verdict": [pool.UNDECIDED, pool.UNDECIDED, pool.DECIDED],
                         "what would decide": ["372", "3,642", "—"], "questions": [104, 130, 2000]})
    text = pool.margin_text(made)
    assert "about 372 to 3,642 questions" in text and "the 104 to 130 they rest on" in text
    assert "3.6 to 28.0 times" in text and "δ = 0.02" in text
    # shown where post 00 explains the margin, and where post 02 explains it when given its guide
    assert "Why δ" in pool.rule_text(guide=made) and "Why δ" in pool.rule_text(short=True, guide=made)
    assert "Why δ" not in pool.rule_text()


def _accuracy(rows):
    return pd.DataFrame([{"judge": j, "variant": v, "estimate": d, "low": lo, "high": hi, "graded": 160}
                         for j, v, d, lo, hi in rows])


def test_the_judge_rule_can_come_out_every_way():
    accuracy = _accuracy([
        ("A", "strict", 0.002, -0.010, 0.015), ("A", "lenient", -0.003, -0.015, 0.010),  # inside ±0.02
        ("B", "strict", 0.050, 0.010, 0.090), ("B", "lenient", 0.004, -0.012, 0.018),  # strict excludes 0
        ("C", "strict", 0.005, -0.050, 0.060), ("C", "lenient", 0.004, -0.012, 0.018)])  # strict crosses ±δ
    trust = post00_tables.judge_trust(accuracy).set_index("judge")
    assert trust.loc["A", "verdict"] == post00_tables.JUDGE_EQUIVALENT
    assert trust.loc["B", "verdict"] == post00_tables.JUDGE_OFF
    assert trust.loc["C", "verdict"] == post00_tables.JUDGE_UNDECIDED
    assert trust.loc["C", "items to settle"] == questions_to_settle(160, 0.005, -0.050, 0.060, DEFAULT_MARGIN)
    text = post00_prose.judge_use_text(trust.reset_index())
    assert "lies inside ±0.02" in text and "scoring: A." in text
    assert "the judge alone miscounts correct answers): B." in text and "Undecided on 160 items: C." in text
    # a wider margin admits C; at 0 nothing is equivalent
    assert post00_tables.judge_trust(accuracy, 0.08).set_index("judge").loc["C", "verdict"] == post00_tables.JUDGE_EQUIVALENT
    assert post00_tables.JUDGE_EQUIVALENT not in set(post00_tables.judge_trust(accuracy, 0.0)["verdict"])

