"""The own-documents embedding backend: ``auto`` (the default) is ONNX Runtime without torch for
the models checked equal to PyTorch, PyTorch for any other; ``backend: torch`` opts out.

onnxruntime is imported directly: the runtime under test must be installed (its absence fails).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnxruntime  # noqa: F401  (the runtime under test; its absence must fail, not skip)
import pytest

from chunklab_core.own.config import OwnConfig, parse_config
from chunklab_core.retrieval.dense import DenseRetriever
from chunklab_core.retrieval.model_assembly import minilm_path
from chunklab_core.retrieval.onnx_embedding import (EQUAL_COSINE_DISTANCE, ONNX_EQUAL, FolderEncoder, folder_pipeline,
                                                    l2_normalise, mean_pool, resolve_backend)

ROOT = Path(__file__).resolve().parents[1]


def test_the_default_backend_is_auto_and_torch_opts_out():
    assert OwnConfig().backend == "auto"
    assert parse_config({}).backend == "auto"
    assert parse_config({"backend": "torch"}).backend == "torch"
    assert parse_config({"backend": "onnx"}).backend == "onnx"


def test_auto_is_onnx_for_the_checked_models_and_torch_for_any_other(tmp_path):
    assert set(ONNX_EQUAL) == {"all-MiniLM-L6-v2", "all-mpnet-base-v2"}
    assert resolve_backend("auto", "all-MiniLM-L6-v2") == "onnx"
    assert resolve_backend("auto", "all-mpnet-base-v2") == "onnx"
    assert resolve_backend("auto", "model", minilm_path()) == "onnx"  # the shipped folder, by its path
    other = tmp_path / "my-model"  # a copy of MiniLM under another name: never checked, so PyTorch
    other.mkdir()
    for item in minilm_path().iterdir():
        (other / item.name).symlink_to(item)
    assert resolve_backend("auto", "my-model", other) == "torch"
    assert DenseRetriever(other, cache=False, backend="auto").backend == "torch"
    assert DenseRetriever("minilm", cache=False, backend="auto").backend == "onnx"
    assert DenseRetriever("minilm", cache=False, backend="torch").backend == "torch"
    assert resolve_backend("torch", "all-MiniLM-L6-v2") == "torch"
    with pytest.raises(ValueError, match="unknown embedding backend"):
        resolve_backend("tf", "all-MiniLM-L6-v2")


def test_folder_pipeline_reads_minilm_and_refuses_other_pooling(tmp_path):
    pipeline = folder_pipeline(minilm_path())
    assert pipeline is not None and pipeline.max_length == 256 and pipeline.normalize and pipeline.dimension == 384
    other = tmp_path / "cls-model"
    other.mkdir()
    for item in minilm_path().iterdir():
        if item.name != "1_Pooling":
            (other / item.name).symlink_to(item)
    (other / "1_Pooling").mkdir()
    pooling = json.loads((minilm_path() / "1_Pooling" / "config.json").read_text(encoding="utf-8"))
    pooling.update(pooling_mode_mean_tokens=False, pooling_mode_cls_token=True)
    (other / "1_Pooling" / "config.json").write_text(json.dumps(pooling), encoding="utf-8")
    assert folder_pipeline(other) is None  # CLS pooling: through sentence-transformers' modules
    assert folder_pipeline(tmp_path) is None  # not a model folder


def test_mean_pool_and_normalise_on_a_hand_computed_fixture():
    tokens = np.array([[[1.0, 2.0], [3.0, 6.0], [100.0, 100.0]]], dtype=np.float32)
    mask = np.array([[1, 1, 0]])
    pooled = mean_pool(tokens, mask)  # (1+3)/2, (2+6)/2; the padded position is left out
    np.testing.assert_allclose(pooled, [[2.0, 4.0]], atol=1e-7)
    np.testing.assert_allclose(l2_normalise(pooled), [[2 / np.sqrt(20), 4 / np.sqrt(20)]], atol=1e-7)
    np.testing.assert_allclose(l2_normalise(np.zeros((1, 2), np.float32)), [[0.0, 0.0]])


def test_mean_pool_and_normalise_equal_torch():
    import torch
    import torch.nn.functional as F

    rng = np.random.default_rng(0)
    tokens = rng.normal(size=(3, 5, 4)).astype(np.float32)
    mask = np.array([[1, 1, 1, 1, 1], [1, 1, 0, 0, 0], [1, 0, 0, 0, 0]])
    t, m = torch.from_numpy(tokens), torch.from_numpy(mask).unsqueeze(-1).float()
    reference = (t * m).sum(1) / torch.clamp(m.sum(1), min=1e-9)
    np.testing.assert_allclose(mean_pool(tokens, mask), reference.numpy(), atol=1e-6)
    np.testing.assert_allclose(l2_normalise(mean_pool(tokens, mask)), F.normalize(reference, p=2, dim=1).numpy(),
                               atol=1e-6)


def test_the_onnx_path_tokenises_as_sentence_transformers_and_its_vectors_are_equal(tmp_path):
    texts = ["  The lantern sits 38 metres above sea level.  ", "Who designed it?", "\tcafé 灯塔\n",
             " ".join(["A long text the model truncates at its maximum sequence length."] * 50)]
    torch_path = DenseRetriever("minilm", cache_dir=tmp_path, num_threads=2, batch_size=2)
    onnx_path = DenseRetriever("minilm", cache_dir=tmp_path, num_threads=2, batch_size=2, backend="auto")
    encoder = onnx_path.onnx_encoder()
    assert isinstance(encoder, FolderEncoder)
    reference = torch_path.model[0]
    features = (reference.preprocess(texts) if hasattr(reference, "preprocess") else reference.tokenize(texts))
    mine = encoder.features(texts)
    for name in encoder.names:
        assert np.array_equal(features[name].numpy(), mine[name]), name
    a, b = torch_path.embed(texts), onnx_path.embed(texts)
    cosine = (a.astype(np.float64) * b).sum(axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
    assert np.all(1.0 - cosine <= EQUAL_COSINE_DISTANCE), float(np.max(1.0 - cosine))


CHILD = """
import json, sys
from chunklab_core.own import pipeline
result = pipeline.compute(sys.argv[1], sys.argv[2], sys.argv[3], resamples=200)
cells = sorted(set(zip(result.summary["strategy"], result.summary["retriever"])))
print(json.dumps({"torch": "torch" in sys.modules, "sentence_transformers": "sentence_transformers" in sys.modules,
                  "cells": cells}))
"""


@pytest.mark.heavy
def test_a_cold_own_documents_dense_cell_never_imports_torch(tmp_path):
    # the one-time export (which needs torch) is made here, in the test's process, beforehand
    DenseRetriever("minilm", cache=False, backend="auto").onnx_encoder()
    config = tmp_path / "own.yaml"
    config.write_text("strategies: [fixed_tokens_512_o64, {kind: semantic, floor: 0, max: 1000, unit: tokens}]\n"
                      f"retrievers: [dense, hybrid]\nmodels: [{minilm_path()}]\n",  # by its folder, as a user may
                      encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "CHUNKLAB_CACHE": str(tmp_path / "cold"),
           "CHUNKLAB_RUNS_DIR": str(tmp_path / "runs"), "CHUNKLAB_RUNS": "live", "CI": "1"}
    docs = ROOT / "examples" / "own_docs"
    done = subprocess.run([sys.executable, "-c", CHILD, str(docs), str(docs / "questions.yaml"), str(config)],
                          env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["cells"] == [["fixed_tokens_512_o64", "dense"], ["fixed_tokens_512_o64", "hybrid"],
                               ["semantic_tokens_floor0_max1000", "dense"], ["semantic_tokens_floor0_max1000", "hybrid"]]
    assert not report["torch"] and not report["sentence_transformers"]
    assert (tmp_path / "cold" / "embeddings").is_dir()  # it did embed, into the empty cache


@pytest.mark.slow
def test_mpnet_onnx_vectors_equal_pytorch():
    """all-mpnet-base-v2 is in ONNX_EQUAL because of this check (skipped where it is not assembled)."""
    from chunklab_core.retrieval.model_assembly import resolve_model

    try:
        resolve_model("mpnet")
    except FileNotFoundError as exc:
        pytest.skip(str(exc))
    texts = ["The lantern sits 38 metres above mean sea level.", "Who designed Harbour Point lighthouse?",
             "Überprüfung der Leuchtturmlampe — 1891 installiert.", "a",
             " ".join(["A long text that the model must truncate at its maximum sequence length."] * 60)]
    torch_path = DenseRetriever("mpnet", cache=False, num_threads=2, batch_size=2)
    onnx_path = DenseRetriever("mpnet", cache=False, num_threads=2, batch_size=2, backend="auto")
    assert isinstance(onnx_path.onnx_encoder(), FolderEncoder)
    a, b = torch_path.embed(texts), onnx_path.embed(texts)
    cosine = (a.astype(np.float64) * b).sum(axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
    assert np.all(1.0 - cosine <= EQUAL_COSINE_DISTANCE), float(np.max(1.0 - cosine))


def test_quantize_int8_is_an_option_of_the_onnx_path_only():
    from chunklab_core.data.loaders import ValidationError

    assert OwnConfig().quantize is None and OwnConfig().embedding_backend == "auto"
    config = parse_config({"quantize": "int8"})
    assert config.embedding_backend == "onnx-int8" and config.as_parameters()["BACKEND"] == "onnx-int8"
    assert parse_config({"quantize": "int8", "backend": "onnx"}).embedding_backend == "onnx-int8"
    with pytest.raises(ValidationError, match="quantize: int8 quantises the ONNX path; it needs backend auto or onnx"):
        parse_config({"quantize": "int8", "backend": "torch"})
    with pytest.raises(ValidationError, match="quantize must be int8"):
        parse_config({"quantize": "fp16"})


def _tiny_matmul_model(path: Path) -> None:
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    weights = numpy_helper.from_array(np.arange(12, dtype=np.float32).reshape(4, 3) / 7, name="W")
    graph = helper.make_graph([helper.make_node("MatMul", ["x", "W"], ["y"])], "tiny",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [None, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None, 3])], [weights])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))


def test_the_int8_file_is_built_once_beside_the_export_and_atomically(tmp_path):
    import onnx
    import onnxruntime as ort

    from chunklab_core.retrieval.onnx_embedding import quantized_path

    fp32 = tmp_path / "model.onnx"
    _tiny_matmul_model(fp32)
    built = quantized_path(fp32)
    assert built == tmp_path / "model.int8.onnx" and built.is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.int8.onnx", "model.onnx"]  # no temporary left
    ops = {node.op_type for node in onnx.load(str(built)).graph.node}
    assert "MatMulInteger" in ops or "DynamicQuantizeMatMul" in ops or "QLinearMatMul" in ops, ops
    stamp = built.stat().st_mtime_ns
    assert quantized_path(fp32) == built and built.stat().st_mtime_ns == stamp  # reused, not rebuilt
    x = np.array([[1.0, -2.0, 0.5, 3.0]], dtype=np.float32)
    expected = ort.InferenceSession(str(fp32)).run(None, {"x": x})[0]
    got = ort.InferenceSession(str(built)).run(None, {"x": x})[0]
    np.testing.assert_allclose(got, expected, rtol=0.05, atol=0.05)  # int8: close, not equal


def test_int8_vectors_are_close_to_fp32_and_keyed_apart(tmp_path):
    texts = ["The lantern sits 38 metres above mean sea level.", "Who designed Harbour Point lighthouse?",
             "The fog horn sounds one blast of three seconds every thirty seconds."]
    fp32 = DenseRetriever("minilm", cache=False, num_threads=2, backend="onnx")
    int8 = DenseRetriever("minilm", cache=False, num_threads=2, backend="onnx-int8")
    assert int8.identity != fp32.identity and int8.export_identity == fp32.export_identity
    assert int8.onnx_encoder().path.name == "model.int8.onnx"
    a, b = fp32.embed(texts).astype(np.float64), int8.embed(texts).astype(np.float64)
    cosine = (a * b).sum(axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
    assert np.all(1.0 - cosine < 0.05), cosine  # close; scripts/bench_int8.py measures how close
    assert not np.allclose(a, b, atol=1e-6)  # and not the fp32 vectors
