"""Post 08, section 3: is my framework's default good enough? Library defaults against the series' strategies.

Handles:

* :func:`builder_table` (the long table, one row per corpus × retriever × strategy, saved as a
  CSV): each strategy's ``metric@k`` with its interval and tokens returned, its paired
  difference to the leader with interval, and the verdict. The intervals and verdicts are post
  02's, by the same function (:func:`chunklab_core.reports.verdict_tables.leader_verdicts`):
  where questions share documents the paired intervals resample documents
  (``stats.clustered``, column ``design``), the question-level verdict kept beside it; a
  strategy's own interval resamples documents likewise (as post 02's summary does);
* :func:`compact_table` (what the builder reads): one row per corpus × retriever, named by its
  sample, with the series' best strategy and one column per library default holding its
  verdict word (``leader`` where it leads), each header saying in how many settings it is kept;
* :func:`cell_summary`: per corpus × retriever, the sample (data set, questions, documents),
  the leader with its interval, how many library defaults are kept, and the cheapest setting
  kept (:func:`cheapest_adequate`);
* :func:`cheapest_adequate`: among the strategies not ruled out (the leader included), the one
  returning the fewest tokens.

Not handled: retrieval (``evaluation.matrix.run_matrix``), the figure (``post08.figures``), the
sentences (``post08.prose``).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from chunklab_core.chunking import strategy_label
from chunklab_core.core import numbers
from chunklab_core.reports import samples
from chunklab_core.reports.verdict_tables import leader_verdicts, question_documents
from chunklab_core.stats import claims
from chunklab_core.stats.bootstrap import bootstrap_ci
from chunklab_core.stats.clustered import clustered_bootstrap_ci, shares_documents

LIBRARY_DEFAULTS = ("lc_recursive_default", "lc_recursive_1000_200", "lc_token_default", "llama_sentence_default",
                    "chonkie_token_default", "chonkie_sentence_default", "chonkie_recursive_default", "semchunk_512")
CELL = ["corpus", "retriever", "model"]
SERIES_BEST = "series' best"
LEADER_MARK = "leader"


def _mean_interval(values: np.ndarray, documents, resamples: int, seed: int):
    """A strategy's mean with its interval: documents resampled when questions share them, else questions."""
    if documents is not None and shares_documents(documents):
        import warnings

        with warnings.catch_warnings():  # few documents: post 02 says so where it matters
            warnings.simplefilter("ignore", UserWarning)
            return clustered_bootstrap_ci(values, documents, resamples, seed)
    return bootstrap_ci(values, resamples, seed)


def builder_table(per_question: pd.DataFrame, k: int, candidates: Sequence[str], series: Sequence[str],
                  metric: str = "recall", resamples: int = 2000, seed: int = 0) -> pd.DataFrame:
    """Per corpus and retriever: each strategy's ``metric@k`` (mean and interval) and tokens@k,
    its paired difference ``leader − this`` with interval, and the verdict words, all by
    :func:`chunklab_core.reports.verdict_tables.leader_verdicts` (post 02's function: the leader is
    the highest mean among ``series`` and ``candidates``, ties to the first named; intervals
    resample documents where questions share them, column ``design``; ``question verdict`` is
    the verdict with questions resampled). ``series' best`` names the series' own strategy with
    the highest mean, ``documents`` the documents the questions come from."""
    column, tokens = f"{metric}@{k}", f"tokens@{k}"
    rows = []
    for (corpus, retriever, model), cell in per_question.groupby(CELL, sort=False):
        wide = cell.pivot_table(index="qid", columns="strategy", values=column).dropna(axis=1, how="all").dropna()
        spent = cell.groupby("strategy")[tokens].mean()
        names = [s for s in dict.fromkeys([*series, *candidates]) if s in wide.columns]
        in_series = [s for s in series if s in wide.columns]
        if not names or wide.empty:
            continue
        wide = wide[names]
        documents = question_documents(cell)
        docs = documents.reindex(wide.index).to_numpy() if documents is not None else None
        series_best = max(in_series, key=lambda s: wide[s].mean()) if in_series else None
        if len(names) > 1:
            verdicts = leader_verdicts(wide, column, resamples, seed, documents).set_index("strategy")
        else:
            verdicts = pd.DataFrame({"leader − strategy": [0.0], "low": [np.nan], "high": [np.nan],
                                     "verdict": [claims.NOT_RULED_OUT], "design": ["questions"]}, index=names)
        leader = verdicts.index[0]
        for strategy in names:
            mean = _mean_interval(wide[strategy].to_numpy(), docs, resamples, seed)
            found = verdicts.loc[strategy]
            row = {"corpus": corpus, "retriever": retriever, "model": model, "strategy": strategy,
                   "label": strategy_label(strategy), "library": strategy in candidates, "questions": len(wide),
                   "documents": len(np.unique(docs)) if docs is not None else len(wide),
                   column: mean.mean, "low": mean.low, "high": mean.high, tokens: float(spent.get(strategy, np.nan))}
            if strategy != leader:
                row.update({"leader − this": float(found["leader − strategy"]), "diff low": float(found["low"]),
                            "diff high": float(found["high"])})
            row.update({"verdict": found["verdict"], "design": found["design"],
                        "question verdict": found.get("question verdict", found["verdict"]),
                        "leader": strategy_label(leader),
                        SERIES_BEST: strategy_label(series_best) if series_best else ""})
            rows.append(row)
    return pd.DataFrame(rows)


def sample_of(rows: pd.DataFrame) -> str:
    """The sample label of one corpus × retriever cell of :func:`builder_table` (its first row)."""
    first = rows.iloc[0]
    return samples.sample_label(first["corpus"], int(first["questions"]), int(first["documents"]))


def cheapest_adequate(builder: pd.DataFrame, k: int) -> pd.DataFrame:
    """Per corpus and retriever, among the strategies the rule cannot rule out (the leader
    included), the one returning the fewest tokens@k: the cheapest setting the evidence keeps.
    ``sample`` names the cell's questions and documents."""
    tokens = f"tokens@{k}"
    kept = builder[builder["verdict"] != claims.RULED_OUT]
    picks = kept.loc[kept.groupby(CELL, sort=False)[tokens].idxmin()]
    picks = picks.assign(sample=[sample_of(builder[(builder["corpus"] == c) & (builder["retriever"] == r)
                                                   & (builder["model"] == m)])
                                 for c, r, m in zip(picks["corpus"], picks["retriever"], picks["model"])])
    return picks[["sample", "corpus", "retriever", "model", "label", tokens, "verdict", "leader"]].reset_index(drop=True)


def compact_table(builder: pd.DataFrame) -> pd.DataFrame:
    """One row per corpus × retriever (its sample and retriever), the series' best strategy (its
    name, and its verdict when a library default leads), and one column per library default
    holding its verdict word (``leader`` where it leads); each default's column header says in
    how many settings it is kept (not ruled out)."""
    if builder.empty:
        return pd.DataFrame()
    libraries = list(dict.fromkeys(builder.loc[builder["library"], "strategy"]))
    cells = list(builder.groupby(CELL, sort=False))
    kept = {name: int(((builder["strategy"] == name) & (builder["verdict"] != claims.RULED_OUT)).sum())
            for name in libraries}
    header = {name: f"{strategy_label(name)}, kept in {kept[name]} of {numbers.count(len(cells), 'setting')}"
              for name in libraries}
    rows = []
    for _, part in cells:
        best = part[part["label"] == part[SERIES_BEST]]
        record = {"sample": sample_of(part), "retriever": part["retriever"].iloc[0], SERIES_BEST: ""}
        if len(best):
            row = best.iloc[0]
            record[SERIES_BEST] = row["label"] if row["label"] == row["leader"] else f"{row['label']}: {row['verdict']}"
        for name in libraries:
            found = part[part["strategy"] == name]
            record[header[name]] = "" if found.empty else (
                LEADER_MARK if found["label"].iloc[0] == found["leader"].iloc[0] else found["verdict"].iloc[0])
        rows.append(record)
    return pd.DataFrame(rows)


def cell_summary(builder: pd.DataFrame, k: int, metric: str = "recall") -> pd.DataFrame:
    """Per corpus × retriever: the sample, the leader with its ``metric@k`` and interval, the
    library defaults kept, and the cheapest setting kept with its tokens (:func:`cheapest_adequate`)."""
    column, tokens = f"{metric}@{k}", f"tokens@{k}"
    cheapest = cheapest_adequate(builder, k).set_index(CELL)
    rows = []
    for keys, part in builder.groupby(CELL, sort=False):
        lead = part[part["label"] == part["leader"]].iloc[0]
        libraries = part[part["library"]]
        pick = cheapest.loc[keys]
        rows.append({"sample": sample_of(part), "retriever": keys[1],
                     "leader": lead["label"], f"leader's {column} [95% CI]": numbers.estimate(lead[column], lead["low"],
                                                                                              lead["high"]),
                     "leader's verdict": lead["verdict"], "resampled": lead["design"],
                     "library defaults kept": f"{int((libraries['verdict'] != claims.RULED_OUT).sum())} of "
                                              f"{len(libraries)}",
                     "cheapest kept": pick["label"], f"its {tokens}": round(float(pick[tokens]))})
    return pd.DataFrame(rows)


# ---------------------------------------------------------------- the candidate pool at matched cost
def pool_compact(table: pd.DataFrame, guide: pd.DataFrame) -> pd.DataFrame:
    """One row per setting of :func:`chunklab_core.reports.pool.setting_guide`: the setting, what to
    use at how many tokens, the verdict (decided or not), and per library splitter its verdict at
    that budget (``leader`` where it leads there); each library column's header says in how many
    settings it cannot be ruled out at the recommended budget."""
    from chunklab_core.reports import pool

    libraries = [s for s in pool.LIBRARY if s in set(table["strategy"])]
    at = table.merge(guide[["corpus", "retriever", "model", "tokens"]], on=CELL)
    at = at[at["budget"] == at["tokens"]]
    kept = {name: int(((at["strategy"] == name) & (at["verdict"] != claims.RULED_OUT)).sum()) for name in libraries}
    header = {name: f"{strategy_label(name)}, kept in {kept[name]} of {numbers.count(len(guide), 'setting')}"
              for name in libraries}
    rows = []
    for _, g in guide.iterrows():
        part = at[(at["corpus"] == g["corpus"]) & (at["retriever"] == g["retriever"]) & (at["model"] == g["model"])]
        best = part.sort_values("score", ascending=False, kind="stable").iloc[0]["strategy"] if len(part) else ""
        record = {"setting": f"{g['sample']}, {g['retriever']}", "use": g["use"], "tokens": int(g["tokens"]),
                  "verdict": g["verdict"]}
        for name in libraries:
            found = part[part["strategy"] == name]
            record[header[name]] = "" if found.empty else (LEADER_MARK if name == best else found["verdict"].iloc[0])
        rows.append(record)
    return pd.DataFrame(rows)


def pool_counts(table: pd.DataFrame, guide: pd.DataFrame) -> dict[str, int]:
    """Counts for the builder's sentence: settings, library candidates at the recommended budgets,
    how many of them cannot be ruled out, settings a library splitter is recommended in, decided settings."""
    from chunklab_core.reports import pool

    at = table.merge(guide[["corpus", "retriever", "model", "tokens"]], on=CELL)
    at = at[(at["budget"] == at["tokens"]) & at["strategy"].isin(list(pool.LIBRARY))]
    return {"settings": len(guide), "library": len(at), "kept": int((at["verdict"] != claims.RULED_OUT).sum()),
            "library_used": int(guide["strategy"].isin(list(pool.LIBRARY)).sum()),
            "decided": int((guide["verdict"] == "decided").sum())}


def pool_text(table: pd.DataFrame, guide: pd.DataFrame, csv: str) -> str:
    """The builder section's reading of the pool (template ``builder.md``), then one sentence per setting."""
    from chunklab_core.reports import pool
    from chunklab_core.reports.templates import Templates

    counts = pool_counts(table, guide)
    text = Templates(__file__, "builder.md").fill(
        "pool", settings=numbers.count(counts["settings"], "setting"),
        libraries=numbers.count(len([s for s in pool.LIBRARY if s in set(table["strategy"])]), "library splitter"),
        budgets=", ".join(f"{b:,}" for b in pool.BUDGETS), tokenizer=pool.TOKENIZER, kept=counts["kept"],
        library=counts["library"], library_used=numbers.count(counts["library_used"], "setting"),
        decided=numbers.count(counts["decided"], "setting"), csv=csv)
    return text + "\n\n" + "\n\n".join(pool.setting_sentences(guide, pool.budget_guide(table)))
