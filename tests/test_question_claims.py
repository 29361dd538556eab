"""Post 04's claims builders (issue 14): correlated cells, and retrieval without flagged questions."""

import pandas as pd

from chunklab_core.reports.post04 import claims as question_claims


def _scores():
    rows = []
    for pid, human, generated in (("p1", 0.0, 1.0), ("p2", 0.0, 1.0), ("p3", 1.0, 1.0), ("p4", 0.0, 0.0)):
        for qset, value in (("human", human), ("generated", generated)):
            rows.append({"corpus": "nq", "strategy": "fixed_500", "retriever": "bm25", "passage_id": pid,
                         "qid": f"{qset}:{pid}", "set": qset, "hit@5": value})
    return pd.DataFrame(rows)


def test_flagged_passages_leave_the_clean_comparison():
    checks = pd.DataFrame({"set": ["generated"] * 4 + ["human"], "passage_id": ["p1", "p2", "p3", "p4", "p3"]})
    for name in question_claims.CHECK_NAMES:
        checks[name] = False
    checks.loc[0, "answer in question"] = True  # p1's generated question answers itself
    checks.loc[4, "not a question"] = True  # a human flag does not remove the passage
    assert question_claims.flagged_passages(checks) == {"p1"}
    clean = question_claims.clean_comparison(_scores(), checks, "hit@5", 500, 0)
    assert int(clean["passages"].iloc[0]) == 3
    assert clean["generated − human"].iloc[0] == 1 / 3  # p2 only, of p2, p3, p4


def test_correlated_cells_are_one_family():
    comparison = pd.DataFrame({"corpus": ["nq"] * 3, "passages": [31] * 3, "low": [0.1, 0.2, -0.1],
                               "high": [0.5, 0.6, 0.4]})
    text = question_claims.correlated_cells_text(comparison, {"nq": "NQ"})
    assert "2 of 3 cells separate" in text and "same 31 passages" in text and "count as one finding" in text
