"""Post 04's sentences from its templates (``reports/post04/claims.md`` and ``prose.md``) beyond those
pinned in ``test_report_prose.py``: hand-made values give the sentence written out here, and a
template filled with the wrong values is an error."""

from __future__ import annotations

import pandas as pd
import pytest

from chunklab_core.reports.post04 import claims, prose
from chunklab_core.reports.templates import TemplateError

LABELS = {"nq": "Natural Questions, 31 questions from 31 pages"}


def _cells(differences, lows, highs, passages=31):
    return pd.DataFrame({"corpus": "nq", "generated − human": differences, "low": lows, "high": highs,
                         "passages": passages})


def test_correlated_cells_sentence():
    comparison = _cells([0.2, -0.1, 0.0], [0.05, -0.2, -0.1], [0.35, -0.01, 0.1])
    assert claims.correlated_cells_text(comparison, LABELS) == (
        "On Natural Questions, 31 questions from 31 pages, 2 of 3 cells separate (1 upwards, 1 downwards), but all "
        "3 score the same 31 passages and questions: they are one correlated family of tests, not independent "
        "confirmations, and count as one finding.")


def test_clean_text_with_and_without_unflagged_passages():
    full = _cells([0.2, 0.1], [0.05, -0.1], [0.35, 0.3])
    clean = _cells([0.3, 0.0], [0.1, -0.2], [0.5, 0.2], passages=25)
    assert claims.clean_text(full, clean, LABELS, "hit@5") == (
        "Natural Questions, 31 questions from 31 pages: mean generated − human hit@5 +0.15 on 31 passages, +0.15 on "
        "the 25 unflagged ones (generated ahead in 1 of 2 cells, cannot be told apart in 1).")
    assert claims.clean_text(full, clean.iloc[0:0], LABELS, "hit@5") == (
        "Natural Questions, 31 questions from 31 pages: no unflagged passage left.")


def test_flagged_and_no_trend_sentences():
    assert prose.flagged_text((3, 12)) == "At least one check fires on 3 of 12 (25%) generated questions. Counts per check:"
    assert prose.no_trend_text() == (
        "BM25 and dense retrieval were not both run, so there is no advantage to relate to overlap.")


def test_a_template_filled_with_the_wrong_values_is_an_error():
    with pytest.raises(TemplateError, match=r"claims.md, template 'clean.none': values not passed: \['corpus'\]"):
        claims.PROSE.fill("clean.none")
    with pytest.raises(TemplateError, match=r"values passed but not used: \['n'\]"):
        prose.PROSE.fill("checks.flagged", flagged="1 of 2 (50%)", n=2)
