"""``chunklab-own check``: exit 1 only when the paired interval of run − baseline lies below 0.

Fixtures are small per-question tables written inline; the three outcomes (worse, cannot be told
apart, better) are checked through the command line, and the interval is cross-checked against
``scipy.stats.bootstrap`` on the same paired differences.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from scipy.stats import bootstrap

from chunklab_core.own import check
from chunklab_core.own.cli import main


def write_run(folder, scores: dict[str, list[float]], leader=("fixed_500", "bm25", "—")):
    """An own-run folder: per_question.csv (cells x questions) and a recommendation.json naming ``leader``."""
    folder.mkdir(parents=True, exist_ok=True)
    rows = []
    for cell, values in scores.items():
        strategy, retriever, model = cell.split("/")
        rows += [{"strategy": strategy, "retriever": retriever, "model": model, "qid": f"q{i}", "recall@5": v}
                 for i, v in enumerate(values)]
    pd.DataFrame(rows).to_csv(folder / "per_question.csv", index=False)
    record = {"recommendations": [{"scope": "overall", "leader": "Leader", "candidates": [
        {"candidate": "Leader", "strategy": leader[0], "retriever": leader[1], "model": leader[2]}]}]}
    (folder / "recommendation.json").write_text(json.dumps(record), encoding="utf-8")
    return folder


BASE = [1, 1, 1, 1, 1, 1, 1, 1, 0, 0] * 3  # 30 questions, mean 0.8


def test_worse_fails_with_exit_1(tmp_path, capsys):
    base = write_run(tmp_path / "base", {"fixed_500/bm25/—": BASE})
    worse = [0.0] * 30  # every question lost: the interval is [-0.8 - ..., ...] below 0
    run = write_run(tmp_path / "run", {"fixed_500/bm25/—": worse})
    status = main(["check", str(run), "--baseline", str(base / "recommendation.json"), "--resamples", "2000"])
    out = capsys.readouterr().out
    assert status == 1
    assert "WORSE" in out and "lies below 0" in out
    assert "-0.800" in out  # the observed difference 0.0 - 0.8


def test_noise_cannot_be_told_apart_exit_0(tmp_path, capsys):
    base = write_run(tmp_path / "base", {"fixed_500/bm25/—": BASE})
    swapped = list(BASE)
    swapped[0], swapped[8] = 0, 1  # one question lost, another gained: difference 0
    run = write_run(tmp_path / "run", {"fixed_500/bm25/—": swapped})
    status = main(["check", str(run), "--baseline", str(base), "--resamples", "2000"])
    out = capsys.readouterr().out
    assert status == 0
    assert "cannot be told apart" in out and "contains 0" in out


def test_better_passes_exit_0(tmp_path, capsys):
    base = write_run(tmp_path / "base", {"fixed_500/bm25/—": BASE})
    run = write_run(tmp_path / "run", {"fixed_500/bm25/—": [1.0] * 30})
    status = main(["check", str(run), "--baseline", str(base), "--resamples", "2000"])
    assert status == 0
    assert "better: the paired 95% interval" in capsys.readouterr().out


def test_interval_is_the_paired_percentile_bootstrap(tmp_path):
    rng = np.random.default_rng(3)
    a, b = rng.integers(0, 2, 40).astype(float), rng.integers(0, 2, 40).astype(float)
    base = write_run(tmp_path / "base", {"recursive_500/dense/all-MiniLM-L6-v2": list(b)},
                     leader=("recursive_500", "dense", "all-MiniLM-L6-v2"))
    run = write_run(tmp_path / "run", {"recursive_500/dense/all-MiniLM-L6-v2": list(a)})
    result = check.compare(run, base, resamples=20_000, seed=1)
    assert result.difference == pytest.approx(a.mean() - b.mean())
    reference = bootstrap(((a - b),), np.mean, n_resamples=20_000, method="percentile",
                          random_state=np.random.default_rng(1)).confidence_interval
    assert result.low == pytest.approx(reference.low, abs=0.02)
    assert result.high == pytest.approx(reference.high, abs=0.02)
    assert result.run_cell == ("recursive_500", "dense", "all-MiniLM-L6-v2")


def test_pairs_by_question_id_and_names_the_unpaired(tmp_path):
    base = write_run(tmp_path / "base", {"fixed_500/bm25/—": [1, 0, 1, 1]})
    table = pd.read_csv(base / "per_question.csv")
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    shuffled = table.iloc[[3, 1, 0]].assign(qid=["q3", "q1", "q0"])  # q2 missing, order differs
    extra = pd.DataFrame([{"strategy": "fixed_500", "retriever": "bm25", "model": "—", "qid": "q9", "recall@5": 0}])
    pd.concat([shuffled, extra]).to_csv(run_dir / "per_question.csv", index=False)
    result = check.compare(run_dir / "per_question.csv", base, resamples=500)
    assert result.n_questions == 3 and result.difference == pytest.approx(0.0)
    assert result.only_in_run == ("q9",) and result.only_in_baseline == ("q2",)
    assert "q9" in result.text() and "q2" in result.text()


def test_run_cell_leader_and_explicit_cells(tmp_path):
    base = write_run(tmp_path / "base", {"fixed_500/bm25/—": [1, 1, 0, 0]})
    run = write_run(tmp_path / "run", {"fixed_500/bm25/—": [1, 1, 0, 0], "new_splitter/bm25/—": [1, 1, 1, 1]},
                    leader=("new_splitter", "bm25", "—"))
    assert check.compare(run, base, run_cell="leader", resamples=500).run_cell == ("new_splitter", "bm25", "—")
    assert check.compare(run, base, run_cell="new_splitter/bm25", resamples=500).difference == pytest.approx(0.5)


@pytest.mark.parametrize("problem, needle", [
    ("no_table", "per_question.csv: not found"),
    ("bad_cell", "no rows for nothing / bm25"),
    ("bad_measure", "no column 'recall@3'"),
    ("no_common", "share 0 question id(s)"),
])
def test_cannot_compare_is_exit_2_with_the_file_named(tmp_path, capsys, problem, needle):
    base = write_run(tmp_path / "base", {"fixed_500/bm25/—": [1, 0, 1]})
    run = write_run(tmp_path / "run", {"fixed_500/bm25/—": [1, 0, 1]})
    args = ["check", str(run), "--baseline", str(base)]
    if problem == "no_table":
        (run / "per_question.csv").unlink()
    elif problem == "bad_cell":
        args += ["--cell", "nothing/bm25"]
    elif problem == "bad_measure":
        table = pd.read_csv(run / "per_question.csv").rename(columns={"recall@5": "recall@3"})
        table.to_csv(run / "per_question.csv", index=False)
        args += ["--measure", "recall@3"]
    else:
        table = pd.read_csv(run / "per_question.csv")
        table.assign(qid=["x1", "x2", "x3"]).to_csv(run / "per_question.csv", index=False)
    assert main(args) == 2
    err = capsys.readouterr().err
    assert needle in err and "Traceback" not in err
