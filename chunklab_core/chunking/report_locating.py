"""Chunk offsets as Chroma's report's code finds them, for re-running its tables exactly.

Chroma's ``chunking_evaluation`` (Smith & Troynikov, 2024; its ``BaseEvaluation._get_chunks_and_metadata``
and ``utils.rigorous_document_search``, read, not imported) never asks a chunker for offsets: it
splits each corpus into chunk strings and then searches for every string in the corpus. That
search decides the spans every one of its metrics is computed on, and it does three things its
report does not say:

* a chunk ending in ``"."`` is searched without that final full stop, so its span is one
  character shorter than its text;
* the span is the FIRST occurrence of the string in the corpus (``str.find``), wherever the
  chunker cut it: a passage repeated in a corpus (a chat log's greeting, a table header) puts
  every copy's chunk on the first copy;
* a string not found verbatim is matched word by word with any whitespace between the words,
  ignoring case (its ``find_query_despite_whitespace``).

Its TokenText rows (``FixedTokenChunker``, a copy of LangChain's ``TokenTextSplitter``) keep each
decoded token window's leading and trailing whitespace, so their spans include it. The series'
own span recovery (``span_recovery``) strips a library chunk's ends and places each chunk after
the previous one; on Chroma's five corpora the two agree on the number of chunks of every
reproduced row, and differ by those few characters and by the first-occurrence placement.

Handled: :func:`report_locate` (one string), :func:`report_texts` (the chunk strings of the
report's TokenText and recursive rows, from the same LangChain splitters the series runs, at the
report's settings, unstripped as the report's code leaves them) and :func:`report_spans`.

Not handled: the report's last fallback, a fuzzy sentence match (fuzzywuzzy's
``token_sort_ratio`` >= 98) for a string found neither verbatim nor word by word: it raises here
(``ReportLocatingError``); on the rows and corpora the series reproduces it never fires (a test
runs every row on all five corpora). Chunkers whose strings are re-joined pieces (the cluster and
LLM chunkers) are located by the word-by-word rule, as in the report's code.
"""

from __future__ import annotations

import re
from typing import Mapping

__all__ = ["ReportLocatingError", "report_locate", "report_spans", "report_texts", "REPORT_LOCATED"]


class ReportLocatingError(ValueError):
    """A chunk string the report's verbatim and word-by-word rules both miss."""


def _words_pattern(chunk: str) -> re.Pattern[str]:
    """The chunk's words with any whitespace between them, ignoring case (the report's
    ``find_query_despite_whitespace``: its words joined by ``\\s*``)."""
    words = re.sub(r"\s+", " ", chunk).strip().split()
    return re.compile(r"\s*".join(re.escape(word) for word in words), re.IGNORECASE)


def report_locate(document: str, chunk: str) -> tuple[int, int]:
    """``(start, end)`` of ``chunk`` in ``document`` as Chroma's code finds it: a final ``.``
    dropped, then the first verbatim occurrence, else the first word-by-word match."""
    target = chunk[:-1] if chunk.endswith(".") else chunk
    start = document.find(target)
    if start != -1:
        return start, start + len(target)
    if target.strip():
        match = _words_pattern(target).search(document)
        if match:
            return match.start(), match.end()
    raise ReportLocatingError(
        f"chunk {chunk[:60]!r}... is found neither verbatim nor word by word; the report's code would "
        "fall back to a fuzzy sentence match, which is not reproduced here")


REPORT_LOCATED = {"langchain_token": "TokenText", "langchain_recursive": "RecursiveTokenChunker"}
"""Strategy functions whose chunk strings :func:`report_texts` can give, and the report's name for them."""


def report_texts(text: str, func_name: str, params: Mapping) -> list[str]:
    """The chunk strings of one document as the report's code receives them: LangChain's
    ``TokenTextSplitter`` windows decoded and unstripped (``langchain_token``), or its
    ``RecursiveCharacterTextSplitter`` at the given separators and token unit, stripped as the
    report's ``RecursiveTokenChunker`` strips (``langchain_recursive``)."""
    from chunklab_core.chunking import library_splitters as lib

    if func_name == "langchain_token":
        chunks, _, _ = lib.langchain_token_chunks(text, params["size"], params["overlap"])
    elif func_name == "langchain_recursive":
        chunks, _, _ = lib.langchain_recursive_chunks(text, params["size"], params["overlap"], params["unit"],
                                                      params.get("separators"))
    else:
        raise ValueError(f"no report locating for strategy function {func_name!r}; "
                         f"known: {', '.join(REPORT_LOCATED)}")
    return chunks


def report_spans(text: str, func_name: str, params: Mapping) -> list[tuple[int, int]]:
    """Every chunk of one document, located as the report's code locates it (:func:`report_locate`),
    in the chunker's order; repeated strings share the first occurrence's span."""
    return [report_locate(text, chunk) for chunk in report_texts(text, func_name, params)]
