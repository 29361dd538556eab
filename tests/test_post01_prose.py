"""Post 01's sentences from its templates (``reports/post01/prose.md``) beyond those pinned in
``test_report_prose.py``: the larger sample's reading, the empty cut-answer case, and a
template filled with the wrong values."""

from __future__ import annotations

import pandas as pd
import pytest

from chunklab_core.reports.post01 import prose
from chunklab_core.reports.templates import TemplateError

SAMPLE = "SQuAD v1.1 dev, 2,000 questions from 48 articles"


def _full(verdicts):
    return pd.DataFrame({"strategy": ["A", "B", "C"][:len(verdicts)], "metric": "hit@10",
                         "mean": [0.93, 0.91, 0.85][:len(verdicts)], "verdict": verdicts, "sample": SAMPLE})


def test_full_set_reading_names_the_leader_what_it_rules_out_and_the_small_samples_leader():
    small = pd.DataFrame({"label": ["B", "A", "C"], "hit@10": [0.95, 0.90, 0.80]})
    assert prose.full_set_reading(_full(["cannot be ruled out", "cannot be ruled out", "ruled out"]), small) == (
        f"On {SAMPLE} (articles resampled), the hit@10 leader is **A** (0.930), verdict *cannot be ruled out*; "
        "1 of 2 other strategies are ruled out (C), and B cannot be ruled out. The leader of the reference-design "
        "sample, B, cannot be ruled out here.")
    winner = prose.full_set_reading(_full(["winner", "ruled out"]), small.iloc[:2])
    assert winner == (f"On {SAMPLE} (articles resampled), the hit@10 leader is **A** (0.930), verdict *winner*; "
                      "1 of 1 other strategy is ruled out (B). The leader of the reference-design sample, B, "
                      "is ruled out here.")
    same = prose.full_set_reading(_full(["winner", "ruled out"]), small.iloc[1:2])
    assert same.endswith("The leader of the reference-design sample, A, is the leader here too.")


def test_no_cut_text_and_a_wrong_value_set():
    assert prose.no_cut_text() == "No miss in this run had every answer span cut by a boundary."
    with pytest.raises(TemplateError, match=r"template 'cut.example': values not passed: \['excerpt'\]"):
        prose.PROSE.fill("cut.example", question="Who?", answer="Ann")
    with pytest.raises(TemplateError, match="no template 'results.tie'"):
        prose.PROSE.fill("results.tie")
