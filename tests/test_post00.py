"""Post 00 is faithful to its posts: every quoted row equals the cited post's row BY KEY, and every post appears.

Hand-made fixture tables (every file post 00 reads, in the new formats of posts 02 and 07) pin the
decision guide's choices and sentences; the committed tables of posts 01 and 03–06 check the same
faithfulness on real data. The expected values are computed by hand in the comments, not by
the code under test.
"""

import math
import re

import nbformat
import numpy as np
import pandas as pd
import pytest

from chunklab_core.core.paths import DATA_DIR, NOTEBOOKS_DIR, PROJ_ROOT
from chunklab_core.reports import post00
from chunklab_core.stats import claims

TOLD, NOT_OUT, OUT, WIN = claims.NOT_TOLD_APART, claims.NOT_RULED_OUT, claims.RULED_OUT, claims.WINNER

# The test's own reading of each cited table: which column is the estimate, the interval, the verdict
# ("pair": the verdict must be the series' word for the interval; None: descriptive, not checked).
FIELDS = {
    "02_recall_verdicts.csv": ("leader − strategy", "low", "high", "verdict"),
    "02_stability.csv": ("tau", "low", "high", None),
    "01_full_set_verdicts.csv": ("leader − strategy", "low", "high", "verdict"),
    "03_paired_vs_leader.csv": ("difference", "low", "high", "pair"),
    "03_clustered.csv": ("mean", "clustered_low", "clustered_high", None),
    "03_calibration.csv": ("share_correct", "ci_low", "ci_high", None),
    "04_retrieval.csv": ("generated − human", "low", "high", "pair"),
    "04_trend.csv": ("slope", "low", "high", None),
    "05_answers.csv": ("share", "low", "high", None),
    "05_strategy_differences.csv": ("A - B", "low", "high", "pair"),
    "05_agreement.csv": ("kappa", "low", "high", None),
    "06_agreement.csv": ("weighted kappa", "weighted kappa low", "weighted kappa high", None),
    "06_paired.csv": ("difference", "low", "high", "reading"),
    "07_stage.csv": ("d_ndcg", "d_ndcg_low", "d_ndcg_high", "verdict"),
    "08_neighbours.csv": ("recall a − b", "low", "high", "verdict"),
    "08_llm_pairs.csv": ("recall a − b", "low", "high", "verdict"),
}


# ------------------------------------------------------------------ fixture tables
def _pool_tables() -> dict:
    """02_pool and 02_pool_guide by the pool's own functions on two strategies, two budgets,
    six questions (squad, BM25): fixed_500 reads every answer at both budgets, recursive_500
    none at 512 and all at 1,024."""
    from chunklab_core.reports import pool

    rows = []
    for strategy, budget, value in (("fixed_500", 512, 1.0), ("fixed_500", 1024, 1.0), ("recursive_500", 512, 0.0),
                                    ("recursive_500", 1024, 1.0)):
        for i in range(6):
            rows.append({"corpus": "squad", "model": "—", "strategy": strategy, "retriever": "bm25", "qid": f"q{i}",
                         "doc_id": f"d{i}", "budget": budget, "recall": value, "token_recall": value,
                         "tokens_used": budget * 0.9, "depth_binds": False, "contexts_read": 4})
    table = pool.setting_table(pd.DataFrame(rows), None, None, 5, 200, 0, source="02_pool.csv")
    return {"02_pool.csv": table, "02_pool_guide.csv": pool.setting_guide(table)}


def _frame(rows, columns):
    return pd.DataFrame(rows, columns=columns)


def write_fixture(folder, shuffle: bool = False):
    """Every table post 00 reads, small and hand-made; ``shuffle`` reverses the row order of the
    tables whose order carries no meaning (post 00 must cite by key, not by position)."""
    nan = np.nan
    tables = {
        # squad/bm25: leader A; B cannot be ruled out (its interval contains 0); C ruled out.
        # cuad/bm25: X the winner over Y.
        "02_recall_verdicts.csv": _frame([
            ["A", 0.90, 0.0, nan, nan, NOT_OUT, "recall@5", 200, "documents (10)", NOT_OUT, "squad", "bm25"],
            ["B", 0.88, 0.02, -0.01, 0.05, NOT_OUT, "recall@5", 200, "documents (10)", NOT_OUT, "squad", "bm25"],
            ["C", 0.70, 0.20, 0.10, 0.30, OUT, "recall@5", 200, "documents (10)", OUT, "squad", "bm25"],
            ["X", 0.80, 0.0, nan, nan, WIN, "recall@5", 21, "documents (3)", WIN, "cuad", "bm25"],
            ["Y", 0.40, 0.40, 0.20, 0.60, OUT, "recall@5", 21, "documents (3)", OUT, "cuad", "bm25"],
        ], ["strategy", "mean", "leader − strategy", "low", "high", "verdict", "metric", "questions", "design",
            "question verdict", "corpus", "retriever"]),
        # share of each strategy's chunks the dense model truncates (read for dense and hybrid only)
        "02_chunk_health.csv": _frame([["squad", "A", 0.6], ["squad", "B", 0.0], ["squad", "C", 0.0],
                                       ["cuad", "X", 0.1], ["cuad", "Y", 0.0]],
                                      ["corpus", "strategy", "share truncated"]),
        # balanced score at two penalties: at 0.05 on squad, "B / bm25" leads and A / bm25 cannot be ruled out
        "02_balanced_verdicts.csv": _frame([
            ["B / bm25", 0.85, 0.0, nan, nan, NOT_OUT, 200, "documents (10)", NOT_OUT, 0.05, "squad"],
            ["A / bm25", 0.84, 0.01, -0.02, 0.04, NOT_OUT, 200, "documents (10)", NOT_OUT, 0.05, "squad"],
            ["C / bm25", 0.60, 0.25, 0.15, 0.35, OUT, 200, "documents (10)", OUT, 0.05, "squad"],
            ["A / bm25", 0.89, 0.0, nan, nan, WIN, 200, "documents (10)", WIN, 0.02, "squad"],
            ["X / bm25", 0.70, 0.0, nan, nan, WIN, 21, "documents (3)", NOT_OUT, 0.05, "cuad"],
            ["Y / bm25", 0.30, 0.40, 0.20, 0.60, OUT, 21, "documents (3)", OUT, 0.05, "cuad"],
        ], ["strategy", "mean", "leader − strategy", "low", "high", "verdict", "questions", "design",
            "question verdict", "lambda", "corpus"]),
        # tokens@5: C is the cheapest of all but ruled out, so B (400) is the cheapest candidate.
        "02_matrix.csv": _frame([
            ["squad", "—", "A", "Strategy A", "bm25", 200, 1000.0, 0.90, 0.85, 0.95],
            ["squad", "—", "B", "Strategy B", "bm25", 200, 400.0, 0.88, 0.83, 0.93],
            ["squad", "—", "C", "Strategy C", "bm25", 200, 100.0, 0.70, 0.64, 0.76],
            ["squad", "m", "A", "Strategy A", "dense", 200, 1000.0, 0.91, 0.86, 0.96],
            ["cuad", "—", "X", "Strategy X", "bm25", 21, 500.0, 0.80, 0.6, 0.95],
            ["cuad", "—", "Y", "Strategy Y", "bm25", 21, 200.0, 0.40, 0.2, 0.6],
        ], ["corpus", "model", "strategy", "label", "retriever", "questions", "tokens@5", "recall@5", "recall@5_low",
            "recall@5_high"]),
        "02_paired_retrievers.csv": _frame([
            ["squad", "Strategy A", "dense − bm25", 0.01, -0.02, 0.04, TOLD, 200, "documents (10)"],
            ["squad", "Strategy B", "dense − bm25", 0.05, 0.01, 0.09, "dense ahead", 200, "documents (10)"],
            ["squad", "Strategy C", "dense − bm25", -0.06, -0.10, -0.02, "bm25 ahead", 200, "documents (10)"],
        ], ["corpus", "strategy", "comparison", "difference", "low", "high", "verdict", "questions", "design"]),
        "02_models.csv": _frame([
            ["squad", "dense", "Strategy A", "m2 − m", 0.03, 0.01, 0.05, "m2 ahead", 200, "documents (10)"],
        ], ["corpus", "retriever", "strategy", "comparison", "difference", "low", "high", "verdict", "questions",
            "design"]),
        "02_stability.csv": _frame([["retrievers", "squad · bm25", "squad · dense", 0.6, 0.2, 0.9, 3, True],
                                    ["corpora", "squad · bm25", "cuad · bm25", 0.1, -0.5, 0.7, 2, True]],
                                   ["across", "setting a", "setting b", "tau", "low", "high", "strategies", "paired"]),
        "01_full_set_verdicts.csv": _frame([
            ["Strategy A", 0.95, 0.0, nan, nan, NOT_OUT, "hit@10", 2000, "documents (48)", "SQuAD v1.1 dev, 2,000"],
            ["Strategy B", 0.94, 0.01, -0.005, 0.025, NOT_OUT, "hit@10", 2000, "documents (48)", "SQuAD v1.1 dev, 2,000"],
            ["Strategy C", 0.90, 0.05, 0.03, 0.07, OUT, "hit@10", 2000, "documents (48)", "SQuAD v1.1 dev, 2,000"],
        ], ["strategy", "mean", "leader − strategy", "low", "high", "verdict", "metric", "questions", "design",
            "sample"]),
        "03_paired_vs_leader.csv": _frame([["Strategy B", "Strategy A", -0.04, -0.06, -0.02]],
                                          ["strategy", "minus", "difference", "low", "high"]),
        "03_clustered.csv": _frame([["Strategy A", 0.94, 0.91, 0.97, 800, 40, 1.5, 350.0]],
                                   ["cell", "mean", "clustered_low", "clustered_high", "n_questions", "n_documents",
                                    "width_ratio", "effective_questions"]),
        "03_calibration.csv": _frame([[0.03, "0.0-0.5", 400, 0.42, 0.33, 0.28, 0.37],
                                      [0.03, "0.9-1.0", 300, 0.95, 0.70, 0.65, 0.75]],
                                     ["rate spread", "band", "comparisons", "mean_reported", "share_correct", "ci_low",
                                      "ci_high"]),
        "04_retrieval.csv": _frame([["squad", "fixed_500", "bm25", 60, -0.08, -0.20, 0.05],
                                    ["squad", "fixed_500", "dense", 60, -0.20, -0.35, -0.05],
                                    ["nq", "fixed_500", "dense", 31, 0.39, 0.13, 0.65]],
                                   ["corpus", "strategy", "retriever", "passages", "generated − human", "low", "high"]),
        "04_trend.csv": _frame([["squad", 120, 60, 0.39, 0.13, 0.67], ["both", 182, 91, 0.31, 0.13, 0.51]],
                               ["corpus", "questions", "passages", "slope", "low", "high"]),
        "04_checks.csv": _frame([["generated", "squad", True], ["generated", "squad", False],
                                 ["human", "squad", False]], ["set", "corpus", "near-duplicate"]),
        "05_answers.csv": _frame([["squad", "Strategy A", "rule-based reference grader", 200, 40, 0.62, 0.55, 0.70],
                                  ["squad", "Strategy A", "passage retrieved", 200, 40, 0.92, 0.88, 0.96]],
                                 ["corpus", "strategy", "measure", "questions", "documents", "share", "low", "high"]),
        "05_strategy_differences.csv": _frame([["squad", "Strategy A", "Strategy B", 200, 0.03, -0.01, 0.07]],
                                              ["corpus", "strategy A", "strategy B", "questions", "A - B", "low",
                                               "high"]),
        "05_agreement.csv": _frame([["rule-based reference grader", "judge J", "pass/fail", 660, 0.65, 0.56, 0.74],
                                    ["rule-based reference grader", "judge J", "three-way", 660, 0.58, 0.5, 0.65]],
                                   ["grader A", "grader B", "scale", "items", "kappa", "low", "high"]),
        "06_agreement.csv": _frame([["judge J", "g", "binary", 164, 0.54, 0.38, 0.69, 0.72, 0.58, 0.82],
                                    ["judge K", "g", "binary", 164, 0.04, -0.15, 0.24, 0.05, -0.10, 0.20]],
                                   ["judge", "against", "scale", "graded", "kappa", "kappa low", "kappa high",
                                    "weighted kappa", "weighted kappa low", "weighted kappa high"]),
        "06_accuracy.csv": _frame([
            [j, v, e, a, a - 0.04, a + 0.04, 660, 164]
            for j, base in (("judge J", 0.70), ("judge K", 0.60)) for v in ("strict", "lenient")
            for e, a in (("judge only", base), ("grades only", 0.65),
                         ("PPI (judge + grades)", 0.65 if v == "strict" else 0.66))],
            ["judge", "variant", "estimator", "accuracy", "low", "high", "population", "graded"]),
        "06_paired.csv": _frame([["judge J", "strict", 0.05, 0.01, 0.09, 164, "judge-only too high"],
                                 ["judge J", "lenient", 0.04, -0.01, 0.09, 164, TOLD],
                                 ["judge K", "strict", -0.05, -0.09, -0.01, 164, "judge-only too low"],
                                 ["judge K", "lenient", -0.04, -0.09, 0.01, 164, TOLD]],
                                ["judge", "variant", "difference", "low", "high", "graded", "reading"]),
        "07_stage.csv": _frame([["squad", "fixed_500", "bm25", "mini", 10, 400, "documents (20)", 0.05, 0.02, 0.08,
                                 "reranked ahead", 700.0],
                                ["squad", "fixed_500", "bm25", "mini", 50, 400, "documents (20)", 0.01, -0.02, 0.04,
                                 TOLD, 900.0]],
                               ["corpus", "strategy", "first_stage", "scorer", "depth", "questions", "design", "d_ndcg",
                                "d_ndcg_low", "d_ndcg_high", "verdict", "tokens_read"]),
        "07_depths.csv": _frame([["squad", "fixed_500", "bm25", "mini", 400, "documents (20)", -0.04, -0.07, -0.01,
                                  "N=5 ahead"]],
                                ["corpus", "strategy", "first_stage", "scorer", "questions", "design", "difference",
                                 "low", "high", "verdict"]),
        "07_slice_comparisons.csv": _frame([["squad", "recursive_500", "bm25", 10, "llm", "mini", 7, "questions",
                                             -0.01, -0.2, 0.15, TOLD]],
                                           ["corpus", "strategy", "first_stage", "depth", "a", "b", "questions",
                                            "design", "difference", "low", "high", "verdict"]),
        # post 08: on squad/bm25 the default D1 leads with 4000 tokens@5; D2 cannot be ruled out, D3 is ruled out;
        # the cheapest kept is the series' S (300 tokens@5)
        "08_neighbours.csv": _frame([[5, "R 800", "R 400", 472, 5, 2.0, -1.0, 5.0, TOLD],
                                     [5, "R 400", "R 200", 472, 5, -4.0, -7.0, -1.0, "R 200 ahead"]],
                                    ["retrieved", "a", "b", "questions", "clusters", "recall a − b", "low", "high",
                                     "verdict"]),
        "08_llm_pairs.csv": _frame([[5, "LLM", "R 800", 276, 3, -30.0, -40.0, -20.0, "R 800 ahead"]],
                                   ["retrieved", "a", "b", "questions", "clusters", "recall a − b", "low", "high",
                                    "verdict"]),
    }
    tables.update(_pool_tables())
    assert set(tables) == set(post00.SOURCES), "the fixture covers every table post 00 reads"
    for name, table in tables.items():
        if shuffle and name not in ("02_recall_verdicts.csv", "01_full_set_verdicts.csv", "02_balanced_verdicts.csv"):  # leader first: format
            table = table.iloc[::-1]
        table.to_csv(folder / name, index=False)
    (folder / "audit").mkdir(exist_ok=True)
    pd.DataFrame({"item_id": ["A1", "A2"], "grade": ["correct", "wrong"], "grader": ["bot", "bot"],
                  "grader_kind": ["model:claude", "model:claude"]}).to_csv(folder / "audit" / "post05_v2_sheet.csv",
                                                                           index=False)
    return folder


@pytest.fixture
def fixture(tmp_path):
    return write_fixture(tmp_path)


# ------------------------------------------------------------------ the guide, pinned by hand
def test_guide_names_the_cheapest_candidate_its_interval_and_what_would_decide(fixture):
    guide = post00.chunking_guide(fixture, model="m").set_index(["corpus", "retriever"])
    squad = guide.loc[("squad", "bm25")]
    assert squad["cannot be ruled out"] == "Strategy A, Strategy B"  # C is ruled out though cheapest
    assert squad["cheapest"] == "Strategy B" and squad["cheapest tokens@5"] == 400
    assert (squad["leader − cheapest"], squad["low"], squad["high"]) == (0.02, -0.01, 0.05)
    assert squad["verdict"] == NOT_OUT
    # 80% power: 200 · ((1.959964 + 0.841621) · (0.03 / 1.959964) / 0.02)² = 200 · 2.14411² = 919.4 -> 920
    assert squad["what would decide"] == "920 questions"
    assert (squad["leader recall@5"], squad["leader low"], squad["leader high"]) == (0.90, 0.85, 0.95)
    assert math.isnan(squad["leader truncated"])  # BM25 reads every token
    assert squad["saving"] == pytest.approx(0.6)  # 1 − 400 / 1000
    assert squad["question verdict"] == NOT_OUT and not squad["at the edge"] and not squad["few documents"]
    assert squad["sample"] == "SQuAD v1.1, 200 questions from 10 articles"
    cuad = guide.loc[("cuad", "bm25")]
    assert (cuad["leader verdict"], cuad["cheapest"], cuad["what would decide"]) == (WIN, "Strategy X", "—")
    assert cuad["sample"] == "CUAD, 21 questions from 3 contracts"
    assert cuad["few documents"]  # 3 documents: a document-clustered interval is a rough guide
    assert post00.guide_comparisons(fixture) == (3, 2, 1)  # B, C, Y paired; C and Y exclude 0; X wins


def test_questions_to_decide_by_hand():
    # 80% power: 20 · ((1.959964 + 0.841621) · (0.1 / 1.959964) / 0.02)² = 20 · 7.14734² = 1021.7 -> 1022
    assert post00.questions_to_decide(20, 0.02, -0.08, 0.12) == "1,022 questions"
    assert post00.questions_to_decide(100, 0.05, 0.01, 0.09) == "—"  # already separated
    assert post00.questions_to_decide(100, 0.0, -0.01, 0.01) == "no difference measured"
    assert post00.questions_to_decide(100, 1e-4, -0.5, 0.5) == "more than 100,000 questions"


def test_questions_for_power_against_statsmodels():
    from statsmodels.stats.power import NormalIndPower

    from chunklab_core.stats.bootstrap import questions_for_power, questions_needed

    for n, diff, ci in ((20, 0.02, (-0.08, 0.12)), (200, 0.02, (-0.01, 0.05)), (2000, -0.011, (-0.03, 0.008))):
        sigma = (ci[1] - ci[0]) / (2 * 1.959963984540054) * math.sqrt(n)  # per-question spread
        reference = NormalIndPower().solve_power(effect_size=abs(diff) / sigma, alpha=0.05, power=0.80, ratio=0)
        assert questions_for_power(n, diff, ci) == max(n + 1, math.ceil(reference - 1e-6)), (n, diff, ci)
    # at 50% power the formula is questions_needed's
    assert questions_for_power(20, 0.02, (-0.08, 0.12), power=0.5) == questions_needed(20, 0.02, (-0.08, 0.12))
    with pytest.raises(ValueError):
        questions_for_power(20, 0.02, (0.1, -0.1))


def test_cost_aware_guide_reads_one_penalty(fixture):
    table = post00.cost_aware_guide(fixture, 0.05).set_index("corpus")
    assert (table.loc["squad", "leader"], table.loc["squad", "verdict"]) == ("B / bm25", NOT_OUT)
    assert (table.loc["squad", "cannot be ruled out"], table.loc["squad", "settings"]) == (2, 3)
    assert (table.loc["cuad", "verdict"], table.loc["cuad", "question verdict"]) == (WIN, NOT_OUT)
    with pytest.raises(ValueError, match="lambda"):
        post00.cost_aware_guide(fixture, 0.5)


def test_guide_text_and_multiplicity(fixture):
    guide = post00.chunking_guide(fixture, model="m")
    text = post00.guide_text(guide, *post00.guide_comparisons(fixture))
    assert "Strategy X is the **winner**" in text
    assert "Strategy B is the cheapest (400 tokens@5 against the leader Strategy A's 1000 tokens@5, 60% fewer)" in text
    assert "The leader's recall@5 is 0.900 [0.850, 0.950]." in text
    # CUAD rests on 3 documents: the rough-guide warning with the question-level verdict
    assert "With 3 documents, the document-resampled interval is a rough guide" in text
    assert "+0.020 [-0.010, +0.050]" in text and "About 920 questions would give 80% power to tell them apart." in text
    assert claims.multiplicity_text(3, 2) in text and "names 1 winner" in text


# ------------------------------------------------------------------ faithful by key
def _check_row(row, folder):
    source = pd.read_csv(folder / row["source"])
    cited = post00.row_by_key(source, post00.parse_key(row["key"]), row["source"])
    estimate, low, high, verdict = FIELDS[row["source"]]
    for mine, theirs in ((row["estimate"], cited[estimate]), (row["low"], cited[low]), (row["high"], cited[high])):
        assert (math.isnan(mine) and math.isnan(theirs)) or mine == pytest.approx(theirs, abs=1e-12), row.to_dict()
    if verdict == "pair":
        assert (row["verdict"] == TOLD) == (not claims.excludes_zero(cited[low], cited[high])), row.to_dict()
    elif verdict is not None:
        assert row["verdict"] == cited[verdict], row.to_dict()


def _guide_rows(guide):
    return guide.rename(columns={"leader − cheapest": "estimate"})


@pytest.mark.parametrize("shuffle", [False, True], ids=["as written", "rows reversed"])
def test_every_row_equals_its_cited_row_by_key(tmp_path, shuffle):
    folder = write_fixture(tmp_path, shuffle=shuffle)
    guide = post00.chunking_guide(folder, model="m")
    findings = post00.findings_table(folder)
    for table in (_guide_rows(guide), findings):
        for _, row in table.iterrows():
            _check_row(row, folder)
    # the cheapest candidate's tokens are the matrix's, by key
    matrix = pd.read_csv(folder / "02_matrix.csv").set_index(["corpus", "retriever", "label"])
    for _, row in guide.iterrows():
        assert row["cheapest tokens@5"] == matrix.loc[(row["corpus"], row["retriever"], row["cheapest"]), "tokens@5"]


def test_faithful_to_the_committed_tables_of_posts_01_and_03_to_06():
    for posts in ("01, 03", "04", "05", "06"):
        table = post00.post_findings(posts)
        assert len(table), posts
        for _, row in table.iterrows():
            _check_row(row, DATA_DIR)


def test_a_row_whose_key_matches_nothing_or_two_rows_is_an_error():
    table = pd.DataFrame({"a": ["x", "x", "y"], "b": [1, 2, 3]})
    assert post00.row_by_key(table, {"a": "x", "b": "2"})["b"] == 2
    with pytest.raises(LookupError, match="2 rows match a=x"):
        post00.row_by_key(table, {"a": "x"})
    with pytest.raises(LookupError, match="0 rows"):
        post00.row_by_key(table, {"a": "z"})
    assert post00.parse_key(post00.key_text(a="x", b=2)) == {"a": "x", "b": "2"}
    with pytest.raises(ValueError):
        post00.key_text(a="x; y")


def test_every_post_with_findings_appears_in_post_00(fixture):
    guide = post00.chunking_guide(fixture, model="m")
    counts = post00.decision_counts(fixture)
    cited = post00.posts_with_findings(guide, post00.findings_table(fixture), *counts.values())
    assert cited == ["01", "02", "03", "04", "05", "06", "07", "08"]
    assert sorted(post00.reading_order()["post"]) == cited


# ------------------------------------------------------------------ the later questions
def test_comparison_counts_by_hand_and_contradictions_refused(fixture):
    counts = post00.decision_counts(fixture)
    retriever = counts["retriever"].iloc[0]
    assert (retriever["a ahead"], retriever["b ahead"], retriever[TOLD], retriever["compared"]) == (1, 1, 1, 3)
    assert (retriever["lowest"], retriever["highest"]) == (-0.06, 0.05)
    stage = counts["stage"].set_index("depth")
    assert stage.loc[10, "a ahead"] == 1 and stage.loc[50, TOLD] == 1
    bad = pd.read_csv(fixture / "02_paired_retrievers.csv")
    bad.loc[0, "verdict"] = "dense ahead"  # its interval [-0.02, 0.04] contains 0
    bad.to_csv(fixture / "02_paired_retrievers.csv", index=False)
    with pytest.raises(ValueError, match="contradicts its interval"):
        post00.comparison_counts("02_paired_retrievers.csv", ["corpus", "comparison"], data_dir=fixture)


def test_every_judge_of_post_06_is_reported_with_ppi_beside_the_grades(fixture):
    agreement, accuracy = post00.judge_agreement(fixture), post00.judge_accuracy(fixture)
    gaps = post00.ppi_gaps(fixture)
    assert gaps["strict"] == 0 and gaps["lenient"] == pytest.approx(0.01)
    text = post00.judge_text(agreement, accuracy, gaps, fixture)
    for judge in ("judge J", "judge K"):
        assert f"**{judge}**" in text
    assert "0.05 [-0.10, 0.20] (binary, not above chance)" in text  # judge K's weighted κ
    assert "+5.0 points [+1.0, +9.0] (judge-only too high)" in text
    assert "gives the grades-only estimate exactly under strict scoring" in text
    assert "Under lenient scoring they differ by up to 1.0 points." in text
    # which judge to trust: by the margin rule (judge J's κ is above chance, yet its accuracy is off)
    assert "under strict and lenient scoring: none." in text
    assert "Off the grades (an interval excludes 0; the judge alone miscounts correct answers): judge J; judge K." in text
    assert "Undecided on 164 items: none." in text and "The highest weighted κ is the judge J's" in text


def test_a_single_comparison_reads_as_one_estimate_not_as_counts(fixture):
    counts = post00.decision_counts(fixture)
    text = post00.rerank_text(counts["stage"], counts["depths"], counts["slices"],
                              pd.read_csv(fixture / "07_stage.csv"))
    assert "llm − mini: -0.010, cannot be told apart (7 questions, resampling questions)" in text
    assert "ahead in 0" not in text.split("Scorers against each other")[1]
    assert "reads 700 to 900 tokens per question" in text and "strategies Fixed 500" in text


def test_the_retriever_answer_names_every_pool_candidate_the_model_reads_under_half_of(fixture):
    counts = post00.decision_counts(fixture)
    pool_rows = pd.DataFrame({"label": ["A", "chonkie default", "B", "A"], "beyond window": [0.2, 0.55, float("nan"), 0.6]})
    text = post00.retriever_text(counts["retriever"], "recall@5", pool_rows)
    assert "A (60%), chonkie default (55%)" in text and "B (" not in text  # library splitters too, largest share
    assert "truncation" not in post00.retriever_text(counts["retriever"], "recall@5", pool_rows.assign(
        **{"beyond window": 0.1}))


def test_limitations_word_post_04_by_its_verdicts(fixture):
    guide = post00.chunking_guide(fixture, model="m")
    text = " ".join(post00.limitations(guide, 3, 2, fixture))
    assert "1 of 2 generated questions" in text
    assert "exclude 0 in 2 of 3 cells" in text  # squad dense −, nq dense +
    assert "on SQuAD v1.1, generated questions score higher in 0 and lower in 1 of 2 cells" in text
    assert "on Natural Questions, generated questions score higher in 1 and lower in 0 of 1 cell" in text
    assert "favour lexical retrieval" not in text


def test_small_samples_are_computed_not_listed_by_post(fixture):
    table = post00.findings_table(fixture)
    text = post00.findings_text(table, below=50)
    small = post00.small_rows(table, 50)
    # nq's 31 passages; post 02's τ over 3 and 2 ranked strategies count strategies, not a sample, so they
    # are not small samples; post 07's 400 questions are not small
    assert sorted(set(small["post"])) == ["04"]
    assert (table.loc[table["post"] == "02", "n counts"] == "strategies").all()
    assert len(table[(table["n"] < 50) & (table["post"] == "02")]) > 0  # the τ rows exist and are left out
    assert f"{len(small)} row" in text and "posts 04" in text


# ------------------------------------------------------------------ clear errors
def test_a_missing_table_or_column_names_the_post_to_re_execute(fixture):
    (fixture / "02_recall_verdicts.csv").unlink()
    with pytest.raises(post00.MissingTable, match="re-execute post 02"):
        post00.chunking_guide(fixture)
    stage = pd.read_csv(fixture / "07_stage.csv").drop(columns=["design"])
    stage.to_csv(fixture / "07_stage.csv", index=False)
    with pytest.raises(post00.MissingTable, match=r"lacks the column\(s\) design .*re-execute post 07"):
        post00.findings_table(fixture)


def test_the_makefile_lists_every_table_post_00_reads():
    from chunklab_core.reports import posts
    from chunklab_core.reports.post00 import sources

    fragment = posts.make_fragment()  # the Makefile includes it (.cache/posts.mk)
    block = re.search(r"^FINDINGS_TABLES := (.*)$", fragment, re.M).group(1)
    listed = {name.removeprefix("data/") for name in re.findall(r"data/[\w.]+", block)}
    assert listed == set(post00.SOURCES) == set(sources.COLUMNS)
    assert all(post00.SOURCES[name][0] == name[:2] for name in post00.SOURCES)


def test_the_notebook_reads_a_data_dir_parameter():
    nb = nbformat.read(NOTEBOOKS_DIR / "src" / "00_findings.ipynb", as_version=4)
    (params,) = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    assert "DATA_DIR = None" in params.source
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    assert code.count("DATA_DIR") >= 6 and "max_rows=None" in code


def test_multiplicity_counts_every_paired_table_post_00_reads(fixture):
    tests, separated = post00.series_comparisons(fixture)
    # by hand from the fixture: 01 full set 2 (1 out), 02 recall 3 (2), balanced 3 (2), retrievers 3 (2),
    # models 1 (1), 03 paired 1 (1), 04 retrieval 3 (2), 05 differences 1 (0), 06 paired 4 (2),
    # 07 stage 2 (1), 07 depths 1 (1), 07 slices 1 (0)
    # + 02 pool: within each budget 1 (1 at 512) and the gain 512 -> 1,024 1 (0); 08 neighbours 2 (1), LLM pairs 1 (1)
    assert (tests, separated) == (31, 18)
    guide = post00.chunking_guide(fixture, model="m")
    text = " ".join(post00.limitations(guide, 3, 2, fixture))
    assert claims.multiplicity_text(31, 18) in text




def test_comparison_counts_separate_only_where_both_resampling_designs_agree(tmp_path):
    """Issue 34: the one rule of post 08 everywhere: a comparison separated by the document-resampled
    interval but not by the question-level one counts as not told apart, and is counted as such."""
    from chunklab_core.stats import claims

    rows = [  # difference, document interval, question interval, verdict by the document interval
        (0.05, 0.01, 0.09, 0.02, 0.08, "dense ahead"),  # both designs: dense ahead
        (0.04, 0.001, 0.08, -0.002, 0.08, "dense ahead"),  # one design only: not told apart
        (-0.03, -0.06, -0.01, -0.05, -0.01, "bm25 ahead"),  # both: bm25 ahead
        (0.00, -0.02, 0.02, -0.02, 0.02, claims.NOT_TOLD_APART),
    ]
    pd.DataFrame([{"corpus": "squad", "strategy": f"s{i}", "comparison": "dense − bm25", "difference": d, "low": lo,
                   "high": hi, "question low": qlo, "question high": qhi, "verdict": v, "questions": 40,
                   "design": "documents (8)"} for i, (d, lo, hi, qlo, qhi, v) in enumerate(rows)]).to_csv(
        tmp_path / "02_paired_retrievers.csv", index=False)
    counts = post00.comparison_counts("02_paired_retrievers.csv", ["corpus", "comparison"], data_dir=tmp_path)
    row = counts.iloc[0]
    assert (row["a ahead"], row["b ahead"], row[claims.NOT_TOLD_APART], row["one design only"]) == (1, 1, 2, 1)
    text = post00.counts_text(counts, "retriever.reading", ["corpus", "comparison"], lambda r: r["comparison"],
                              lambda r: ("dense", "bm25"), metric="recall@5")
    assert '"cannot be told apart" includes 1 separated under one resampling design only' in text


def test_an_estimate_outside_its_own_interval_is_flagged_and_explained(fixture):
    from chunklab_core.reports.post00 import findings

    stability = pd.read_csv(fixture / "02_stability.csv")
    stability.loc[0, "tau"] = float(stability.loc[0, "high"]) + 0.02  # as 0.953 against [0.500, 0.934]
    stability.to_csv(fixture / "02_stability.csv", index=False)
    table = post00.findings_table(fixture)
    tau = table[table["source"] == "02_stability.csv"]
    assert tau["note"].iloc[0] == findings.OUTSIDE and (tau["note"].iloc[1:] == "").all()
    assert findings.OUTSIDE in post00.findings_view(table)["verdict"].iloc[tau.index[0]]
