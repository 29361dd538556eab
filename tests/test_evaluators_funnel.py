"""The answer funnel on a hand-made fixture (one query lost at each step), the gold format the
records share with the own-documents questions file, metrics from snippets when ids are absent,
and the numbers shown as what they are (units, counts, the words each side returned)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from chunklab_core.core.corpus import Document
from chunklab_core.data.loaders import ValidationError, load_questions, parse_gold_snippets
from chunklab_core.evaluators import cli, report_files
from chunklab_core.evaluators.common import as_slots, contains_gold
from chunklab_core.evaluators.from_records import evaluate_records
from chunklab_core.evaluators.funnel import STEPS
from chunklab_core.evaluators.records import ChunkRecord, RecordsError, read_records
from chunklab_core.evaluators.scorecard import Options, biggest_loss, build_scorecard, compare, unit_of
from chunklab_core.stats.bootstrap import bootstrap_ci

GOLD = "thirty days"
CHUNKS = ["refunds take thirty days", "the manager signs", "stores open at nine", "closed on sunday"]


def _record(qid, retrieved, context, answer, reference=GOLD, gold=GOLD, doc="d1"):
    return {"qid": qid, "doc_id": doc, "gold_snippets": gold, "retrieved_texts": retrieved, "context_texts": context,
            "answer": answer, "reference": [reference]}


def fixture_records():
    """q1 lost at chunking (its answer is in no chunk), q2 at retrieval, q3 at packing, q4 in the
    answer, q5 at correctness (the answer holds the gold but is not an exact match), q6 through;
    q7 is unanswerable (left out of the funnel)."""
    hit, miss = [CHUNKS[0], CHUNKS[1]], [CHUNKS[2], CHUNKS[3]]
    records = [
        _record("q1", miss, miss, "no idea", reference="forty weeks", gold="forty weeks"),
        _record("q2", miss, miss, "no idea"),
        _record("q3", hit, [CHUNKS[1]], "no idea"),
        _record("q4", hit, [CHUNKS[0]], "a week"),
        _record("q5", hit, [CHUNKS[0]], "it takes thirty days"),
        _record("q6", hit, [CHUNKS[0]], "thirty days"),
        {**_record("q7", hit, [CHUNKS[0]], "thirty days"), "answerable": False},
    ]
    for r in records:
        r["gold_snippets"] = as_list(r["gold_snippets"])
    return records


def as_list(gold):
    return [list(slot) for slot in parse_gold_snippets(gold)[0]]


def _chunks():
    return [ChunkRecord(f"c{i}", "d1", 0, len(t), t, {}) for i, t in enumerate(CHUNKS)]


def test_funnel_loses_one_query_at_each_step():
    records = fixture_records()
    stages = {s.stage: s for s in evaluate_records(records, chunks=_chunks(), ks=[2])}
    funnel = stages["funnel"]
    expected = {  # per query q1..q7 (hand-computed; q7 unanswerable: not measured)
        "in_some_chunk": [0, 1, 1, 1, 1, 1, None], "retrieved": [0, 0, 1, 1, 1, 1, None],
        "in_context": [0, 0, 0, 1, 1, 1, None], "used_in_answer": [0, 0, 0, 0, 1, 1, None],
        "answer_correct": [0, 0, 0, 0, 0, 1, None]}
    for step in STEPS:
        got = [None if np.isnan(v) else v for v in funnel.values[step]]
        assert got == expected[step], step
        assert funnel.definitions[step]
    assert funnel.definitions["in_some_chunk"].startswith("containment")
    card = build_scorecard(list(stages.values()), [r["doc_id"] for r in records], Options(resamples=500, seed=1))
    table = card.funnel
    assert list(table.step) == list(STEPS) and set(table.n) == {6}
    np.testing.assert_allclose(table.reached, [5 / 6, 4 / 6, 3 / 6, 2 / 6, 1 / 6])
    np.testing.assert_allclose(table.lost, [1 / 6] * 5)
    assert biggest_loss(table)["step"] == "in_some_chunk"  # equal losses: the first
    # one document: the plain percentile bootstrap, one call for every column (reached, then lost)
    reached = np.array([[v >= s for s in range(1, 6)] for v in (0, 1, 2, 3, 4, 5)], dtype=float)
    lost = np.column_stack([np.ones(6), reached[:, :-1]]) - reached
    ci = bootstrap_ci(np.column_stack([reached, lost]), 500, 1, 0.95)
    np.testing.assert_allclose(table.reached_low, ci.low[:5])
    np.testing.assert_allclose(table.lost_high, ci.high[5:])


def test_funnel_intervals_are_clustered_by_document():
    from chunklab_core.stats.clustered import clustered_bootstrap_ci

    records = fixture_records()
    docs = ["d1", "d1", "d2", "d2", "d3", "d3", "d3"]
    for r, d in zip(records, docs):
        r["doc_id"] = d
    card = build_scorecard(evaluate_records(records, chunks=_chunks(), ks=[2]), docs, Options(resamples=400, seed=3))
    reached = np.array([[v >= s for s in range(1, 6)] for v in (0, 1, 2, 3, 4, 5)], dtype=float)
    lost = np.column_stack([np.ones(6), reached[:, :-1]]) - reached
    with pytest.warns(UserWarning):  # three documents: few clusters, as the scorecard notes
        ci = clustered_bootstrap_ci(np.column_stack([reached, lost]), np.array(docs[:6], dtype=object), 400, 3, 0.95)
    np.testing.assert_allclose(card.funnel.reached_low, ci.low[:5])
    np.testing.assert_allclose(card.funnel.lost_high, ci.high[5:])


def test_funnel_names_the_step_that_loses_most_and_draws_it(tmp_path):
    records = fixture_records()
    for r in records[:2]:  # two more lost at packing: q1, q2 now find the answer and retrieve it
        r.update(gold_snippets=[[GOLD]], reference=[GOLD], retrieved_texts=[CHUNKS[0]], context_texts=[CHUNKS[1]])
    path = tmp_path / "r.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    chunks = tmp_path / "c.jsonl"
    chunks.write_text("".join(json.dumps({"chunk_id": c.chunk_id, "doc_id": c.doc_id, "start": c.start, "end": c.end,
                                          "text": c.text}) + "\n" for c in _chunks()))
    out = tmp_path / "card"
    assert cli.main([str(path), "--chunks", str(chunks), "--out", str(out), "--k", "2", "--resamples", "200"]) == 0
    page = (out / "scorecard.html").read_text()
    assert "The step that loses the most is <strong>kept in the packed context</strong>" in page
    assert "a share of 0.500 of the queries" in page  # q1, q2, q3 of 6
    assert (out / "funnel.png").read_bytes()[:4] == b"\x89PNG"
    assert page.index("The step that loses the most") < page.index("Stage by stage") < page.index("<h3>")
    steps = json.loads((out / "scorecard.json").read_text())["funnel"]["steps"]
    assert [s["step"] for s in steps] == list(STEPS)


def test_funnel_from_ids_and_steps_not_measured():
    records = [{"qid": "a", "gold_ids": ["c1"], "retrieved_ids": ["c2", "c1"], "context_ids": ["c2"]},
               {"qid": "b", "gold_ids": [], "retrieved_ids": ["c2"], "context_ids": ["c2"]},
               {"qid": "c", "gold_ids": ["c3"], "retrieved_ids": ["c3"], "context_ids": ["c3"]}]
    funnel = evaluate_records(records, ks=[1, 2])[-1]
    assert funnel.values["in_some_chunk"].tolist() == [1, 0, 1]
    assert funnel.values["retrieved"].tolist() == [1, 0, 1]  # top 2
    assert funnel.values["in_context"].tolist() == [0, 0, 1]
    assert funnel.definitions["retrieved"] == "ids: a gold id among the top 2 retrieved_ids"
    assert set(funnel.not_measured) == {"used_in_answer", "answer_correct"}
    card = build_scorecard([funnel], options=Options(resamples=100))
    assert biggest_loss(card.funnel)["step"] == "in_some_chunk" and list(card.funnel.step) == list(STEPS[:3])


# ------------------------------------------------------------------ one gold format


@pytest.mark.parametrize("gold, slots", [
    ("thirty days", [["thirty days"]]),
    (["store manager", ["regional lead", "area lead"]], [["store manager"], ["regional lead", "area lead"]]),
    ([["Denver Broncos", "Broncos"]], [["Denver Broncos", "Broncos"]]),
])
def test_records_accept_the_questions_file_gold_forms(tmp_path, gold, slots):
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps({"qid": "a", "gold_snippets": gold}) + "\n")
    assert read_records(path)[0]["gold_snippets"] == slots


@pytest.mark.parametrize("bad", [[1987], [], [""], 5, [["a", ["b"]]]])
def test_records_and_questions_file_give_the_same_gold_message(tmp_path, bad):
    records = tmp_path / "r.jsonl"
    records.write_text(json.dumps({"qid": "a", "gold_snippets": bad}) + "\n")
    with pytest.raises(RecordsError) as ours:
        read_records(records)
    questions = tmp_path / "q.jsonl"
    questions.write_text(json.dumps({"id": "a", "query": "x", "gold_snippets": bad}) + "\n")
    with pytest.raises(ValidationError) as theirs:
        load_questions(questions, [Document("d", "some text")])
    message = str(ours.value).split("field 'gold_snippets': ", 1)[1]
    assert str(ours.value).startswith(f"{records}, line 1, field 'gold_snippets': ")
    assert message in str(theirs.value)


def test_slots_are_all_required_and_alternatives_any():
    slots = as_slots(["store manager", ["regional lead", "area lead"]])
    assert contains_gold("the store manager and the area lead sign", slots)
    assert not contains_gold("the store manager signs", slots)
    records = [{"qid": "a", "gold_snippets": [["store manager"], ["regional lead", "area lead"]],
                "retrieved_texts": ["the store manager signs", "the Store Manager and the area lead sign"],
                "context_texts": ["the store manager signs", "ask the area lead"]}]
    stages = {s.stage: s for s in evaluate_records(records, ks=[1, 2])}
    assert stages["retrieval"].values["hit@1"].tolist() == [0.0] and stages["retrieval"].values["hit@2"].tolist() == [1.0]
    aug = stages["augmentation"]
    assert aug.values["answer_in_context"].tolist() == [0.0]  # no single text holds both slots
    # every metric from what is given: by containment, with its definition named
    assert aug.values["context_recall"].tolist() == [1.0] and aug.values["context_sufficiency"].tolist() == [1.0]
    assert aug.definitions["context_recall"].startswith("containment")
    assert aug.values["context_precision"].tolist() == [0.0]  # neither text holds both slots
    assert not {"context_recall", "context_precision"} & set(aug.not_measured)


def test_containment_recall_counts_slots():
    records = [{"qid": "a", "gold_snippets": [["store manager"], ["area lead"]], "context_texts": ["a store manager"]},
               {"qid": "b", "gold_snippets": [["nothing here"]], "context_texts": ["a store manager"]}]
    aug = {s.stage: s for s in evaluate_records(records)}["augmentation"]
    assert aug.values["context_recall"].tolist() == [0.5, 0.0]
    assert aug.values["context_sufficiency"].tolist() == [0.0, 0.0]


def test_containment_precision_and_edge_placement():
    from chunklab_core.evaluators.augmentation import evaluate_augmentation

    stage = evaluate_augmentation(["a", "b", "c"], context_texts=[["x thirty days", "no", "Thirty  days y"], ["none"], None],
                                  gold_snippets=[[["thirty days"]], [["thirty days"]], [["q"]]])
    assert stage.values["context_precision"][:2].tolist() == [pytest.approx(2 / 3), 0.0]
    assert stage.values["context_noise"][:2].tolist() == [pytest.approx(1 / 3), 1.0]
    edge = stage.values["evidence_edge_placement"]
    assert edge[0] == 1.0 and np.isnan(edge[1]) and np.isnan(edge[2])  # gold first and last; none packed; no texts
    assert stage.definitions["context_precision"].startswith("containment")


# ------------------------------------------------------------------ numbers as what they are


def test_units_and_number_formats():
    assert [unit_of(m) for m in ("n_chunks", "median_tokens", "returned_tokens@5", "latency_p95_ms", "hit@5",
                                 "share_tiny", "similarity_margin", "size_cv", "cost")] == \
        ["count", "tokens", "tokens", "ms", "fraction", "fraction", "cosine", "ratio", "cost"]
    assert report_files.fmt_number(307.0, "count") == "307"
    assert report_files.fmt_number(12345.0, "count") == "12,345"
    assert report_files.fmt_number(0.7821, "fraction") == "0.782"
    assert report_files.fmt_number(None, "count") == ""


def test_chunk_health_percentages_become_fractions():
    text = "Refunds take 30 days. The manager signs. Stores open at nine. Closed on Sunday."
    chunks = [ChunkRecord("c0", "d", 0, 40, None, {}), ChunkRecord("c1", "d", 40, len(text), None, {})]
    stages = evaluate_records([{"qid": "a"}], chunks=chunks, documents={"d": text})
    chunking = stages[0]
    table = build_scorecard(stages, options=Options(resamples=50)).tables["chunking"].set_index("metric")
    assert "pct_tiny" not in table.index
    assert table.loc["share_tiny", "value"] == pytest.approx(chunking.corpus["pct_tiny"] / 100)
    assert table.loc["share_tiny", "unit"] == "fraction" and table.loc["n_chunks", "unit"] == "count"
    assert table.loc["n_chunks", "value"] == 2 and isinstance(table.loc["n_chunks", "value"], int)


def test_comparison_shows_the_words_each_side_returned():
    def side(texts):
        records = [{"qid": q, "gold_snippets": [["thirty days"]], "retrieved_texts": t, "context_texts": t[:1]}
                   for q, t in zip("ab", texts)]
        return build_scorecard(evaluate_records(records, ks=[1, 2]), options=Options(resamples=100))
    a = side([["refunds take thirty days", "x y"], ["thirty days", "one two three"]])
    b = side([["thirty days"], ["no", "thirty days here"]])
    table = compare(a, b, ("long", "short")).set_index(["stage", "metric"])
    assert table.loc[("retrieval", "hit@1"), "tokens_a"] == pytest.approx((4 + 2) / 2)  # words in the top 1
    assert table.loc[("retrieval", "hit@1"), "tokens_b"] == pytest.approx((2 + 1) / 2)
    assert table.loc[("retrieval", "hit@2"), "tokens_a"] == pytest.approx((6 + 5) / 2)
    assert table.loc[("augmentation", "answer_in_context"), "tokens_b"] == pytest.approx(1.5)
    page = report_files.scorecard_html(a, compare(a, b, ("long", "short")))
    assert "Paired comparison (long − short on the same queries)" in page


# ------------------------------------------------------------------ the examples


def test_both_examples_open_with_the_funnel(tmp_path):
    from pathlib import Path

    root = Path(__file__).resolve().parents[1] / "examples" / "evaluate"
    lc = root / "langchain_chroma"
    runs = {"post05": [str(root / "post05_squad_fixed500.jsonl")],
            "langchain": [str(lc / "records.jsonl"), "--chunks", str(lc / "chunks.jsonl"), "--documents",
                          str(lc / "documents.jsonl"), "--vectors", str(lc / "chunk_vectors.npy"), "--query-vectors",
                          str(lc / "query_vectors.npy"), "--max-chars", "1000", "--against",
                          str(lc / "records_400.jsonl"), "--names", "1000-char", "400-char"]}
    for name, args in runs.items():
        out = tmp_path / name
        assert cli.main(args + ["--out", str(out), "--resamples", "200"]) == 0
        page = (out / "scorecard.html").read_text()
        body = page.split("<h2>", 1)[1]
        assert body.startswith("Where the answer is lost</h2>") and "The step that loses the most is" in body[:600]
        assert (out / "funnel.png").exists() and "data:image/png;base64," in page
    comparison = pd.read_csv(tmp_path / "langchain" / "comparison.csv")
    tokens = comparison.loc[comparison.stage.isin(["retrieval", "augmentation"]), ["tokens_a", "tokens_b"]]
    assert len(tokens) and (tokens > 0).all().all()  # the words each side returned, beside every row
