"""Structure-aware chunking: cut at headings and blocks, keep tables and lists whole.

Handles two kinds of markup, chosen per document:

- HTML-like block tags, as in Natural Questions pages (``<H1>``-``<H6>``, ``<P>``,
  ``<Table>``, ``<Ul>``, ``<Ol>``, ``<Dl>``; tag names with ``_attr`` suffixes such as
  ``<Th_colspan="2">`` or HTML attributes are accepted, case-insensitively). Only top-level
  blocks count: a list inside a table cell is part of the table.
- Otherwise Markdown-ish lines: ATX headings (``# `` to ``###### ``), fenced code, tables
  (lines starting with ``|``, or holding the ``" | "`` cell delimiter the loaders write for
  .docx and HTML rows: ``a | b``), lists (``-``, ``*``, ``+``, ``1.``); blocks are separated by
  blank lines, or by line breaks when the text has no blank line at all (plain text then
  falls back to paragraphs, or lines).

Each block starts a unit; the unit runs to the next block, so text and whitespace between
blocks stay with the block before. A unit over the token ceiling (cl100k_base) is split
recursively (before ``<Tr>``/``<Li>``/``<Dt>``/``<Dd>`` items, then paragraph, line,
sentence, whitespace, hard cut). A heading is glued to the piece after it where both fit,
else it stays with the text before it. Pieces are then merged greedily under the ceiling,
each chunk counted exactly. ``tables_intact`` reports how
many tables and lists a set of spans keeps whole, for any strategy.

Headings come from ``headings`` (one model for every format): the caller passes a
document's headings (``headings.document_headings``: .docx styles and outline levels, HTML
``<h1>``-``<h6>``, PDF outlines or larger fonts, stored by the loader), else they are found in
the text (``headings.text_headings``: Markdown, NQ markup, bold-only and ALL-CAPS short
lines). Every heading starts a unit of kind heading, and the text after it starts the next.
A document without any heading falls back to the blocks above (paragraphs, or lines);
``headings.heading_report`` says which documents do.

Two modes: ``mode="pack"`` (the default, ``structure_aware``) merges units greedily under the
ceiling, so small sections share a chunk; ``mode="section"`` (``structure_sections``) gives
one chunk per section (a heading to the next heading of any level; the text before the first
heading is a section too) and splits a section, as ``pack`` does, only when it is longer than
the ceiling. Without headings the whole document is one section, so both modes agree.

Not handled: setext headings (underlined with ``===``), nested Markdown structure, HTML
that is not block-balanced (an unclosed block runs to the end of the document), sections by
level (a level-3 heading starts a section as a level-1 heading does).
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from typing import Iterable, NamedTuple, Sequence

from chunklab_core.core.headings import Heading, text_headings
from chunklab_core.chunking.spans import NON_SPACE, LEVELS, ChunkSpan, Span, is_blank, pack, recursive_spans
from chunklab_core.chunking.token_windows import TokenMeasure

HTML_BLOCK_TAG = re.compile(r"<(/?)(H[1-6]|P|Table|Ul|Ol|Dl)(?:[\s_][^>]*)?>", re.IGNORECASE)
_HTML_KINDS = {"table": "table", "ul": "list", "ol": "list", "dl": "list", "p": "paragraph"}
_FENCE = re.compile(r" {0,3}(```|~~~)")
_HEADING = re.compile(r" {0,3}#{1,6}(?:[ \t]|$)")
_TABLE_ROW = re.compile(r"\s*\||[^\n]*\S \| \S")  # "| a | b |" (Markdown) or "a | b" (.docx, HTML rows)
_LIST_ITEM = re.compile(r"\s*(?:[-*+]|\d{1,9}[.)])\s")
_LINE = re.compile(r"[^\n]*\n|[^\n]+")
_BLANK_LINE = re.compile(r"\n[^\S\n]*\n")
INTACT_KINDS = ("table", "list")
STRUCTURE_LEVELS = ("markup_item", *LEVELS)
MODES = ("pack", "section")


@dataclass(frozen=True)
class Block:
    """One top-level block: ``[start, end)`` is its own extent (tag to closing tag, or first
    to last visible character); ``kind`` is heading, paragraph, table, list, code or text."""

    start: int
    end: int
    kind: str


def _html_blocks(text: str) -> list[Block]:
    blocks: list[Block] = []
    depth, top_start, top_kind = 0, 0, ""
    for match in HTML_BLOCK_TAG.finditer(text):
        name = match.group(2).lower()
        if match.group(1) != "/":
            if depth == 0:
                top_start, top_kind = match.start(), "heading" if name[0] == "h" else _HTML_KINDS[name]
            depth += 1
        elif depth > 0:  # a stray closing tag at top level is ignored
            depth -= 1
            if depth == 0:
                blocks.append(Block(top_start, match.end(), top_kind))
    if depth > 0:
        blocks.append(Block(top_start, len(text.rstrip()), top_kind))
    return blocks


def _line_kind(line: str) -> str:
    if _FENCE.match(line):
        return "code"
    if _HEADING.match(line):
        return "heading"
    if _TABLE_ROW.match(line):
        return "table"
    return "list" if _LIST_ITEM.match(line) else "text"


def _markdown_blocks(text: str) -> list[Block]:
    line_mode = _BLANK_LINE.search(text) is None  # no blank line: every line is a block
    blocks: list[Block] = []
    start = end = -1
    kind, in_fence, pending_break = "", False, False
    for match in _LINE.finditer(text):
        line = match.group()
        if in_fence:
            end = match.start() + len(line.rstrip()) if line.strip() else end
            in_fence = _FENCE.match(line) is None
            pending_break = not in_fence
            continue
        if not line.strip():
            pending_break = True
            continue
        line_kind = _line_kind(line)
        continues = kind == line_kind and kind in INTACT_KINDS
        if start < 0 or pending_break or line_kind in ("heading", "code") or kind == "heading" or (
            line_mode and not continues
        ):
            if start >= 0:
                blocks.append(Block(start, end, kind))
            start, kind = match.start(), line_kind
        end = match.start() + len(line.rstrip())
        pending_break = False
        in_fence = line_kind == "code"
    if start >= 0:
        blocks.append(Block(start, end, kind))
    return blocks


def structure_blocks(text: str) -> list[Block]:
    """Top-level blocks of ``text``: HTML-like when it has block tags, else Markdown-ish."""
    return _html_blocks(text) if HTML_BLOCK_TAG.search(text) else _markdown_blocks(text)


def structure_units(text: str, headings: Sequence[Heading] | None = None) -> tuple[list[Span], list[str]]:
    """Units tiling ``text`` (each block or heading to the next one's start) and their kinds.

    ``headings`` (``None``: ``headings.text_headings(text)``) each start a unit of kind
    heading; the first visible character after a heading starts the next unit."""
    if not text:
        return [], []
    blocks = structure_blocks(text)
    starts_set = {0, *(b.start for b in blocks)}
    kind_at = {b.start: b.kind for b in blocks}
    for heading in text_headings(text) if headings is None else headings:
        starts_set.add(heading.start)
        kind_at[heading.start] = "heading"
        after = NON_SPACE.search(text, heading.end)  # NQ keeps text after </Hn> with the heading, as before
        if after is not None and after.start() not in kind_at and heading.cue != "nq-html":
            starts_set.add(after.start())
            kind_at[after.start()] = "text"
    starts = sorted(starts_set)
    units: list[Span] = []
    kinds: list[str] = []
    carry: int | None = None  # a blank unit joins the next one
    for s, e in zip(starts, [*starts[1:], len(text)]):
        if is_blank(text, s, e):
            carry = s if carry is None else carry
            continue
        units.append((s if carry is None else carry, e))
        kinds.append(kind_at.get(s, "text"))
        carry = None
    if carry is not None:
        units[-1:] = [(units[-1][0] if units else 0, len(text))]
        kinds = kinds or ["text"]
    return units, kinds


def structure_aware(text: str, max_tokens: int, mode: str = "pack",
                    headings: Sequence[Heading] | None = None) -> list[ChunkSpan]:
    """``mode="pack"``: units merged greedily under ``max_tokens`` cl100k_base tokens; a unit
    over the ceiling is first split recursively (so a heading can still join its first
    piece); headings are glued to the units that follow them where they fit.
    ``mode="section"``: one chunk per section, a section over the ceiling packed as above.
    ``headings``: the document's headings (``None``: found in the text)."""
    if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1:
        raise ValueError(f"max_tokens must be a positive integer, got {max_tokens!r}")
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    units, kinds = structure_units(text, headings)
    if not units:
        return []
    measure = TokenMeasure(text)
    if mode == "pack":
        return [(s, e, s, e) for s, e in _pack_units(text, units, kinds, max_tokens, measure)]
    spans: list[Span] = []
    for section in _sections(units, kinds):
        first, last = units[section[0]], units[section[-1]]
        if measure.size(first[0], last[1]) <= max_tokens:
            spans.append((first[0], last[1]))
        else:
            spans.extend(_pack_units(text, [units[i] for i in section], [kinds[i] for i in section],
                                     max_tokens, measure))
    return [(s, e, s, e) for s, e in spans]


def _sections(units: list[Span], kinds: list[str]) -> list[list[int]]:
    """Unit indices grouped into sections: a new section at every heading unit."""
    sections: list[list[int]] = []
    for i, kind in enumerate(kinds):
        if kind == "heading" or not sections:
            sections.append([])
        sections[-1].append(i)
    return sections


def _pack_units(text: str, units: list[Span], kinds: list[str], max_tokens: int,
                measure: TokenMeasure) -> list[Span]:
    """The pack mode on a run of units (see ``structure_aware``)."""
    pieces: list[Span] = []
    piece_kinds: list[str] = []
    for (start, end), kind, estimate in zip(units, kinds, measure.sizes(units)):
        split = [(start, end)]
        if estimate > max_tokens:
            split = recursive_spans(text, start, end, max_tokens, measure, STRUCTURE_LEVELS)
        pieces.extend(split)
        piece_kinds.extend([kind] * len(split))
    sizes = measure.sizes(pieces)
    groups: list[Span] = []
    group_sizes: list[int] = []  # estimates (sums); pack re-counts what it merges
    i = 0
    while i < len(pieces):
        j, total = i, sizes[i]
        while piece_kinds[j] == "heading" and j + 1 < len(pieces) and total + sizes[j + 1] <= max_tokens:
            j += 1
            total += sizes[j]
        groups.append((pieces[i][0], pieces[j][1]))
        group_sizes.append(total)
        i = j + 1
    return pack(text, groups, max_tokens, measure, STRUCTURE_LEVELS, group_sizes)


class TableCount(NamedTuple):
    """How many top-level tables and lists a set of spans keeps whole."""

    total: int
    intact: int

    @property
    def broken(self) -> int:
        return self.total - self.intact


def tables_intact(text: str, spans: Iterable) -> TableCount:
    """Count tables and lists (top-level ``Block`` of kind table or list) lying wholly
    inside at least one indexed span. ``spans`` holds ``Chunk`` objects or tuples whose
    first two items are ``(start, end)``."""
    pairs = sorted((c.start, c.end) if hasattr(c, "start") else (c[0], c[1]) for c in spans)
    starts = [s for s, _ in pairs]
    reach, best = [], -1  # reach[k]: furthest end among the first k + 1 spans
    for _, e in pairs:
        best = max(best, e)
        reach.append(best)
    total = intact = 0
    for block in structure_blocks(text):
        if block.kind not in INTACT_KINDS:
            continue
        total += 1
        k = bisect.bisect_right(starts, block.start) - 1
        intact += k >= 0 and reach[k] >= block.end
    return TableCount(total, intact)
