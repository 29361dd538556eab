"""Scorecard, files and ``chunklab-evaluate``: intervals from ``stats``, "not measured" rows, the
A-vs-B wording, escaping, all-or-nothing output, input errors, and the example records against
the series' own committed numbers (posts 01 and 05)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from chunklab_core.evaluators import cli, report_files
from chunklab_core.evaluators.common import StageResult
from chunklab_core.evaluators.from_records import evaluate_records
from chunklab_core.evaluators.records import read_records
from chunklab_core.evaluators.scorecard import Options, build_scorecard, compare, stage_table
from chunklab_core.stats.bootstrap import bootstrap_ci
from chunklab_core.stats.claims import NOT_TOLD_APART
from chunklab_core.stats.clustered import clustered_bootstrap_ci

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "evaluate" / "post05_squad_fixed500.jsonl"


def test_stage_table_intervals_and_not_measured():
    values = np.array([1.0, 0.0, np.nan, 1.0, 1.0])
    result = StageResult("retrieval", list("abcde"), values={"hit@1": values},
                         not_measured={"recall@1": "gold_ids"}, percentiles={"latency_p95_ms": (np.array([100.0, 300.0, np.nan, np.nan, np.nan]), 95)})
    table = stage_table(result, options=Options(resamples=500, seed=3)).set_index("metric")
    ci = bootstrap_ci(values[~np.isnan(values)], 500, 3)
    assert table.loc["hit@1", "value"] == 0.75 and table.loc["hit@1", "n"] == 4
    assert (table.loc["hit@1", "low"], table.loc["hit@1", "high"]) == (ci.low, ci.high)
    assert table.loc["recall@1", "value"] is None and table.loc["recall@1", "status"] == "not measured: needs gold_ids"
    assert table.loc["latency_p95_ms", "value"] == pytest.approx(290)
    assert 100 <= table.loc["latency_p95_ms", "low"] <= table.loc["latency_p95_ms", "high"] <= 300


def test_clustered_when_documents_are_given():
    rng = np.random.default_rng(0)
    values = rng.integers(0, 2, 60).astype(float)
    docs = [f"d{i % 12}" for i in range(60)]
    result = StageResult("retrieval", [str(i) for i in range(60)], values={"hit@1": values})
    row = stage_table(result, docs, Options(resamples=400, seed=1)).iloc[0]
    ci = clustered_bootstrap_ci(values, docs, 400, 1)
    assert (row["low"], row["high"]) == (ci.low, ci.high) and "clustered by 12 documents" in row["status"]


def test_paired_comparison_is_worded_by_the_rule():
    qids = [str(i) for i in range(40)]
    a = StageResult("retrieval", qids, values={"hit@1": np.ones(40), "rr@1": np.tile([1.0, 0.0], 20)})
    b = StageResult("retrieval", qids[::-1], values={"hit@1": np.zeros(40), "rr@1": np.tile([1.0, 0.0], 20)[::-1]})
    opts = Options(resamples=300)
    table = compare(build_scorecard([a], options=opts), build_scorecard([b], options=opts), ("mine", "theirs"))
    rows = table.set_index("metric")
    assert rows.loc["hit@1", "verdict"] == "mine ahead" and rows.loc["hit@1", "difference"] == 1.0
    assert rows.loc["rr@1", "verdict"] == NOT_TOLD_APART  # same values, matched by qid
    other = StageResult("retrieval", ["x"] * 1, values={"hit@1": np.ones(1)})
    with pytest.raises(ValueError, match="different queries"):
        compare(build_scorecard([a], options=opts), build_scorecard([other], options=opts))


def test_html_escapes_every_string(tmp_path):
    result = StageResult("generation", ["q"], not_measured={"<script>alert(1)</script>": "a & b"})
    card = build_scorecard([result], options=Options(resamples=10))
    card.source = "<img src=x>"
    page = report_files.scorecard_html(card)
    assert "<script>" not in page and "<img" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "a &amp; b" in page
    assert "http" not in page  # self-contained: no external resource


def test_output_is_all_or_nothing(tmp_path, monkeypatch):
    card = build_scorecard([StageResult("retrieval", ["q"], values={"hit@1": np.ones(1)})], options=Options(resamples=10))
    out = tmp_path / "out"
    report_files.write_scorecard(card, out)
    before = sorted(p.name for p in out.iterdir())

    def broken(*args, **kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr(report_files, "scorecard_html", broken)
    with pytest.raises(RuntimeError):
        report_files.write_scorecard(card, out)
    assert sorted(p.name for p in out.iterdir()) == before  # the old scorecard, untouched
    assert [p.name for p in tmp_path.iterdir()] == ["out"]  # no temporary folder left


@pytest.mark.parametrize("line, message", [
    ('{"qid": "a", "retrieved_ids": "c1"}', "line 2, field 'retrieved_ids': expected a list"),
    ('{"qid": "a", "latency_ms": {"retrieval": -3}}', "line 2, field 'latency_ms.retrieval': expected a number >= 0"),
    ('{"qid": "a", "retreived_ids": []}', "line 2, field 'retreived_ids': unknown field"),
    ('{"query": "no id"}', "line 2, field 'qid': missing"),
    ('{"qid": "q0"}', "line 2, field 'qid': 'q0' repeats line 1"),
    ('{"qid": "a", ', "line 2: not valid JSON"),
    ('{"qid": "a", "gold_spans": [["d", 5, 2]]}', "line 2, field 'gold_spans'[0]: expected [doc_id, start, end]"),
])
def test_cli_names_line_and_field_and_writes_nothing(tmp_path, capsys, line, message):
    records = tmp_path / "r.jsonl"
    records.write_text('{"qid": "q0", "answer": "x"}\n' + line + "\n")
    out = tmp_path / "out"
    assert cli.main([str(records), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert not out.exists() and [p.name for p in tmp_path.iterdir()] == ["r.jsonl"]


def test_cli_trec_run_equals_the_ids_route(tmp_path):
    run = tmp_path / "run.txt"
    qrels = tmp_path / "qrels.txt"
    run.write_text("q1 Q0 a 1 3.0 t\nq1 Q0 b 2 2.0 t\nq1 Q0 c 3 1.0 t\nq2 Q0 c 1 5 t\nq2 Q0 b 2 4 t\n")
    qrels.write_text("q1 0 b 1\nq1 0 z 0\nq2 0 c 1\nq2 0 b 2\n")
    assert cli.main(["--trec-run", str(run), "--qrels", str(qrels), "--out", str(tmp_path / "t"), "--resamples", "50"]) == 0
    records = tmp_path / "r.jsonl"
    records.write_text('{"qid": "q1", "retrieved_ids": ["a", "b", "c"], "gold_ids": ["b"]}\n'
                       '{"qid": "q2", "retrieved_ids": ["c", "b"], "gold_ids": ["c", "b"]}\n')
    assert cli.main([str(records), "--out", str(tmp_path / "r"), "--resamples", "50"]) == 0
    a = pd.read_csv(tmp_path / "t" / "per_query_retrieval.csv")
    b = pd.read_csv(tmp_path / "r" / "per_query_retrieval.csv")
    pd.testing.assert_frame_equal(a, b)
    assert a.loc[a.qid == "q1", "rr@3"].item() == 0.5


# ------------------------------------------------------------------ the example: the series' own run

@pytest.fixture(scope="module")
def example_card():
    records = read_records(EXAMPLE)
    stages = evaluate_records(records)
    return records, build_scorecard(stages, [r["doc_id"] for r in records], Options(resamples=10_000, seed=20260729))  # post 05: RESAMPLES, SEED


def test_example_equals_post05_generation_metrics(example_card):
    _, card = example_card
    post05 = pd.read_csv(ROOT / "data" / "05_generation_metrics.csv")
    row = post05[(post05.corpus == "squad") & (post05.strategy == "Fixed 500 chars")].iloc[0]
    gen = card.tables["generation"].set_index("metric")
    for ours, theirs in [("exact_match", "exact_match"), ("token_precision", "precision"), ("token_recall", "recall"),
                         ("token_f1", "f1"), ("rouge_l_f1", "rouge_l_f1"), ("context_grounding", "grounding"),
                         ("unsupported_number_rate", "unsupported_number_rate"), ("abstained", "abstained")]:
        assert gen.loc[ours, "value"] == pytest.approx(row[theirs], abs=1e-12), ours
        assert gen.loc[ours, "n"] == row[f"n_{theirs}"], ours
    intervals = pd.read_csv(ROOT / "data" / "05_generation_intervals.csv")
    f1 = intervals[(intervals.corpus == "squad") & (intervals.strategy == "Fixed 500 chars") & (intervals.metric == "f1")].iloc[0]
    assert (gen.loc["token_f1", "low"], gen.loc["token_f1", "high"]) == pytest.approx((f1["low"], f1["high"]), abs=1e-12)


def test_example_equals_post05_passage_retrieved(example_card):
    _, card = example_card
    post05 = pd.read_csv(ROOT / "data" / "05_answers.csv")
    row = post05[(post05.corpus == "squad") & (post05.strategy == "Fixed 500 chars") & (post05.measure == "passage retrieved")].iloc[0]
    aug = card.tables["augmentation"].set_index("metric")
    assert aug.loc["answer_in_context", "value"] == pytest.approx(row["share"], abs=1e-12)
    assert (aug.loc["answer_in_context", "low"], aug.loc["answer_in_context", "high"]) == \
        pytest.approx((row["low"], row["high"]), abs=1e-12)


def test_example_equals_post01_per_question(example_card):
    records, card = example_card
    post01 = pd.read_csv(ROOT / "data" / "01_per_question.csv")
    post01 = post01[(post01.strategy == "fixed_500") & (post01.retriever == "bm25")].set_index("qid")
    ours = card.stages["retrieval"].per_query().set_index("qid")
    theirs = post01.loc[ours.index]
    measured = theirs["n_relevant"] > 0
    assert measured.sum() == card.tables["retrieval"].set_index("metric").loc["hit@1", "n"]
    for ours_col, their_col in [("hit@1", "hit@1"), ("hit@5", "hit@5"), ("hit@10", "hit@10"), ("precision@3", "p@3"),
                                ("precision@10", "p@10"), ("rr@10", "rr@10"), ("ndcg@10", "ndcg@10")]:
        np.testing.assert_allclose(ours.loc[measured, ours_col].astype(float), theirs.loc[measured, their_col],
                                   atol=5e-7, err_msg=ours_col)  # post 01's CSV rounds to 6 decimals
        assert ours.loc[~measured, ours_col].isna().all()  # no relevant context: not measured, not 0


def test_cli_on_the_example(tmp_path):
    out = tmp_path / "card"
    assert cli.main([str(EXAMPLE), "--out", str(out), "--resamples", "200"]) == 0
    data = json.loads((out / "scorecard.json").read_text())
    rows = {r["metric"]: r for r in data["stages"]["end_to_end"]["metrics"]}
    assert rows["cost"]["value"] is None and rows["cost"]["status"] == "not measured: needs cost"
    assert len(data["stages"]["retrieval"]["per_query"]["qid"]) == 200
    table = pd.read_csv(out / "scorecard.csv")
    assert set(table.stage) == {"chunking", "embedding_index", "retrieval", "reranking", "augmentation", "generation",
                                "end_to_end"}
    page = (out / "scorecard.html").read_text()
    # the funnel first (its sentence and inline figure), then the stage lines, the measured tables, the not-measured list
    order = [page.index(x) for x in ("<p class='lead'>Of 200 queries", "data:image/png;base64,", "Stage by stage",
                                     "<h3>Retrieval</h3>", "Not measured (what would measure them)")]
    assert order == sorted(order)
    assert (out / "funnel.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert page.count("<h3>") == 4  # the stages with a measured row: retrieval, augmentation, generation, end to end
    assert "not measured: needs" not in page.split("Not measured (what would measure them)")[0]


def test_cli_with_chunks_documents_and_vectors(tmp_path):
    text = "Refunds take 30 days. The manager signs. Stores open at nine. Closed on Sunday."
    (tmp_path / "docs.jsonl").write_text(json.dumps({"doc_id": "d", "text": text}) + "\n")
    spans = [(0, 21), (21, 40), (40, 62), (62, len(text))]
    (tmp_path / "chunks.jsonl").write_text("".join(
        json.dumps({"chunk_id": f"c{i}", "doc_id": "d", "start": s, "end": e, "metadata": {"page": 1} if i else {}})
        + "\n" for i, (s, e) in enumerate(spans)))
    rng = np.random.default_rng(0)
    np.save(tmp_path / "v.npy", rng.normal(size=(4, 8)))
    np.save(tmp_path / "q.npy", rng.normal(size=(2, 8)))
    (tmp_path / "r.jsonl").write_text('{"qid": "a", "gold_ids": ["c0"], "retrieved_ids": ["c0", "c2"]}\n'
                                      '{"qid": "b", "gold_ids": ["c1"], "retrieved_ids": ["c3"]}\n')
    args = [str(tmp_path / "r.jsonl"), "--out", str(tmp_path / "out"), "--chunks", str(tmp_path / "chunks.jsonl"),
            "--documents", str(tmp_path / "docs.jsonl"), "--vectors", str(tmp_path / "v.npy"),
            "--query-vectors", str(tmp_path / "q.npy"), "--k", "1", "2", "--resamples", "50"]
    assert cli.main(args) == 0
    table = pd.read_csv(tmp_path / "out" / "scorecard.csv").set_index(["stage", "metric"])
    assert table.loc[("chunking", "coverage"), "value"] == 1.0
    assert table.loc[("chunking", "n_chunks"), "value"] == 4
    assert table.loc[("chunking", "metadata_completeness"), "value"] == 0.75  # c0 has no page
    assert table.loc[("embedding_index", "zero_norm_rate"), "value"] == 0.0
    assert 0.0 <= table.loc[("embedding_index", "ann_recall@2"), "value"] <= 1.0
    np.save(tmp_path / "q.npy", rng.normal(size=(3, 8)))
    assert cli.main(args) == 2  # 3 query vectors for 2 records: refused, the old scorecard kept
    assert (tmp_path / "out" / "scorecard.csv").exists()
