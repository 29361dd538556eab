"""Post 02, structure: which documents have headings, and one chunk per section versus packing.

Handles: the per-corpus heading summary that warns when structure-aware chunking falls back
to paragraphs (``headings.corpus_heading_summary``, as prose by :func:`describe_fallbacks`, and in
the strategy's name in the matrix by :func:`label_fallbacks`),
and the comparison of the two structure-aware modes on one corpus (:func:`section_mode_table`):
``structure_aware`` (sections packed greedily under the ceiling) and ``structure_sections``
(one chunk per section, split only when longer than the ceiling), both under BM25, with the
number of chunks, median chunk tokens, slot recall@k and mean returned tokens@k. BM25 alone,
because the point is what the chunks are, and it costs no embedding.

The sentences (and the fallback names) live in ``structure.md``
(:mod:`chunklab_core.reports.templates`); each corpus is named by its sample label
(``labels``: :func:`chunklab_core.reports.samples.labels_for`).

Not handled: the metric formulas (``slot_metrics``), the chunkers (``chunking.structure``).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from chunklab_core.chunking import chunk_corpus, strategy_label
from chunklab_core.evaluation.scoring import run_cell
from chunklab_core.retrieval.registry import BASELINE
from chunklab_core.core.headings import corpus_heading_summary
from chunklab_core.evaluation.slot_metrics import score_slots
from chunklab_core.evaluation.measures import KS, column
from chunklab_core.core import numbers
from chunklab_core.core.tokens import count_tokens_many
from chunklab_core.reports.templates import Templates

PROSE = Templates(__file__, "structure.md")

MODES = ("structure_aware", "structure_sections")


def heading_summary(corpora: dict, labels: Mapping[str, str]) -> pd.DataFrame:
    """Per corpus (named by its sample label): documents, with headings, falling back to paragraphs, the cues seen."""
    table = corpus_heading_summary(corpora)
    table["corpus"] = table["corpus"].map(lambda c: labels.get(c, c))
    return table


def describe_fallbacks(summary: pd.DataFrame) -> str:
    """A warning per corpus with documents that have no heading, or a line saying none has."""
    warned = summary[summary["fall back to paragraphs"] > 0]
    if warned.empty:
        return PROSE.fill("fallbacks.none")
    parts = [PROSE.fill("fallbacks.corpus", sample=row["corpus"], without=row["fall back to paragraphs"],
                        documents=numbers.count(row["documents"], "document")) for _, row in warned.iterrows()]
    return PROSE.fill("fallbacks", corpora=" ".join(parts))


def fallback_label(documents: int, without_headings: int, base: str = "Structure-aware") -> str:
    """What a structure-aware strategy really did on a corpus, said in its name.

    No document without a heading: ``base``; every document without one: ``paragraph packing
    (no headings found)``; otherwise ``base`` with the share that fell back to paragraphs.
    """
    if without_headings <= 0:
        return base
    if without_headings >= documents:
        return PROSE.fill("label.all", base=base, documents=numbers.count(documents, "document"))
    return PROSE.fill("label.some", base=base, without=without_headings, documents=numbers.count(documents, "document"))


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


def section_mode_table(corpus, k: int, label: str, ks=KS) -> pd.DataFrame:
    """Packing versus one chunk per section on ``corpus`` under BM25 (see the module docstring)."""
    rows = []
    recall, tokens = column("recall", k), column("tokens", k)
    for strategy in MODES:
        chunks = chunk_corpus(corpus.documents, strategy)
        run = run_cell(corpus, strategy, BASELINE, k_max=max(ks), chunks=chunks)
        scores = score_slots(run, list(ks))
        texts = [corpus.doc(c.doc_id).text[c.start : c.end] for c in chunks]
        rows.append({"corpus": label, "strategy": strategy_label(strategy),
                     "chunks": len(chunks), "chunks per document": len(chunks) / len(corpus.documents),
                     "median tokens": float(np.median(count_tokens_many(texts))),
                     recall: scores[recall].mean(), tokens: scores[tokens].mean(),
                     "questions": int(scores["has_gold"].sum())})
    return pd.DataFrame(rows)


def describe_section_modes(table: pd.DataFrame, k: int) -> str:
    """Chunks, median tokens, recall@k and returned tokens of the two modes (:func:`section_mode_table`)."""
    pack, section = table.iloc[0], table.iloc[1]
    recall, tokens = column("recall", k), column("tokens", k)
    return PROSE.fill("modes", sample=pack["corpus"], questions=pack["questions"], pack_chunks=pack["chunks"],
                      pack_tokens=numbers.number(pack["median tokens"], 0), section_chunks=section["chunks"],
                      section_tokens=numbers.number(section["median tokens"], 0), k=k,
                      pack_recall=numbers.number(pack[recall]), section_recall=numbers.number(section[recall]),
                      pack_returned=numbers.number(pack[tokens], 0), section_returned=numbers.number(section[tokens], 0))
