"""Post 08's sentences: the values its paragraphs need, filled into the Markdown templates of ``prose.md``.

Handles: the set-up line of the report's re-run (:func:`setup_text`: the sample by
:func:`chunklab_core.reports.samples.corpus_sample_label`, the model, the depths), the reading
of the published tables beside the re-run (:func:`comparison_text`, counted from
``post08.tables.agreement_counts``), what the union in precision_Ω changes
(:func:`omega_text`), the claims' outcomes (:func:`claims_text`), what the LLM chunker ran as
(:func:`llm_text`) and what Chroma's approximate index changes (:func:`hnsw_text`); the builder
section's reading is ``post08.builder.pool_text``. Numbers and counts are written by
:mod:`chunklab_core.core.numbers`.

Not handled: computing the tables (``post08.tables``, ``post08.builder``), the figures.
"""

from __future__ import annotations

from typing import Sequence

import pandas as pd

from chunklab_core.core import numbers
from chunklab_core.reports import samples
from chunklab_core.reports.templates import Templates

PROSE = Templates(__file__, "prose.md")


def setup_text(corpus, model: str, depths: Sequence[int]) -> str:
    """The re-run's sample (questions and documents of Chroma's corpora), model and depths."""
    return PROSE.fill("setup", sample=samples.corpus_sample_label("chroma", corpus), model=model, depths=list(depths))



def comparison_text(comparison: pd.DataFrame, model: str, depth: int) -> str:
    """How many comparable published values the re-run meets, by each value's yardstick
    (``post08.tables.yardstick``: rounding where deterministic, the SEM where an embedding model runs)."""
    def count(table: str, stick: str) -> tuple[int, int]:
        part = comparison[(comparison["table"] == table) & (comparison["yardstick"] == stick)]
        return int(part["agrees"].sum()), len(part)

    same_sem, same_sem_n = count(model, "SEM")
    same_round, same_round_n = count(model, "rounding")
    other = next(t for t in dict.fromkeys(comparison["table"]) if t != model)
    omega_round, omega_n = count(other, "rounding")
    return PROSE.fill("comparison", depth=depth, model=model, other=other,
                      same_sem=same_sem, same_sem_values=numbers.count(same_sem_n, "value"),
                      same_round=same_round, same_round_values=numbers.count(same_round_n, "value"),
                      omega_round=omega_round, omega=numbers.count(omega_n, "value"))


def omega_text(report: pd.DataFrame, depth: int) -> str:
    """The largest drop from summing C_Ω's lengths instead of their union, and its row."""
    part = report[report["retrieved"] == depth]
    drop = part["precision_omega mean"] - part["precision_omega_summed mean"]
    worst = part.loc[drop.idxmax()]
    return PROSE.fill("omega", drop=numbers.number(float(drop.max()), 1), row=worst["label"], equal=int((drop.abs() < 0.05).sum()), rows=len(part))


def claims_text(claims_table: pd.DataFrame, corpus) -> str:
    """How many of the report's claims the re-run reproduces, does not, or cannot decide."""
    from chunklab_core.reports.post08.tables import NOT_REPRODUCED, REPRODUCED, UNDECIDED

    outcomes = claims_table["outcome"]
    text = PROSE.fill("claims", claims=numbers.count(len(claims_table), "claim"),
                      sample=samples.corpus_sample_label("chroma", corpus),
                      reproduced=int((outcomes == REPRODUCED).sum()),
                      not_reproduced=int((outcomes == NOT_REPRODUCED).sum()),
                      undecided=int((outcomes == UNDECIDED).sum()))
    other = claims_table[~claims_table["same model"].astype(bool)] if "same model" in claims_table else claims_table[:0]
    if len(other):
        text += " " + PROSE.fill("claims.other", n=numbers.count(len(other), "claim"),
                                 tables=", ".join(dict.fromkeys(other["table"])),
                                 model=", ".join(m for m in dict.fromkeys(other["checked with"]) if m) or "the re-run's model")
    return text


def llm_text(sizes: pd.DataFrame, corpus, strategy: str = "llm_semantic") -> str:
    """What the LLM chunker ran as (its registered label names the model), on which corpora,
    its chunks and their mean size, against the other rows' mean sizes."""
    own = sizes[sizes["strategy"] == strategy].iloc[0]
    others = sizes[sizes["strategy"] != strategy]["mean tokens"]
    names = samples.corpus_sample_label("chroma", corpus)
    return PROSE.fill("llm", model=own["label"], corpora=names, chunks=numbers.count(int(own["chunks"]), "chunk"),
                      tokens=numbers.number(own["mean tokens"], 0), low=numbers.number(others.min(), 0),
                      high=numbers.number(others.max(), 0))


def hnsw_text(hnsw: pd.DataFrame, k: int, ef: int) -> str:
    """How often chromadb's HNSW returns the exact top-k, and the range of its effect per row."""
    return PROSE.fill("hnsw", ef=ef, same=f"{int(hnsw['same top-k'].sum()):,}", pairs=f"{int(hnsw['questions'].sum()):,}",
                      rows=numbers.count(len(hnsw), "row"), k=k,
                      recall_low=numbers.number(hnsw["recall hnsw − exact"].min(), 2, signed=True),
                      recall_high=numbers.number(hnsw["recall hnsw − exact"].max(), 2, signed=True),
                      iou_low=numbers.number(hnsw["iou hnsw − exact"].min(), 2, signed=True),
                      iou_high=numbers.number(hnsw["iou hnsw − exact"].max(), 2, signed=True))


def published_omega_text(pairs: pd.DataFrame) -> str:
    """The report's two tables' precision_Ω of the rows they share, side by side."""
    models = [c for c in pairs.columns if c not in ("strategy", "label")]
    listed = "; ".join(f"{r['label']}: {numbers.number(r[models[0]], 1)} and {numbers.number(r[models[1]], 1)}"
                       for _, r in pairs.iterrows())
    differ = int((pairs[models[0]] - pairs[models[1]]).abs().gt(0.05).sum())
    return PROSE.fill("published_omega", differ=differ, rows=numbers.count(len(pairs), "row"), first=models[0],
                      second=models[1], pairs=listed)
