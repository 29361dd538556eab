"""Faults, round three: the recorded runs (issue 41, classes 5, 6 and 9).

- class 9: ``verify-runs`` failed cells whose scores all agreed within 4.8e-7, because float
  noise reorders chunks whose scores tie. Ids may now differ only inside a tie block
  (``run_recording.ranking_differences``); any other difference still fails.
- class 5: a BM25 run file copied over a dense one replayed as the dense ranking, and
  ``verify-runs`` recomputed the cell named inside the file; both now check the cell asked for.
- class 6: single-bit flips of a run file ended in ``zlib.error`` or zipfile's "encrypted,
  password required" tracebacks; every flip is now the store's damaged-file message.
"""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from chunklab_core.reports import run_recording
from chunklab_core.reports.run_recording import ranking_differences, tie_blocks
from chunklab_core.retrieval.cell_search import search_cell
from chunklab_core.retrieval.recorded_runs import Cell, RunStore, RunStoreError

WORDS = "river bank money loan water fish boat city bridge tower market bread apple tree".split()


def texts_and_queries(n_texts=40, n_queries=7, seed=3):
    rng = np.random.default_rng(seed)
    return ([" ".join(rng.choice(WORDS, size=12)) for _ in range(n_texts)],
            [" ".join(rng.choice(WORDS, size=3)) for _ in range(n_queries)])


# ---- class 9: ties -------------------------------------------------------------------------
def test_tie_blocks_by_hand():
    # 0.9 and 0.9 + 1e-6 tie (gap 1e-6 <= 2e-6); 0.8 stands alone; the last two tie
    assert tie_blocks(np.array([0.9 + 1e-6, 0.9, 0.8, 0.5, 0.5])).tolist() == [0, 0, 1, 2, 2]
    assert tie_blocks(np.array([0.9, 0.89])).tolist() == [0, 1]


def test_a_reordering_inside_a_tie_passes_and_nothing_else_does():
    live_ids = np.array([[4, 7, 2, 9, 1]])
    live_scores = np.array([[0.9, 0.9 - 5e-7, 0.7, 0.6, 0.6 - 1e-7]])  # ranks 0-1 tie, 3-4 tie
    assert ranking_differences(live_ids, live_scores, live_ids) == (0, 0)
    assert ranking_differences(live_ids, live_scores, np.array([[7, 4, 2, 9, 1]])) == (1, 0)  # tie swap
    assert ranking_differences(live_ids, live_scores, np.array([[4, 2, 7, 9, 1]])) == (1, 1)  # 0.9 vs 0.7
    # a tie across the recorded depth: the live list (one rank deeper) holds the recorded id
    assert ranking_differences(live_ids, live_scores, np.array([[4, 7, 2, 1]])) == (1, 0)
    # a recorded id the live list does not tie with at that rank: fails
    assert ranking_differences(live_ids, live_scores, np.array([[4, 7, 2, 5]])) == (1, 1)
    assert ranking_differences(live_ids[:, :3], live_scores, np.array([[4, 7, 2, 9]]))[1] == 1  # too shallow


def test_verify_passes_a_tie_swap_and_fails_a_real_swap(tmp_path, capsys):
    from chunklab_core.data.corpora import load_corpus
    from chunklab_core.evaluation.scoring import run_cell
    from chunklab_core.retrieval.recorded_runs import pack_ids

    corpus = load_corpus("squad", squad_articles=2, squad_questions=12)
    run_cell(corpus, "fixed_500", "bm25", store=RunStore(tmp_path, "record"))
    store = RunStore(tmp_path, "replay")
    path = store.cells()[0]
    record = store.load(path)
    from chunklab_core.reports.run_recording import _inputs
    from chunklab_core.retrieval.bm25 import BM25Index

    texts, queries = _inputs(record.meta, store)
    ids, scores = BM25Index().fit(texts).search(queries, record.meta["depth"])
    blocks = [tie_blocks(row) for row in scores]
    tied = [(q, r) for q, b in enumerate(blocks) for r in range(len(b) - 1) if b[r] == b[r + 1]]
    apart = [(q, r) for q, b in enumerate(blocks) for r in range(len(b) - 1) if b[r] != b[r + 1]]
    assert tied and apart, "the fixture needs a tie and a non-tie"
    for (q, r), verdict in ((tied[0], 0), (apart[0], 1)):
        swapped = record.ids.copy()
        swapped[q, [r, r + 1]] = swapped[q, [r + 1, r]]
        store.write(path, record.meta, ids=pack_ids(swapped, record.meta["texts"]["n"]), scores=record.scores)
        assert run_recording.verify(sample=1, root=tmp_path) == verdict
        out = capsys.readouterr().out
        assert "1 queries differ" in out and (f"{verdict} beyond ties" in out)


# ---- class 5: a run file under another cell's name -----------------------------------------
def test_a_run_file_copied_over_another_cell_is_refused_by_replay_and_verify(tmp_path, capsys):
    from chunklab_core.data.corpora import load_corpus
    from chunklab_core.evaluation.scoring import run_cell

    corpus = load_corpus("squad", squad_articles=2, squad_questions=12)
    for strategy in ("fixed_500", "fixed_1000"):
        run_cell(corpus, strategy, "bm25", store=RunStore(tmp_path, "record"))
    store = RunStore(tmp_path, "replay")
    a, b = store.cells()
    shutil.copyfile(a, b)
    assert run_recording.verify(sample=2, root=tmp_path) == 1
    out = capsys.readouterr().out
    assert "provenance names another cell" in out and "ok  " in out  # the untouched cell still verifies
    assert run_recording.verify(root=tmp_path, named=[str(a.relative_to(tmp_path))]) == 0  # the cell asked for
    assert run_recording.verify(root=tmp_path, named=[str(b.relative_to(tmp_path))]) == 1
    assert "provenance names another cell" in capsys.readouterr().out
    texts, queries = texts_and_queries()
    search_cell("c-1", "s", "bm25", texts, queries, 10, store=RunStore(tmp_path, "record"))
    search_cell("c-1", "t", "bm25", texts, queries, 10, store=RunStore(tmp_path, "record"))
    shutil.copyfile(store.path(Cell("c-1", "s", "bm25")), store.path(Cell("c-1", "t", "bm25")))
    with pytest.raises(RunStoreError, match=r"holds another cell.*delete it") as caught:
        search_cell("c-1", "t", "bm25", texts, queries, 10, store=RunStore(tmp_path, "replay"))
    assert str(store.path(Cell("c-1", "t", "bm25"))) in str(caught.value)


# ---- class 6: every single-bit flip is the damaged-file message ----------------------------
def test_every_single_bit_flip_of_a_run_file_is_reported_as_damaged(tmp_path):
    texts, queries = texts_and_queries()
    search_cell("c-1", "s", "bm25", texts, queries, 10, store=RunStore(tmp_path, "record"))
    path = next(tmp_path.rglob("*.npz"))
    original = path.read_bytes()
    rng = np.random.default_rng(41)
    positions = rng.choice(len(original) * 8, size=300, replace=False)
    outcomes = {"damaged": 0, "unchanged": 0}
    for bit in positions:
        data = bytearray(original)
        data[bit // 8] ^= 1 << (bit % 8)
        path.write_bytes(bytes(data))
        try:
            search_cell("c-1", "s", "bm25", texts, queries, 10, store=RunStore(tmp_path, "replay"))
            outcomes["unchanged"] += 1  # a flip in a field nothing reads (e.g. a zip timestamp)
        except RunStoreError as err:
            assert str(path) in str(err) and "torn or damaged" in str(err)
            outcomes["damaged"] += 1
    assert outcomes["damaged"] > 200
