"""Stage 2, chunking: strategies by name, documents in, ``Chunk`` spans out.

Handles: the registry ``STRATEGIES`` (name -> ``StrategySpec``: function, default
parameters, label, whether it is one of post 01's default strategies, its size ceiling),
parameter overrides, variants registered at run time with a user's sizes
(``register_variant``), and the span contract every strategy honours:

- offsets only: a chunk's text is always ``doc.text[start:end]``; its context
  ``[ctx_start, ctx_end)`` contains it (they differ for sentence-window and parent-document);
- spans are sorted by start; without overlap they tile the text exactly (first start 0,
  contiguous, last end ``len(text)``); with overlap their union still covers the text;
- no chunk is whitespace only: such a span is absorbed by a neighbour (which is the one case
  where a chunk may exceed its ceiling, and only by whitespace); an empty or all-whitespace
  text gives no chunk.

Each strategy is a function ``(text, **params) -> [(start, end, ctx_start, ctx_end), ...]``
in a submodule: ``characters`` (fixed, recursive, parent document, whole document),
``token_windows`` (fixed token counts, recursive splitting under a token ceiling), ``sentences`` (sentence window), ``semantic``
(TF-IDF proxy and embedding), ``structure`` (headings of every format and blocks; packed
or one chunk per section). Strategies marked ``uses_headings`` also receive the document's
headings (``headings.document_headings``) from ``chunk_document`` / ``chunk_corpus``, or
``headings=`` in ``document_spans`` (``None``: found in the text). Unknown names or
parameters and bad values raise ``ValueError``. Each spec declares its sizeable parameters
with their units (``sizes``) and, for the one spec per (kind, unit) a user's sized config entry
builds from, its ``sizing`` (``chunking.sizing``; ``own.config`` reads them).

Post 08's strategies: ``library_splitters`` (LangChain, LlamaIndex, chonkie and semchunk run as
they are, their chunks mapped back to offsets by ``span_recovery``), ``chroma_semantic`` (Chroma's
Kamradt-style, modified Kamradt and cluster chunkers) and ``llm_split`` (Chroma's LLM chunker,
through a recorded ``complete``); their names are ``LIBRARY_STRATEGIES``.

Beside the strategies: ``spans`` (the span contract's helpers), ``health`` and ``lexical``
(chunk health: fragments, cut sentences, near-duplicates, per corpus).

Not handled: embedding sentences (``dense`` passes ``embed=`` to the semantic strategies),
retrieval, and anything about which strategy is better (the notebooks measure that).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Callable, Iterable, Mapping

from chunklab_core.core.corpus import Chunk, Document
from chunklab_core.core.headings import Heading, document_headings
from chunklab_core.chunking.characters import fixed_characters, parent_document, recursive_characters, whole_document
from chunklab_core.chunking.chroma_semantic import cluster_semantic, kamradt_modified, kamradt_semantic
from chunklab_core.chunking.library_splitters import (CHROMA_SEPARATORS, chonkie_chunker, langchain_recursive,
                                                      langchain_token, llamaindex_sentence, semchunk_chunker)
from chunklab_core.chunking.llm_split import llm_semantic
from chunklab_core.chunking.semantic import semantic_embedding, semantic_embedding_tokens, semantic_tfidf
from chunklab_core.chunking.sentences import sentence_window
from chunklab_core.chunking.sizing import SIZE_UNITS, Sizing, check_sizes, sizing_unit
from chunklab_core.chunking.spans import ChunkSpan, absorb_blank_spans, check_spans
from chunklab_core.chunking.structure import TableCount, structure_aware, structure_blocks, tables_intact
from chunklab_core.chunking.token_windows import fixed_tokens, recursive_tokens

__all__ = [
    "LIBRARY_STRATEGIES", "SIZE_UNITS", "STRATEGIES", "Sizing", "StrategySpec", "TableCount", "chunk_corpus", "chunk_document",
    "document_spans", "register_strategy", "register_variant", "strategy_label", "strategy_names", "structure_blocks", "tables_intact",
]


@dataclass(frozen=True)
class StrategySpec:
    """A registered strategy: ``func(text, **params)`` with these default ``params``.

    ``tiles``: the indexed spans tile the text (no overlap). ``max_chars`` / ``max_tokens``:
    the size ceiling of the indexed spans under the default parameters (``None``: none).
    ``needs_embedding``: it cuts with an embedding model (passed as its ``embed`` parameter;
    its chunks are recorded with the model); declared per spec, inherited by its variants.
    ``sizes``: each sizeable parameter and its unit (``chars``, ``tokens``, ``sentences``),
    inherited by its variants; ``sizing``: the config kind a user's sized entry builds from this
    spec (:mod:`chunklab_core.chunking.sizing`; ``None``: not sizeable in a config, and never
    inherited).
    """

    name: str
    func: Callable[..., list[ChunkSpan]]
    params: Mapping[str, Any]
    label: str
    default: bool
    tiles: bool = True
    max_chars: int | None = None
    max_tokens: int | None = None
    description: str = field(default="", compare=False)
    uses_headings: bool = False
    needs_embedding: bool = False
    sizes: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    sizing: Sizing | None = None


def _spec(name, func, params, label, default, **extra) -> StrategySpec:
    """A spec; one that takes an ``embed`` parameter declares ``needs_embedding`` unless told otherwise.
    ``sizes`` units and a ``sizing``'s parameters are checked (``ValueError``)."""
    extra.setdefault("needs_embedding", "embed" in params)
    sizes = MappingProxyType(dict(extra.pop("sizes", {})))
    check_sizes(sizes)
    if extra.get("sizing") is not None:
        sizing_unit(sizes, extra["sizing"])
    return StrategySpec(name, func, MappingProxyType(dict(params)), label, default, sizes=sizes, **extra)


_CHARS = {"size": "chars", "overlap": "chars"}
_TOKENS = {"size": "tokens", "overlap": "tokens"}
_OVERLAP = {"size": "size", "overlap": "overlap"}


_SPECS = [
    # Post 01: the eight default strategies.
    _spec("fixed_500", fixed_characters, {"size": 500, "overlap": 0}, "Fixed 500 chars", True, max_chars=500,
          sizes=_CHARS, sizing=Sizing("fixed", _OVERLAP, "fixed_chars_{size}{_o}", "Fixed {size} characters{o_label}")),
    _spec("fixed_500_o50", fixed_characters, {"size": 500, "overlap": 50}, "Fixed 500 chars / overlap 50",
          True, tiles=False, max_chars=500, sizes=_CHARS),
    _spec("fixed_500_o125", fixed_characters, {"size": 500, "overlap": 125}, "Fixed 500 chars / overlap 125",
          True, tiles=False, max_chars=500, sizes=_CHARS),
    _spec("recursive_500", recursive_characters, {"max_chars": 500}, "Recursive 500 chars", True, max_chars=500,
          sizes={"max_chars": "chars"},
          sizing=Sizing("recursive", {"size": "max_chars"}, "recursive_chars_{size}", "Recursive {size} characters")),
    _spec("sentence_window_2", sentence_window, {"window": 2}, "Sentence window (±2 sentences)", True,
          sizes={"window": "sentences"}),
    _spec("parent_doc_250_1000", parent_document, {"parent_size": 1000, "child_size": 250},
          "Parent document (250→1000 chars)", True, max_chars=250,
          sizes={"parent_size": "chars", "child_size": "chars"}),
    _spec("semantic_tfidf", semantic_tfidf, {"percentile": 80.0, "max_chars": 500},
          "Semantic (TF-IDF proxy, ≤500 chars)", True, max_chars=500, sizes={"max_chars": "chars"}),
    _spec("fixed_1000", fixed_characters, {"size": 1000, "overlap": 0}, "Fixed 1000 chars", True, max_chars=1000,
          sizes=_CHARS),
    # Post 02.
    _spec("fixed_tokens_256", fixed_tokens, {"size": 256}, "Fixed 256 tokens", False, max_tokens=256, sizes=_TOKENS,
          sizing=Sizing("fixed", _OVERLAP, "fixed_tokens_{size}{_o}", "Fixed {size} tokens{o_label}")),
    _spec("fixed_tokens_512", fixed_tokens, {"size": 512}, "Fixed 512 tokens", False, max_tokens=512, sizes=_TOKENS),
    _spec("fixed_tokens_512_o64", fixed_tokens, {"size": 512, "overlap": 64}, "Fixed 512 tokens / overlap 64",
          False, tiles=False, max_tokens=512, sizes=_TOKENS),
    _spec("recursive_tokens_512", recursive_tokens, {"max_tokens": 512}, "Recursive 512 tokens", False,
          max_tokens=512, sizes={"max_tokens": "tokens", "overlap": "tokens"},
          sizing=Sizing("recursive", {"size": "max_tokens", "overlap": "overlap"}, "recursive_tokens_{size}{_o}",
                        "Recursive {size} tokens{o_label}")),
    _spec("recursive_tokens_512_o64", recursive_tokens, {"max_tokens": 512, "overlap": 64},
          "Recursive 512 tokens / overlap 64", False, tiles=False, max_tokens=512,
          sizes={"max_tokens": "tokens", "overlap": "tokens"}),
    _spec("structure_aware", structure_aware, {"max_tokens": 512, "mode": "pack"}, "Structure-aware (≤512 tokens)",
          False, max_tokens=512, uses_headings=True, sizes={"max_tokens": "tokens"},
          sizing=Sizing("structure", {"max": "max_tokens"}, "structure_tokens_{max}", "Structure-aware (≤{max} tokens)")),
    _spec("structure_sections", structure_aware, {"max_tokens": 512, "mode": "section"},
          "Structure-aware, one chunk per section (≤512 tokens)", False, max_tokens=512, uses_headings=True,
          sizes={"max_tokens": "tokens"},
          sizing=Sizing("structure_sections", {"max": "max_tokens"}, "structure_sections_tokens_{max}",
                        "Structure-aware, one chunk per section (≤{max} tokens)")),
    _spec("semantic_embedding", semantic_embedding,
          {"embed": None, "percentile": 80.0, "min_chars": 200, "max_chars": 1000},
          "Semantic (embedding, 200–1000 chars)", False, max_chars=1000,
          sizes={"min_chars": "chars", "max_chars": "chars"},
          sizing=Sizing("semantic", {"floor": "min_chars", "max": "max_chars", "percentile": "percentile"},
                        "semantic_floor{floor}_max{max}{_p}", "Semantic (embedding, floor {floor}, max {max}{p_label})")),
    _spec("semantic_no_floor", semantic_embedding,
          {"embed": None, "percentile": 80.0, "min_chars": 0, "max_chars": 1000},
          "Semantic (embedding, ≤1000 chars, no floor)", False, max_chars=1000,
          sizes={"min_chars": "chars", "max_chars": "chars"}),
    _spec("semantic_embedding_tokens", semantic_embedding_tokens,
          {"embed": None, "percentile": 80.0, "min_tokens": 200, "max_tokens": 1000},
          "Semantic (embedding, floor 200 / max 1000 tokens)", False, max_tokens=1000,
          sizes={"min_tokens": "tokens", "max_tokens": "tokens"},
          sizing=Sizing("semantic", {"floor": "min_tokens", "max": "max_tokens", "percentile": "percentile"},
                        "semantic_tokens_floor{floor}_max{max}{_p}",
                        "Semantic (embedding, floor {floor}, max {max} tokens{p_label})")),
    _spec("whole_document", whole_document, {}, "Whole document", False),
]


def _library_specs() -> list[StrategySpec]:
    """Post 08: library splitters at their documented defaults and at Chroma's sizes (tokens are
    cl100k_base; the recursive rows with the report's separators), and Chroma's three chunkers. Library chunks are recovered spans (``span_recovery``):
    no tiling (stripped whitespace lies between them) and no ceiling the library does not promise."""
    lib: list[StrategySpec] = []

    def add(name, func, params, label):
        lib.append(_spec(name, func, params, label, False, tiles=False))

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
    lib += [
        _spec("kamradt", kamradt_semantic, {"embed": None, "percentile": 95.0, "buffer": 1},
              "Kamradt semantic (95th percentile)", False),
        _spec("kamradt_modified_300", kamradt_modified,
              {"embed": None, "avg_tokens": 300, "piece_tokens": 50, "buffer": 3}, "Kamradt modified (mean 300 tokens)", False),
        _spec("cluster_400", cluster_semantic, {"embed": None, "max_tokens": 400, "piece_tokens": 50},
              "Cluster semantic 400 tokens", False),
        _spec("cluster_200", cluster_semantic, {"embed": None, "max_tokens": 200, "piece_tokens": 50},
              "Cluster semantic 200 tokens", False),
        _spec("cluster_250", cluster_semantic, {"embed": None, "max_tokens": 250, "piece_tokens": 50},
              "Cluster semantic 250 tokens", False),
        _spec("llm_semantic", llm_semantic, {"complete": None, "window_tokens": 800, "piece_tokens": 50, "stats": None},
              "Chroma's LLM chunker run by Qwen2.5-Coder 1.5B (recorded)", False),
    ]
    return lib


CHROMA_SIZES = ((800, 400), (400, 200), (400, 0), (200, 0), (250, 125), (250, 0))
"""(tokens, overlap) of the report's LangChain rows: text-embedding-3-large's table, then 250 / 0 of its MiniLM table."""
LIBRARY_STRATEGIES = tuple(s.name for s in _library_specs())
_SPECS += _library_specs()
_REGISTRY: dict[str, StrategySpec] = {s.name: s for s in _SPECS}
STRATEGIES: Mapping[str, StrategySpec] = MappingProxyType(_REGISTRY)


def register_strategy(name: str, func: Callable[..., list[ChunkSpan]], params: Mapping[str, Any], label: str,
                      **extra: Any) -> str:
    """Register a new strategy ``func(text, **params) -> [ChunkSpan]`` under ``name``; return ``name``.

    ``extra``: the :class:`StrategySpec` fields beyond the defaults (``tiles``, ``max_chars``,
    ``max_tokens``, ``uses_headings``, ``description``, ``sizes``, ``sizing``: with a ``sizing``
    it is sizeable in the own-documents config under its kind). A taken name is a ``ValueError``; the
    function is checked on a short text at once (unless it needs an embedding model), so a bad
    definition fails here rather than mid-run.
    """
    if name in _REGISTRY:
        raise ValueError(f"strategy name {name!r} is taken")
    spec = _spec(name, func, params, label, False, **extra)
    if spec.params.get("embed", 0) is not None:
        func("A short check. Of the parameters.", **spec.params)
    _REGISTRY[name] = spec
    return name


def register_variant(name: str, base: str, params: Mapping[str, Any], label: str, **extra: Any) -> str:
    """Register ``name`` as strategy ``base`` with ``params`` replacing its defaults (for a user's
    sizes, e.g. ``fixed_chars_800_o200``); return ``name``. The variant inherits ``uses_headings``
    from its base (unless ``extra`` sets it), so a sized structure strategy cuts at headings, and
    its ``sizes``; a sizeable parameter of the base may be set though its defaults lack it.

    Registering the same name again with the same function and parameters is a no-op; a
    different definition under a taken name raises ``ValueError``. The parameters are checked
    on a short text at once, so a bad size fails here rather than mid-run.
    """
    spec = _lookup(base)
    unknown = sorted(set(params) - set(spec.params) - set(spec.sizes))
    if unknown:
        raise ValueError(f"strategy {base!r} has no parameter(s) {unknown}; it takes: {sorted({*spec.params, *spec.sizes})}")
    extra.setdefault("uses_headings", spec.uses_headings)  # a sized structure strategy still reads headings
    extra.setdefault("needs_embedding", spec.needs_embedding)
    extra.setdefault("sizes", spec.sizes)
    variant = _spec(name, spec.func, {**spec.params, **params}, label, False,
                    tiles=spec.tiles and not params.get("overlap", 0), **extra)
    if name in _REGISTRY:
        old = _REGISTRY[name]
        if old.func is variant.func and dict(old.params) == dict(variant.params):
            return name
        raise ValueError(f"strategy name {name!r} is taken by a different definition")
    if variant.params.get("embed", 0) is not None:  # the embedding strategies are checked when run
        spec.func("A short check. Of the parameters.", **variant.params)
    _REGISTRY[name] = variant
    return name


def _lookup(strategy: str) -> StrategySpec:
    try:
        return STRATEGIES[strategy]
    except (KeyError, TypeError):
        raise ValueError(f"unknown chunking strategy {strategy!r}; known: {', '.join(STRATEGIES)}") from None


def strategy_names(default_only: bool = True) -> list[str]:
    """Registered names in registration order; only post 01's defaults unless told otherwise."""
    return [name for name, spec in STRATEGIES.items() if spec.default or not default_only]


def strategy_label(name: str) -> str:
    """The human label of a strategy, e.g. ``"Semantic (TF-IDF proxy)"``."""
    return _lookup(name).label


def document_spans(text: str, strategy: str, *, headings: list[Heading] | None = None,
                   **overrides: Any) -> list[ChunkSpan]:
    """``(start, end, ctx_start, ctx_end)`` spans of ``text`` under ``strategy``, with
    ``overrides`` replacing default parameters; checked against the span contract.
    ``headings`` reach strategies that use them (``None``: found in the text)."""
    spec = _lookup(strategy)
    unknown = sorted(set(overrides) - set(spec.params))
    if unknown:
        raise ValueError(
            f"strategy {strategy!r} has no parameter(s) {unknown}; it takes: {sorted(spec.params) or 'none'}"
        )
    if not isinstance(text, str):
        raise ValueError(f"text must be a str, got {type(text).__name__}")
    params = {**spec.params, **overrides}
    if spec.uses_headings:
        params["headings"] = headings
    spans = absorb_blank_spans(text, spec.func(text, **params))  # func validates params first
    tiles = spec.tiles and not params.get("overlap", 0)
    check_spans(text, spans, tiles=tiles)
    return spans


def _chunks(doc: Document, spans: list[ChunkSpan], first_id: int) -> list[Chunk]:
    return [Chunk(first_id + i, doc.doc_id, s, e, cs, ce) for i, (s, e, cs, ce) in enumerate(spans)]


def chunk_document(doc: Document, strategy: str, **overrides: Any) -> list[Chunk]:
    """The chunks of one document, ids ``0 .. n-1`` in text order."""
    return _chunks(doc, _document_spans(doc, strategy, overrides), 0)


def chunk_corpus(documents: Iterable[Document], strategy: str, **overrides: Any) -> list[Chunk]:
    """The chunks of every document in order, ids ``0 .. n-1`` across the whole corpus."""
    chunks: list[Chunk] = []
    for doc in documents:
        chunks.extend(_chunks(doc, _document_spans(doc, strategy, overrides), len(chunks)))
    return chunks


def _document_spans(doc: Document, strategy: str, overrides: dict[str, Any]) -> list[ChunkSpan]:
    headings = document_headings(doc) if _lookup(strategy).uses_headings else None
    return document_spans(doc.text, strategy, headings=headings, **overrides)
