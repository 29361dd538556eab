"""Stage 2, chunking: strategies by name, documents in, ``Chunk`` spans out.

Handles: cutting documents by a strategy's name with parameter overrides, and the span contract
every strategy honours (the registry ``STRATEGIES``, name -> ``StrategySpec``, and the variants
registered at run time with a user's sizes, ``register_variant``, are ``registry``'s,
re-exported here):

- offsets only: a chunk's text is always ``doc.text[start:end]``; its context
  ``[ctx_start, ctx_end)`` contains it (they differ for sentence-window and parent-document);
- spans are sorted by start; without overlap they tile the text exactly (first start 0,
  contiguous, last end ``len(text)``); with overlap their union still covers the text;
- no chunk is whitespace only: such a span is absorbed by a neighbour (which is the one case
  where a chunk may exceed its ceiling, and only by whitespace); an empty or all-whitespace
  text gives no chunk.

Each strategy is a function ``(text, **params) -> [(start, end, ctx_start, ctx_end), ...]``,
registered by one module of ``strategies`` (one per function, found by a scan of the folder and
the entry points of group ``chunklab.strategies``; a new one is one module there), its cutting
code in a submodule: ``characters`` (fixed, recursive, parent document, whole document),
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
through a recorded ``complete``); their names are ``LIBRARY_STRATEGIES``. ``report_locating`` places
a library chunk string as Chroma's report's own code does (post 08 re-runs that report on those spans).

Beside the strategies: ``spans`` (the span contract's helpers), ``health`` and ``lexical``
(chunk health: fragments, cut sentences, near-duplicates, per corpus).

Not handled: embedding sentences (``dense`` passes ``embed=`` to the semantic strategies),
retrieval, and anything about which strategy is better (the notebooks measure that).
"""

from __future__ import annotations

from typing import Any, Iterable

from chunklab_core.core.corpus import Chunk, Document
from chunklab_core.core.headings import Heading, document_headings
from chunklab_core.chunking.registry import (STRATEGIES, StrategySpec, _lookup, register_strategy, register_variant,
                                             strategy_label, strategy_names)
from chunklab_core.chunking.sizing import SIZE_UNITS, Sizing
from chunklab_core.chunking.spans import ChunkSpan, absorb_blank_spans, check_spans
from chunklab_core.chunking.structure import TableCount, structure_blocks, tables_intact

__all__ = [
    "LIBRARY_STRATEGIES", "SIZE_UNITS", "STRATEGIES", "Sizing", "StrategySpec", "TableCount", "chunk_corpus", "chunk_document",
    "document_spans", "register_strategy", "register_variant", "strategy_label", "strategy_names", "structure_blocks", "tables_intact",
]


def document_spans(text: str, strategy: str | StrategySpec, *, headings: list[Heading] | None = None,
                   **overrides: Any) -> list[ChunkSpan]:
    """``(start, end, ctx_start, ctx_end)`` spans of ``text`` under ``strategy`` (a registered name or
    its spec), with ``overrides`` replacing default parameters; checked against the span contract.
    ``headings`` reach strategies that use them (``None``: found in the text)."""
    spec = _lookup(strategy)
    unknown = sorted(set(overrides) - set(spec.params))
    if unknown:
        raise ValueError(
            f"strategy {spec.name!r} has no parameter(s) {unknown}; it takes: {sorted(spec.params) or 'none'}"
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


def chunk_document(doc: Document, strategy: str | StrategySpec, **overrides: Any) -> list[Chunk]:
    """The chunks of one document, ids ``0 .. n-1`` in text order (``strategy``: a name or its spec)."""
    return _chunks(doc, _document_spans(doc, _lookup(strategy), overrides), 0)


def chunk_corpus(documents: Iterable[Document], strategy: str | StrategySpec, **overrides: Any) -> list[Chunk]:
    """The chunks of every document in order, ids ``0 .. n-1`` across the whole corpus; a name is
    resolved once here, and its spec passed to every document."""
    spec = _lookup(strategy)
    chunks: list[Chunk] = []
    for doc in documents:
        chunks.extend(_chunks(doc, _document_spans(doc, spec, overrides), len(chunks)))
    return chunks


def _document_spans(doc: Document, spec: StrategySpec, overrides: dict[str, Any]) -> list[ChunkSpan]:
    headings = document_headings(doc) if spec.uses_headings else None
    return document_spans(doc.text, spec, headings=headings, **overrides)


from chunklab_core.chunking import strategies  # noqa: E402  (completes STRATEGIES, whatever is imported first)

LIBRARY_STRATEGIES = tuple(strategies.library_splitters.NAMES)  # post 08's library splitters and Chroma's chunkers
