"""Post 02's sentences about its corpora and its main tables, filled into the templates of ``prose.md``.

Handles: the evidence each corpus holds (:func:`evidence_text`, with the warning for corpora
with too few documents for a cluster bootstrap), the counts of paired retriever verdicts
(:func:`describe_paired`), the two-model comparison (:func:`models_text`), the recall and
balanced leaders per corpus (:func:`describe_balanced`) and the τ summary
(:func:`describe_stability`). The sentences live in ``prose.md``
(:mod:`chunklab_core.reports.templates`); this module computes the values (numbers by
:mod:`chunklab_core.core.numbers`, verdict words by :mod:`chunklab_core.stats.claims`) and names
every corpus by its sample label (``labels``: :func:`chunklab_core.reports.samples.labels_for`).
Not handled: the tables (``post02.tables``), the readings of the other sections
(``post02.claims``, ``long_evidence``, ``structure``, ``truncation``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from chunklab_core.core import numbers
from chunklab_core.evaluation.measures import column
from chunklab_core.reports.samples import DATASETS, DOCUMENT_WORDS
from chunklab_core.reports.templates import Templates
from chunklab_core.retrieval.registry import uses_no_model
from chunklab_core.stats import claims

PROSE = Templates(__file__, "prose.md")

__all__ = ["evidence_text", "agreed_verdicts", "describe_paired", "models_text", "describe_balanced", "describe_stability"]


def _documents(key: str, n: int) -> str:
    singular, plural = DOCUMENT_WORDS.get(key, ("document", "documents"))
    return numbers.count(n, singular, plural)


def evidence_text(corpora: Mapping, labels: Mapping[str, str]) -> str:
    """Each corpus's sample (questions and the documents they are about, of all its documents),
    and a warning for those whose questions come from fewer than
    ``stats.clustered.MIN_RELIABLE_CLUSTERS`` documents (documents are resampled)."""
    from chunklab_core.stats.clustered import MIN_RELIABLE_CLUSTERS

    parts, few = [], []
    for name, corpus in corpora.items():
        documents = len({q.doc_id for q in corpus.questions})
        parts.append(PROSE.fill("evidence.corpus", sample=labels[name],
                                documents=_documents(name, len(corpus.documents))))
        if documents < MIN_RELIABLE_CLUSTERS:
            few.append(f"{DATASETS.get(name, name)} ({_documents(name, documents)})")
    text = PROSE.fill("evidence", corpora="; ".join(parts))
    if few:
        text += " " + PROSE.fill("evidence.few", minimum=MIN_RELIABLE_CLUSTERS, few=", ".join(few))
    return text


def agreed_verdicts(paired: pd.DataFrame) -> pd.Series:
    """The pair verdict under the one rule for both designs: a side ahead only where the
    question-level verdict (``question verdict``) says the same, else not told apart (post 08's rule,
    as post 00 counts them)."""
    if "question verdict" not in paired:
        return paired["verdict"]
    return paired["verdict"].where(paired["question verdict"] == paired["verdict"], claims.NOT_TOLD_APART)


def describe_paired(paired: pd.DataFrame, labels: Mapping[str, str]) -> str:
    """Counts of the series' pair verdicts (``claims.pair_verdict``) per corpus and comparison, a
    side ahead only where both resampling designs agree (:func:`agreed_verdicts`)."""
    if paired.empty:
        return PROSE.fill("paired.none")
    paired = paired.assign(verdict=agreed_verdicts(paired))
    parts = []
    for (corpus, comparison), group in paired.groupby(["corpus", "comparison"], sort=False):
        counts = group["verdict"].value_counts()
        other = comparison.split(" − ")[0]
        parts.append(PROSE.fill(
            "paired.corpus", sample=labels[corpus], comparison=comparison, other=other,
            other_ahead=counts.get(f"{other} ahead", 0), bm25_ahead=counts.get("bm25 ahead", 0),
            not_told_apart=claims.NOT_TOLD_APART, tied=counts.get(claims.NOT_TOLD_APART, 0),
            strategies=numbers.count(len(group), "strategy", "strategies"),
            mean=numbers.number(group["difference"].mean(), 3, signed=True)))
    return " ".join(parts)


def coverage_text(coverage: pd.DataFrame | None, read: Sequence[str], model: str, labels: Mapping[str, str]) -> str:
    """Where the second model is read (``read``, the corpora the post asks it on) and where it is
    still being recorded: the other corpora of ``coverage``
    (:func:`chunklab_core.reports.post02.tables.model_coverage`), each with its recorded cells."""
    if coverage is None or coverage.empty:
        return ""
    names = [labels.get(c, c) for c in coverage["corpus"] if c in set(read)]
    waiting = coverage[~coverage["corpus"].isin(list(read))]
    if waiting.empty:
        return PROSE.fill("models.coverage.all", model=model, corpora="; ".join(names))
    pending = "; ".join(f"{labels.get(r['corpus'], r['corpus'])} ({int(r['recorded'])} of "
                        f"{numbers.count(int(r['cells']), 'cell')} recorded)" for _, r in waiting.iterrows())
    return PROSE.fill("models.coverage.partial", model=model, corpora="; ".join(names) or "no corpus",
                      pending=pending)


def models_text(comparisons: Sequence[Mapping], models: Sequence[str], labels: Mapping[str, str],
                coverage: pd.DataFrame | None = None, read: Sequence[str] = ()) -> str:
    """The dense pick under each of two models per corpus, with each model's decision by the engine,
    after where the second model is read and where it is still being recorded (:func:`coverage_text`).

    ``comparisons``: :func:`chunklab_core.reports.post02.tables.compare_models`' second value.
    """
    if len(models) < 2:
        return PROSE.fill("models.one")
    where = coverage_text(coverage, read, models[1], labels)
    if not comparisons:
        return " ".join(p for p in (where, PROSE.fill("models.none")) if p)
    parts = ([where] if where else []) + [PROSE.fill("models.basis")]
    for item in comparisons:
        (model_a, a), (model_b, b) = item["verdicts"].items()
        parts.append(PROSE.fill(
            "models.corpus", sample=labels[item["corpus"]],
            strategies=numbers.count(item["strategies"], "strategy", "strategies"),
            leader_a=a.pick, model_a=model_a, leader_b=b.pick, model_b=model_b,
            same="the same" if a.pick == b.pick else "the pick changes",
            headline_a=_sentence(a), headline_b=_sentence(b)))
    return " ".join(parts)


def _sentence(comparison) -> str:
    """The engine's headline of one model's comparison at k, as a sentence with its sample."""
    text = comparison.headline(4)
    return (f"{text[0].upper()}{text[1:]} (paired intervals, {comparison.design}, "
            f"{comparison.resamples:,} paired resamples of {comparison.n_questions:,} questions).")


def _cell(row) -> str:
    where = row["retriever"] if uses_no_model(row["model"]) else f"{row['retriever']} ({row['model']})"
    return f"{row['label']} / {where}"


def describe_balanced(balanced: pd.DataFrame, k: int, labels: Mapping[str, str]) -> str:
    """Per corpus: the cell with the highest recall@k and the balanced leader, each with its
    recall and its tokens as a multiple of the corpus's cheapest cell (``post02.tables.balanced_matrix``)."""
    parts = []
    recall = column("recall", k)
    for corpus, group in balanced.groupby("corpus", sort=False):
        best_recall = group.sort_values(recall, ascending=False).iloc[0]
        best = group.iloc[0]
        parts.append(PROSE.fill(
            "balanced.corpus", sample=labels[corpus], k=k, best_recall=_cell(best_recall),
            recall=numbers.number(best_recall[recall]), ratio=numbers.number(best_recall["tokens / T_min"], 1),
            best_balanced=_cell(best), balanced_recall=numbers.number(best[recall]),
            balanced_ratio=numbers.number(best["tokens / T_min"], 1)))
    return " ".join(parts)


def describe_stability(table: pd.DataFrame) -> str:
    """Mean τ per kind of comparison, with the range of τ over its comparisons (``numbers.value_range``)."""
    if table.empty:
        return PROSE.fill("stability.none")
    kinds = [PROSE.fill("stability.kind", kind=kind, mean=numbers.number(group["tau"].mean(), 2),
                        spread=numbers.value_range(group["tau"], "comparison"))
             for kind, group in table.groupby("across", sort=False)]
    return PROSE.fill("stability", kinds="; ".join(kinds))
