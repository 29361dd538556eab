"""Window variants (``retrieval.model_windows``): a model cut to a shorter window is its own model.

The real shipped all-MiniLM-L6-v2 (window 256) cut to 32 word pieces: a text longer than 32 pieces
embeds differently, a shorter one identically; the variant has its own label, cache folder, run-store
path, truncation mask and window, and a vector cached under one is never read as the other's.
"""

from __future__ import annotations

import numpy as np
import pytest

from chunklab_core.retrieval import model_assembly
from chunklab_core.retrieval.dense import DenseRetriever, word_pieces
from chunklab_core.retrieval.model_windows import check_window, split_window, window_extra, window_label
from chunklab_core.retrieval.recorded_runs import Cell

WINDOW = 32
SHORT = "The cat sat on the mat."  # 9 word pieces with [CLS] and [SEP]
LONG = ("Chunking decides what a retriever can find: a passage cut in the middle of its answer is found by "
        "neither half, and a passage longer than the embedding model's window is read only up to the window, "
        "so whatever follows the cut is invisible to dense retrieval however relevant it is.")


def test_labels_split_and_join():
    assert split_window("all-mpnet-base-v2@256") == ("all-mpnet-base-v2", 256)
    assert split_window("all-mpnet-base-v2") == ("all-mpnet-base-v2", None)
    assert split_window("dense@x") == ("dense@x", None)  # not a number: no window
    assert split_window("@256") == ("@256", None)  # no model before the mark
    assert window_label("all-mpnet-base-v2", 256) == "all-mpnet-base-v2@256"
    assert window_label("all-mpnet-base-v2", None) == "all-mpnet-base-v2"
    assert window_extra(None) == {} and window_extra(256) == {"max_seq_length": 256}
    assert model_assembly.canonical_label("MPNET@256") == "all-mpnet-base-v2@256"
    assert model_assembly.canonical_label("minilm") == "all-MiniLM-L6-v2"


def test_windows_not_shorter_than_the_models_own_are_refused():
    assert check_window("m", 256, 384) == 256
    for bad in (384, 512, 2, 0):
        with pytest.raises(ValueError, match="shorter than m's own 384"):
            check_window("m", bad, 384)
    with pytest.raises(ValueError, match="declares no max_seq_length"):
        check_window("m", 256, None)
    with pytest.raises(ValueError, match="use all-MiniLM-L6-v2 for its own window"):
        model_assembly.resolve_window("all-MiniLM-L6-v2@256")


def test_a_variant_resolves_to_its_models_folder_under_its_own_label(tmp_path):
    label, folder, window = model_assembly.resolve_window("minilm@32")
    assert (label, window) == ("all-MiniLM-L6-v2@32", 32)
    assert folder == model_assembly.resolve_model("minilm")[1]
    assert model_assembly.resolve_model("minilm@32") == (label, folder)
    # an existing folder whose name ends in @N is that folder, at its own window
    odd = tmp_path / "my-model@64"
    odd.mkdir()
    (odd / "config.json").write_text("{}")
    assert model_assembly.resolve_window(odd) == ("my-model@64", odd.resolve(), None)


def test_cut_vectors_differ_beyond_the_window_and_match_within_it(tmp_path):
    assert word_pieces([SHORT], "minilm")[0] < WINDOW < word_pieces([LONG], "minilm")[0]
    whole = DenseRetriever("minilm", cache=False)
    cut = DenseRetriever(f"minilm@{WINDOW}", cache=False)
    assert cut.max_seq_length == WINDOW and whole.max_seq_length == 256
    for text in (SHORT, LONG):  # one text per call: no batch padding between the two
        a, b = whole.embed([text])[0], cut.embed([text])[0]
        if text is SHORT:
            np.testing.assert_array_equal(a, b)
        else:
            assert float(a @ b) < 0.99
    # the cut vector is the model's vector of the text's first pieces, as sentence-transformers truncates
    tokenizer = cut.model.tokenizer
    first = tokenizer.decode(tokenizer(LONG, add_special_tokens=False)["input_ids"][:WINDOW - 2])
    assert float(whole.embed([first])[0] @ cut.embed([LONG])[0]) > 0.999
    np.testing.assert_array_equal(cut.truncated_mask([SHORT, LONG]), [False, True])
    np.testing.assert_array_equal(whole.truncated_mask([SHORT, LONG]), [False, False])


def test_the_cache_never_serves_one_windows_vectors_as_the_others(tmp_path):
    whole = DenseRetriever("minilm", cache_dir=tmp_path)
    whole.embed([SHORT, LONG])
    cut = DenseRetriever(f"minilm@{WINDOW}", cache_dir=tmp_path)
    assert cut.identity != whole.identity and cut.identity.startswith("all-MiniLM-L6-v2_32__")
    assert cut.cache.folder != whole.cache.folder
    cut.embed([SHORT, LONG])
    assert (cut.cache_hits, cut.encoded_count) == (0, 2)
    again = DenseRetriever(f"minilm@{WINDOW}", cache_dir=tmp_path)
    np.testing.assert_array_equal(again.embed([LONG]), cut.embed([LONG]))
    assert again.cache_hits == 1 and again.encoded_count == 0
    # the model at its own window keeps the key it always had (no re-encoding of recorded caches)
    from chunklab_core.retrieval.embedding_cache import cache_key

    assert whole.identity == cache_key("all-MiniLM-L6-v2", whole.model_folder, memo=tmp_path / "file-sha256.json")


def test_a_variant_is_its_own_cell_and_names_its_window(monkeypatch):
    from chunklab_core.decision import scores
    from chunklab_core.retrieval import dense

    assert Cell("s", "fixed_500", "dense", "all-mpnet-base-v2@256").relative_path().as_posix() == \
        "s/fixed_500/dense@all-mpnet-base-v2@256.npz"
    assert scores.model_window(f"all-MiniLM-L6-v2@{WINDOW}") == WINDOW
    assert dense.model_tokenizer(f"minilm@{WINDOW}")[1] == WINDOW

    def missing(model):
        raise FileNotFoundError(model)

    monkeypatch.setattr(dense, "window_tokenizer", missing)  # post 00 on a machine without the model
    assert scores.model_window("all-mpnet-base-v2@256") == 256
    assert scores.model_window("all-mpnet-base-v2") == 384


def test_a_recorded_variant_cell_carries_its_label_and_make_verify_runs_rebuilds_it(tmp_path, capsys):
    from chunklab_core.data.corpora import load_corpus
    from chunklab_core.evaluation.scoring import run_cell
    from chunklab_core.reports import run_recording
    from chunklab_core.retrieval.recorded_runs import RunStore

    corpus = load_corpus("squad", squad_articles=2, squad_questions=12)
    run = run_cell(corpus, "fixed_500", "dense", model=f"all-MiniLM-L6-v2@{WINDOW}", store=RunStore(tmp_path, "record"))
    path = next(tmp_path.rglob("*.npz"))
    assert path.name == f"dense@all-MiniLM-L6-v2@{WINDOW}.npz"
    meta = RunStore(tmp_path, "replay").load(path).meta
    assert meta["cell"]["model"] == f"all-MiniLM-L6-v2@{WINDOW}"
    assert meta["model_identity"].startswith(f"all-MiniLM-L6-v2_{WINDOW}__")
    assert run.truncated.any()  # fixed_500 chunks run past 32 word pieces: the mask is the variant's
    assert run_recording.verify(sample=1, root=tmp_path) == 0  # rebuilt from its label, a fresh cache
    assert "ids identical" in capsys.readouterr().out
