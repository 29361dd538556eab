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
    """q1 lost at chunking (its answer is in no chunk), q2 at retrieval, q3 at packing, q3a by
    abstaining, q4 in the answer, q5 at correctness (the answer holds the gold but is not an
    exact match), q6 through; q7 is unanswerable (left out of the funnel)."""
    hit, miss = [CHUNKS[0], CHUNKS[1]], [CHUNKS[2], CHUNKS[3]]
    records = [
        _record("q1", miss, miss, "no idea", reference="forty weeks", gold="forty weeks"),
        _record("q2", miss, miss, "no idea"),
        _record("q3", hit, [CHUNKS[1]], "no idea"),
        _record("q3a", hit, [CHUNKS[0]], "I don't know"),
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
    expected = {  # per query q1, q2, q3, q3a, q4, q5, q6, q7 (hand-computed; q7 unanswerable: not measured)
        "in_some_chunk": [0, 1, 1, 1, 1, 1, 1, None], "retrieved": [0, 0, 1, 1, 1, 1, 1, None],
        "in_context": [0, 0, 0, 1, 1, 1, 1, None], "answered": [1, 1, 1, 0, 1, 1, 1, None],
        "used_in_answer": [0, 0, 0, 0, 0, 1, 1, None], "answer_correct": [0, 0, 0, 0, 0, 0, 1, None]}
    for step in STEPS:
        got = [None if np.isnan(v) else v for v in funnel.values[step]]
        assert got == expected[step], step
        assert funnel.definitions[step]
    assert funnel.definitions["in_some_chunk"].startswith("containment")
    card = build_scorecard(list(stages.values()), [r["doc_id"] for r in records], Options(resamples=500, seed=1))
    table = card.funnel
    assert list(table.step) == list(STEPS) and set(table.n) == {7}
    np.testing.assert_allclose(table.reached, [6 / 7, 5 / 7, 4 / 7, 3 / 7, 2 / 7, 1 / 7])
    np.testing.assert_allclose(table.lost, [1 / 7] * 6)
    assert biggest_loss(table)["step"] == "in_some_chunk"  # equal losses: the first
    # one document: the plain percentile bootstrap, one call for every column (reached, then lost)
    reached = np.array([[v >= s for s in range(1, 7)] for v in range(7)], dtype=float)
    lost = np.column_stack([np.ones(7), reached[:, :-1]]) - reached
    ci = bootstrap_ci(np.column_stack([reached, lost]), 500, 1, 0.95)
    np.testing.assert_allclose(table.reached_low, ci.low[:6])
    np.testing.assert_allclose(table.lost_high, ci.high[6:])


def test_funnel_intervals_are_clustered_by_document():
    from chunklab_core.stats.clustered import clustered_bootstrap_ci

    records = fixture_records()
    docs = ["d1", "d1", "d2", "d2", "d2", "d3", "d3", "d3"]
    for r, d in zip(records, docs):
        r["doc_id"] = d
    card = build_scorecard(evaluate_records(records, chunks=_chunks(), ks=[2]), docs, Options(resamples=400, seed=3))
    reached = np.array([[v >= s for s in range(1, 7)] for v in range(7)], dtype=float)
    lost = np.column_stack([np.ones(7), reached[:, :-1]]) - reached
    with pytest.warns(UserWarning):  # three documents: few clusters, as the scorecard notes
        ci = clustered_bootstrap_ci(np.column_stack([reached, lost]), np.array(docs[:7], dtype=object), 400, 3, 0.95)
    np.testing.assert_allclose(card.funnel.reached_low, ci.low[:6])
    np.testing.assert_allclose(card.funnel.lost_high, ci.high[6:])


def losing_records(lost_at_retrieval: int, lost_at_packing: int, lost_in_answer: int, through: int) -> list[dict]:
    """Records losing the given numbers of queries at retrieval, at packing and in the answer
    string (every other step passed), over 10 documents (query i in document i mod 10)."""
    hit, miss = [CHUNKS[0], CHUNKS[1]], [CHUNKS[2], CHUNKS[3]]
    plan = ([(miss, miss, "no idea")] * lost_at_retrieval + [(hit, [CHUNKS[1]], "no idea")] * lost_at_packing
            + [(hit, [CHUNKS[0]], "a week")] * lost_in_answer + [(hit, [CHUNKS[0]], GOLD)] * through)
    records = [_record(f"q{i}", r, c, a, doc=f"d{i % 10}") for i, (r, c, a) in enumerate(plan)]
    for r in records:
        r["gold_snippets"] = as_list(r["gold_snippets"])
    return records


def _write(tmp_path, records):
    path = tmp_path / "r.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    chunks = tmp_path / "c.jsonl"
    chunks.write_text("".join(json.dumps({"chunk_id": c.chunk_id, "doc_id": c.doc_id, "start": c.start, "end": c.end,
                                          "text": c.text}) + "\n" for c in _chunks()))
    return path, chunks


def test_funnel_names_the_step_that_loses_most_only_when_separated(tmp_path, capsys):
    """Separated: 16 of 40 lost at packing, 2 at retrieval, 2 in the answer string: the paired
    interval (packing − the next-worst) excludes 0, so the page and the terminal name packing."""
    path, chunks = _write(tmp_path, losing_records(2, 16, 2, 20))
    out = tmp_path / "card"
    assert cli.main([str(path), "--chunks", str(chunks), "--out", str(out), "--k", "2", "--resamples", "500"]) == 0
    printed = capsys.readouterr().out
    page = (out / "scorecard.html").read_text()
    assert "The step that loses the most is <strong>kept in the packed context</strong>" in page
    assert "a share of 0.400 of the queries" in page and "which excludes 0" in page
    assert "The step that loses the most is kept in the packed context" in printed  # the terminal's headline
    assert (out / "funnel.png").read_bytes()[:4] == b"\x89PNG"
    assert page.index("The step that loses the most") < page.index("Stage by stage") < page.index("<h3>")
    steps = json.loads((out / "scorecard.json").read_text())["funnel"]["steps"]
    assert [s["step"] for s in steps] == list(STEPS)


def test_funnel_says_which_steps_cannot_be_told_apart_when_they_overlap(tmp_path, capsys):
    """Overlapping: 7 of 40 lost at packing, 6 at retrieval: packing loses the most, but the
    paired interval against retrieval holds 0, so no step is named; both are listed."""
    path, chunks = _write(tmp_path, losing_records(6, 7, 1, 26))
    out = tmp_path / "card"
    assert cli.main([str(path), "--chunks", str(chunks), "--out", str(out), "--k", "2", "--resamples", "500"]) == 0
    printed = capsys.readouterr().out
    page = (out / "scorecard.html").read_text()
    assert "The step that loses the most is" not in page and "The step that loses the most" not in printed
    assert "No step can be named as the one that loses the most" in printed
    assert "<strong>kept in the packed context and retrieved in the top k</strong> cannot be told apart" in page
    assert "holds 0" in page


def check_headline_rule(out, docs, resamples, seed, page):
    """The page's headline against the rule recomputed here from the per-query funnel in
    ``scorecard.json``: the most-losing step is named only when the paired interval of its loss
    minus the next-worst's (one bootstrap of ``stats``, clustered by document when given) excludes 0."""
    from chunklab_core.stats.clustered import clustered_bootstrap_ci

    funnel = json.loads((out / "scorecard.json").read_text())["funnel"]
    steps = [s["step"] for s in funnel["steps"]]
    titles = {s["step"]: s["title"] for s in funnel["steps"]}
    values = np.array([[np.nan if v is None else v for v in funnel["per_query"][s]] for s in steps], dtype=float).T
    keep = ~np.isnan(values).any(axis=1)
    reached = np.cumprod(values[keep] > 0, axis=1).astype(float)
    lost = np.column_stack([np.ones(len(reached)), reached[:, :-1]]) - reached
    order = np.argsort(-lost.mean(axis=0), kind="stable")
    worst, runner = order[0], order[1]
    diff = lost[:, worst] - lost[:, runner]
    clusters = None if any(d is None for d in docs) else np.asarray(docs, dtype=object)[keep]
    if clusters is not None and len(set(clusters)) >= 2:
        ci = clustered_bootstrap_ci(diff, clusters, resamples, seed)
    else:
        ci = bootstrap_ci(diff, resamples, seed)
    if ci.low > 0:
        assert f"The step that loses the most is <strong>{titles[steps[worst]]}</strong>" in page
    else:
        assert "The step that loses the most is" not in page
        assert "No step can be named as the one that loses the most" in page
        assert titles[steps[worst]] in page and titles[steps[runner]] in page.split("cannot be told apart")[0]
    return ci


def test_funnel_from_ids_and_steps_not_measured():
    records = [{"qid": "a", "gold_ids": ["c1"], "retrieved_ids": ["c2", "c1"], "context_ids": ["c2"]},
               {"qid": "b", "gold_ids": [], "retrieved_ids": ["c2"], "context_ids": ["c2"]},
               {"qid": "c", "gold_ids": ["c3"], "retrieved_ids": ["c3"], "context_ids": ["c3"]}]
    funnel = evaluate_records(records, ks=[1, 2])[-1]
    assert funnel.values["in_some_chunk"].tolist() == [1, 0, 1]
    assert funnel.values["retrieved"].tolist() == [1, 0, 1]  # top 2
    assert funnel.values["in_context"].tolist() == [0, 0, 1]
    assert funnel.definitions["retrieved"] == "ids: a gold id among the top 2 retrieved_ids"
    assert set(funnel.not_measured) == {"answered", "used_in_answer", "answer_correct"}
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
        assert body.startswith("Where the answer is lost</h2>\n<p class='lead'>Of ")
        assert (out / "funnel.png").exists() and "data:image/png;base64," in page
        assert page.count("<title>Scorecard of ") == 1 and Path(args[0]).name in page.split("</title>")[0]
        check_headline_rule(out, [json.loads(line).get("doc_id") for line in open(args[0])], 200, 0, page)
    # post 05's example: the funnel's retrieved share and the retrieval table's hit@10 differ in their
    # denominators, and the page says so with both counts; the proxies are named as what they are
    page = (tmp_path / "post05" / "scorecard.html").read_text()
    data = json.loads((tmp_path / "post05" / "scorecard.json").read_text())
    hit = next(r for r in data["stages"]["retrieval"]["metrics"] if r["metric"] == "hit@10")
    n_funnel = data["funnel"]["steps"][0]["n"]
    assert hit["n"] != n_funnel
    assert (f"is of the {n_funnel:,} queries measured at every funnel step" in page
            and f"the retrieval table's hit@10, {hit['value']:.3f}, is of the {hit['n']:,} queries" in page)
    assert "answer string in the response</em> is containment" in page and "answered (not abstained)" in page
    comparison = pd.read_csv(tmp_path / "langchain" / "comparison.csv")
    costs = comparison[comparison.metric.str.contains("tokens")]
    assert len(costs) and not costs.verdict.str.contains("ahead").any()
    assert costs.verdict.str.endswith("returns more tokens").any()
    tokens = comparison.loc[comparison.stage.isin(["retrieval", "augmentation"]), ["tokens_a", "tokens_b"]]
    assert len(tokens) and (tokens > 0).all().all()  # the words each side returned, beside every row
