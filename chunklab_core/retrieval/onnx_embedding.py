"""Sentence embeddings through ONNX Runtime: the transformer exported locally from the shipped weights.

Handles: exporting the transformer module of a local sentence-transformers model (the first
module; BERT-like encoders such as all-MiniLM-L6-v2 and all-mpnet-base-v2) to ONNX with
``torch.onnx.export`` (the TorchScript exporter, eager attention, fp32, dynamic batch and
sequence axes),
stored once under ``onnx/<model identity>/model.onnx`` beside the embedding cache (``paths.CACHE_DIR / "onnx"`` without one) (written to a
temporary file and renamed, so a killed export never leaves a half file), and encoding texts
with an ``onnxruntime.InferenceSession``. Tokenisation, truncation at ``max_seq_length`` and
every module after the transformer (pooling, normalisation) are the sentence-transformers
model's own, applied to the ONNX token embeddings, so the two paths differ only in how the
transformer's matrix products are executed (see ``tests/test_onnx_embedding.py``: every vector
within 1e-5 cosine distance of the PyTorch one).

Why not ``SentenceTransformer(..., backend="onnx")``: that path needs ``optimum-onnx``, whose
current release pins ``transformers<4.58`` and would downgrade the project's transformers and
sentence-transformers; this module needs only ``onnxruntime`` and ``onnx``.

Batches: texts are sorted by length (longest first) and encoded ``batch_size`` at a time, as
sentence-transformers does, so padding stays small; output rows follow the input order.

Not handled: fp16/int8 quantisation, GPU execution providers, models whose first module is
not a Hugging Face transformer, models needing inputs other than input_ids, attention_mask
and token_type_ids.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence

import numpy as np

from chunklab_core.core import paths
from chunklab_core.core.atomic_files import atomic_write

BACKENDS = ("torch", "onnx")
OPSET = 17


def check_backend(backend: str) -> str:
    """``backend`` if it is one of :data:`BACKENDS`, else ``ValueError`` naming them."""
    if backend not in BACKENDS:
        raise ValueError(f"unknown embedding backend {backend!r}; known: {', '.join(BACKENDS)}")
    return backend


def onnx_path(identity: str, cache_dir: str | os.PathLike | None = None) -> Path:
    """Where the exported transformer of the model ``identity`` is stored."""
    root = Path(cache_dir) if cache_dir is not None else paths.CACHE_DIR / "onnx"
    return root / identity / "model.onnx"


def _input_names(transformer) -> list[str]:
    names = ["input_ids", "attention_mask"]
    if "token_type_ids" in transformer.tokenizer.model_input_names:
        names.append("token_type_ids")
    return names


def export_transformer(st_model, target: Path) -> Path:
    """Export the first module of ``st_model`` to ``target`` (ONNX, fp32); return ``target``."""
    import torch

    transformer = st_model[0]
    hf_model = transformer.auto_model.eval()
    names = _input_names(transformer)
    sample = transformer.tokenizer(["an example sentence to trace", "another"], padding=True, return_tensors="pt")
    args = tuple(sample[n] for n in names)

    class _Wrapped(torch.nn.Module):
        def __init__(self, model):
            super().__init__()
            self.model = model

        def forward(self, *inputs):
            return self.model(**dict(zip(names, inputs)), return_dict=True).last_hidden_state

    axes = {n: {0: "batch", 1: "sequence"} for n in names}
    axes["token_embeddings"] = {0: "batch", 1: "sequence"}

    def write(tmp: Path) -> None:
        # Eager attention traces to plain MatMul/Softmax, which ONNX Runtime fuses; the model is
        # shared (cached per process), so its attention implementation is restored afterwards.
        previous = getattr(hf_model.config, "_attn_implementation", None)
        if previous is not None and hasattr(hf_model, "set_attn_implementation"):
            hf_model.set_attn_implementation("eager")
        try:
            with torch.no_grad():
                torch.onnx.export(_Wrapped(hf_model), args, str(tmp), input_names=names,
                                  output_names=["token_embeddings"], dynamic_axes=axes, opset_version=OPSET,
                                  do_constant_folding=True, dynamo=False)
        finally:
            if previous is not None and hasattr(hf_model, "set_attn_implementation"):
                hf_model.set_attn_implementation(previous)

    target.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(target, write, suffix=".onnx.tmp")
    return target


class OnnxEncoder:
    """Encode texts with an ONNX export of ``st_model``'s transformer (exported on first use)."""

    def __init__(self, st_model, identity: str, num_threads: int | None = None,
                 cache_dir: str | os.PathLike | None = None) -> None:
        import onnxruntime as ort

        self.st_model = st_model
        self.path = onnx_path(identity, cache_dir)
        if not self.path.is_file():
            export_transformer(st_model, self.path)
        options = ort.SessionOptions()
        options.intra_op_num_threads = num_threads or os.cpu_count() or 1
        options.inter_op_num_threads = 1
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        # No busy-waiting between operators: on a shared machine spinning threads steal the cores.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self.session = ort.InferenceSession(str(self.path), options, providers=["CPUExecutionProvider"])
        self.names = [i.name for i in self.session.get_inputs()]

    def encode(self, texts: Sequence[str], batch_size: int = 64, progress: bool = False) -> np.ndarray:
        """Float32 rows, one per text, in input order (normalised if the model normalises)."""
        import torch
        from tqdm import tqdm

        transformer = self.st_model[0]
        later_modules = list(self.st_model)[1:]
        order = np.argsort([-len(t) for t in texts], kind="stable")
        # Pooling is tiny; one torch thread keeps torch's pool from competing with ONNX Runtime's.
        torch_threads = torch.get_num_threads()
        torch.set_num_threads(1)
        rows: list[np.ndarray] = [None] * len(texts)  # type: ignore[list-item]
        try:
            for start in tqdm(range(0, len(texts), batch_size), desc="ONNX batches", unit="batch",
                              disable=not progress):
                index = order[start:start + batch_size]
                batch = [texts[i] for i in index]
                features = (transformer.preprocess(batch) if hasattr(transformer, "preprocess")
                            else transformer.tokenize(batch))
                feeds = {n: features[n].numpy().astype(np.int64) for n in self.names}
                (tokens,) = self.session.run(["token_embeddings"], feeds)
                pooled = {"token_embeddings": torch.from_numpy(tokens), "attention_mask": features["attention_mask"]}
                with torch.no_grad():
                    for module in later_modules:
                        pooled = module(pooled)
                vectors = pooled["sentence_embedding"].numpy().astype(np.float32)
                for row, i in zip(vectors, index):
                    rows[i] = row
        finally:
            torch.set_num_threads(torch_threads)
        if not rows:
            dimension = getattr(self.st_model, "get_embedding_dimension", None) or \
                self.st_model.get_sentence_embedding_dimension
            return np.zeros((0, dimension()), dtype=np.float32)
        return np.stack(rows)
