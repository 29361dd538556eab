"""A strategy a user adds by dropping this one file into ``chunklab_core/chunking/strategies/``: whole
sentences (``core.sentence_split``) packed greedily while the chunk stays within ``max_chars``
(a longer sentence is a chunk alone); the chunks tile the text. Used by tests/test_proof_by_addition."""

from chunklab_core.chunking.registry import register_strategy
from chunklab_core.core.sentence_split import sentence_spans


def sentence_packing(text, max_chars=300):
    if max_chars < 1:
        raise ValueError(f"max_chars must be >= 1, got {max_chars}")
    if not text.strip():
        return []
    ends = [end for _, end in sentence_spans(text)][:-1] + [len(text)]
    spans, start, last = [], 0, 0
    for end in ends:
        if end - start > max_chars and last > start:
            spans.append((start, last, start, last))
            start = last
        last = end
    spans.append((start, len(text), start, len(text)))
    return spans


register_strategy("sentence_pack_300", sentence_packing, {"max_chars": 300}, "Sentences packed to 300 chars",
                  sizes={"max_chars": "chars"})
