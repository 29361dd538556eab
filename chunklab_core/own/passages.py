"""Passages of your own documents for ``chunklab-own questions``: cut, then drawn across documents.

Handles: cutting each document into passages (``document_passages``: blocks separated by a blank
line, a block shorter than ``MIN_CHARS`` merged with the next one -- so a heading travels with its
paragraph -- and a block longer than ``MAX_CHARS`` cut at sentence ends, ``core.sentence_split``),
and a seeded draw stratified by document (``stratified_draw``): every document gets one passage
before any gets a second, the rest go to documents in proportion to the passages they hold
(largest remainders, ties by document order), never more than a document holds; within a
document the passages are a seeded permutation (``numpy.random.default_rng(seed)``).

Not handled: generating questions (``own.generate``), passages that span two documents, tables
read cell by cell (a table is one block, as the loader writes it).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np

from chunklab_core.core.sentence_split import sentence_spans

MIN_CHARS = 200
MAX_CHARS = 1500
_BLANK_LINE = re.compile(r"\n[ \t]*\n")


@dataclass(frozen=True)
class DocPassage:
    """``doc.text[start:end]`` of the document ``doc_id``."""

    doc_id: str
    start: int
    end: int
    text: str


def _blocks(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of the non-blank blocks between blank lines, edge whitespace excluded."""
    spans, cursor = [], 0
    for match in [*_BLANK_LINE.finditer(text), None]:
        end = match.start() if match else len(text)
        piece = text[cursor:end]
        if piece.strip():
            lead = len(piece) - len(piece.lstrip())
            spans.append((cursor + lead, cursor + len(piece.rstrip())))
        cursor = match.end() if match else len(text)
    return spans


def _cut_long(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """``[start, end)`` cut at sentence ends into pieces of at most ``MAX_CHARS`` (a longer sentence stays whole)."""
    pieces, piece_start, piece_end = [], start, start
    for s, e in sentence_spans(text, start, end):
        if piece_end > piece_start and e - piece_start > MAX_CHARS:
            pieces.append((piece_start, piece_end))
            piece_start = s
        piece_end = e
    if piece_end > piece_start:
        pieces.append((piece_start, piece_end))
    return [(s, s + len(text[s:e].rstrip())) for s, e in pieces if text[s:e].strip()]


def document_passages(doc_id: str, text: str) -> list[DocPassage]:
    """The passages of one document (see the module docstring); a short document is one passage."""
    merged: list[tuple[int, int]] = []
    pending: tuple[int, int] | None = None
    for start, end in _blocks(text):
        pending = (pending[0], end) if pending else (start, end)
        if pending[1] - pending[0] >= MIN_CHARS:
            merged.append(pending)
            pending = None
    if pending:  # a short tail joins the passage before it, or stands alone
        merged[-1:] = [(merged[-1][0], pending[1])] if merged else [pending]
    spans = [piece for start, end in merged
             for piece in (_cut_long(text, start, end) if end - start > MAX_CHARS else [(start, end)])]
    return [DocPassage(doc_id, s, e, text[s:e]) for s, e in spans]


def allocation(supply: list[int], n: int) -> list[int]:
    """Passages per document: one each first, the rest in proportion to ``supply`` (largest remainder).

    ``sum(result) == min(n, sum(supply))``, ``result[i] <= supply[i]``, and every document with a
    passage gets one when ``n >= len(documents with passages)``.
    """
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    total = sum(supply)
    n = min(n, total)
    counts = [0] * len(supply)
    order = [i for i, s in enumerate(supply) if s > 0]
    for i in order[:n]:
        counts[i] = 1
    left = n - sum(counts)
    while left > 0:
        room = [i for i in order if counts[i] < supply[i]]
        spare = sum(supply[i] - counts[i] for i in room)
        shares = {i: left * (supply[i] - counts[i]) / spare for i in room}
        step = {i: min(math.floor(shares[i]), supply[i] - counts[i]) for i in room}
        for i in sorted(room, key=lambda i: (-(shares[i] - math.floor(shares[i])), i))[:left - sum(step.values())]:
            step[i] = min(step[i] + 1, supply[i] - counts[i])
        for i in room:
            counts[i] += step[i]
        left = n - sum(counts)
    return counts


def stratified_draw(documents, n: int, seed: int) -> list[DocPassage]:
    """``n`` passages (at most as many as there are) drawn across ``documents`` (see the module docstring),
    in document order and, within a document, in the seeded order."""
    rng = np.random.default_rng(seed)
    per_doc = [document_passages(d.doc_id, d.text) for d in documents]
    counts = allocation([len(p) for p in per_doc], n)
    drawn = []
    for passages, count in zip(per_doc, counts):
        order = rng.permutation(len(passages)) if passages else []
        drawn += [passages[i] for i in list(order)[:count]]
    return drawn


def supply(documents) -> int:
    """How many passages the documents hold (the most questions ``questions`` can draw)."""
    return sum(len(document_passages(d.doc_id, d.text)) for d in documents)
