"""Small text utilities shared by chunking, metrics and answer grading.

Handles: the Unicode/case/whitespace normalisation used for gold containment (NFC first, so a
document written in decomposed form, NFD -- "e" + U+0301 -- matches gold typed composed, "é",
and the reverse). Sentence boundaries
live in ``sentence_split`` (the one sentence rule, every script); ``sentence_spans`` is
re-exported here for the callers that import it from this module. Not handled: fuzzy
matching and number guards (``textmatch``), retrieval tokenisation (``bm25``).
"""

from __future__ import annotations

import re
import unicodedata

from chunklab_core.core.sentence_split import sentence_spans

__all__ = ["normalize", "sentence_spans"]

_WS = re.compile(r"\s+")


def normalize(text: str) -> str:
    """Unicode NFC (canonical composition, UAX #15), then lower-case and collapse every run of
    whitespace to one space, stripped."""
    if not unicodedata.is_normalized("NFC", text):
        text = unicodedata.normalize("NFC", text)
    return _WS.sub(" ", text).strip().lower()
