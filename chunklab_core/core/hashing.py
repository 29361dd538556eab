"""The sha256 of a file, read in blocks: the one hashing loop of the package.

Used by the irreplaceable-folder snapshot (``core.snapshot``), the model assemblies
(``retrieval.model_assembly``, ``llm.models``, which add a sidecar cache) and the embedding
cache's key (``retrieval.embedding_cache``, which adds a memo file). Not handled: caching a
hash (each caller keeps its own cache, keyed as it needs).
"""

from __future__ import annotations

import hashlib
import os


def file_sha256(path: str | os.PathLike, block_size: int = 1 << 20) -> str:
    """sha256 hex digest of the file's bytes, read ``block_size`` bytes at a time."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(block_size), b""):
            digest.update(block)
    return digest.hexdigest()


def texts_sha256(texts: Sequence[str]) -> str:
    """sha256 over the texts in order, each UTF-8 encoded and followed by a NUL byte."""
    digest = hashlib.sha256()
    for text in texts:
        digest.update(text.encode("utf-8"))
        digest.update(b"\x00")
    return digest.hexdigest()
