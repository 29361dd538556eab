"""Post 03's sentences from its templates (``reports/post03/prose.md``): hand-made values give the
sentence written out here, and a template filled with the wrong values is an error."""

from __future__ import annotations

import pandas as pd
import pytest

from chunklab_core.reports.post03 import prose
from chunklab_core.reports.templates import TemplateError


def _separated(flags):
    return pd.DataFrame({"a": ["Fixed 500"] * len(flags), "b": ["Fixed 1000"] * len(flags),
                         "Δ hit@10": [0.01] * len(flags), "Δ MRR@10": [-0.042] * len(flags),
                         "Δ MRR@10 CI": ["[-0.080, -0.004]"] * len(flags), "MRR separates": flags})


def test_mrr_separates_counts_the_pairs_in_words():
    assert prose.mrr_separates_text(_separated([True]), 10, 800) == (
        "Among the pairs that recall@10 calls equal, the largest MRR@10 gap is Fixed 500 against Fixed 1000: "
        "Δ hit@10 = +0.010, Δ MRR@10 = -0.042 [-0.080, -0.004]. On these 800 questions 1 such pair has an MRR "
        "interval that excludes 0: the rank of the first hit carries information that recall throws away.")
    assert prose.mrr_separates_text(_separated([False, False]), 10, 800).endswith(
        "On these 800 questions 0 such pairs have an MRR interval that excludes 0: here the MRR gap is also "
        "within noise, so on this sample MRR adds a reading, not a verdict.")
    assert "2 such pairs have" in prose.mrr_separates_text(_separated([True, True]), 10, 800)


def test_rank_disagreement_and_balanced_sentences():
    assert prose.rank_disagreement_text(0.5714, 10) == (
        "Kendall's τ between the recall@10 and nDCG@10 rankings: 0.57.")
    assert prose.balanced_what(0.05, "SQuAD v1.1, 800 questions from 40 articles") == (
        "balanced score at λ = 0.05, SQuAD v1.1, 800 questions from 40 articles")
    balanced = pd.DataFrame({"strategy": ["Recursive 500", "Whole document"], "recall@10": [0.9, 0.99],
                             "tokens / T_min": [1.0, 21.4], "balanced": [0.9, -0.03],
                             "recall rank": [2, 1], "balanced rank": [1, 2]})
    assert prose.balanced_text(balanced, 10) == (
        "The whole-document strategy is ranked **1** by recall@10 (0.990) and **2** of 2 by the balanced score "
        "(-0.03), because it returns 21× the cheapest strategy's tokens. The balanced leader is **Recursive 500**; "
        "with paired intervals on the per-question balanced score (the whole-document strategy left out):")


def test_a_template_filled_with_the_wrong_values_is_an_error():
    with pytest.raises(TemplateError, match=r"prose.md, template 'rank_disagreement': values not passed: \['tau'\]"):
        prose.PROSE.fill("rank_disagreement", k=10)
    with pytest.raises(TemplateError, match=r"values passed but not used: \['n'\]"):
        prose.PROSE.fill("rank_disagreement", k=10, tau="0.57", n=3)
