"""Span recovery: map the chunk strings a splitting library returns back to character offsets.

Libraries return strings, not offsets, and several change the text on the way: LangChain and
LlamaIndex strip whitespace from each chunk's ends; token splitters (LangChain's
``TokenTextSplitter``, chonkie's ``TokenChunker`` with a BPE tokenizer) decode token windows,
so a character whose UTF-8 bytes fall on both sides of a window edge comes out as one or more
U+FFFD replacement characters on each side; a library may re-join pieces with a different run
of whitespace. This module finds each chunk in the untouched source and returns its span, so
that every chunk of the series stays ``doc.text[start:end]``.

How a chunk is matched (``locate``; the rule that matched is returned, and tests pin which rules
each library may need):

1. ``"hint"``: the library's own offset (semchunk ``offsets=True``, chonkie's ``start_index``),
   taken only when the source there equals the chunk exactly and it lies where the search would start or later (LangChain's
   ``add_start_index`` is not used: it is itself a guess by ``str.find`` and points at the wrong
   copy of a repeated passage);
2. ``"exact"``: the chunk, with its ends' whitespace stripped, found verbatim (``str.find``)
   after the previous chunk (from the previous end when the library does not overlap chunks;
   when it does, the last occurrence that starts after the previous start and no later than the
   previous end, else the first after the previous start);
3. ``"partial_char"``: a leading / trailing run of U+FFFD stands for the one source character
   whose bytes the token window cut; the span is widened to that whole character (which the
   neighbouring chunk then shares), the rest must be found verbatim;
4. ``"whitespace"``: the chunk's visible words found in order with any whitespace between them
   (a regex ``\\S+(\\s+\\S+)*`` built from the chunk), for libraries that re-join pieces.

A chunk with no visible character (whitespace or replacement characters only) is dropped: its
text lies inside a neighbour's span. A chunk found by none of the rules raises ``RuntimeError``
naming the library and the chunk index: that is a bug in the adapter, never silently skipped.

Not handled: libraries that rewrite text beyond whitespace and split characters (lower-casing,
Unicode normalisation, inserted metadata); chunks returned out of document order.
"""

from __future__ import annotations

import re
from typing import NamedTuple, Sequence

import numpy as np

REPLACEMENT = "\ufffd"
RULES = ("hint", "exact", "partial_char", "whitespace")


class Located(NamedTuple):
    start: int
    end: int
    rule: str


def visible(chunk: str) -> str:
    """The chunk without its ends' whitespace and replacement characters."""
    return chunk.strip().strip(REPLACEMENT).strip()


def _whitespace_pattern(core: str) -> re.Pattern:
    return re.compile(r"\s+".join(re.escape(word) for word in core.split()))


def locate(source: str, chunk: str, low: int, hint: int | None = None, latest: int | None = None) -> Located | None:
    """Where ``chunk`` lies in ``source`` at or after ``low`` (rules in the module docstring);
    ``None`` for a chunk with no visible character. Raises ``LookupError`` when not found.

    ``latest`` (overlapping libraries: the previous chunk's end): prefer the last occurrence
    starting at or before it, since an overlapping chunk begins inside its predecessor; in a
    repetitive text the first occurrence after ``low`` would fall behind the library's chunks."""
    if hint is not None and low <= hint and source[hint : hint + len(chunk)] == chunk and chunk.strip():
        stripped = chunk.strip()
        offset = hint + chunk.index(stripped)
        if REPLACEMENT not in stripped:
            return Located(offset, offset + len(stripped), "hint")
    stripped = chunk.strip()
    core = stripped.strip(REPLACEMENT)
    if not core.strip():
        return None
    lead = stripped.startswith(REPLACEMENT)
    trail = stripped.endswith(REPLACEMENT)
    index = -1
    if latest is not None:
        index = source.rfind(core, low, max(low, latest + len(core)))
    if index < 0:
        index = source.find(core, low)
    if index >= 0:
        start, end = index - lead, index + len(core) + trail
        if (lead and (start < 0 or ord(source[start]) < 0x80)) or \
                (trail and (end > len(source) or ord(source[end - 1]) < 0x80)):
            raise LookupError("a replacement character at a chunk edge does not face a multi-byte character")
        return Located(start, end, "partial_char" if (lead or trail) else "exact")
    match = _whitespace_pattern(visible(chunk)).search(source, low)
    if match is None:
        raise LookupError(f"chunk not found after offset {low}: {chunk[:60]!r}")
    return Located(match.start(), match.end(), "whitespace")


def recover_spans(source: str, chunks: Sequence[str], *, library: str, overlapping: bool,
                  hints: Sequence[int | None] | None = None) -> list[Located]:
    """The span of every chunk with visible text, in order (see the module docstring).

    ``overlapping``: the library may start a chunk before the previous one ended (its
    ``chunk_overlap`` > 0): the search resumes after the previous start, preferring the last
    occurrence inside the previous chunk. In a periodic text (a repeated sentence or row) that
    preference can run past the library's real positions and find nothing for a later chunk;
    the whole text is then matched again taking the first occurrence each time, which always
    succeeds when the chunks come in document order (every copy it picks is at or before the
    library's). If the spans then leave a visible character out (the first copies sit too
    early), ``_covering`` places every chunk on one of its copies so that their union covers
    the text. A periodic text has no single true placement: the spans reproduce the chunks'
    text either way, and the library's own positions cannot be told from its strings.
    Spans come out sorted by start.
    """
    try:
        found = _recover(source, chunks, library, overlapping, hints, prefer_latest=overlapping)
    except RuntimeError:
        if not overlapping:
            raise
        found = _recover(source, chunks, library, overlapping, hints, prefer_latest=False)
    if overlapping and _visible_gap(source, found):
        return _covering(source, chunks, found) or found
    return found


def _visible_prefix(source: str) -> np.ndarray:
    return np.concatenate(([0], np.cumsum([not ch.isspace() for ch in source], dtype=np.int64)))


def _visible_gap(source: str, spans: Sequence[Located]) -> bool:
    """Whether a visible character of ``source`` lies outside every span."""
    vis, reach = _visible_prefix(source), 0
    for span in spans:
        if vis[span.start] - vis[min(reach, span.start)] > 0:
            return True
        reach = max(reach, span.end)
    return bool(vis[-1] - vis[reach] > 0)


def _covering(source: str, chunks: Sequence[str], first: Sequence[Located]) -> list[Located] | None:
    """Overlapping chunks of a periodic text: among every copy of each chunk, a placement in
    order (strictly increasing starts) whose union leaves no visible character out, found by
    dynamic programming over the copies; ``None`` when there is none."""
    vis = _visible_prefix(source)
    kept = [c for c in chunks if c.strip().strip(REPLACEMENT).strip()]
    candidates: list[list[Located]] = []
    for chunk, earliest in zip(kept, first):
        copies, index = [], earliest.start
        while True:
            try:
                found = locate(source, chunk, index)
            except LookupError:
                break
            if found is None or found.rule == "whitespace" and copies:
                break
            copies.append(found)
            index = found.start + 1 + chunk.strip().startswith(REPLACEMENT)  # past this copy's core
        candidates.append(copies)
    back: list[dict[int, int]] = []
    reachable = {c: -1 for c, span in enumerate(candidates[0]) if vis[span.start] == 0}
    back.append(reachable)
    for i in range(1, len(candidates)):
        previous = candidates[i - 1]
        current: dict[int, int] = {}
        for c, span in enumerate(candidates[i]):
            for p in back[-1]:
                before = previous[p]
                if before.start < span.start and vis[span.start] - vis[min(before.end, span.start)] == 0:
                    current[c] = p
                    break
        if not current:
            return None
        back.append(current)
    ends = [c for c in back[-1] if vis[-1] - vis[candidates[-1][c].end] == 0]
    if not ends:
        return None
    path, c = [], ends[0]
    for i in range(len(candidates) - 1, -1, -1):
        path.append(candidates[i][c])
        c = back[i][c]
    return path[::-1]


def _recover(source, chunks, library, overlapping, hints, prefer_latest) -> list[Located]:
    out: list[Located] = []
    for i, chunk in enumerate(chunks):
        if not out:
            low = 0
        else:
            low = out[-1].start + 1 if overlapping else out[-1].end
        try:
            latest = out[-1].end if (prefer_latest and out) else None
            found = locate(source, chunk, low, None if hints is None else hints[i], latest)
        except LookupError as exc:
            raise RuntimeError(f"{library}: chunk {i} could not be mapped back to the source ({exc})") from None
        if found is None:
            continue
        if out and found.start < out[-1].start:
            raise RuntimeError(f"{library}: chunk {i} starts at {found.start}, before chunk {i - 1} ({out[-1].start})")
        out.append(found)
    return out


def reproduces(source: str, span: Located, chunk: str) -> bool:
    """Whether ``source[span]`` reproduces ``chunk`` under the rule that matched it: equal
    after stripping the chunk's ends (hint, exact), equal once each edge run of U+FFFD is
    read as the one character it cut (partial_char), equal word for word (whitespace)."""
    text = source[span.start : span.end]
    stripped = chunk.strip()
    if span.rule in ("hint", "exact"):
        return text == stripped
    if span.rule == "partial_char":
        core = stripped.strip(REPLACEMENT)
        lead, trail = stripped.startswith(REPLACEMENT), stripped.endswith(REPLACEMENT)
        inner = text[1 if lead else 0 : len(text) - (1 if trail else 0)]
        return inner == core and (not lead or ord(text[0]) >= 0x80) and (not trail or ord(text[-1]) >= 0x80)
    if span.rule == "whitespace":
        return text.split() == stripped.split()
    raise ValueError(f"unknown rule {span.rule!r}; known: {RULES}")
