"""Post 02, structure: which documents have headings, and one chunk per section versus packing.

Handles: the per-corpus heading summary that warns when structure-aware chunking falls back
to paragraphs (``headings.corpus_heading_summary``, as prose by :func:`describe_fallbacks`, and in
the strategy's name in the matrix by :func:`label_fallbacks`),
and the comparison of the two structure-aware modes on one corpus (:func:`section_mode_table`):
``structure_aware`` (sections packed greedily under the ceiling) and ``structure_sections``
(one chunk per section, split only when longer than the ceiling), both under BM25, with the
number of chunks, median chunk tokens, slot recall@k and mean returned tokens@k. BM25 alone,
because the point is what the chunks are, and it costs no embedding.

Not handled: the metric formulas (``slot_metrics``), the chunkers (``chunking.structure``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from chunklab_core.chunking import chunk_corpus, strategy_label
from chunklab_core.evaluation.scoring import run_cell
from chunklab_core.core.headings import corpus_heading_summary
from chunklab_core.data.corpora import CORPUS_LABELS
from chunklab_core.evaluation.slot_metrics import score_slots
from chunklab_core.evaluation.measures import KS, column
from chunklab_core.core.tokens import count_tokens_many

MODES = ("structure_aware", "structure_sections")


def heading_summary(corpora: dict) -> pd.DataFrame:
    """Per corpus: documents, with headings, falling back to paragraphs, the cues seen."""
    table = corpus_heading_summary(corpora)
    table["corpus"] = table["corpus"].map(lambda c: CORPUS_LABELS.get(c, c))
    return table


def describe_fallbacks(summary: pd.DataFrame) -> str:
    """A warning per corpus with documents that have no heading, or a line saying none has."""
    warned = summary[summary["fall back to paragraphs"] > 0]
    if warned.empty:
        return "Every document of every corpus has at least one heading."
    parts = [f"**{row['corpus']}**: {row['fall back to paragraphs']} of {row['documents']} documents have no "
             "heading, so structure-aware chunking falls back to paragraphs there." for _, row in warned.iterrows()]
    return "⚠ " + " ".join(parts)


def fallback_label(documents: int, without_headings: int, base: str = "Structure-aware") -> str:
    """What a structure-aware strategy really did on a corpus, said in its name.

    No document without a heading: ``base``; every document without one: ``paragraph packing
    (no headings found)``; otherwise ``base`` with the share that fell back to paragraphs.
    """
    if without_headings <= 0:
        return base
    if without_headings >= documents:
        return f"{base}: paragraph packing (no headings in any of {documents} documents)"
    return f"{base} (paragraphs in {without_headings} of {documents} documents without headings)"


def label_fallbacks(table: pd.DataFrame, corpora: dict, strategies=("structure_aware",)) -> pd.DataFrame:
    """``table``'s ``label`` column with each structure-aware row named by what it did on its corpus."""
    summary = corpus_heading_summary(corpora).set_index("corpus")
    table = table.copy()
    for corpus in summary.index:
        row = summary.loc[corpus]
        for strategy in strategies:
            mask = (table["corpus"] == corpus) & (table["strategy"] == strategy)
            table.loc[mask, "label"] = fallback_label(int(row["documents"]), int(row["fall back to paragraphs"]),
                                                       strategy_label(strategy))
    return table


def pick_corpus(corpora: dict, preferred: str = "nq") -> str:
    """The corpus for the mode comparison: ``preferred`` if loaded, else the one whose
    documents have the most headings per document."""
    if preferred in corpora:
        return preferred
    summary = corpus_heading_summary(corpora)
    return str(summary.sort_values("with headings", ascending=False)["corpus"].iloc[0])


def section_mode_table(corpus, k: int, ks=KS) -> pd.DataFrame:
    """Packing versus one chunk per section on ``corpus`` under BM25 (see the module docstring)."""
    rows = []
    recall, tokens = column("recall", k), column("tokens", k)
    for strategy in MODES:
        chunks = chunk_corpus(corpus.documents, strategy)
        run = run_cell(corpus, strategy, "bm25", k_max=max(ks), chunks=chunks)
        scores = score_slots(run, list(ks))
        texts = [corpus.doc(c.doc_id).text[c.start : c.end] for c in chunks]
        rows.append({"corpus": CORPUS_LABELS.get(corpus.name, corpus.name), "strategy": strategy_label(strategy),
                     "chunks": len(chunks), "chunks per document": len(chunks) / len(corpus.documents),
                     "median tokens": float(np.median(count_tokens_many(texts))),
                     recall: scores[recall].mean(), tokens: scores[tokens].mean(),
                     "questions": int(scores["has_gold"].sum())})
    return pd.DataFrame(rows)


def describe_section_modes(table: pd.DataFrame, k: int) -> str:
    pack, section = table.iloc[0], table.iloc[1]
    recall, tokens = column("recall", k), column("tokens", k)
    return (f"On {pack['corpus']} ({pack['questions']} questions, BM25), packing gives {pack['chunks']} chunks "
            f"(median {pack['median tokens']:.0f} tokens) and one chunk per section {section['chunks']} "
            f"(median {section['median tokens']:.0f} tokens); recall@{k} {pack[recall]:.3f} against "
            f"{section[recall]:.3f}, at {pack[tokens]:.0f} against {section[tokens]:.0f} "
            f"returned tokens.")
