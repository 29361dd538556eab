"""Faults, round four: the cases still failing from earlier rounds (issue 49).

- a torn ``population.csv`` or ``answers.json`` of ``chunklab-own answers`` gave a parser's
  message without the file, and half a ``population.csv`` was drawn from with exit status 0;
- an ``.npz`` given as ``chunklab-evaluate --vectors`` ended in ``'NpzFile' object has no
  attribute 'ndim'``.
(The cache location at a file and an unreadable records file: ``test_faults_round4_file_errors``.)
"""

from __future__ import annotations

import numpy as np
import pytest

from chunklab_core.evaluators import cli as evaluate_cli
from chunklab_core.own.audit import audit_paths
from chunklab_core.own.cli import main


@pytest.fixture
def answers(tmp_path, monkeypatch, scripted):
    from test_own_answers import run_answers

    out = tmp_path / "answers"
    assert run_answers(out, "--questions", "3") == 0
    return out


from test_own_answers import scripted  # noqa: E402,F401  (the scripted-backend fixture)


def _torn_population(out):
    data = (out / "population.csv").read_bytes()
    (out / "population.csv").write_bytes(data[: len(data) * 2 // 3])  # cut mid-row, as a killed copy leaves it


def _population_row_dropped(out):
    lines = (out / "population.csv").read_text(encoding="utf-8").splitlines(keepends=True)
    text = "".join(lines)
    import csv
    import io

    rows = list(csv.reader(io.StringIO(text, newline="")))
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows(rows[:-1])  # whole rows, one missing
    (out / "population.csv").write_text(buffer.getvalue(), encoding="utf-8")


def _torn_manifest(out):
    data = (out / "answers.json").read_bytes()
    (out / "answers.json").write_bytes(data[: len(data) // 2])


def _manifest_not_ours(out):
    (out / "answers.json").write_text("[1, 2, 3]\n", encoding="utf-8")


def _latin1_population(out):
    (out / "population.csv").write_bytes((out / "population.csv").read_bytes() + "caf\xe9\n".encode("latin-1"))


@pytest.mark.parametrize("damage, file, words", [
    (_torn_population, "population.csv", "fields, the header"),
    (_population_row_dropped, "population.csv", "but answers.json records"),
    (_torn_manifest, "answers.json", "not readable JSON"),
    (_manifest_not_ours, "answers.json", "not the manifest"),
    (_latin1_population, "population.csv", "not a readable UTF-8 CSV"),
])
@pytest.mark.parametrize("step", ["draw", "report"])
def test_a_torn_answers_folder_is_named_and_never_drawn_from(answers, damage, file, words, step, capsys):
    if step == "report":
        assert main(["audit", "draw", "--answers", str(answers), "--n", "6"]) == 0
        capsys.readouterr()
    before = {p: p.read_bytes() for p in audit_paths(answers)["folder"].glob("*")} if step == "report" else {}
    damage(answers)
    status = main(["audit", step, "--answers", str(answers), *(["--resamples", "200"] if step == "report" else [])])
    err = capsys.readouterr().err
    assert status != 0 and str(answers / file) in err and words in err and "Traceback" not in err, err
    assert "chunklab-own answers" in err  # the command that rebuilds it
    if step == "draw":
        assert not audit_paths(answers)["sheet"].exists()
    else:
        assert {p: p.read_bytes() for p in audit_paths(answers)["folder"].glob("*")} == before


@pytest.mark.parametrize("option", ["--vectors", "--query-vectors"])
@pytest.mark.parametrize("kind", ["npz", "torn npz", "torn npy", "pickled object"])
def test_vectors_that_are_not_one_npy_array_are_named(option, kind, tmp_path, capsys):
    records = tmp_path / "records.jsonl"
    records.write_text('{"qid": "a", "gold_ids": ["c0"], "retrieved_ids": ["c0"]}\n', encoding="utf-8")
    chunks = tmp_path / "chunks.jsonl"
    chunks.write_text('{"chunk_id": "c0", "doc_id": "d", "start": 0, "end": 3, "text": "abc"}\n', encoding="utf-8")
    vectors = tmp_path / f"vectors.{'npz' if 'npz' in kind else 'npy'}"
    if kind == "npz":
        np.savez(vectors, a=np.ones((1, 3)))
    elif kind == "torn npz":
        np.savez(vectors, a=np.ones((1, 3)))
        vectors.write_bytes(vectors.read_bytes()[:60])
    elif kind == "torn npy":
        np.save(vectors, np.ones((1, 3)))
        vectors.write_bytes(vectors.read_bytes()[:100])
    else:
        np.save(vectors, np.array([{"a": 1}], dtype=object), allow_pickle=True)
    status = evaluate_cli.main([str(records), "--chunks", str(chunks), option, str(vectors), "--out",
                                str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert status == 2 and str(vectors) in err and "Traceback" not in err and "ndim" not in err, err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("name", ["population", "key", "sheet"])
@pytest.mark.parametrize("cut", ["mid-row", "latin-1"])
def test_a_torn_file_of_the_drawn_audit_is_named_by_the_report(answers, name, cut, capsys):
    assert main(["audit", "draw", "--answers", str(answers), "--n", "6"]) == 0
    path = audit_paths(answers)[name]
    data = path.read_bytes()
    path.write_bytes(data[: len(data) * 2 // 3] if cut == "mid-row" else data + "caf\xe9,\n".encode("latin-1"))
    capsys.readouterr()
    status = main(["audit", "report", "--answers", str(answers), "--resamples", "200"])
    said = capsys.readouterr()
    assert status != 0 and path.name in said.err and "Traceback" not in said.err, said.err
    assert not audit_paths(answers)["report"].exists()


@pytest.mark.parametrize("name", ["key", "population"])
def test_the_judge_retest_names_a_torn_audit_file(name, tmp_path, capsys):
    from chunklab_core.audit import retest
    from chunklab_core.core.paths import AUDIT_DIR, AUDIT_SAMPLE

    files = {part: tmp_path / f"{part}.csv" for part in ("key", "population")}
    for part, path in files.items():
        path.write_bytes((AUDIT_DIR / f"{AUDIT_SAMPLE}_{part}.csv").read_bytes())
    data = files[name].read_bytes()
    files[name].write_bytes(data[: len(data) // 2])
    status = retest.main(["--key", str(files["key"]), "--population", str(files["population"]), "--mode", "replay"])
    err = capsys.readouterr().err
    assert status == 2 and str(files[name]) in err and "fields, the header" in err and "Traceback" not in err, err
