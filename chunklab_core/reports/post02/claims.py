"""Post 02's claims within their evidence: prose for its large tables, verdicts for its rankings.

Handles: what to read in the chunk-health table (and why ``pct_tiny`` is 100 for 500-character
chunkers), the paired retriever comparisons with a word on multiplicity and only the
separated pairs shown, the balanced ranking as paired verdicts per corpus at several λ (with
the embedding model named in every cell), the budget table as a labelled tidy table, the span
table's reading, the stability table's caveats (τ outside its own percentile interval,
rankings that include truncated dense cells), and the post's closing answer. Every sentence is
built from the tables passed in; verdict words come from :mod:`chunklab_core.stats.claims`.

Not handled: computing the matrix, the tables themselves (:mod:`post02`), the truncation
section (:mod:`chunklab_core.reports.post02.truncation`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from chunklab_core.stats import claims
from chunklab_core.chunking.health import TINY_TOKENS
from chunklab_core.chunking import strategy_label
from chunklab_core.data.corpora import CORPUS_LABELS
from chunklab_core.evaluation.measures import column
from chunklab_core.reports.verdict_tables import balanced_verdicts, leader_verdicts, question_documents
from chunklab_core.retrieval.registry import needs_model, rows_of_model, uses_no_model

HEALTH_COLUMNS = ["corpus", "strategy", "n_chunks", "median_tokens", "pct_tiny", "pct_fragments", "boundary_ok",
                  "coverage", "redundancy", "lexical_cohesion", "share truncated"]


def _corpus(name: str) -> str:
    return CORPUS_LABELS.get(name, name)


def health_view(health: pd.DataFrame) -> pd.DataFrame:
    """The chunk-health columns worth reading (columns with no value at all are left out)."""
    columns = [c for c in HEALTH_COLUMNS if c in health.columns and health[c].notna().any()]
    return health[columns]


def health_reading(health: pd.DataFrame) -> str:
    """What to look at in the chunk-health table, from the table."""
    empty = [c for c in health.columns if health[c].isna().all()]
    tiny_all = health[(health["pct_tiny"] >= 99.5) & (health["median_tokens"] < TINY_TOKENS)]["strategy"] \
        .map(strategy_label).drop_duplicates().tolist()
    worst_boundary = health.loc[health["boundary_ok"].idxmin()]
    text = (f"{len(health)} rows (corpus × strategy). Read `median_tokens` (chunk size), `boundary_ok` (share of chunk "
            f"ends at a sentence end; lowest: {strategy_label(worst_boundary['strategy'])} on "
            f"{_corpus(worst_boundary['corpus'])}, {worst_boundary['boundary_ok']:.2f}), `redundancy` (text returned "
            "more than once) and `share truncated` (chunks the first embedding model cuts). `pct_tiny` is the share "
            f"of chunks under {TINY_TOKENS} tokens: it is near 100 wherever chunks are small by design (median below "
            f"{TINY_TOKENS} tokens: {', '.join(tiny_all) or 'none here'}), so there it measures size, not damage.")
    if empty:
        text += f" Left out as empty for every row: {', '.join(empty)}."
    return text


def paired_reading(paired: pd.DataFrame, level: float = 0.95) -> str:
    """Counts per corpus and comparison, the multiplicity caveat, and what the shown table holds."""
    from chunklab_core.reports.post02.tables import describe_paired

    separated = int((paired["verdict"] != claims.NOT_TOLD_APART).sum())
    return (describe_paired(paired) + "\n\n" + claims.multiplicity_text(len(paired), separated, level)
            + f" The table lists the {separated} separated pairs; all {len(paired)} are in `data/02_paired_retrievers.csv`.")


def separated_pairs(paired: pd.DataFrame) -> pd.DataFrame:
    """Only the comparisons whose paired interval excludes 0."""
    return paired[paired["verdict"] != claims.NOT_TOLD_APART].reset_index(drop=True)


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


def balanced_reading(verdicts: pd.DataFrame) -> str:
    """Per corpus and λ: the balanced leader (model named), its verdict and how many cells it cannot shed."""
    lines = []
    for corpus, group in verdicts.groupby("corpus", sort=False):
        parts = []
        for lam, table in group.groupby("lambda", sort=False):
            leader = table.iloc[0]
            kept = int(((table["verdict"] == claims.NOT_RULED_OUT) & (table.index != leader.name)).sum())
            parts.append(f"λ = {lam:g}: **{leader['strategy']}** — "
                         + ("winner" if leader["verdict"] == claims.WINNER else
                            f"no winner, {kept} other cell(s) cannot be ruled out"))
        lines.append(f"- {_corpus(corpus)} ({int(group['questions'].iloc[0])} questions): " + "; ".join(parts) + ".")
    return ("The balanced leader with paired 95% intervals over every cell of a corpus (the price per token λ "
            "varied, since the leader depends on it):\n" + "\n".join(lines))


def budget_long(budget: pd.DataFrame) -> pd.DataFrame:
    """The budget table (index corpus × strategy, columns retriever × budget) as tidy labelled rows."""
    tidy = budget.stack(["retriever", "budget"], future_stack=True).rename("recall").reset_index()
    return tidy.dropna(subset=["recall"])[["corpus", "strategy", "retriever", "budget", "recall"]]


def budget_reading(budget: pd.DataFrame, model: str, depth: int) -> str:
    """Per corpus, the best cell at the smallest and the largest budget (with intervals), and where
    the recorded depth of ``depth`` chunks, not the budget, ended some question's reading.

    ``budget``: :func:`post02.tables.budget_intervals`.
    """
    small, large = budget["budget"].min(), budget["budget"].max()
    parts = []
    for corpus, group in budget.groupby("corpus", sort=False):
        best = {b: group[group["budget"] == b].sort_values("recall", ascending=False).iloc[0] for b in (small, large)}
        parts.append(f"{_corpus(corpus)}: " + ", ".join(
            f"{row['strategy']} / {row['retriever']} at {b} tokens ({claims.format_interval(row['recall'], row['low'], row['high'])}, "
            f"n = {row['questions']})" for b, row in best.items()))
    bound = budget[budget["depth binds"] > 0]
    if bound.empty:
        size = (f"No question's recorded ranking ({depth} chunks) ran out before its budget was spent, in any cell "
                "and at any budget: every strategy read up to the same budget, so none can win here by reading more text.")
    else:
        cells = sorted({f"{_corpus(r['corpus'])} {r['strategy']} / {r['retriever']}" for _, r in bound.iterrows()})
        size = (f"In {len(bound)} of {len(budget)} cells × budgets (marked †: {'; '.join(cells[:8])}"
                f"{'; …' if len(cells) > 8 else ''}) the recorded ranking of {depth} chunks ran out before some "
                f"questions' budget was spent (at most {bound['depth binds'].max():.0%} of a cell's questions): there a "
                "strategy with larger chunks read more text and can win by size; everywhere else every strategy "
                "read up to the same budget.")
    return ("Best cell per corpus at the smallest and largest budget (dense and hybrid with " + model + "; each "
            "with its 95% interval; a best cell is a ranking to check, not a verdict): " + "; ".join(parts) + ". "
            + size)


def span_reading(spans: pd.DataFrame, k: int) -> str:
    """What the span table says, per corpus: the best span recall and how little of the returned text is evidence."""
    if spans.empty:
        return "No corpus has character offsets for its evidence."
    parts = []
    for corpus, group in spans.groupby("corpus", sort=False):
        best = group.loc[group[column("span_recall", k)].idxmax()]
        parts.append(f"{_corpus(corpus)}: best span recall {best[column('span_recall', k)]:.2f} "
                     f"({best['strategy']} / {best['retriever']}), span precision at most "
                     f"{group[column('span_precision', k)].max():.3f}")
    return (f"{len(spans)} rows; per corpus the best span recall@{k} and the largest span precision — returned text "
            + ("is mostly not evidence, whatever the chunker (no cell's span precision reaches 0.5): "
               if spans[column("span_precision", k)].max() < 0.5 else "is evidence in some cells and not in others: ")
            + "; ".join(parts) + ". The table below shows "
            "the three best cells of each corpus.")


def span_top(spans: pd.DataFrame, k: int, n: int = 3) -> pd.DataFrame:
    return (spans.sort_values(column("span_recall", k), ascending=False).groupby("corpus", sort=False).head(n)
            .sort_values(["corpus", column("span_recall", k)], ascending=[True, False]).reset_index(drop=True))


def stability_reading(stability: pd.DataFrame, truncated: pd.DataFrame | None, threshold: float = 0.25) -> str:
    """Caveats for the τ table: estimates outside their own interval, dense cells with many cut chunks."""
    outside = stability[(stability["tau"] < stability["low"]) | (stability["tau"] > stability["high"])]
    text = ""
    if len(outside):
        text += (f"In {len(outside)} comparison(s) τ lies outside its own percentile interval ("
                 + "; ".join(f"{r['setting a']} vs {r['setting b']}: τ {r['tau']:.2f}, [{r['low']:.2f}, {r['high']:.2f}]"
                             for _, r in outside.iterrows())
                 + "): resampling questions ties and reshuffles strategies whose recall is close, which pulls the "
                 "resampled τ below the observed one, so those percentile intervals are biased; read them as "
                 "showing that the ranking is unstable, not as bounds on τ. ")
    if truncated is not None and len(truncated):
        heavy = truncated[truncated["share truncated"] >= threshold]
        if len(heavy):
            text += (f"The dense rankings include {len(heavy)} cell(s) where at least {threshold:.0%} of the chunks are "
                     "cut at the embedding model's length limit (" + ", ".join(
                         f"{strategy_label(r['strategy'])} on {_corpus(r['corpus'])} under {r['model']} "
                         f"{r['share truncated']:.0%}" for _, r in heavy.iterrows())
                     + "): τ across retrievers partly measures truncation, not the chunkers.")
    return text.strip() or "Every τ lies inside its interval, and no dense cell has many truncated chunks."


def heavily_truncated(truncated: pd.DataFrame | None, threshold: float = 0.25) -> dict[str, set[str]]:
    """Per corpus, the strategies with at least ``threshold`` of their chunks cut by any embedding model."""
    if truncated is None or not len(truncated):
        return {}
    heavy = truncated[truncated["share truncated"] >= threshold]
    return {corpus: set(group["strategy"]) for corpus, group in heavy.groupby("corpus", sort=False)}


def stability_without_truncation_text(stability: pd.DataFrame, clean: pd.DataFrame,
                                      dropped: dict[str, set[str]]) -> str:
    """τ across retrievers with and without the heavily truncated strategies, per comparison."""
    if not dropped:
        return "No strategy has many chunks cut by the embedding model, so no τ needs recomputing."
    keys = ["across", "setting a", "setting b"]
    both = stability[stability["across"] == "retrievers"].merge(
        clean[clean["across"] == "retrievers"], on=keys, suffixes=("", " clean"))
    if both.empty:
        return ("Without the heavily truncated strategies (" + "; ".join(
            f"{_corpus(c)}: {', '.join(strategy_label(s) for s in sorted(v))}" for c, v in dropped.items())
                + ") too few strategies remain to rank across retrievers.")
    return ("τ across retrievers recomputed without the strategies whose chunks the embedding model cuts ("
            + "; ".join(f"{_corpus(c)}: {', '.join(strategy_label(s) for s in sorted(v))}" for c, v in dropped.items())
            + "): " + "; ".join(f"{r['setting a']} vs {r['setting b']}: τ {r['tau']:.2f} [{r['low']:.2f}, {r['high']:.2f}] "
                               f"with them, {r['tau clean']:.2f} [{r['low clean']:.2f}, {r['high clean']:.2f}] without "
                               f"({int(r['strategies clean'])} strategies)" for _, r in both.iterrows()) + ".")


def post02_answer(verdicts: pd.DataFrame, balanced: pd.DataFrame, stability: pd.DataFrame) -> str:
    """The post's closing answer: which chunker, per corpus and retriever, by the paired verdicts."""
    lines = []
    for (corpus, retriever), table in verdicts.groupby(["corpus", "retriever"], sort=False):
        leader = table.iloc[0]
        kept = table[(table["verdict"] == claims.NOT_RULED_OUT) & (table["strategy"] != leader["strategy"])]
        lines.append(f"- {_corpus(corpus)} · {retriever} ({int(leader['questions'])} questions): "
                     + (f"**{strategy_label(leader['strategy'])}** is the winner" if leader["verdict"] == claims.WINNER
                        else f"no winner — {strategy_label(leader['strategy'])} leads, {len(kept)} other strategies "
                             "cannot be ruled out"))
    winners = int((balanced["verdict"] == claims.WINNER).sum())
    mean_tau = stability["tau"].mean() if len(stability) else np.nan
    leaders = verdicts.groupby(["corpus", "retriever"], sort=False)["strategy"].first().nunique()
    small = sorted({_corpus(c) for c, n in verdicts.groupby("corpus")["questions"].first().items() if n < 50})
    settings = verdicts.groupby(["corpus", "retriever"]).ngroups
    winning = sorted({strategy_label(s) for s in verdicts.loc[verdicts["verdict"] == claims.WINNER, "strategy"]})
    if len(winning) > 1:
        answer = (f"different strategies win in different settings ({', '.join(winning)}), so the best chunker "
                  "depends on the retriever and the corpus")
    elif leaders > 1:
        answer = (f"{leaders} different strategies lead the {settings} settings on their point estimates, but "
                  + (f"only {winning[0]} wins anywhere" if winning else "none is a winner")
                  + ", so these samples do not show that the best chunker depends on the setting")
    else:
        answer = "the same strategy leads every setting"
    if small:
        answer += f"; on {', '.join(small)} (fewer than 50 questions) the samples are too small to tell most strategies apart"
    return ("**Which chunker?** By recall@k with paired intervals:\n" + "\n".join(lines)
            + f"\n\nBalanced against tokens, {winners} of {balanced.groupby(['corpus', 'lambda']).ngroups} "
            f"(corpus, λ) settings name a winner; rankings agree only partly across settings (mean τ {mean_tau:.2f}). "
            f"What this post supports: {answer}. Post 00 puts this next to posts 01 and 03.")


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
