"""The TREC run and qrels readers of ``evaluators.records`` (one row reader for both)."""

import pytest

from chunklab_core.evaluators.records import RecordsError, read_trec


def _write(path, text):
    path.write_text(text, encoding="utf-8")
    return path


def test_runs_rank_by_score_then_docid_descending_and_qrels_keep_positive_relevance(tmp_path):
    run = _write(tmp_path / "run", "q1 Q0 d1 1 0.5 t\nq1 Q0 d2 2 0.5 t\nq1 Q0 d0 3 0.9 t\nq2 Q0 d3 1 0.1 t\n")
    qrels = _write(tmp_path / "qrels", "q1 0 d1 1\nq1 0 d2 0\nq2 0 d9 2\nq3 0 d3 0\n")
    ranked, relevant = read_trec(run, qrels)
    assert ranked == {"q1": ["d0", "d2", "d1"], "q2": ["d3"]}  # ties: docid descending, as trec_eval
    assert relevant == {"q1": ["d1"], "q2": ["d9"], "q3": []}


@pytest.mark.parametrize("run_text, qrels_text, message", [
    ("q1 Q0 d1 1 x t\n", "q1 0 d1 1\n", r"run, line 1: field 'score' is not a number: 'x'"),
    ("q1 Q0 d1 1 t\n", "q1 0 d1 1\n", r"a run line is 'qid Q0 docid rank score tag' \(6 fields\), got 5"),
    ("q1 Q0 d1 1 0.5 t\n", "q1 0 d1 r\n", r"qrels, line 1: field 'relevance' is not an integer: 'r'"),
    ("q1 Q0 d1 1 0.5 t\n", "q1 0 d1\n", r"a qrels line is 'qid 0 docid relevance' \(4 fields\), got 3"),
])
def test_a_bad_line_is_an_error_naming_the_file_and_line(tmp_path, run_text, qrels_text, message):
    with pytest.raises(RecordsError, match=message):
        read_trec(_write(tmp_path / "run", run_text), _write(tmp_path / "qrels", qrels_text))
