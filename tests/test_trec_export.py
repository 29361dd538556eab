"""TREC run/qrels export: hand-checked lines, and a round trip through ranx (imported directly).

The round trip writes the files, reads them back with ranx's TREC readers and evaluates them
with ranx: every per-question score must equal the series' own (``evaluation.scoring.score_run``).
"""

from __future__ import annotations

import numpy as np
import pytest
import ranx

from chunklab_core.core.corpus import Corpus, Document, Question
from chunklab_core.evaluation.measures import MEASURES, column
from chunklab_core.evaluation.scoring import run_cell, score_run
from chunklab_core.evaluation.trec_export import context_id, export_runs, trec_qrels_lines, trec_run_lines, write_trec


def _corpus() -> Corpus:
    filler = "Lorem ipsum dolor sit amet. " * 20
    docs = [
        Document("d0", "The capital of France is Paris. " + filler + "Paris hosts the Louvre."),
        Document("my doc.md", filler + "The tallest mountain is Everest, in Nepal. " + filler),
        Document("d2", "Bananas are yellow fruit. Paris is in France. " + filler),
    ]
    questions = [
        Question("q0", "What is the capital of France?", "d0", (("Paris",),)),
        Question("q 1", "Which is the tallest mountain?", "my doc.md", (("Everest",),)),
        Question("q2", "What colour are bananas?", "d2", (("purple",),)),  # gold nowhere
        Question("q3", "Where is the Louvre and Everest?", "d0", (("Louvre",), ("Everest",))),  # two slots
    ]
    return Corpus("tiny", docs, questions)


def test_ids_and_lines_by_hand():
    assert context_id("my doc.md", 0, 500) == "my%20doc.md:0-500"
    run = run_cell(_corpus(), "fixed_500", "bm25", k_max=3)
    lines = trec_run_lines(run, "fixed_500/bm25")
    first = lines[0].split()
    assert first[0] == "q0" and first[1] == "Q0" and first[3:] == ["1", "3", "fixed_500/bm25"]
    assert all(len(line.split()) == 6 for line in lines)
    assert {line.split()[0] for line in lines} == {"q0", "q%201", "q2", "q3"}
    qrels = trec_qrels_lines(run)
    # d0 is 615 characters: "Paris" opens it (chunk 0-500) and closes it ("Paris hosts the
    # Louvre.", chunk 500-615); d2 (606 characters) has "Paris is in France" in chunk 0-500.
    # "Everest" sits at characters 560-600 of "my doc.md" (chunk 500-1000). q2 (gold nowhere) and
    # q3 (two slots) have no relevant context under the post-01 rule.
    assert qrels == ["q0 0 d0:0-500 1", "q0 0 d0:500-615 1", "q0 0 d2:0-500 1",
                     "q%201 0 my%20doc.md:500-1000 1"]


@pytest.mark.heavy  # ranx compiles its measures with numba on first use: about 50 s in a fresh environment
@pytest.mark.parametrize("strategy", ["fixed_500", "sentence_window_2", "parent_doc_250_1000"])
def test_round_trip_through_ranx_equals_the_series_metrics(tmp_path, strategy):
    run = run_cell(_corpus(), strategy, "bm25", k_max=10)
    ours = score_run(run, ks=(1, 3, 5, 10)).set_index("qid")
    run_path, qrels_path = write_trec(run, tmp_path)
    qrels = ranx.Qrels.from_file(str(qrels_path), kind="trec")
    trec_run = ranx.Run.from_file(str(run_path), kind="trec")
    # ranx's name of each series column, from the measure registry
    columns = {MEASURES[name].ranx_name(k): column(name, k)
               for name, k in [("hit", 1), ("hit", 3), ("hit", 10), ("p", 5), ("rr", 10), ("ndcg", 10)]}
    assert list(columns) == ["hit_rate@1", "hit_rate@3", "hit_rate@10", "precision@5", "mrr@10", "ndcg@10"]
    metrics = list(columns)
    assert sorted(trec_run.keys()) == ["q%201", "q0", "q2", "q3"]  # every question is in the run file
    ours = ours.rename(index=lambda q: q.replace(" ", "%20"))
    # Questions without a qrels line (no gold found, or several slots) score 0 in the series;
    # ranx (make_comparable) evaluates the questions of the qrels only.
    without_qrels = sorted(set(trec_run.keys()) - set(qrels.keys()))
    assert without_qrels == ["q2", "q3"]
    assert (ours.loc[without_qrels, ["hit@10", "p@5", "rr@10", "ndcg@10"]] == 0).all().all()
    scores = ranx.evaluate(qrels, trec_run, metrics, return_mean=False, make_comparable=True)
    ours = ours.loc[list(qrels.keys())]
    for metric, name in columns.items():
        np.testing.assert_allclose(scores[metric], ours[name].to_numpy(), rtol=0, atol=1e-12,
                                   err_msg=f"{strategy}: {metric}")
    assert ours["hit@10"].sum() > 0  # the fixture has real hits, so the comparison is not 0 == 0


def test_export_runs_names_every_cell(tmp_path):
    corpus = _corpus()
    runs = {("tiny", "—", s, "bm25"): run_cell(corpus, s, "bm25", k_max=5) for s in ("fixed_500", "fixed_1000")}
    written = export_runs(runs, tmp_path)
    assert sorted(p.name for pair in written for p in pair) == [
        "tiny__fixed_1000__bm25.qrels", "tiny__fixed_1000__bm25.run",
        "tiny__fixed_500__bm25.qrels", "tiny__fixed_500__bm25.run"]
    assert not list(tmp_path.glob(".*"))  # no temporary files left behind
