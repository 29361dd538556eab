"""The findings post's builders, and per post: the verdict words in the committed tables agree with their intervals."""

import numpy as np
import pandas as pd
import pytest

from chunklab_core.stats import claims
from chunklab_core.reports import post00 as findings, verdict_tables
from chunklab_core.core.paths import DATA_DIR


# ------------------------------------------------------------------ builders on hand-made data
def test_leader_verdicts_on_a_hand_made_matrix():
    rng = np.random.default_rng(0)
    strong = (rng.random(400) < 0.9).astype(float)
    scores = pd.DataFrame({"strong": strong, "twin": strong.copy(), "weak": np.zeros(400)})
    scores.loc[:9, "twin"] = 1 - scores.loc[:9, "twin"]  # differ on 10 questions only
    table = verdict_tables.leader_verdicts(scores, "recall", 2_000, 1)
    words = dict(zip(table["strategy"], table["verdict"]))
    assert words["weak"] == "ruled out"
    assert words[table["strategy"].iloc[0]] == "cannot be ruled out"  # the twin cannot be ruled out
    assert verdict_tables.verdict_summary(table).startswith("No winner")


def test_balanced_score_moves_the_lead_to_the_cheap_strategy():
    recall = pd.DataFrame({"big": np.ones(200), "small": np.r_[np.ones(190), np.zeros(10)]})
    tokens = pd.DataFrame({"big": np.full(200, 2000.0), "small": np.full(200, 500.0)})
    table = verdict_tables.balanced_verdicts(recall, tokens, [0.0, 0.1], 2_000, 1)
    lead = table.groupby("lambda")["strategy"].first()
    assert lead[0.0] == "big" and lead[0.1] == "small"
    # at λ = 0.1 big pays 0.1·(2000/500 − 1) = 0.3 of recall: small wins by 0.95 − 0.7 = 0.25
    at = table[table["lambda"] == 0.1].set_index("strategy")
    assert at.loc["big", "leader − strategy"] == pytest.approx(0.25)
    assert at.loc["small", "verdict"] == "winner"


# ------------------------------------------------------------------ per post: words agree with intervals
def _pair_words_agree(frame, low, high, word_of):
    for _, row in frame.iterrows():
        assert word_of(row) == claims.excludes_zero(row[low], row[high]), row.to_dict()


def test_post02_paired_retriever_words():
    paired = pd.read_csv(DATA_DIR / "02_paired_retrievers.csv")
    _pair_words_agree(paired, "low", "high", lambda r: r["verdict"] != claims.NOT_TOLD_APART)
    ahead = paired["verdict"] == paired["comparison"].str.split(" − ").str[0] + " ahead"
    assert (ahead == (paired["low"] > 0)).all()


def test_post03_paired_against_leader_words():
    paired = pd.read_csv(DATA_DIR / "03_paired_vs_leader.csv")
    _pair_words_agree(paired, "low", "high", lambda r: bool(r["excludes 0"]))


def test_post04_generated_against_human_words():
    retrieval = pd.read_csv(DATA_DIR / "04_retrieval.csv")
    _pair_words_agree(retrieval, "low", "high", lambda r: bool(r["excludes 0"]))


def test_post05_strategy_difference_words():
    differences = pd.read_csv(DATA_DIR / "05_strategy_differences.csv")
    _pair_words_agree(differences, "low", "high", lambda r: bool(r["separated"]))


def test_findings_post_words_agree_with_its_intervals():
    """Post 00's rows (built from the committed tables of posts 01 and 03–06) word each paired
    interval by the series' rule."""
    table = pd.concat([findings.post_findings(posts) for posts in ("01, 03", "04", "05", "06")])
    for _, row in table.iterrows():
        verdict = str(row["verdict"])
        if verdict == claims.NOT_TOLD_APART:
            assert not claims.excludes_zero(row["low"], row["high"]), row.to_dict()
        if verdict.endswith(" ahead"):
            assert claims.excludes_zero(row["low"], row["high"]), row.to_dict()


def test_findings_name_the_judges_as_posts_05_and_06_do():
    """One name per judge: the findings table carries answers.verdicts' display names, never a key."""
    from chunklab_core.answers.verdicts import REFERENCE_NAME, grader_name

    table = findings.post_findings("05")
    kappas = table[table["finding"].str.startswith("Cohen's κ") & table["finding"].str.contains(f"the {REFERENCE_NAME} (", regex=False)]
    judges = [grader_name(c) for c in ("judge_qwen15_3way", "judge_qwen15_yesno", "judge_qwen05_3way")]
    assert kappas["finding"].tolist() == [f"Cohen's κ of the {j} against the {REFERENCE_NAME} (pass/fail)" for j in judges]
    table = pd.concat([table, findings.post_findings("06")])
    text = " ".join(table["finding"].astype(str))
    assert "qwen" not in text and "(rules)" not in text and "judge," not in text
