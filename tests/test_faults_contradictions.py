"""Class 6 of issue 49: records that contradict themselves are refused or flagged, in every file the evaluator reads.

Refused (the project's message naming file, line and field; exit 2): a key given twice in one JSON
object at any depth (records, chunks and documents files), ids and texts (or spans) of one list of
unequal length, a chunk listed twice in one ranking or context, a TREC run ranking one document
twice for a query, qrels judging one document both relevant and not. Flagged in the scorecard (JSON,
page, the command's stderr): correct answers whose packed context holds no gold.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from chunklab_core.evaluators import cli, records
from chunklab_core.evaluators.common import StageResult
from chunklab_core.evaluators.scorecard import correct_without_gold


def _run(tmp_path, name: str, text: str, *extra: str):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path, cli.main([str(path), *extra, "--out", str(tmp_path / "card"), "--resamples", "20"])


@pytest.mark.parametrize("line, key", [
    ('{"qid": "q1", "gold_ids": ["c1"], "retrieved_ids": ["c1", "c2"], "retrieved_ids": ["c3", "c4"]}', "retrieved_ids"),
    ('{"qid": "q1", "qid": "q2"}', "qid"),
    ('{"qid": "q1", "latency_ms": {"total": 1, "total": 2}}', "total"),
    ('{"qid": "q1", "claims": [{"supported": true, "supported": false}]}', "supported"),
    ('{"qid": "q1", "tokens": {"prompt": 1, "completion": 2, "prompt": 3}}', "prompt"),
])
def test_a_duplicate_key_in_a_record_is_refused_not_the_last_value_kept(tmp_path, capsys, line, key):
    path, status = _run(tmp_path, "records.jsonl", line + "\n")
    assert status == 2
    err = capsys.readouterr().err
    assert f"{path}, line 1: key \"{key}\" is given twice in one object" in err and "Traceback" not in err
    assert not (tmp_path / "card").exists()


def test_duplicate_keys_are_refused_in_the_chunks_and_documents_files_too(tmp_path):
    chunks = tmp_path / "chunks.jsonl"
    chunks.write_text('{"chunk_id": "c1", "doc_id": "d", "start": 0, "end": 4, "end": 9}\n', encoding="utf-8")
    with pytest.raises(records.RecordsError, match=r"chunks.jsonl, line 1: key \"end\" is given twice"):
        records.read_chunks(chunks)
    documents = tmp_path / "documents.jsonl"
    documents.write_text('{"doc_id": "d", "text": "a", "text": "b"}\n', encoding="utf-8")
    with pytest.raises(records.RecordsError, match=r"documents.jsonl, line 1: key \"text\" is given twice"):
        records.read_documents(documents)


@pytest.mark.parametrize("a, b", records.PARALLEL)
def test_lists_that_describe_one_list_must_be_as_long(tmp_path, capsys, a, b):
    values = {"retrieved_ids": ["c1", "c2"], "context_ids": ["c1", "c2"], "retrieved_texts": ["t1", "t2"],
              "context_texts": ["t1", "t2"], "retrieved_spans": [["d", 0, 2], ["d", 2, 4]]}
    good = {"qid": "q1", a: values[a], b: values[b]}
    _, status = _run(tmp_path, "good.jsonl", json.dumps(good) + "\n")
    assert status == 0, capsys.readouterr().err
    bad = {**good, b: values[b][:1]}
    path, status = _run(tmp_path, "bad.jsonl", json.dumps(bad) + "\n")
    assert status == 2
    assert f"{path}, line 1, field '{b}': 1 items, but {a} has 2" in capsys.readouterr().err


@pytest.mark.parametrize("field", ["retrieved_ids", "reranked_ids", "context_ids"])
def test_a_chunk_listed_twice_in_a_ranking_or_context_is_refused(tmp_path, capsys, field):
    path, status = _run(tmp_path, "twice.jsonl", json.dumps({"qid": "q1", field: ["c1", "c2", "c1"]}) + "\n")
    assert status == 2
    assert f"{path}, line 1, field '{field}': 'c1' is listed twice" in capsys.readouterr().err


def test_a_trec_run_that_ranks_a_document_twice_and_qrels_that_disagree_are_refused(tmp_path):
    run, qrels = tmp_path / "run.txt", tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\n", encoding="utf-8")
    run.write_text("q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 1.0 t\nq1 Q0 d1 3 0.5 t\n", encoding="utf-8")
    with pytest.raises(records.RecordsError, match=r"run.txt, line 3: document 'd1' is ranked twice for query 'q1' "
                                                   r"\(first on line 1\)"):
        records.read_trec(run, qrels)
    run.write_text("q1 Q0 d1 1 2.0 t\n", encoding="utf-8")
    qrels.write_text("q1 0 d1 1\nq1 0 d2 0\nq1 0 d1 0\n", encoding="utf-8")
    with pytest.raises(records.RecordsError, match=r"qrels.txt, line 3: document 'd1' of query 'q1' is judged 0 here "
                                                   r"and 1 on line 1"):
        records.read_trec(run, qrels)
    qrels.write_text("q1 0 d1 1\nq1 0 d1 2\n", encoding="utf-8")  # the same verdict twice: relevant either way
    assert records.read_trec(run, qrels) == ({"q1": ["d1"]}, {"q1": ["d1"]})


def _funnel_records(tmp_path, empty: int, qid=lambda i: f"q{i}") -> object:
    rows = [{"qid": qid(i), "gold_snippets": "Denver", "retrieved_texts": ["Denver won", "rain"],
             "context_texts": [] if i < empty else ["Denver won"], "answer": "Denver", "reference": "Denver"}
            for i in range(6)]
    path = tmp_path / "records.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_a_correct_answer_whose_context_holds_no_gold_is_flagged_in_every_output(tmp_path, capsys):
    hostile = lambda i: f"<b>q{i}</b>" if i == 0 else f"q{i}"  # noqa: E731 - shown escaped on the page
    path = _funnel_records(tmp_path, empty=4, qid=hostile)
    assert cli.main([str(path), "--out", str(tmp_path / "card"), "--resamples", "20"]) == 0
    err = capsys.readouterr().err
    assert "flag: 4 of 6 correct answers came from a context that holds no gold (<b>q0</b>, q1, q2, q3)" in err
    card = json.loads((tmp_path / "card" / "scorecard.json").read_text(encoding="utf-8"))
    assert card["funnel"]["correct_without_gold_in_context"] == {"n": 4, "of": 6, "qids": ["<b>q0</b>", "q1", "q2", "q3"]}
    page = (tmp_path / "card" / "scorecard.html").read_text(encoding="utf-8")
    assert "Flag: 4 of the 6 correct answers came from a packed context that holds no gold (&lt;b&gt;q0&lt;/b&gt;" in page
    assert "<b>q0</b>" not in page


def test_no_flag_when_every_correct_answer_had_its_gold_in_context(tmp_path, capsys):
    path = _funnel_records(tmp_path, empty=0)
    assert cli.main([str(path), "--out", str(tmp_path / "card"), "--resamples", "20"]) == 0
    assert "flag:" not in capsys.readouterr().err
    card = json.loads((tmp_path / "card" / "scorecard.json").read_text(encoding="utf-8"))
    assert card["funnel"]["correct_without_gold_in_context"] is None
    assert "Flag:" not in (tmp_path / "card" / "scorecard.html").read_text(encoding="utf-8")


def test_the_flag_on_hand_made_funnel_values():
    result = StageResult("funnel", ["a", "b", "c", "d", "e"])
    result.values["in_context"] = np.array([0.0, 1.0, 0.0, np.nan, 0.0])
    result.values["answer_correct"] = np.array([1.0, 1.0, 0.0, 1.0, np.nan])
    assert correct_without_gold(result) == {"n": 1, "of": 2, "qids": ["a"]}
    del result.values["in_context"]
    assert correct_without_gold(result) is None
    assert correct_without_gold(None) is None
