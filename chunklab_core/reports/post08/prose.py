"""Post 08's sentences: the values its paragraphs need, filled into the Markdown templates of ``prose.md``.

Handles: the set-up line of the report's re-run (:func:`setup_text`: the sample by
:func:`chunklab_core.reports.samples.corpus_sample_label`, the model, the depths) and the
reading of the builder's table (:func:`builder_text`: how often the library defaults lead,
cannot be ruled out and are ruled out, counted from ``post08.builder.builder_table``, whose
verdict words come from the series' rule). Numbers and counts are written by
:mod:`chunklab_core.core.numbers`.

Not handled: computing the tables (``post08.tables``, ``post08.builder``), the figures.
"""

from __future__ import annotations

from typing import Sequence

import pandas as pd

from chunklab_core.core import numbers
from chunklab_core.reports import samples
from chunklab_core.reports.templates import Templates
from chunklab_core.stats import claims

PROSE = Templates(__file__, "prose.md")


def setup_text(corpus, model: str, depths: Sequence[int]) -> str:
    """The re-run's sample (questions and documents of Chroma's corpora), model and depths."""
    return PROSE.fill("setup", sample=samples.corpus_sample_label("chroma", corpus), model=model, depths=list(depths))


def builder_text(builder: pd.DataFrame, k: int, csv: str, metric: str = "recall") -> str:
    """How the library defaults fare against each setting's leader, counted over the builder's table."""
    cells = builder.groupby(["corpus", "retriever", "model"], sort=False).ngroups
    library = builder[builder["library"]]
    leads = library["label"] == library["leader"]
    leaders = builder[builder["label"] == builder["leader"]]
    return PROSE.fill(
        "builder", cells=numbers.count(cells, "setting"),
        corpora=numbers.count(builder["corpus"].nunique(), "corpus", "corpora"),
        retrievers=numbers.count(builder["retriever"].nunique(), "retriever"),
        defaults=numbers.count(library["strategy"].nunique(), "library default"),
        leads=numbers.count(int(leads.sum()), "setting"),
        kept=int(((library["verdict"] != claims.RULED_OUT) & ~leads).sum()),
        out=int((library["verdict"] == claims.RULED_OUT).sum()),
        results=numbers.count(len(library), "result"),
        series_leads=numbers.count(int((~leaders["library"]).sum()), "setting"), metric=f"{metric}@{k}", csv=csv)
