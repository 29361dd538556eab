"""Chunk health: what a chunking strategy produced on a corpus, independent of retrieval.

Handles: one row of numbers per (corpus, strategy), from the documents and the chunks'
indexed spans ``[start, end)`` only (contexts are not looked at). Shares are in [0, 1];
the three ``pct_*`` columns are percentages (0-100), as their names say. A metric that is
undefined for the input (no tables, no evidence, no maximum size ...) is ``None``.

Size and shape
- ``n_chunks``; ``median_tokens`` (cl100k_base tokens of the indexed text);
- ``pct_tiny``: chunks under ``tiny_tokens`` (200) tokens. ``pct_fragments``: chunks under
  ``fragment_chars`` (200) characters. Both exist because English runs at ~4.5 characters
  per token: a full 500-character chunk is only ~110 tokens and always "tiny" by the token
  rule, while the character rule flags real fragments;
- ``pct_oversized``: over the strategy's own ceiling OR over the embedding model's maximum
  sequence length, also reported apart (``pct_over_strategy_max``, ``pct_over_model_max``).
  The strategy ceiling is ``max_chars`` (characters) or ``max_tokens`` (cl100k_base tokens)
  of its ``chunking.STRATEGIES`` spec (the default parameters; pass the limits explicitly
  for overridden parameters). The model limit needs ``model_max_tokens`` and
  ``tokenizer_count`` (``str -> int``, the model's own tokenizer, special tokens included
  when the model adds them, as sentence-transformers does). Note that the span
  contract lets a chunk exceed its ceiling by absorbed whitespace; that is counted.
- ``size_compliance``, ``size_cv``: see the functions.

Boundaries and integrity
- ``boundary_ok``: a chunk is OK when its visible text (surrounding whitespace ignored)
  starts at a sentence's first visible character and ends at a sentence's last one, with
  sentences from ``text.sentence_spans`` of its document. The document's first and last
  visible characters are sentence edges, so document edges count as boundaries.
- ``tables_intact``: intact / total over ``chunking.tables_intact`` (tables and lists).
- ``structural_integrity``: share of ``chunking.structure_blocks`` (headings, paragraphs,
  tables, lists, code) not cut, over documents with at least 2 blocks. A block is cut when a
  chunk boundary falls strictly inside it; we test the equivalent "the block lies wholly
  inside one indexed span", which for overlapping strategies means "some chunk holds it
  whole" (what the retriever can see).

Chunking-stage metrics: ``coverage``, ``size_compliance``, ``size_cv``, ``redundancy``,
``evidence_completeness`` / ``evidence_fragmentation`` (given evidence spans ``(doc_id,
start, end)``), and the lexical proxies of ``chunking.lexical`` (TF-IDF stand-ins for MoC's
perplexity-based Boundary Clarity and Chunk Stickiness; overlapping strategies are read by
their chunk starts there). Each formula is in its function's docstring.

``CorpusProfile`` computes what does not depend on the chunks once (whitespace map,
sentences, blocks, one TF-IDF fit and tokenisation per document); ``chunk_health_table``
shares it across strategies, and each strategy's metrics are vectorised searches over
global character offsets (document ``i`` at ``[offsets[i], offsets[i + 1])``).

Not handled: retrieval quality (``evaluation.ranking_metrics``, ``span_metrics``), context spans, embedding-
or perplexity-based chunk quality.
"""

from __future__ import annotations

import re
from functools import cached_property, lru_cache
from typing import Callable, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from chunklab_core.chunking.lexical import LexicalIndex, lexical_metrics
from chunklab_core.chunking import STRATEGIES, structure_blocks, tables_intact
from chunklab_core.chunking.structure import INTACT_KINDS
from chunklab_core.core.corpus import Chunk, Document
from chunklab_core.core.text import sentence_spans
from chunklab_core.core.tokens import count_tokens_many

TINY_TOKENS = 200
FRAGMENT_CHARS = 200
MIN_CHARS = 1
Evidence = tuple[str, int, int]


@lru_cache(maxsize=1)
def _whitespace_codepoints() -> np.ndarray:
    """Every code point that ``re``'s ``\\s`` matches (the chunkers' notion of blank)."""
    every = "".join(map(chr, range(0x110000)))
    return np.array([m.start() for m in re.finditer(r"\s", every)], dtype=np.uint32)


class CorpusProfile:
    """The chunk-independent facts about ``documents``, in global character offsets
    (document ``i`` occupies ``[offsets[i], offsets[i + 1])``)."""

    def __init__(self, documents: Iterable[Document]) -> None:
        self.documents = list(documents)
        self.doc_index: dict[str, int] = {}
        for i, doc in enumerate(self.documents):
            if doc.doc_id in self.doc_index:
                raise ValueError(f"duplicate document id {doc.doc_id!r}")
            self.doc_index[doc.doc_id] = i
        self.offsets = np.concatenate([[0], np.cumsum([len(d.text) for d in self.documents])]).astype(np.int64)
        joined = "".join(d.text for d in self.documents).encode("utf-32-le", "surrogatepass")
        visible = ~np.isin(np.frombuffer(joined, dtype=np.uint32), _whitespace_codepoints())
        self.visible_prefix = np.concatenate([[0], np.cumsum(visible)]).astype(np.int64)
        self.visible_positions = np.flatnonzero(visible)
        spans = [(s + self.offsets[i], e + self.offsets[i])
                 for i, d in enumerate(self.documents) for s, e in sentence_spans(d.text)]
        spans = np.array(spans, dtype=np.int64).reshape(-1, 2)
        starts, ends = spans[:, 0], spans[:, 1]
        keep = self.visible_prefix[ends] > self.visible_prefix[starts]  # drop blank sentences
        self.sentence_starts, self.sentence_ends = starts[keep], ends[keep]
        self.sentence_doc = self.document_at(self.sentence_starts)
        self.sentence_visible_starts = self.first_visible(self.sentence_starts)
        self.sentence_visible_ends = self.last_visible(self.sentence_ends) + 1
        self.table_docs: list[int] = []
        block_spans: list[tuple[int, int]] = []
        for i, doc in enumerate(self.documents):
            blocks = structure_blocks(doc.text)
            if any(b.kind in INTACT_KINDS for b in blocks):
                self.table_docs.append(i)
            if len(blocks) >= 2:
                block_spans.extend((b.start + self.offsets[i], b.end + self.offsets[i]) for b in blocks)
        blocks = np.array(block_spans, dtype=np.int64).reshape(-1, 2)
        self.block_starts, self.block_ends = blocks[:, 0], blocks[:, 1]

    def document_at(self, positions: np.ndarray) -> np.ndarray:
        """Index of the document holding each global position."""
        return np.searchsorted(self.offsets, positions, side="right") - 1

    def first_visible(self, positions: np.ndarray) -> np.ndarray:
        """The first visible character at or after each position (one must exist)."""
        return self.visible_positions[self.visible_prefix[positions]]

    def last_visible(self, positions: np.ndarray) -> np.ndarray:
        """The last visible character before each position (one must exist)."""
        return self.visible_positions[self.visible_prefix[positions] - 1]

    def sentence_containing(self, positions: np.ndarray) -> np.ndarray:
        """Index of the (non-blank) sentence holding each visible global position."""
        return np.searchsorted(self.sentence_starts, positions, side="right") - 1

    @cached_property
    def lexical(self) -> LexicalIndex:
        return LexicalIndex([d.text for d in self.documents], self.offsets, self.sentence_starts,
                            self.sentence_ends, self.sentence_doc)


class ChunkLayout:
    """Indexed spans of one strategy in global offsets, sorted by (start, end)."""

    def __init__(self, profile: CorpusProfile, chunks: Sequence[Chunk]) -> None:
        doc = np.empty(len(chunks), dtype=np.int64)
        local = np.empty((len(chunks), 2), dtype=np.int64)
        for n, c in enumerate(chunks):
            i = profile.doc_index.get(c.doc_id)
            if i is None:
                raise ValueError(f"chunk {c.chunk_id} refers to unknown document {c.doc_id!r}")
            if not 0 <= c.start < c.end <= len(profile.documents[i].text):
                raise ValueError(f"chunk {c.chunk_id}: span [{c.start}, {c.end}) is empty or outside "
                                 f"document {c.doc_id!r} of {len(profile.documents[i].text)} characters")
            doc[n], local[n] = i, (c.start, c.end)
        starts, ends = local[:, 0] + profile.offsets[doc], local[:, 1] + profile.offsets[doc]
        order = np.lexsort((ends, starts))
        self.doc, self.starts, self.ends = doc[order], starts[order], ends[order]
        self.local_starts, self.local_ends = local[order, 0], local[order, 1]
        self.chars = self.ends - self.starts
        self.visible = profile.visible_prefix[self.ends] > profile.visible_prefix[self.starts]
        self.texts = [profile.documents[i].text[s:e] for i, s, e in
                      zip(self.doc.tolist(), self.local_starts.tolist(), self.local_ends.tolist())]


def cl100k_counts(texts: Sequence[str]) -> np.ndarray:
    """cl100k_base token counts: ``tokens.count_tokens_many``, so a chunk text the retrieval
    cells already counted is not encoded again (one count per distinct text per process)."""
    return count_tokens_many(texts)


def percent(mask: np.ndarray) -> float | None:
    """``100 * mean(mask)``; ``None`` for no element."""
    return float(100.0 * np.mean(mask)) if len(mask) else None


def share(mask: np.ndarray) -> float | None:
    """``mean(mask)``; ``None`` for no element."""
    return float(np.mean(mask)) if len(mask) else None


def coefficient_of_variation(sizes: np.ndarray) -> float | None:
    """``std(sizes) / mean(sizes)`` with the population std (``ddof=0``); ``None`` for no
    size or a zero mean."""
    sizes = np.asarray(sizes, dtype=np.float64)
    return float(sizes.std() / sizes.mean()) if sizes.size and sizes.mean() > 0 else None


def size_compliance(chars: np.ndarray, over_max: np.ndarray | None, min_chars: int) -> float | None:
    """``mean(1[chars >= min_chars and not over the strategy maximum])``; ``None`` when the
    strategy has no maximum (``over_max is None``) or there is no chunk."""
    return None if over_max is None else share((np.asarray(chars) >= min_chars) & ~over_max)


def merged_intervals(starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The union of intervals ``[starts, ends)`` (sorted by start) as disjoint intervals."""
    if len(starts) == 0:
        return starts, ends
    reach = np.maximum.accumulate(ends)
    new = np.concatenate([[True], starts[1:] > reach[:-1]])
    first = np.flatnonzero(new)
    return starts[first], np.maximum.reduceat(ends, first)


def coverage(profile: CorpusProfile, layout: ChunkLayout) -> float | None:
    """``|visible characters inside some indexed span| / |visible characters|`` (visible =
    not whitespace); ``None`` for a corpus without a visible character."""
    total = profile.visible_prefix[-1]
    if total == 0:
        return None
    starts, ends = merged_intervals(layout.starts, layout.ends)
    return float(np.sum(profile.visible_prefix[ends] - profile.visible_prefix[starts]) / total)


def redundancy_ratio(layout: ChunkLayout) -> float | None:
    """``sum_c |c| / |union of c|`` in characters (1.0 = no overlap): how much text is
    indexed twice (Chroma's precision and IoU denominators double-count exactly this
    overlap); ``None`` for no chunk."""
    starts, ends = merged_intervals(layout.starts, layout.ends)
    return float(layout.chars.sum() / np.sum(ends - starts)) if len(starts) else None


def boundary_ok(profile: CorpusProfile, layout: ChunkLayout) -> np.ndarray:
    """Per chunk: its first visible character starts a sentence and its last visible
    character ends one (a whitespace-only chunk is not OK)."""
    ok = np.zeros(len(layout.starts), dtype=bool)
    v = layout.visible
    first = profile.first_visible(layout.starts[v])
    last_end = profile.last_visible(layout.ends[v]) + 1
    ok[v] = np.isin(first, profile.sentence_visible_starts) & np.isin(last_end, profile.sentence_visible_ends)
    return ok


def contained(layout: ChunkLayout, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Per query span ``[starts, ends)``: 1 when one indexed span holds it wholly."""
    if len(layout.starts) == 0:
        return np.zeros(len(starts), dtype=bool)
    reach = np.maximum.accumulate(layout.ends)  # furthest end among spans starting <= here
    k = np.searchsorted(layout.starts, starts, side="right") - 1
    return (k >= 0) & (reach[np.maximum(k, 0)] >= ends)


def chunks_touched(layout: ChunkLayout, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Per query span: ``#{c : c.start < end and c.end > start}`` = ``#{c.start < end} -
    #{c.end <= start}`` (a chunk ending by ``start`` also starts before ``end``)."""
    return (np.searchsorted(layout.starts, ends, side="left")
            - np.searchsorted(np.sort(layout.ends), starts, side="right"))


def evidence_completeness(layout: ChunkLayout, starts: np.ndarray, ends: np.ndarray) -> float | None:
    """``mean_e 1[evidence span e lies wholly inside one indexed chunk]``; ``None`` without
    evidence. Chroma's chunking evaluation (Smith & Troynikov 2024) scores evidence recall
    and IoU of *retrieved* chunks (``span_metrics``); this is the retrieval-free ceiling:
    could any single chunk hold the evidence at all."""
    return share(contained(layout, starts, ends))


def evidence_fragmentation(layout: ChunkLayout, starts: np.ndarray, ends: np.ndarray) -> float | None:
    """``mean_e #chunks overlapping e`` (>= 1 where the chunks cover e). With overlapping
    strategies a span inside an overlap touches 2 chunks though it is complete in each: read
    it beside ``evidence_completeness``. ``None`` without evidence."""
    touched = chunks_touched(layout, starts, ends)
    return float(np.mean(touched)) if len(touched) else None


def structural_integrity(profile: CorpusProfile, layout: ChunkLayout) -> float | None:
    """``mean_b 1[block b lies wholly inside one indexed span]`` over the structure blocks of
    documents with >= 2 blocks; ``None`` when no document has 2."""
    return share(contained(layout, profile.block_starts, profile.block_ends))


def tables_intact_share(profile: CorpusProfile, layout: ChunkLayout) -> float | None:
    """``sum intact / sum total`` of ``chunking.tables_intact`` over documents with a table
    or list; ``None`` when there is none."""
    bounds = np.searchsorted(layout.doc, np.arange(len(profile.documents) + 1))
    total = intact = 0
    for i in profile.table_docs:
        spans = list(zip(layout.local_starts[bounds[i]:bounds[i + 1]], layout.local_ends[bounds[i]:bounds[i + 1]]))
        count = tables_intact(profile.documents[i].text, spans)
        total, intact = total + count.total, intact + count.intact
    return intact / total if total else None


def strategy_limits(strategy: str | None) -> tuple[int | None, int | None]:
    """``(max_chars, max_tokens)`` of a registered strategy; ``(None, None)`` otherwise."""
    spec = STRATEGIES.get(strategy) if isinstance(strategy, str) else None
    return (spec.max_chars, spec.max_tokens) if spec else (None, None)


def evidence_arrays(profile: CorpusProfile, evidence: Iterable[Evidence]) -> tuple[np.ndarray, np.ndarray]:
    """Global ``(starts, ends)`` of evidence spans ``(doc_id, start, end)``, validated."""
    starts, ends = [], []
    for item in evidence:
        try:
            doc_id, start, end = item
        except (TypeError, ValueError):
            raise ValueError(f"evidence spans must be (doc_id, start, end) tuples, got {item!r}") from None
        i = profile.doc_index.get(doc_id)
        if i is None:
            raise ValueError(f"evidence span {item!r} refers to unknown document {doc_id!r}")
        if not 0 <= start < end <= len(profile.documents[i].text):
            raise ValueError(f"evidence span {item!r} is empty or outside its document")
        starts.append(start + profile.offsets[i])
        ends.append(end + profile.offsets[i])
    return np.array(starts, dtype=np.int64), np.array(ends, dtype=np.int64)


def _check_options(model_max_tokens, tokenizer_count, tiny_tokens, fragment_chars, min_chars) -> None:
    if (model_max_tokens is None) != (tokenizer_count is None):
        raise ValueError("give both model_max_tokens and tokenizer_count (the model's own token counter), or neither")
    if tokenizer_count is not None and not callable(tokenizer_count):
        raise ValueError("tokenizer_count must be a callable str -> int")
    for name, value in [("model_max_tokens", model_max_tokens), ("tiny_tokens", tiny_tokens),
                        ("fragment_chars", fragment_chars), ("min_chars", min_chars)]:
        if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
            raise ValueError(f"{name} must be a positive integer, got {value!r}")


def chunk_health(documents: Sequence[Document] | CorpusProfile, chunks: Sequence[Chunk],
                 strategy: str | None = None, *, evidence: Iterable[Evidence] | None = None,
                 model_max_tokens: int | None = None, tokenizer_count: Callable[[str], int] | None = None,
                 max_chars: int | None = None, max_tokens: int | None = None,
                 tiny_tokens: int = TINY_TOKENS, fragment_chars: int = FRAGMENT_CHARS,
                 min_chars: int = MIN_CHARS) -> dict:
    """Every chunk-health metric of one strategy's ``chunks`` as one row (a dict).

    ``strategy`` names the row and, when registered, supplies the size ceiling unless
    ``max_chars`` / ``max_tokens`` are given. ``documents`` may be a ``CorpusProfile`` built
    once for several strategies.
    """
    _check_options(model_max_tokens, tokenizer_count, tiny_tokens, fragment_chars, min_chars)
    profile = documents if isinstance(documents, CorpusProfile) else CorpusProfile(documents)
    if max_chars is None and max_tokens is None:
        max_chars, max_tokens = strategy_limits(strategy)
    layout = ChunkLayout(profile, chunks)
    tokens = cl100k_counts(layout.texts)
    over_strategy = None
    if max_chars is not None or max_tokens is not None:
        over_strategy = np.zeros(len(tokens), dtype=bool)
        if max_chars is not None:
            over_strategy |= layout.chars > max_chars
        if max_tokens is not None:
            over_strategy |= tokens > max_tokens
    over_model = None
    if tokenizer_count is not None:
        over_model = np.array([tokenizer_count(t) for t in layout.texts], dtype=np.int64) > model_max_tokens
    over_any = [m for m in (over_strategy, over_model) if m is not None]
    ev_starts, ev_ends = evidence_arrays(profile, evidence) if evidence is not None else (None, None)
    return {
        "strategy": strategy,
        "n_chunks": len(layout.starts),
        "median_tokens": float(np.median(tokens)) if len(tokens) else None,
        "pct_tiny": percent(tokens < tiny_tokens),
        "pct_fragments": percent(layout.chars < fragment_chars),
        "pct_oversized": percent(np.logical_or.reduce(over_any)) if over_any else None,
        "pct_over_strategy_max": percent(over_strategy) if over_strategy is not None else None,
        "pct_over_model_max": percent(over_model) if over_model is not None else None,
        "boundary_ok": share(boundary_ok(profile, layout)),
        "tables_intact": tables_intact_share(profile, layout),
        "coverage": coverage(profile, layout),
        "size_compliance": size_compliance(layout.chars, over_strategy, min_chars),
        "size_cv": coefficient_of_variation(tokens),
        "redundancy": redundancy_ratio(layout),
        "evidence_completeness": evidence_completeness(layout, ev_starts, ev_ends) if evidence is not None else None,
        "evidence_fragmentation": evidence_fragmentation(layout, ev_starts, ev_ends) if evidence is not None else None,
        "structural_integrity": structural_integrity(profile, layout),
        **lexical_metrics(profile, layout),
    }


def chunk_health_table(documents: Sequence[Document], strategies: Mapping[str, Sequence[Chunk]],
                       evidence: Iterable[Evidence] | None = None, model_max_tokens: int | None = None,
                       tokenizer_count: Callable[[str], int] | None = None, **options) -> pd.DataFrame:
    """One ``chunking.health`` row per strategy (name -> its chunks), in the given order; the
    corpus is profiled once. ``options``: ``tiny_tokens``, ``fragment_chars``, ``min_chars``."""
    if not strategies:
        raise ValueError("strategies is empty: give at least one name -> chunks")
    unknown = sorted(set(options) - {"tiny_tokens", "fragment_chars", "min_chars"})
    if unknown:
        raise ValueError(f"unknown option(s) {unknown}; known: tiny_tokens, fragment_chars, min_chars")
    profile = CorpusProfile(documents)
    evidence = list(evidence) if evidence is not None else None
    rows = [chunk_health(profile, chunks, name, evidence=evidence, model_max_tokens=model_max_tokens,
                         tokenizer_count=tokenizer_count, **options) for name, chunks in strategies.items()]
    return pd.DataFrame(rows)
