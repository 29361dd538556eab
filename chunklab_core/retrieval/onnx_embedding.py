"""Sentence embeddings through ONNX Runtime: the transformer exported locally from the shipped weights.

Handles: exporting the transformer module of a local sentence-transformers model (the first
module; BERT-like encoders such as all-MiniLM-L6-v2 and all-mpnet-base-v2) to ONNX with
``torch.onnx.export`` (the TorchScript exporter, eager attention, fp32, dynamic batch and
sequence axes),
stored once under ``<model identity>/model.onnx`` in :func:`model_cache_dir` (or a given folder) (written to a
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

Without torch (:class:`FolderEncoder`, what ``DenseRetriever`` uses when the folder allows it,
:func:`folder_pipeline`): a folder whose modules are exactly Transformer, mean Pooling and
optionally Normalize, with a ``tokenizer.json``, is encoded with the ``tokenizers`` library
(truncation at ``max_seq_length``, padding to the batch's longest, special tokens added; texts
stripped of surrounding whitespace as sentence-transformers strips them), ONNX Runtime, and
numpy for the pooling (``sum(mask * tokens) / max(sum(mask), 1e-9)``, as sentence-transformers'
``Pooling``) and the normalisation (``v / max(|v|, 1e-12)``, ``torch.nn.functional.normalize``).
Only the one-time export imports torch. The export lives in the user's cache folder
(:func:`model_cache_dir`: ``CHUNKLAB_MODEL_CACHE``, else ``platformdirs.user_cache_dir("chunklab")``
/ ``onnx``), so an empty embedding cache does not mean a new export.

int8 (:func:`quantized_path`): ``onnxruntime.quantization.quantize_dynamic`` (int8 weights per
channel, MatMul only, activations quantised per batch at run time) of the local fp32 export, written beside it as
``model.int8.onnx`` through a temporary file and a rename; nothing is downloaded.

Equal to the PyTorch path (:data:`ONNX_EQUAL`): the models whose ONNX vectors were checked
against the PyTorch ones (``tests/test_onnx_embedding.py``, ``scripts/bench_onnx.py``) within
:data:`EQUAL_COSINE_DISTANCE`; ``backend="auto"`` (:func:`resolve_backend`) takes ONNX for those
and PyTorch for every other model.

Not handled: fp16 quantisation, static int8 (calibrated), GPU execution providers, models whose
first module is not a Hugging Face transformer, models needing inputs other than input_ids,
attention_mask and token_type_ids.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from chunklab_core.core.atomic_files import atomic_write

BACKENDS = ("torch", "onnx", "onnx-int8")
AUTO = "auto"
OPSET = 17
MODEL_CACHE_ENV = "CHUNKLAB_MODEL_CACHE"
EQUAL_COSINE_DISTANCE = 1e-5  # largest cosine distance to the PyTorch vector still called equal
ONNX_EQUAL = ("all-MiniLM-L6-v2", "all-mpnet-base-v2")  # labels checked within that distance


def check_backend(backend: str) -> str:
    """``backend`` if it is one of :data:`BACKENDS`, else ``ValueError`` naming them."""
    if backend not in BACKENDS:
        raise ValueError(f"unknown embedding backend {backend!r}; known: {', '.join(BACKENDS)} (or auto)")
    return backend


def resolve_backend(backend: str, label: str, folder: str | os.PathLike | None = None) -> str:
    """``backend``, with ``"auto"`` read as ``"onnx"`` for a model in :data:`ONNX_EQUAL` (by
    label, or by its folder being the shipped MiniLM's or the assembled mpnet's) and
    ``"torch"`` for any other (checked as :func:`check_backend`)."""
    if backend != AUTO:
        return check_backend(backend)
    if label in ONNX_EQUAL:
        return "onnx"
    from chunklab_core.retrieval.model_assembly import shipped_label

    return "onnx" if folder is not None and shipped_label(folder) in ONNX_EQUAL else "torch"


def model_cache_dir() -> Path:
    """Where ONNX exports are kept: ``$CHUNKLAB_MODEL_CACHE``, else the user's cache folder
    (``platformdirs.user_cache_dir("chunklab")``) / ``onnx`` -- never a tracked path."""
    if os.environ.get(MODEL_CACHE_ENV):
        return Path(os.environ[MODEL_CACHE_ENV]).expanduser()
    import platformdirs

    return Path(platformdirs.user_cache_dir("chunklab")) / "onnx"


def onnx_path(identity: str, cache_dir: str | os.PathLike | None = None) -> Path:
    """Where the exported transformer of the model ``identity`` is stored."""
    root = Path(cache_dir) if cache_dir is not None else model_cache_dir()
    return root / identity / "model.onnx"


def quantized_path(fp32: Path) -> Path:
    """The int8 dynamic quantisation of the export ``fp32`` (built beside it on first use).

    ``onnxruntime.quantization.quantize_dynamic`` with int8 weights (``QuantType.QInt8``), one
    scale per output channel, MatMul only (the embedding tables stay fp32: with per-tensor
    scales over every operator the median cosine distance to the fp32 vectors was about ten
    times larger on a SQuAD sample, see ``scripts/bench_int8.py``), written to a temporary file
    and renamed, so a killed run leaves no half file.
    """
    fp32 = Path(fp32)
    target = fp32.with_name("model.int8.onnx")
    if target.is_file():
        return target
    from onnxruntime.quantization import QuantType, quantize_dynamic

    atomic_write(target, lambda tmp: quantize_dynamic(str(fp32), str(tmp), weight_type=QuantType.QInt8,
                                                      per_channel=True, op_types_to_quantize=["MatMul"]),
                 suffix=".onnx.tmp")
    return target


def _session(path: Path, num_threads: int | None):
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = num_threads or os.cpu_count() or 1
    options.inter_op_num_threads = 1
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    # No busy-waiting between operators: on a shared machine spinning threads steal the cores.
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


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
        self.st_model = st_model
        self.path = onnx_path(identity, cache_dir)
        if not self.path.is_file():
            export_transformer(st_model, self.path)
        self.session = _session(self.path, num_threads)
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


_MODULE_TYPES = ("Transformer", "Pooling", "Normalize")


@dataclass(frozen=True)
class FolderPipeline:
    """What :class:`FolderEncoder` reads from a model folder (see :func:`folder_pipeline`)."""

    folder: Path
    max_length: int
    normalize: bool
    dimension: int


def folder_pipeline(folder: str | os.PathLike) -> FolderPipeline | None:
    """The folder's encoding recipe when it can be run without torch, else ``None``: modules
    exactly Transformer, Pooling (mean tokens only), optionally Normalize; ``tokenizer.json``;
    an integer ``max_seq_length`` and no ``do_lower_case`` in ``sentence_bert_config.json``."""
    folder = Path(folder)
    try:
        modules = json.loads((folder / "modules.json").read_text(encoding="utf-8"))
        bert = json.loads((folder / "sentence_bert_config.json").read_text(encoding="utf-8"))
        kinds = [str(m["type"]).rsplit(".", 1)[-1] for m in modules]
        pooling_dir = next(m["path"] for m in modules if str(m["type"]).endswith(".Pooling"))
        pooling = json.loads((folder / pooling_dir / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError, KeyError, TypeError, StopIteration):
        return None
    if kinds not in (list(_MODULE_TYPES[:2]), list(_MODULE_TYPES)) or not (folder / "tokenizer.json").is_file():
        return None
    modes = {k: v for k, v in pooling.items() if k.startswith("pooling_mode_")}
    if modes.get("pooling_mode_mean_tokens") is not True or any(v for k, v in modes.items()
                                                                   if k != "pooling_mode_mean_tokens"):
        return None
    if pooling.get("include_prompt", True) is not True:
        return None
    limit = bert.get("max_seq_length")
    if not isinstance(limit, int) or isinstance(limit, bool) or bert.get("do_lower_case"):
        return None
    return FolderPipeline(folder, limit, kinds[-1] == "Normalize", int(pooling["word_embedding_dimension"]))


def mean_pool(tokens: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Mean of the token embeddings over the attended positions,
    ``sum_t(mask_t * x_t) / max(sum_t mask_t, 1e-9)`` (sentence-transformers' ``Pooling``, mean mode)."""
    weights = mask.astype(np.float32)[:, :, None]
    return (tokens * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), np.float32(1e-9))


def l2_normalise(vectors: np.ndarray) -> np.ndarray:
    """``v / max(|v|_2, 1e-12)`` per row (``torch.nn.functional.normalize``, sentence-transformers' ``Normalize``)."""
    norms = np.sqrt((vectors * vectors).sum(axis=1, keepdims=True))
    return vectors / np.maximum(norms, np.float32(1e-12))


class FolderEncoder:
    """Encode texts with the ONNX export of a model folder without importing torch.

    ``export``: a zero-argument callable returning the sentence-transformers model, called only
    when the export is missing (that one time torch is imported). ``quantize="int8"`` runs
    the dynamic int8 quantisation of the export (:func:`quantized_path`).
    """

    def __init__(self, pipeline: FolderPipeline, identity: str, num_threads: int | None = None,
                 cache_dir: str | os.PathLike | None = None, *, export=None, quantize: str | None = None) -> None:
        from tokenizers import Tokenizer

        if quantize not in (None, "int8"):
            raise ValueError(f"quantize must be None or 'int8', got {quantize!r}")
        self.pipeline = pipeline
        self.fp32_path = onnx_path(identity, cache_dir)
        if not self.fp32_path.is_file():
            if export is None:
                raise FileNotFoundError(f"no ONNX export at {self.fp32_path} and no model to export it from")
            export_transformer(export(), self.fp32_path)
        self.path = quantized_path(self.fp32_path) if quantize == "int8" else self.fp32_path
        self.session = _session(self.path, num_threads)
        self.names = [i.name for i in self.session.get_inputs()]
        self.tokenizer = Tokenizer.from_file(str(pipeline.folder / "tokenizer.json"))
        self.tokenizer.enable_truncation(pipeline.max_length, strategy="longest_first")
        padding = self.tokenizer.padding or {}
        self.tokenizer.enable_padding(pad_id=padding.get("pad_id", 0), pad_token=padding.get("pad_token", "[PAD]"),
                                      pad_type_id=padding.get("pad_type_id", 0))

    @property
    def dimension(self) -> int:
        return self.pipeline.dimension

    def features(self, batch: Sequence[str]) -> dict[str, np.ndarray]:
        """input_ids, attention_mask, token_type_ids (int64, padded to the batch's longest)."""
        encoded = self.tokenizer.encode_batch([t.strip() for t in batch], add_special_tokens=True)
        return {"input_ids": np.array([e.ids for e in encoded], dtype=np.int64),
                "attention_mask": np.array([e.attention_mask for e in encoded], dtype=np.int64),
                "token_type_ids": np.array([e.type_ids for e in encoded], dtype=np.int64)}

    def encode(self, texts: Sequence[str], batch_size: int = 64, progress: bool = False) -> np.ndarray:
        """Float32 rows, one per text, in input order (normalised if the model normalises)."""
        from tqdm import tqdm

        if not len(texts):
            return np.zeros((0, self.dimension), dtype=np.float32)
        order = np.argsort([-len(t) for t in texts], kind="stable")
        out = np.empty((len(texts), self.dimension), dtype=np.float32)
        for start in tqdm(range(0, len(texts), batch_size), desc="ONNX batches", unit="batch", disable=not progress):
            index = order[start:start + batch_size]
            features = self.features([texts[i] for i in index])
            (tokens,) = self.session.run(["token_embeddings"], {n: features[n] for n in self.names})
            vectors = mean_pool(tokens.astype(np.float32), features["attention_mask"])
            out[index] = l2_normalise(vectors) if self.pipeline.normalize else vectors
        return out
