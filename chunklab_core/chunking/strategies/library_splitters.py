"""Post 08's strategies: the splitters RAG builders use, run as they are, and Chroma's chunkers.

LangChain, LlamaIndex, chonkie and semchunk (``chunking.library_splitters``) at their documented
defaults and at Chroma's report's sizes (tokens are cl100k_base; the recursive rows with the
report's separators), Chroma's Kamradt-style, modified Kamradt and cluster chunkers
(``chunking.chroma_semantic``) and its LLM chunker (``chunking.llm_split``, through a recorded
``complete``). Library chunks are recovered spans (``span_recovery``): no tiling (stripped
whitespace lies between them) and no ceiling the library does not promise. :data:`NAMES` are
``chunking.LIBRARY_STRATEGIES``.
"""

from chunklab_core.chunking.registry import register_strategy
from chunklab_core.chunking.chroma_semantic import cluster_semantic, kamradt_modified, kamradt_semantic
from chunklab_core.chunking.library_splitters import (CHROMA_SEPARATORS, chonkie_chunker, langchain_recursive,
                                                      langchain_token, llamaindex_sentence, semchunk_chunker)
from chunklab_core.chunking.llm_split import llm_semantic

CHROMA_SIZES = ((800, 400), (400, 200), (400, 0), (200, 0), (250, 125), (250, 0))
"""(tokens, overlap) of the report's LangChain rows: text-embedding-3-large's table, then 250 / 0 of its MiniLM table."""

NAMES: list[str] = []


def add(name, func, params, label, tiles=False):
    NAMES.append(register_strategy(name, func, params, label, tiles=tiles, check=False))


add("lc_recursive_default", langchain_recursive, {"size": 4000, "overlap": 200, "unit": "chars"},
    "LangChain recursive, defaults (4,000 chars / 200)")
add("lc_recursive_1000_200", langchain_recursive, {"size": 1000, "overlap": 200, "unit": "chars"},
    "LangChain recursive 1,000 chars / 200, the docs' example")
add("lc_token_default", langchain_token, {"size": 4000, "overlap": 200},
    "LangChain TokenText 4,000 tokens / 200 (documented sizes, cl100k_base, not its gpt2)")
for size, overlap in CHROMA_SIZES:
    add(f"lc_recursive_tok_{size}_{overlap}", langchain_recursive,
        {"size": size, "overlap": overlap, "unit": "tokens", "separators": CHROMA_SEPARATORS},
        f"LangChain recursive {size} tokens / {overlap}")
    add(f"lc_token_{size}_{overlap}", langchain_token, {"size": size, "overlap": overlap},
        f"LangChain TokenText {size} tokens / {overlap}")
add("llama_sentence_default", llamaindex_sentence, {"size": 1024, "overlap": 200},
    "LlamaIndex sentence, defaults (1,024 tokens / 200)")
for size in (400, 200):
    add(f"llama_sentence_{size}", llamaindex_sentence, {"size": size, "overlap": 0}, f"LlamaIndex sentence {size} tokens")
for kind in ("token", "sentence", "recursive"):
    add(f"chonkie_{kind}_default", chonkie_chunker,
        {"kind": kind, "size": 2048, "tokenizer": "character", "embed": None, "threshold": 0.8},
        f"chonkie {kind}, defaults (2,048 chars)")
    for size in (400, 200):
        add(f"chonkie_{kind}_{size}", chonkie_chunker,
            {"kind": kind, "size": size, "tokenizer": "cl100k", "embed": None, "threshold": 0.8},
            f"chonkie {kind} {size} tokens")
add("chonkie_semantic_default", chonkie_chunker,
    {"kind": "semantic", "size": 2048, "tokenizer": "cl100k", "embed": None, "threshold": 0.8},
    "chonkie semantic, defaults (2,048 tokens, threshold 0.8)")
for size in (512, 400, 200):
    add(f"semchunk_{size}", semchunk_chunker, {"size": size}, f"semchunk {size} tokens")
# Chroma's chunkers: their spans tile the text (the series' span contract, as the original list declared)
add("kamradt", kamradt_semantic, {"embed": None, "percentile": 95.0, "buffer": 1}, "Kamradt semantic (95th percentile)",
    tiles=True)
add("kamradt_modified_300", kamradt_modified, {"embed": None, "avg_tokens": 300, "piece_tokens": 50, "buffer": 3},
    "Kamradt modified (mean 300 tokens)", tiles=True)
for size in (400, 200, 250):
    add(f"cluster_{size}", cluster_semantic, {"embed": None, "max_tokens": size, "piece_tokens": 50},
        f"Cluster semantic {size} tokens", tiles=True)
add("llm_semantic", llm_semantic, {"complete": None, "window_tokens": 800, "piece_tokens": 50, "stats": None},
    "Chroma's LLM chunker run by Qwen2.5-Coder 1.5B (recorded)", tiles=True)
