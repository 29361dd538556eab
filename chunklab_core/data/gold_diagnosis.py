"""Helping a user fix a gold snippet that occurs in no document: the closest passage and its score.

Handles: for a snippet that ``textmatch.match_gold`` does not find, the region of the
documents that comes closest (:func:`closest_passage`): in each document's matching text
(``textmatch.match_text``: lower case, whitespace collapsed, table cells and thousands
separators made uniform) ``fuzz.partial_ratio_alignment`` places the snippet, the region is
widened to whole words (``textmatch.widen_to_words``) and scored with ``fuzz.ratio`` -- the
same score the fuzzy step of ``match_gold`` compares with its threshold, so "score 0.86" means
"missed the 0.90 threshold by 0.04" (or the number guard failed, said in the message). The
best-scoring document wins; ties keep the first document.

Not handled: suggesting edits, searching across document boundaries, snippets longer than a
whole document (scored against the whole document).
"""

from __future__ import annotations

from typing import Mapping, NamedTuple

from rapidfuzz import fuzz

from chunklab_core.core.textmatch import match_text, matching_snippet, numbers_consistent, widen_to_words


class ClosestPassage(NamedTuple):
    doc_id: str
    score: float
    passage: str
    numbers_match: bool


def closest_passage(snippet: str, documents: Mapping[str, str]) -> ClosestPassage | None:
    """The region of ``documents`` (doc_id -> text) closest to ``snippet``; ``None`` if all are empty."""
    snip = matching_snippet(snippet)
    best: ClosestPassage | None = None
    for doc_id, text in documents.items():
        ctx = match_text(text)
        if not ctx:
            continue
        if len(ctx) <= len(snip):
            start, end = 0, len(ctx)
        else:
            alignment = fuzz.partial_ratio_alignment(snip, ctx)
            start, end = widen_to_words(ctx, alignment.dest_start, alignment.dest_end)
        region = ctx[start:end]
        score = fuzz.ratio(snip, region) / 100.0
        if best is None or score > best.score:
            best = ClosestPassage(doc_id, score, region, numbers_consistent(snip, region))
    return best


def closest_hint(snippet: str, documents: Mapping[str, str], width: int = 100) -> str:
    """``'; closest passage (score 0.83, in doc.md): "..."'`` for a problem message ('' if none)."""
    found = closest_passage(snippet, documents)
    if found is None:
        return ""
    passage = found.passage if len(found.passage) <= width else found.passage[: width - 3] + "..."
    guard = "" if found.numbers_match else "; its numbers differ"
    return f'; closest passage (score {found.score:.2f}, in {found.doc_id}{guard}): "{passage}"'
