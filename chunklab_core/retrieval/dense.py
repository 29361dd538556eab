"""Dense retrieval: sentence-transformers embeddings, cosine similarity, exact top-k.

Handles: loading a local sentence-transformers model with the hub switched off
(``HF_HUB_OFFLINE=1``, ``TRANSFORMERS_OFFLINE=1``, ``local_files_only=True``; models come from
``retrieval.model_assembly.resolve_model``), the query/passage prefixes some models were trained with,
cached embeddings (``embedding_cache``), exact search over every fitted text, and counting the
texts the model truncates; a window variant ``<model>@<N>`` (``model_windows``) reads only the first
``N`` word pieces of a text, under its own label and cache key.

Scoring: cosine similarity, computed as the dot product of L2-normalised float32 vectors,
``score(q, d) = <e(q) / |e(q)|, e(d) / |e(d)|>`` (Reimers & Gurevych, "Sentence-BERT",
EMNLP 2019, sec. 3), one matrix product per block of queries. Top-k: ``retrieval.topk.top_k_rows``
(argpartition, then exact tie-break by lower text index), the same rule as every retriever.

Prefixes (``default_prefixes``): a model folder whose ``config_sentence_transformers.json``
declares prompts uses them ("query" for queries; "document", "passage" or "corpus" for
texts); otherwise a small table by model name: e5 models "query: " / "passage: " (Wang et al.
2022, model cards of intfloat/e5-*), English BGE v1/v1.5 "Represent this sentence for
searching relevant passages: " for queries only (BAAI/bge-*-en model cards); none for
all-MiniLM-L6-v2 and all-mpnet-base-v2. ``query_prefix``/``passage_prefix`` override them.

Determinism: inference needs no seed. ``torch.set_num_threads(num_threads)`` (default: every
core) is applied before each encode; it is a process-wide torch setting. A text's vector can
differ in the last float bits with the batch it is padded in; the cache stores the first
vector computed, so reruns read back identical numbers.

Scale-out (``processes``, ``device``): ``device="auto"`` encodes on the first CUDA GPU when
torch sees one, else on the CPU; ``processes`` > 1 encodes through sentence-transformers'
multi-process pool (``start_multi_process_pool``: one worker per process, each with
``num_threads // processes`` torch threads on the CPU, or one GPU each when there are enough),
started on the first encode and stopped by ``close()`` or at exit. Neither changes the cache
key (model identity, text, prefix): every way of encoding fills and reads the same cache, and
the vectors agree to float rounding (a text is padded with different neighbours in another
process's batch).

Backends (``backend=``): "torch" (default) encodes with the sentence-transformers model;
"onnx" runs its transformer through ONNX Runtime (``onnx_embedding``: exported locally from
the same weights, same tokenizer, pooling and normalisation; without importing torch when
``onnx_embedding.folder_pipeline`` reads the folder, torch only for the one-time export);
"onnx-int8" the same with the export's dynamic int8 quantisation; "auto" is "onnx" for the
models whose ONNX vectors were checked equal to PyTorch's (``onnx_embedding.ONNX_EQUAL``) and
"torch" for others. The backend is a field of the cache key (``embedding_cache.cache_key``
with ``extra={"backend": ...}`` and onnxruntime's version among the libraries), so vectors of
the paths are never mixed. ONNX exports live in ``onnx_embedding.model_cache_dir()`` (beside
the embedding cache when ``cache_dir`` is given).

Not handled: approximate nearest-neighbour indexes (search is exact and O(queries x texts)),
GPU-specific tuning (mixed precision, batch size search), late interaction / multi-vector models.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import re
import weakref
from pathlib import Path
from typing import Sequence

import numpy as np

from chunklab_core.core import paths
from chunklab_core.retrieval.topk import top_k_rows
from chunklab_core.retrieval.embedding_cache import DEFAULT_LIBRARIES, EmbeddingCache, cache_key, model_identity
from chunklab_core.retrieval.model_assembly import resolve_window
from chunklab_core.retrieval.model_windows import split_window, window_extra
from chunklab_core.retrieval.onnx_embedding import (FolderEncoder, OnnxEncoder, folder_pipeline, model_cache_dir,
                                                    resolve_backend)

# (pattern on the lower-cased model label, query prefix, passage prefix)
PREFIX_TABLE: tuple[tuple[str, str, str], ...] = (
    (r"(^|[-_/])e5([-_]|$)", "query: ", "passage: "),
    (r"(^|[-_/])bge-(small|base|large)-en", "Represent this sentence for searching relevant passages: ", ""),
)


def default_prefixes(label: str, folder: Path) -> tuple[str, str]:
    """``(query_prefix, passage_prefix)`` for a model (see the module docstring)."""
    config = Path(folder) / "config_sentence_transformers.json"
    if config.is_file():
        prompts = json.loads(config.read_text(encoding="utf-8")).get("prompts") or {}
        passage = next((prompts[k] for k in ("document", "passage", "corpus") if k in prompts), None)
        if "query" in prompts or passage is not None:
            return prompts.get("query", ""), passage or ""
    for pattern, query, passage in PREFIX_TABLE:
        if re.search(pattern, label.lower()):
            return query, passage
    return "", ""


@functools.lru_cache(maxsize=4)
def load_sentence_transformer(folder: str, device: str = "cpu", window: int | None = None):
    """A ``SentenceTransformer`` from a local folder, never touching the network (cached per process);
    ``window``: a window variant's shorter ``max_seq_length`` (``model_windows``; its own object)."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(folder, device=device, local_files_only=True)
    if window is not None:
        model.max_seq_length = int(window)
    return model


@functools.lru_cache(maxsize=8)
def model_tokenizer(model: str):
    """``(tokenizer, max_seq_length)`` of a local sentence-transformers model, read from its files
    (``tokenizer.json`` and ``sentence_bert_config.json``) without loading its weights: what a
    replay needs to say where the model cuts a text, with no embedding model run."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    from transformers import AutoTokenizer

    _, folder, window = resolve_window(model)
    config = json.loads((Path(folder) / "sentence_bert_config.json").read_text(encoding="utf-8"))
    return AutoTokenizer.from_pretrained(str(folder), local_files_only=True), int(window or config["max_seq_length"])


@functools.lru_cache(maxsize=8)
def fast_tokenizer(folder: str):
    """The folder's ``tokenizer.json`` through the ``tokenizers`` library, untruncated and
    unpadded (``None`` when the folder has none, or no ``sentence_bert_config.json`` limit):
    counting tokens for ``truncated_mask`` this way needs neither torch nor the model."""
    path, config = Path(folder) / "tokenizer.json", Path(folder) / "sentence_bert_config.json"
    if not path.is_file() or not config.is_file():
        return None
    limit = json.loads(config.read_text(encoding="utf-8")).get("max_seq_length")
    if not isinstance(limit, int):
        return None
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(path))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return tokenizer, limit


def window_tokenizer(model: str):
    """(tokenizer, max_seq_length, folder) of ``model``'s own ``tokenizer.json``
    (:func:`fast_tokenizer` of its resolved folder; a window variant's shorter window,
    ``model_windows``); a ValueError when it has none."""
    _, folder, window = resolve_window(model)
    found = fast_tokenizer(str(folder))
    if found is None:
        raise ValueError(f"{model}: no tokenizer.json with a max_seq_length to count its window by")
    return found[0], window or found[1], folder


def word_pieces(texts: Sequence[str], model: str) -> np.ndarray:
    """Word pieces of each text under ``model``'s own tokenizer, special tokens included (as
    sentence-transformers counts them when it truncates), unprefixed."""
    return piece_counts(window_tokenizer(model)[0], texts)


_MASKS: dict[tuple, np.ndarray] = {}  # the last truncation masks, by model folder, prefix, limit and texts


def _texts_digest(texts: Sequence[str]) -> bytes:
    """sha256 of the texts in order (each length-prefixed, so no two lists share one)."""
    import hashlib

    digest = hashlib.sha256()
    for text in texts:
        data = text.encode("utf-8", "surrogatepass")
        digest.update(len(data).to_bytes(8, "little"))
        digest.update(data)
    return digest.digest()


def piece_counts(tokenizer, texts: Sequence[str]) -> np.ndarray:
    """Word pieces of each text under a ``tokenizers`` tokenizer (:func:`fast_tokenizer`), special
    tokens included."""
    if not len(texts):
        return np.zeros(0, dtype=np.int64)
    return np.array([len(e.ids) for e in tokenizer.encode_batch(list(texts), add_special_tokens=True)], dtype=np.int64)


def resolve_device(device: str) -> str:
    """``device``, with ``"auto"`` read as ``"cuda"`` when torch sees a GPU, else ``"cpu"``."""
    if device != "auto":
        return device
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def pool_devices(device: str, processes: int) -> list[str]:
    """Target devices of a ``processes``-worker pool: ``["cpu"] * n`` on the CPU; on CUDA one
    worker per GPU in turn (``cuda:0``, ``cuda:1``, ...), wrapping round when there are fewer."""
    if device.startswith("cuda") and ":" not in device:
        import torch

        count = max(1, torch.cuda.device_count())
        return [f"cuda:{i % count}" for i in range(processes)]
    return [device] * processes


def _stop_pool(model, pool: dict) -> None:
    model.stop_multi_process_pool(pool)


def _check_texts(texts: Sequence[str], what: str) -> None:
    if isinstance(texts, str):
        raise TypeError(f"{what} must be a sequence of strings, not one string; wrap it: [{what}]")


class DenseRetriever:
    """Exact dense retrieval over the fitted texts with one embedding model.

    ``model``: alias ("all-MiniLM-L6-v2"/"minilm", "all-mpnet-base-v2"/"mpnet") or a local
    folder, or a window variant of one (``"all-mpnet-base-v2@256"``: its first 256 word pieces only,
    ``model_windows``; its own label, cache folder and truncation mask). ``cache``: keep embeddings on disk under ``cache_dir`` (default
    ``paths.CACHE_DIR / "embeddings"``); ``False`` keeps them in memory for this object only.
    The model itself is loaded lazily, only when some text is not in the cache.
    """

    def __init__(self, model: str | os.PathLike = "all-MiniLM-L6-v2", batch_size: int = 64, cache: bool = True, *,
                 cache_dir: str | os.PathLike | None = None, num_threads: int | None = None,
                 query_prefix: str | None = None, passage_prefix: str | None = None, device: str = "cpu",
                 query_block: int = 1024, flush_rows: int = 2048, show_progress: bool = False,
                 processes: int = 1, backend: str = "torch") -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        if num_threads is not None and num_threads < 1:
            raise ValueError(f"num_threads must be >= 1 or None (all cores), got {num_threads}")
        if query_block < 1:
            raise ValueError(f"query_block must be >= 1, got {query_block}")
        if isinstance(processes, bool) or not isinstance(processes, int) or processes < 1:
            raise ValueError(f"processes must be an integer >= 1, got {processes!r}")
        self.label, self.model_folder, self.window = resolve_window(model)  # window: a variant's shorter one
        self.backend = backend = resolve_backend(backend, self.label, self.model_folder)
        if self.backend != "torch" and processes > 1:
            raise ValueError(f"processes > 1 needs the torch backend (sentence-transformers' pool), "
                             f"got backend={backend!r} with processes={processes}")
        root = (Path(cache_dir) if cache_dir is not None else paths.CACHE_DIR / "embeddings") if cache else None
        if backend == "torch":
            self.identity = model_identity(self.label, self.model_folder, root, self.window)
        else:  # the backend is a field of the key, with the runtime's version among the libraries
            memo = Path(root) / "file-sha256.json" if root is not None else None
            self.identity = cache_key(f"{self.label}-{backend}", self.model_folder, memo=memo,
                                      libraries=(*DEFAULT_LIBRARIES, "onnxruntime"),
                                      extra={"backend": backend, **window_extra(self.window)})
            # the fp32 export: keyed by the files and libraries alone (not the label, so a model
            # named by its folder path shares the alias's export), whichever backend reads it
            self.export_identity = cache_key("onnx", self.model_folder, memo=memo,
                                             libraries=(*DEFAULT_LIBRARIES, "onnxruntime"), extra={"backend": "onnx"})
        self.onnx_dir = Path(cache_dir) / "onnx" if cache_dir is not None else model_cache_dir()
        auto_query, auto_passage = default_prefixes(split_window(self.label)[0], self.model_folder)
        self.query_prefix = auto_query if query_prefix is None else query_prefix
        self.passage_prefix = auto_passage if passage_prefix is None else passage_prefix
        self.batch_size, self.device, self.query_block = batch_size, resolve_device(device), query_block
        self.num_threads = num_threads or os.cpu_count() or 1
        self.processes = processes
        self._pool: dict | None = None
        self._pool_finalizer = None
        self.show_progress = show_progress
        self.cache = EmbeddingCache(root, self.identity, flush_rows=flush_rows)
        self._passages: np.ndarray | None = None
        self._onnx = None

    # ---- model -------------------------------------------------------------------------
    @property
    def model(self):
        """The loaded ``SentenceTransformer`` (loaded on first use; without ``show_progress``,
        transformers' own progress bars are switched off first)."""
        if not self.show_progress:
            from transformers.utils import logging as transformers_logging

            transformers_logging.disable_progress_bar()
        return load_sentence_transformer(str(self.model_folder), self.device, self.window)

    @property
    def max_seq_length(self) -> int:
        """Longest input, in tokens including special tokens, the model reads; the rest is cut."""
        return int(self.model.max_seq_length)

    @property
    def encoded_count(self) -> int:
        """Distinct texts this retriever has run through the model."""
        return self.cache.encoded_count

    @property
    def cache_hits(self) -> int:
        """Distinct texts this retriever found already embedded in the cache."""
        return self.cache.cache_hits

    def pool(self) -> dict:
        """The multi-process pool (``processes`` workers), started on first use.

        Workers are spawned with ``OMP_NUM_THREADS``/``MKL_NUM_THREADS`` set to their share of
        ``num_threads``, so that the processes together do not oversubscribe the cores.
        """
        if self._pool is None:
            share = str(max(1, self.num_threads // self.processes))
            saved = {k: os.environ.get(k) for k in ("OMP_NUM_THREADS", "MKL_NUM_THREADS")}
            os.environ.update({k: share for k in saved})
            try:
                self._pool = self.model.start_multi_process_pool(pool_devices(self.device, self.processes))
            finally:
                for name, value in saved.items():
                    if value is None:
                        os.environ.pop(name, None)
                    else:
                        os.environ[name] = value
            self._pool_finalizer = weakref.finalize(self, _stop_pool, self.model, self._pool)
        return self._pool

    def close(self) -> None:
        """Stop the multi-process pool, if one was started (also done at exit)."""
        if self._pool_finalizer is not None:
            self._pool_finalizer()
        self._pool, self._pool_finalizer = None, None

    def onnx_encoder(self):
        """The ONNX encoder (built on first use): torch-free (``FolderEncoder``) when the folder
        allows it, else through the sentence-transformers model (``OnnxEncoder``, fp32 only)."""
        if self._onnx is None:
            pipeline = folder_pipeline(self.model_folder)
            if pipeline is not None and self.window is not None:  # a window variant: its shorter window
                pipeline = dataclasses.replace(pipeline, max_length=self.window)
            quantize = "int8" if self.backend == "onnx-int8" else None
            if pipeline is not None:
                self._onnx = FolderEncoder(pipeline, self.export_identity, self.num_threads, self.onnx_dir,
                                           export=lambda: self.model, quantize=quantize)
            elif quantize:
                raise ValueError(f"{self.label}: int8 needs a folder of Transformer, mean Pooling, Normalize")
            else:
                self._onnx = OnnxEncoder(self.model, self.export_identity, self.num_threads, cache_dir=self.onnx_dir)
        return self._onnx

    def _encode(self, texts: list[str]) -> np.ndarray:
        if self.backend != "torch":
            return self.onnx_encoder().encode(texts, self.batch_size, self.show_progress)
        import torch

        torch.set_num_threads(self.num_threads)
        extra = {"pool": self.pool()} if self.processes > 1 else {}
        vectors = self.model.encode(texts, batch_size=self.batch_size, convert_to_numpy=True,
                                    normalize_embeddings=True, show_progress_bar=self.show_progress,
                                    **extra)
        return np.asarray(vectors, dtype=np.float32)

    # ---- embeddings --------------------------------------------------------------------
    def embed(self, texts: Sequence[str], prefix: str | None = None) -> np.ndarray:
        """Unit-norm float32 rows, one per text, shape ``(len(texts), dim)``; cached.

        ``prefix=None`` uses the passage prefix; pass ``""`` for none or any other string.
        """
        _check_texts(texts, "texts")
        prefix = self.passage_prefix if prefix is None else prefix
        vectors = self.cache.get_or_compute(list(texts), self._encode, prefix=prefix)
        if len(texts) == 0:
            encoder = self.onnx_encoder() if self.backend != "torch" else None
            dimension = (encoder.dimension if isinstance(encoder, FolderEncoder)
                         else self.model.get_sentence_embedding_dimension())
            return np.zeros((0, dimension), dtype=np.float32)
        norms = np.linalg.norm(vectors.astype(np.float64), axis=1, keepdims=True)
        if (norms == 0).any():
            raise ValueError("the model returned a zero vector; cosine similarity is undefined for it")
        return (vectors / norms).astype(np.float32)

    def truncated_mask(self, texts: Sequence[str], prefix: str | None = None) -> np.ndarray:
        """True for each text longer than ``max_seq_length`` tokens once prefixed.

        Counted with the model's own tokenizer, special tokens included, as sentence-transformers
        counts them when it truncates (``prefix=None``: the passage prefix).
        """
        _check_texts(texts, "texts")
        prefix = self.passage_prefix if prefix is None else prefix
        if len(texts) == 0:
            return np.zeros(0, dtype=bool)
        fast = fast_tokenizer(str(self.model_folder))
        if fast is not None:  # the same tokenizer.json the model's fast tokenizer reads, without loading torch
            tokenizer, limit = fast
            limit = self.window or limit  # a window variant cuts at its shorter window
            key = (str(self.model_folder), prefix, limit, _texts_digest(texts))
            mask = _MASKS.get(key)
            if mask is None:  # a hybrid cell asks again for the chunks its dense cell counted
                mask = piece_counts(tokenizer, [prefix + t for t in texts]) > limit
                mask.setflags(write=False)
                if len(_MASKS) >= 16:
                    del _MASKS[next(iter(_MASKS))]
                _MASKS[key] = mask
            return mask.copy()
        encoded = self.model.tokenizer([prefix + t for t in texts], add_special_tokens=True, truncation=False,
                                       verbose=False)["input_ids"]
        return np.fromiter((len(ids) > self.max_seq_length for ids in encoded), dtype=bool, count=len(texts))

    # ---- retriever interface -----------------------------------------------------------
    def fit(self, texts: Sequence[str]) -> "DenseRetriever":
        """Embed (or read from the cache) every text; searches rank their indices."""
        _check_texts(texts, "texts")
        if len(texts) == 0:
            raise ValueError("fit needs at least one text")
        self._passages = self.embed(texts)
        return self

    @property
    def n_docs(self) -> int:
        return 0 if self._passages is None else self._passages.shape[0]

    def search(self, queries: Sequence[str], k: int) -> tuple[np.ndarray, np.ndarray]:
        """Top ``min(k, n)`` text indices and cosine scores per query, best first.

        Returns ``(ids int64, scores float64)``, each ``(len(queries), min(k, n))``; ties break
        by lower index.
        """
        _check_texts(queries, "queries")
        if not isinstance(k, (int, np.integer)) or isinstance(k, bool) or k < 1:
            raise ValueError(f"k must be an integer >= 1, got {k!r}")
        if self._passages is None:
            raise ValueError("call fit(texts) before search")
        width = min(int(k), self.n_docs)
        ids = np.empty((len(queries), width), dtype=np.int64)
        scores = np.empty((len(queries), width), dtype=np.float64)
        if len(queries) == 0:
            return ids, scores
        query_vectors = self.embed(queries, prefix=self.query_prefix)
        for start in range(0, len(queries), self.query_block):
            block = query_vectors[start:start + self.query_block] @ self._passages.T
            block_ids, block_scores = top_k_rows(block, width)
            ids[start:start + len(block)] = block_ids
            scores[start:start + len(block)] = block_scores
        return ids, scores
