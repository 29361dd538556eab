"""Post 02's figure intervals (reports/post02/intervals.py) on hand-made tables: means are the
column means, every cell is resampled with one draw of the design the questions call for (the same
numbers as the series' bootstrap functions give for the whole matrix), and cells keep the table's order."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from chunklab_core.reports.post02 import intervals
from chunklab_core.stats import bootstrap
from chunklab_core.stats.clustered import clustered_bootstrap_ci

WIDE = pd.DataFrame({"zeta": [1.0, 0.0, 1.0, 1.0], "alpha": [0.0, 0.0, 1.0, 0.5]}, index=["q1", "q2", "q3", "q4"])


def test_cell_intervals_resample_questions_when_no_document_is_shared():
    found = intervals.cell_intervals(WIDE, ["a", "b", "c", "d"], 500, 7)
    assert list(found.index) == ["zeta", "alpha"] and set(found["design"]) == {"questions"}
    assert found.loc["zeta", "mean"] == pytest.approx(0.75) and found.loc["alpha", "mean"] == pytest.approx(0.375)
    reference = bootstrap.bootstrap_ci(WIDE.to_numpy(), 500, 7)
    np.testing.assert_allclose(found["low"], reference.low)
    np.testing.assert_allclose(found["high"], reference.high)
    assert (found["low"] <= found["mean"]).all() and (found["mean"] <= found["high"]).all()


def test_cell_intervals_resample_documents_when_questions_share_them():
    with pytest.warns(UserWarning, match="only 2 documents"):  # the series' warning for so few clusters
        reference = clustered_bootstrap_ci(WIDE.to_numpy(), np.array(["a", "a", "b", "b"]), 500, 7)
    found = intervals.cell_intervals(WIDE, ["a", "a", "b", "b"], 500, 7)
    assert set(found["design"]) == {"documents (2)"} and (found["questions"] == 4).all()
    np.testing.assert_allclose(found["low"], reference.low)
    np.testing.assert_allclose(found["high"], reference.high)


def test_read_by_intervals_keep_the_order_of_the_table_and_name_the_measure():
    rows = [{"corpus": "cuad", "retriever": "bm25", "strategy": s, "qid": q, "doc_id": d, "recall@5": r,
             "token_recall@5": t}
            for s, scores in (("zeta", (1.0, 0.0, 1.0)), ("alpha", (0.0, 0.5, 1.0)))
            for (q, d), r, t in zip((("q1", "a"), ("q2", "b"), ("q3", "c")), scores, (0.2, 0.4, 0.6))]
    measures = pd.DataFrame({"corpus": ["cuad"], "measure": ["span"]})
    found = intervals.read_by_intervals(pd.DataFrame(rows), 5, measures, 200, 1)
    assert list(found["strategy"]) == ["zeta", "alpha"]  # as the table lists them, not by name
    assert set(found["read by"]) == {"token_recall@5"} and found["mean"].tolist() == pytest.approx([0.4, 0.4])
