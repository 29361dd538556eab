"""Reference results beside the series' own (reference_results) and post 03's clustered verdict."""

import math

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.proportion import proportion_confint

from chunklab_core.stats import claims
from chunklab_core.reports import reference_results as rr
from chunklab_core.reports.post03 import claims as uncertainty_claims


def test_half_width_is_the_wald_formula_and_matches_statsmodels():
    assert rr.half_width_at_n(0.8, 80) == pytest.approx(1.959964 * math.sqrt(0.8 * 0.2 / 80), abs=1e-6)
    low, high = proportion_confint(64, 80, alpha=0.05, method="normal")
    assert rr.half_width_at_n(0.8, 80) == pytest.approx((high - low) / 2, abs=1e-9)
    assert rr.rate_for_half_width(rr.half_width_at_n(0.79, 80), 80) == pytest.approx(0.79)
    with pytest.raises(ValueError):
        rr.rate_for_half_width(0.2, 80)


def test_calibration_against_reference_flags_where_the_reference_falls():
    calibration = pd.DataFrame({"rate spread": [0.03, 0.03, 0.1, 0.1], "band": ["0.8-0.9", "0.9-1.0"] * 2,
                                "comparisons": [100] * 4, "mean_reported": [0.85, 0.95] * 2,
                                "share_correct": [0.6, 0.7, 0.8, 0.95], "ci_low": [0.5, 0.6, 0.72, 0.93],
                                "ci_high": [0.7, 0.8, 0.86, 0.97]})
    table = rr.calibration_against_reference(calibration)
    inside = dict(zip(zip(table["rate spread"], table["band"]), table["reference inside our interval"]))
    assert inside == {(0.03, "0.8-0.9"): False, (0.03, "0.9-1.0"): False, (0.1, "0.8-0.9"): True,
                      (0.1, "0.9-1.0"): True}
    assert "reproduced only at spread 0.1" in rr.calibration_text(table)


def test_clustered_verdicts_follow_the_rule_under_both_resamplings():
    rng = np.random.default_rng(4)
    docs = np.repeat(np.arange(20), 10)
    base = (rng.random(200) < 0.8).astype(float)
    matrix = pd.DataFrame({"fixed_1000": base, "fixed_500": base * (rng.random(200) < 0.7),
                           "recursive_500": np.where(rng.random(200) < 0.03, 1 - base, base)})
    table = uncertainty_claims.clustered_against_leader(matrix, docs, 2_000, 1)
    for kind in ("plain", "clustered"):
        words = claims.candidate_verdicts("L", {r["strategy"]: (r[f"{kind} low"], r[f"{kind} high"])
                                                for _, r in table.iterrows()})
        column = "verdict (questions)" if kind == "plain" else "verdict (articles)"
        assert [words[s] for s in table["strategy"]] == table[column].tolist()
    assert "Fixed 1000" in uncertainty_claims.clustered_verdict_text(table)


def test_two_sample_band_adds_both_samples_noise():
    z = 1.959963984540054
    results = pd.DataFrame({"strategy": ["fixed_500"], "hit@10": [0.8975], "hit@10_low": [0.8975 - 0.02],
                            "hit@10_high": [0.8975 + 0.02]})
    table = rr.two_sample_reference(results, {"fixed_500": {"hit@10": 0.8725}}, n_reference=800)
    se_ours, se_ref = 0.02 / z, math.sqrt(0.8725 * 0.1275 / 800)
    assert table["two-sample band (±)"].iloc[0] == pytest.approx(z * math.hypot(se_ours, se_ref))
    assert table["verdict"].iloc[0] == "cannot be told apart"  # 0.025 < band ≈ 0.031, outside our own ±0.02


def test_the_reference_is_cited_as_the_published_benchmark_with_its_sample():
    from chunklab_core.reports.reference_results import REFERENCE_SOURCE, citation

    assert citation() == ("the published ChunkLab SQuAD benchmark (its README's results table; "
                          "SQuAD v1.1, 800 questions from 40 articles, seed 20260729)")
    assert citation(True).startswith("The published ChunkLab SQuAD benchmark")
    assert REFERENCE_SOURCE["questions"] == rr.REFERENCE["post01_questions"]


def test_width_text_quotes_the_benchmark_once_and_reads_as_a_sentence():
    table = rr.width_table({"a rate of one half": 0.5, "Fixed 1000 (hit@10)": 0.94}, 80)
    text = rr.width_text(table)
    assert "points quoted by the published ChunkLab SQuAD benchmark" in text
    assert "seed 20260729) hold for a rate of" in text and "points points" not in text
    assert text.count("ChunkLab") == 1
