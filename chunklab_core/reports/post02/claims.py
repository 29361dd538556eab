"""Post 02's claims within their evidence: readings of its large tables, verdicts for its rankings.

Handles: what to read in the chunk-health table (and why ``pct_tiny`` is 100 for 500-character
chunkers), the paired retriever comparisons with a word on multiplicity and only the
separated pairs shown, the balanced ranking as paired verdicts per corpus at several λ (with
the embedding model named in every cell), the budget table as a labelled tidy table, the span
table's reading, the stability table's caveats (τ outside its own percentile interval,
rankings that include truncated dense cells), and the post's closing answer. The sentences
live in ``claims.md`` (:mod:`chunklab_core.reports.templates`); this module computes their
values from the tables passed in (numbers by :mod:`chunklab_core.core.numbers`, verdict words
by :mod:`chunklab_core.stats.claims`) and names every corpus by its sample label (``labels``:
:func:`chunklab_core.reports.samples.labels_for`).

Not handled: computing the matrix, the tables themselves (:mod:`post02.tables`), the truncation
section (:mod:`chunklab_core.reports.post02.truncation`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from chunklab_core.core import numbers
from chunklab_core.stats import claims
from chunklab_core.chunking.health import TINY_TOKENS
from chunklab_core.chunking import strategy_label
from chunklab_core.evaluation.measures import column
from chunklab_core.reports.post02.prose import agreed_verdicts, describe_paired
from chunklab_core.reports.templates import Templates
from chunklab_core.reports.verdict_tables import balanced_verdicts, leader_verdicts, question_documents
from chunklab_core.retrieval.registry import needs_model, rows_of_model, uses_no_model

PROSE = Templates(__file__, "claims.md")

HEALTH_COLUMNS = ["corpus", "strategy", "n_chunks", "median_tokens", "pct_tiny", "pct_fragments", "boundary_ok",
                  "coverage", "redundancy", "lexical_cohesion", "share truncated"]
SMALL_SAMPLE = 50  # questions with gold below which the answer says most strategies cannot be told apart
SPAN_EVIDENCE = 0.5  # span precision below which returned text is "mostly not evidence"
NAMED_CELLS = 8  # cells the budget reading names before "…"


def _questions(n) -> str:
    return f"{int(n):,}"


def health_view(health: pd.DataFrame) -> pd.DataFrame:
    """The chunk-health columns worth reading (columns with no value at all are left out)."""
    columns = [c for c in HEALTH_COLUMNS if c in health.columns and health[c].notna().any()]
    return health[columns]


def health_reading(health: pd.DataFrame, labels: Mapping[str, str]) -> str:
    """What to look at in the chunk-health table, from the table."""
    empty = [c for c in health.columns if health[c].isna().all()]
    tiny_all = health[(health["pct_tiny"] >= 99.5) & (health["median_tokens"] < TINY_TOKENS)]["strategy"] \
        .map(strategy_label).drop_duplicates().tolist()
    worst = health.loc[health["boundary_ok"].idxmin()]
    text = PROSE.fill("health", rows=len(health), worst_strategy=strategy_label(worst["strategy"]),
                      worst_sample=labels[worst["corpus"]], worst_value=numbers.number(worst["boundary_ok"], 2),
                      tiny=TINY_TOKENS, small=", ".join(tiny_all) or PROSE.fill("health.none_small"))
    if empty:
        text += " " + PROSE.fill("health.empty", columns=", ".join(empty))
    return text


def paired_reading(paired: pd.DataFrame, labels: Mapping[str, str], level: float = 0.95) -> str:
    """Counts per corpus and comparison, the multiplicity caveat, and what the shown table holds."""
    separated = int((agreed_verdicts(paired) != claims.NOT_TOLD_APART).sum())
    return (describe_paired(paired, labels) + "\n\n" + claims.multiplicity_text(len(paired), separated, level)
            + " " + PROSE.fill("paired.shown", separated=separated, pairs=len(paired)))


def separated_pairs(paired: pd.DataFrame) -> pd.DataFrame:
    """Only the comparisons whose paired interval excludes 0 under both resampling designs."""
    return paired[agreed_verdicts(paired) != claims.NOT_TOLD_APART].reset_index(drop=True)


def _cell_name(model: str, strategy: str, retriever: str) -> str:
    where = retriever if not needs_model(retriever) or uses_no_model(model) else f"{retriever} ({model})"
    return f"{strategy_label(strategy)} / {where}"


def balanced_verdict_table(per_question: pd.DataFrame, k: int, lams: Sequence[float], resamples: int,
                           seed: int) -> pd.DataFrame:
    """Per corpus: paired verdicts of the balanced score over every cell (model named), at each λ.

    T_min is the cheapest cell's mean tokens@k in that corpus, as in :func:`post02.balanced_matrix`.
    """
    frames = []
    for corpus, group in per_question.groupby("corpus", sort=False):
        cells = group.assign(cell=[_cell_name(m, s, r) for m, s, r in
                                   zip(group["model"], group["strategy"], group["retriever"])])
        recall = cells.pivot_table(index="qid", columns="cell", values=column("recall", k), aggfunc="first")
        tokens = cells.pivot_table(index="qid", columns="cell", values=column("tokens", k), aggfunc="first")
        keep = recall.dropna(axis=1).columns.intersection(tokens.dropna(axis=1).columns)
        recall, tokens = recall[keep].dropna(), tokens[keep].dropna()
        frames.append(balanced_verdicts(recall, tokens, lams, resamples, seed,
                                        question_documents(group)).assign(corpus=corpus))
    return pd.concat(frames, ignore_index=True)


def balanced_reading(verdicts: pd.DataFrame, labels: Mapping[str, str]) -> str:
    """Per corpus and λ: the balanced leader (model named), its verdict and how many cells it cannot shed."""
    lines = []
    for corpus, group in verdicts.groupby("corpus", sort=False):
        parts = []
        for lam, table in group.groupby("lambda", sort=False):
            leader = table.iloc[0]
            kept = int(((table["verdict"] == claims.NOT_RULED_OUT) & (table.index != leader.name)).sum())
            verdict = (PROSE.fill("balanced.winner") if leader["verdict"] == claims.WINNER else
                       PROSE.fill("balanced.no_winner", kept=numbers.count(kept, "other cell")))
            parts.append(PROSE.fill("balanced.lambda", lam=f"{lam:g}", leader=leader["strategy"], verdict=verdict))
        lines.append(PROSE.fill("balanced.corpus", sample=labels[corpus],
                                questions=_questions(group["questions"].iloc[0]), settings="; ".join(parts)))
    return PROSE.fill("balanced", corpora="\n".join(lines))


def budget_long(budget: pd.DataFrame) -> pd.DataFrame:
    """The budget table (index corpus × strategy, columns retriever × budget) as tidy labelled rows."""
    tidy = budget.stack(["retriever", "budget"], future_stack=True).rename("recall").reset_index()
    return tidy.dropna(subset=["recall"])[["corpus", "strategy", "retriever", "budget", "recall"]]


def budget_reading(budget: pd.DataFrame, model: str, depth: int, labels: Mapping[str, str]) -> str:
    """Per corpus, the best cell at the smallest and the largest budget (with intervals), and where
    the recorded depth of ``depth`` chunks, not the budget, ended some question's reading.

    ``budget``: :func:`post02.tables.budget_intervals`.
    """
    small, large = budget["budget"].min(), budget["budget"].max()
    parts = []
    for corpus, group in budget.groupby("corpus", sort=False):
        best = {b: group[group["budget"] == b].sort_values("recall", ascending=False).iloc[0] for b in (small, large)}
        parts.append(PROSE.fill("budget.corpus", sample=labels[corpus], cells=", ".join(
            PROSE.fill("budget.best", strategy=row["strategy"], retriever=row["retriever"], budget=b,
                       recall=numbers.estimate(row["recall"], row["low"], row["high"], 2), questions=row["questions"])
            for b, row in best.items())))
    bound = budget[budget["depth binds"] > 0]
    if bound.empty:
        size = PROSE.fill("budget.depth_never_binds", depth=depth)
    else:
        cells = [PROSE.fill("budget.bound_cell", sample=sample, strategy=strategy, retriever=retriever)
                 for sample, strategy, retriever in sorted({(labels[r["corpus"]], r["strategy"], r["retriever"])
                                                            for _, r in bound.iterrows()})]
        named = "; ".join(cells[:NAMED_CELLS]) + ("; …" if len(cells) > NAMED_CELLS else "")
        size = PROSE.fill("budget.depth_binds", bound=len(bound), cells=len(budget), named=named, depth=depth,
                          most=numbers.number(bound['depth binds'].max(), 0, scale="percent"))
    return PROSE.fill("budget", model=model, corpora="; ".join(parts), size=size)


def span_reading(spans: pd.DataFrame, k: int, labels: Mapping[str, str], shown: int = 3) -> str:
    """What the span table says, per corpus: the best span recall and how little of the returned text
    is evidence; ``shown``: the cells per corpus the table below shows (:func:`span_top`)."""
    if spans.empty:
        return PROSE.fill("span.none")
    recall, precision = column("span_recall", k), column("span_precision", k)
    parts = []
    for corpus, group in spans.groupby("corpus", sort=False):
        best = group.loc[group[recall].idxmax()]
        parts.append(PROSE.fill("span.corpus", sample=labels[corpus], recall=numbers.number(best[recall], 2),
                                strategy=best["strategy"], retriever=best["retriever"],
                                precision=numbers.number(group[precision].max(), 3)))
    reading = (PROSE.fill("span.mostly_not_evidence", half=numbers.number(SPAN_EVIDENCE, 1))
               if spans[precision].max() < SPAN_EVIDENCE else PROSE.fill("span.sometimes_evidence"))
    return PROSE.fill("span", rows=len(spans), k=k, reading=reading, corpora="; ".join(parts), shown=shown)


def span_top(spans: pd.DataFrame, k: int, n: int = 3) -> pd.DataFrame:
    """The ``n`` cells of each corpus with the highest span recall@k."""
    return (spans.sort_values(column("span_recall", k), ascending=False).groupby("corpus", sort=False).head(n)
            .sort_values(["corpus", column("span_recall", k)], ascending=[True, False]).reset_index(drop=True))


def stability_reading(stability: pd.DataFrame, truncated: pd.DataFrame | None, labels: Mapping[str, str],
                      threshold: float = 0.25) -> str:
    """Caveats for the τ table: estimates outside their own interval, dense cells with many cut chunks."""
    outside = stability[(stability["tau"] < stability["low"]) | (stability["tau"] > stability["high"])]
    parts = []
    if len(outside):
        named = "; ".join(PROSE.fill("stability.outside.comparison", a=r["setting a"], b=r["setting b"],
                                     tau=numbers.number(r["tau"], 2), interval=numbers.interval(r["low"], r["high"], 2))
                          for _, r in outside.iterrows())
        parts.append(PROSE.fill("stability.outside", comparisons=numbers.count(len(outside), "comparison"),
                                named=named))
    if truncated is not None and len(truncated):
        heavy = truncated[truncated["share truncated"] >= threshold]
        if len(heavy):
            named = ", ".join(PROSE.fill("stability.truncated.cell", strategy=strategy_label(r["strategy"]),
                                         sample=labels[r["corpus"]], model=r["model"],
                                         share=numbers.number(r['share truncated'], 0, scale="percent")) for _, r in heavy.iterrows())
            parts.append(PROSE.fill("stability.truncated", cells=numbers.count(len(heavy), "cell"),
                                    threshold=numbers.number(threshold, 0, scale="percent"), named=named))
    return " ".join(parts) or PROSE.fill("stability.clean")


def heavily_truncated(truncated: pd.DataFrame | None, threshold: float = 0.25) -> dict[str, set[str]]:
    """Per corpus, the strategies with at least ``threshold`` of their chunks cut by any embedding model."""
    if truncated is None or not len(truncated):
        return {}
    heavy = truncated[truncated["share truncated"] >= threshold]
    return {corpus: set(group["strategy"]) for corpus, group in heavy.groupby("corpus", sort=False)}


def stability_without_truncation_text(stability: pd.DataFrame, clean: pd.DataFrame,
                                      dropped: dict[str, set[str]], labels: Mapping[str, str]) -> str:
    """τ across retrievers with and without the heavily truncated strategies, per comparison."""
    if not dropped:
        return PROSE.fill("clean.none")
    keys = ["across", "setting a", "setting b"]
    both = stability[stability["across"] == "retrievers"].merge(
        clean[clean["across"] == "retrievers"], on=keys, suffixes=("", " clean"))
    named = "; ".join(PROSE.fill("clean.dropped", sample=labels[c],
                                 strategies=", ".join(strategy_label(s) for s in sorted(v))) for c, v in dropped.items())
    if both.empty:
        return PROSE.fill("clean.too_few", dropped=named)
    comparisons = "; ".join(PROSE.fill(
        "clean.comparison", a=r["setting a"], b=r["setting b"],
        with_them=numbers.estimate(r["tau"], r["low"], r["high"], 2),
        without=numbers.estimate(r["tau clean"], r["low clean"], r["high clean"], 2),
        strategies=numbers.count(int(r["strategies clean"]), "strategy", "strategies")) for _, r in both.iterrows())
    return PROSE.fill("clean", dropped=named, comparisons=comparisons)


def _pool_note(pool_table: pd.DataFrame | None, corpus: str, retriever: str, strategy: str) -> str:
    """What the pool (``decision.engine``'s table, ``02_pool``) says of a fixed-k leader: the budgets where it is
    the pick or equivalent, or that it is ruled out or too large at every budget."""
    if pool_table is None:
        return ""
    from chunklab_core.decision.engine import DOES_NOT_FIT, EQUIVALENT, LEADER, RULED_OUT, margin_column
    from chunklab_core.decision.margin import DEFAULT_MARGIN

    column = margin_column("decision", DEFAULT_MARGIN)
    rows = pool_table[(pool_table["corpus"] == corpus) & (pool_table["retriever"] == retriever)
                      & (pool_table["strategy"] == strategy)]
    if rows.empty:
        return ""
    kept = rows[rows[column].isin([LEADER, EQUIVALENT]) | rows[margin_column("pick", DEFAULT_MARGIN)].astype(bool)]
    if len(kept):
        return PROSE.fill("answer.pool_kept", budgets=", ".join(f"{int(b):,}" for b in kept["budget"]))
    if rows[column].isin([RULED_OUT, DOES_NOT_FIT]).all():
        return PROSE.fill("answer.pool_out")
    return PROSE.fill("answer.pool_open")


def post02_answer(verdicts: pd.DataFrame, balanced: pd.DataFrame, stability: pd.DataFrame,
                  labels: Mapping[str, str], pool_table: pd.DataFrame | None = None) -> str:
    """The post's closing answer: which chunker, per corpus and retriever, by the paired verdicts at
    k chunks, each leader then read from the pool at matched cost (``pool_table``, ``02_pool``):
    where it is the pick or equivalent, or that the pool rules it out at every budget."""
    lines = []
    for (corpus, retriever), table in verdicts.groupby(["corpus", "retriever"], sort=False):
        leader = table.iloc[0]
        kept = table[(table["verdict"] == claims.NOT_RULED_OUT) & (table["strategy"] != leader["strategy"])]
        name = strategy_label(leader["strategy"])
        verdict = (PROSE.fill("answer.winner", leader=name) if leader["verdict"] == claims.WINNER else
                   PROSE.fill("answer.no_winner", leader=name,
                              kept=numbers.count(len(kept), "other strategy", "other strategies")))
        verdict += _pool_note(pool_table, corpus, retriever, leader["strategy"])
        lines.append(PROSE.fill("answer.setting", sample=labels[corpus], retriever=retriever,
                                questions=_questions(leader["questions"]), verdict=verdict))
    winners = int((balanced["verdict"] == claims.WINNER).sum())
    mean_tau = stability["tau"].mean() if len(stability) else np.nan
    leaders = verdicts.groupby(["corpus", "retriever"], sort=False)["strategy"].first().nunique()
    small = [labels[c] for c, n in verdicts.groupby("corpus", sort=False)["questions"].first().items()
             if n < SMALL_SAMPLE]
    settings = verdicts.groupby(["corpus", "retriever"]).ngroups
    winning = sorted({strategy_label(s) for s in verdicts.loc[verdicts["verdict"] == claims.WINNER, "strategy"]})
    if len(winning) > 1:
        supports = PROSE.fill("answer.several_win", winning=", ".join(winning))
    elif leaders > 1:
        supports = PROSE.fill("answer.leaders_differ", leaders=leaders, settings=settings,
                              who_wins=PROSE.fill("answer.one_wins", winner=winning[0]) if winning
                              else PROSE.fill("answer.none_wins"))
    else:
        supports = PROSE.fill("answer.same_leader")
    if small:
        supports += PROSE.fill("answer.small", small=", ".join(small), minimum=SMALL_SAMPLE)
    return PROSE.fill("answer", settings="\n".join(lines), winners=winners,
                      balanced=balanced.groupby(["corpus", "lambda"]).ngroups,
                      tau=numbers.number(mean_tau, 2), supports=supports)


def recall_verdicts(per_question: pd.DataFrame, k: int, model: str, resamples: int, seed: int) -> pd.DataFrame:
    """Per corpus and retriever: :func:`verdict_tables.leader_verdicts` of recall@k (BM25 and ``model``)."""
    cells = rows_of_model(per_question, model)
    frames = []
    recall = column("recall", k)
    for (corpus, retriever), group in cells.groupby(["corpus", "retriever"], sort=False):
        wide = group.pivot_table(index="qid", columns="strategy", values=recall, aggfunc="first").dropna()
        if wide.shape[1] >= 2 and len(wide):
            frames.append(leader_verdicts(wide, recall, resamples, seed, question_documents(group))
                          .assign(corpus=corpus, retriever=retriever))
    return pd.concat(frames, ignore_index=True)
