"""The ONNX Runtime embedding path against the PyTorch one (real all-MiniLM-L6-v2, exported locally).

onnxruntime is imported directly: a missing reference runtime fails the tests.
"""

from __future__ import annotations

import numpy as np
import onnxruntime  # noqa: F401  (the runtime under test; its absence must fail, not skip)
import pytest

from chunklab_core.retrieval.dense import DenseRetriever
from chunklab_core.retrieval.onnx_embedding import OnnxEncoder, check_backend

TEXTS = [
    "The lantern sits 38 metres above mean sea level.",
    "Who designed Harbour Point lighthouse?",
    "a",
    "Überprüfung der Leuchtturmlampe — 1891 installiert.",
    "灯塔的透镜于1891年安装。",
    "| Lamp bulbs (1000 W) | 12 |",
    " ".join(["A long text that the model must truncate at its maximum sequence length."] * 60),
    "Short.",
    "The fog horn sounds one blast of three seconds every thirty seconds until visibility returns.",
] * 3  # batches mixing lengths, repeated so that a batch of 8 pads differently from the torch path


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    root = tmp_path_factory.mktemp("emb")
    torch_path = DenseRetriever("all-MiniLM-L6-v2", cache_dir=root, num_threads=2, batch_size=8)
    onnx_path = DenseRetriever("all-MiniLM-L6-v2", cache_dir=root, num_threads=2, batch_size=8, backend="onnx")
    return torch_path, onnx_path, root


def test_every_onnx_vector_is_within_1e5_cosine_of_pytorch(both):
    torch_path, onnx_path, _ = both
    a = torch_path.embed(TEXTS)
    b = onnx_path.embed(TEXTS)
    assert a.shape == b.shape == (len(TEXTS), 384)
    cosine = (a.astype(np.float64) * b).sum(axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
    assert np.all(1.0 - cosine <= 1e-5), float(np.max(1.0 - cosine))
    assert np.all(np.abs(np.linalg.norm(b, axis=1) - 1.0) < 1e-5)


def test_the_backend_is_a_field_of_the_cache_key_and_the_export_is_cached(both):
    torch_path, onnx_path, root = both
    assert onnx_path.identity.startswith("all-MiniLM-L6-v2-onnx__") and onnx_path.identity != torch_path.identity
    assert onnx_path.cache.folder != torch_path.cache.folder
    exported = root / "onnx" / onnx_path.export_identity / "model.onnx"
    assert onnx_path.export_identity.startswith("onnx__")
    assert exported.is_file() and not list(exported.parent.glob("*.tmp"))
    encoder = OnnxEncoder(onnx_path.model, onnx_path.export_identity, 1, cache_dir=root / "onnx")  # reuses the file
    assert encoder.path == exported
    assert encoder.encode([]).shape == (0, 384)


def test_input_order_is_kept_when_batches_are_sorted_by_length(both):
    _, onnx_path, _ = both
    encoder = onnx_path._onnx
    forward = encoder.encode(TEXTS[:9], batch_size=4)
    backward = encoder.encode(TEXTS[:9][::-1], batch_size=4)[::-1]
    np.testing.assert_allclose(forward, backward, atol=1e-5)


def test_unknown_backend_is_refused():
    with pytest.raises(ValueError, match="unknown embedding backend 'tf'; known: torch, onnx"):
        check_backend("tf")


def test_a_window_variant_cuts_on_the_onnx_path_too(both):
    """``all-MiniLM-L6-v2@32`` (``retrieval.model_windows``) on ONNX: the same export, its own cache key,
    the torch variant's vectors within 1e-5 cosine, and not the uncut model's for a text past the window."""
    _, onnx_path, root = both
    torch_cut = DenseRetriever("all-MiniLM-L6-v2@32", cache_dir=root, num_threads=2, batch_size=8)
    onnx_cut = DenseRetriever("all-MiniLM-L6-v2@32", cache_dir=root, num_threads=2, batch_size=8, backend="onnx")
    assert onnx_cut.identity not in (onnx_path.identity, torch_cut.identity)
    assert onnx_cut.export_identity == onnx_path.export_identity  # the transformer's export is window-free
    a, b = torch_cut.embed(TEXTS), onnx_cut.embed(TEXTS)
    assert np.all(1.0 - (a.astype(np.float64) * b).sum(axis=1) <= 1e-5)
    past = ("A passage longer than the window is read only up to the window, so whatever follows the cut is "
            "invisible to dense retrieval however relevant it is, and only a shorter chunk would show it.")
    assert float(onnx_path.embed([past])[0] @ onnx_cut.embed([past])[0]) < 0.99
