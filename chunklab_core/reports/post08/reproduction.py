"""Post 08: Chroma's report re-run on the chunks its own code scores, and both of its appendices' tables.

Handles:

* :func:`located_result`: a ``run_matrix`` result whose TokenText and recursive rows (the report's
  heuristic rows) are seen through the report's chunk locating (``evaluation.report_view``:
  a final ``.`` dropped, the first occurrence of a repeated string, a token window's whitespace
  kept), so that every metric is computed on the spans the report's code computes on; other rows
  (the embedding and LLM chunkers) are unchanged;
* :func:`located_sizes`: the mean size in cl100k_base tokens of the chunk strings the report's code
  receives (the size its tables print in brackets);
* :func:`locating_effect`: per heuristic row, precision_Ω on the series' recovered spans against the
  report's locating (what the locating alone changes);
* the report's appendix (``data/reference/chroma_appendix.csv``, :func:`load_appendix`):
  :func:`main_vs_appendix` sets its all-corpora text-embedding-3-large table at 5 chunks beside the
  main table (the report publishes both); :func:`per_corpus_omega` sets the re-run's precision_Ω per
  corpus beside every appendix table's (deterministic: agreement within rounding, ±0.05);
* the sentences (:func:`reproduction_text`).

Not handled: re-running the report's embeddings (its question vectors are stored in its repository's
chroma database, not reproducible here), its fuzzy sentence fallback (``chunking.report_locating``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from chunklab_core.chunking import STRATEGIES, strategy_label
from chunklab_core.chunking.report_locating import REPORT_LOCATED, report_texts
from chunklab_core.core import numbers
from chunklab_core.core.paths import DATA_DIR
from chunklab_core.evaluation.report_view import located_as_report
from chunklab_core.reports.post08.tables import EMBEDDING_CHUNKERS, METRICS, ROUNDING, TOKEN_ROUNDING
from chunklab_core.reports.templates import Templates

APPENDIX_CSV = DATA_DIR / "reference" / "chroma_appendix.csv"
APPENDIX_COLUMNS = ("corpus", "model", "chroma_chunker", "size", "overlap", "retrieved", "metric", "mean", "sd",
                    "strategy", "source")
CORPUS_NAMES = {"chatlogs": "chat logs", "finance": "finance", "pubmed": "PubMed", "state_of_the_union": "State of the Union",
                "wikitexts": "Wikitext", "all": "all corpora"}
PROSE = Templates(__file__, "reproduction.md")


def located(strategy: str) -> bool:
    """True for a row the report's code locates by string search (its TokenText and recursive rows)."""
    return STRATEGIES[strategy].func.__name__ in REPORT_LOCATED


def located_result(result):
    """``result`` with every run of a :func:`located` row replaced by its report view."""
    from dataclasses import replace

    runs = {}
    for key, run in result.runs.items():
        spec = STRATEGIES[run.strategy]
        runs[key] = located_as_report(run, spec.func.__name__, spec.params) if located(run.strategy) else run
    return replace(result, runs=runs)


def located_sizes(corpus, strategies, series_sizes: pd.DataFrame) -> pd.DataFrame:
    """Per strategy: the chunks and their mean and median size in cl100k_base tokens of the strings
    the report's code receives (:func:`located` rows), else the series' sizes (``series_sizes``,
    ``post08.tables.chunk_sizes``), with ``sizes as`` saying which."""
    from chunklab_core.core.tokens import count_tokens_many

    rows = []
    series = series_sizes.set_index("strategy")
    for strategy in strategies:
        if not located(strategy):
            rows.append({**series.loc[strategy].to_dict(), "strategy": strategy, "sizes as": "the series' spans"})
            continue
        spec = STRATEGIES[strategy]
        texts = [t for doc in corpus.documents for t in report_texts(doc.text, spec.func.__name__, spec.params)]
        sizes = np.asarray(count_tokens_many(texts), dtype=float)
        rows.append({"strategy": strategy, "label": strategy_label(strategy), "chunks": len(texts),
                     "mean tokens": float(sizes.mean()), "median tokens": float(np.median(sizes)),
                     "sizes as": "the report's chunk strings"})
    return pd.DataFrame(rows, columns=["strategy", "label", "chunks", "mean tokens", "median tokens", "sizes as"])


def locating_effect(series_questions: pd.DataFrame, located_questions: pd.DataFrame) -> pd.DataFrame:
    """Per :func:`located` row: mean precision_Ω (points) on the series' recovered spans and on the
    report's locating, and the difference (the locating alone; the chunk strings are the same)."""
    rows = []
    for strategy in dict.fromkeys(located_questions["strategy"]):
        if not located(strategy):
            continue
        series = series_questions.loc[series_questions["strategy"] == strategy, "chroma_precision_omega"].mean()
        report = located_questions.loc[located_questions["strategy"] == strategy, "chroma_precision_omega"].mean()
        rows.append({"strategy": strategy, "label": strategy_label(strategy),
                     "precision_Ω, series' spans": 100 * series, "precision_Ω, report's locating": 100 * report,
                     "report − series": 100 * (report - series)})
    return pd.DataFrame(rows)


def load_appendix(path=APPENDIX_CSV) -> pd.DataFrame:
    """The appendix values, checked like ``post08.tables.load_published``: columns, metric, numbers,
    a source on every line (``ValueError`` naming the file, line and field)."""
    import csv

    with open(path, newline="", encoding="utf-8") as handle:
        lines = list(csv.reader(handle))
    if not lines or tuple(lines[0]) != APPENDIX_COLUMNS:
        raise ValueError(f"{path}, line 1: the header must be {','.join(APPENDIX_COLUMNS)}")
    records = []
    for line, values in enumerate(lines[1:], start=2):
        if len(values) != len(APPENDIX_COLUMNS):
            raise ValueError(f"{path}, line {line}: {len(values)} fields, expected {len(APPENDIX_COLUMNS)}")
        row = dict(zip(APPENDIX_COLUMNS, values))
        if row["metric"] not in METRICS:
            raise ValueError(f"{path}, line {line}, field metric: {row['metric']!r} is not one of {METRICS}")
        if row["corpus"] not in CORPUS_NAMES:
            raise ValueError(f"{path}, line {line}, field corpus: {row['corpus']!r} is not one of {tuple(CORPUS_NAMES)}")
        for field in ("mean", "sd"):
            try:
                float(row[field])
            except ValueError:
                raise ValueError(f"{path}, line {line}, field {field}: {row[field]!r} is not a number") from None
        if not row["source"].strip():
            raise ValueError(f"{path}, line {line}, field source: every published value must cite its source")
        records.append(row)
    frame = pd.DataFrame(records, columns=list(APPENDIX_COLUMNS))
    for field in ("size", "overlap", "retrieved", "mean", "sd"):
        frame[field] = pd.to_numeric(frame[field].replace("", np.nan))
    return frame


def main_vs_appendix(published: pd.DataFrame, appendix: pd.DataFrame, model: str = "text-embedding-3-large",
                     depth: int = 5) -> pd.DataFrame:
    """Every row the main table and the appendix's all-corpora table of ``model`` at ``depth`` share:
    per metric the two published means and whether they differ (the report states both describe all
    queries and corpora at n=5 retrieved chunks)."""
    main = published[(published["model"] == model) & (published["retrieved"] == depth)]
    extra = appendix[(appendix["model"] == model) & (appendix["corpus"] == "all") & (appendix["retrieved"] == depth)]
    both = main.merge(extra, on=["strategy", "metric"], suffixes=(" main", " appendix"))
    rows = []
    for strategy, group in both.groupby("strategy", sort=False):
        # the report's own LLM chunker (GPT-4o) is not the series' recorded local one: named as the report names it
        label = (f"{group['chroma_chunker main'].iloc[0]}, the report's" if strategy == "llm_semantic"
                 else strategy_label(strategy))
        row = {"strategy": strategy, "label": label}
        for _, value in group.iterrows():
            row[f"{value['metric']} main"] = f"{value['mean main']:.1f} ± {value['sd main']:.1f}"
            row[f"{value['metric']} appendix"] = f"{value['mean appendix']:.1f} ± {value['sd appendix']:.1f}"
        row["metrics that differ"] = int(((group["mean main"] - group["mean appendix"]).abs() > ROUNDING).sum())
        omega = group[group["metric"] == "precision_omega"]
        row["precision_Ω differs"] = bool(((omega["mean main"] - omega["mean appendix"]).abs() > ROUNDING).any())
        rows.append(row)
    return pd.DataFrame(rows)


def per_corpus_omega(located_questions: pd.DataFrame, appendix: pd.DataFrame) -> pd.DataFrame:
    """precision_Ω (points) of every row the re-run shares with an appendix table, per corpus and over
    all corpora: the re-run's mean on the report's locating, the published mean, and ``agrees``
    (within rounding, ±0.05) where the chunks alone decide it (no embedding model cuts them)."""
    omega = appendix[appendix["metric"] == "precision_omega"]
    frame = located_questions.dropna(subset=["chroma_precision_omega"])
    per_doc = frame.groupby(["strategy", "doc_id"])["chroma_precision_omega"].mean()
    overall = frame.groupby("strategy")["chroma_precision_omega"].mean()
    rows = []
    for _, pub in omega.iterrows():
        strategy = pub["strategy"]
        if strategy not in overall.index:
            continue
        value = overall[strategy] if pub["corpus"] == "all" else per_doc.get((strategy, f"chroma-{pub['corpus']}"), np.nan)
        deterministic = strategy not in EMBEDDING_CHUNKERS
        rerun = 100 * value
        rows.append({"table": pub["model"], "corpus": CORPUS_NAMES[pub["corpus"]], "strategy": strategy,
                     "label": strategy_label(strategy), "published": pub["mean"], "re-run": rerun,
                     "re-run − published": rerun - pub["mean"],
                     "agrees": (bool(abs(rerun - pub["mean"]) <= ROUNDING)
                                if deterministic and not np.isnan(rerun) else np.nan)})
    return pd.DataFrame(rows)


def omega_counts(per_corpus: pd.DataFrame) -> pd.DataFrame:
    """Per appendix model: deterministic precision_Ω values compared and how many agree within rounding."""
    part = per_corpus.dropna(subset=["agrees"])
    return (part.groupby("table", sort=False).agg(values=("agrees", "size"), agree=("agrees", "sum"))
            .reset_index().astype({"agree": int}))


def reproduction_text(per_corpus: pd.DataFrame, sizes: pd.DataFrame, published: pd.DataFrame,
                      main_appendix: pd.DataFrame, effect: pd.DataFrame, depth: int = 5) -> str:
    """What the report's own computation reproduces and what it does not, every count from the tables."""
    counts = omega_counts(per_corpus).set_index("table")
    large, small = counts.loc["text-embedding-3-large"], counts.loc["all-MiniLM-L6-v2"]
    pub = published[(published["metric"] == "precision_omega")].drop_duplicates(["model", "strategy"])
    tokens = pub.merge(sizes, on="strategy")
    measured = tokens[tokens["chroma_chunker"] == "RecursiveCharacterTextSplitter"]
    agree = (measured["mean tokens"] - measured["mean_tokens"]).abs() <= TOKEN_ROUNDING
    by_model = measured.assign(agree=agree).groupby("model")["agree"].agg(["size", "sum"])
    shared = pub.pivot_table(index="strategy", columns="model", values="mean_tokens").dropna()
    shared = shared[shared.index.map(lambda s: s not in EMBEDDING_CHUNKERS)]
    shared_text = "; ".join(f"{strategy_label(s)}: {r['text-embedding-3-large']:.0f} and {r['all-MiniLM-L6-v2']:.0f} tokens"
                            for s, r in shared.iterrows() if r["text-embedding-3-large"] != r["all-MiniLM-L6-v2"])
    chunks_only = ~main_appendix["strategy"].isin(EMBEDDING_CHUNKERS + ("llm_semantic",))
    return PROSE.fill(
        "reproduction", depth=depth,
        large_agree=int(large["agree"]), large_values=numbers.count(int(large["values"]), "value"),
        small_agree=int(small["agree"]), small_values=numbers.count(int(small["values"]), "value"),
        large_tokens=int(by_model.loc["text-embedding-3-large", "sum"]),
        large_token_rows=numbers.count(int(by_model.loc["text-embedding-3-large", "size"]), "row"),
        small_tokens=int(by_model.loc["all-MiniLM-L6-v2", "sum"]),
        small_token_rows=numbers.count(int(by_model.loc["all-MiniLM-L6-v2", "size"]), "row"),
        shared=shared_text or "none",
        differ=int((main_appendix["metrics that differ"] > 0).sum()),
        appendix_rows=numbers.count(len(main_appendix), "row"),
        omega_differ=int(main_appendix.loc[chunks_only, "precision_Ω differs"].sum()),
        omega_rows=numbers.count(int(chunks_only.sum()), "row"),
        effect_low=numbers.number(float(effect["report − series"].min()), 2, signed=True),
        effect_high=numbers.number(float(effect["report − series"].max()), 2, signed=True))
