"""Post 08's tables for Chroma's report re-run: the published values, the report's rows, neighbouring rows paired.

Handles, one call per notebook section:

* ``load_published``: the report's published values (``data/reference/chroma_published.csv``,
  cited constants typed from the report; every row names its source), checked on load;
* ``chroma_per_question``: Chroma's metrics (``evaluation.chroma_metrics``) for every run of a
  ``run_matrix`` result on Chroma's corpora, per question and depth;
* ``report_table``: per row of the report (strategy x depth) the mean ± standard deviation over
  questions (the report's summary, in points), beside the published value where one is known;
* ``paired_rows`` / ``neighbour_differences`` / ``against``: for each pair (neighbouring rows of
  the report, or one strategy against each other one), the paired difference of a
  metric with a percentile interval from the document-clustered bootstrap
  (``stats.clustered``: Chroma's five corpora are one document each, so this is a
  corpus-clustered interval, unreliable with 5 clusters as that module warns: with so few it can
  come out narrower than the question-level one) and from the plain paired bootstrap over
  questions, worded by ``stats.claims.pair_verdict`` on the hull of the two (the lower of the
  lows, the higher of the highs), so too few clusters can never make a claim stronger;
* ``chunk_sizes``: each strategy's chunks and their size in tokens (the LLM chunker's slice);
* ``builder_table``: post 02's corpora, library defaults against the series' strategies under
  each retriever: the metric, tokens returned, the paired difference against the series'
  best strategy of that corpus and retriever, and the series' verdict words
  (``stats.claims.candidate_verdicts``).

Not handled: retrieval (``evaluation.matrix.run_matrix`` does it, through the series' retrieval
path), the metric formulas (``evaluation``), the bootstrap (``stats``).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from chunklab_core.chunking import strategy_label
from chunklab_core.core.paths import DATA_DIR
from chunklab_core.evaluation.chroma_metrics import chroma_scores
from chunklab_core.stats.bootstrap import paired_difference_ci
from chunklab_core.stats.claims import pair_verdict
from chunklab_core.stats.clustered import clustered_bootstrap_ci
from chunklab_core.retrieval.registry import model_column

PUBLISHED_CSV = DATA_DIR / "reference" / "chroma_published.csv"
PUBLISHED_COLUMNS = ("model", "chroma_chunker", "size", "overlap", "retrieved", "metric", "mean", "sd",
                     "strategy", "source")
METRICS = ("recall", "precision", "precision_omega", "iou")

# The report's rows, in its order, as the series' strategies (token sizes in cl100k_base).
REPORT_ROWS = ("lc_recursive_tok_800_400", "lc_token_800_400", "lc_recursive_tok_400_200", "lc_token_400_200",
               "lc_recursive_tok_400_0", "lc_token_400_0", "lc_recursive_tok_200_0", "lc_token_200_0",
               "lc_recursive_tok_250_125", "lc_token_250_125", "kamradt", "kamradt_modified_300",
               "cluster_400", "cluster_200", "llm_semantic")



def load_published(path=PUBLISHED_CSV) -> pd.DataFrame:
    """The published values, checked: the columns, a known metric, numbers where numbers go.
    A problem raises ``ValueError`` naming the file, line and field."""
    import csv

    with open(path, newline="", encoding="utf-8") as handle:
        lines = list(csv.reader(handle))
    if not lines or tuple(lines[0]) != PUBLISHED_COLUMNS:
        raise ValueError(f"{path}, line 1: the header must be {','.join(PUBLISHED_COLUMNS)}")
    records = []
    for line, values in enumerate(lines[1:], start=2):
        if len(values) != len(PUBLISHED_COLUMNS):
            raise ValueError(f"{path}, line {line}: {len(values)} fields, expected {len(PUBLISHED_COLUMNS)}")
        row = dict(zip(PUBLISHED_COLUMNS, values))
        if row["metric"] not in METRICS:
            raise ValueError(f"{path}, line {line}, field metric: {row['metric']!r} is not one of {METRICS}")
        for field in ("size", "overlap", "retrieved", "mean", "sd"):
            if row[field] != "":
                try:
                    float(row[field])
                except ValueError:
                    raise ValueError(f"{path}, line {line}, field {field}: {row[field]!r} is not a number") from None
        if row["mean"] == "":
            raise ValueError(f"{path}, line {line}, field mean: a published value is required")
        if not row["source"].strip():
            raise ValueError(f"{path}, line {line}, field source: every published value must cite its source")
        records.append(row)
    frame = pd.DataFrame(records, columns=list(PUBLISHED_COLUMNS))
    for field in ("size", "overlap", "retrieved", "mean", "sd"):
        frame[field] = pd.to_numeric(frame[field].replace("", np.nan))
    return frame


def chroma_per_question(result, ks: Sequence[int]) -> pd.DataFrame:
    """Chroma's metrics per question for every (corpus, model, strategy, retriever) run."""
    frames = []
    for (corpus, model, strategy, retriever), run in result.runs.items():
        frame = chroma_scores(run, ks)
        frame.insert(1, "model", model_column(retriever, model))
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


def _long(per_question: pd.DataFrame, ks: Sequence[int]) -> pd.DataFrame:
    """One row per (question, strategy, depth) with the four metrics as columns."""
    rows = []
    for k in ks:
        part = per_question[["model", "strategy", "retriever", "qid", "doc_id"]].copy()
        part["retrieved"] = k
        for metric in ("recall", "precision", "iou"):
            part[metric] = per_question[f"chroma_{metric}@{k}"].to_numpy()
        part["precision_omega"] = per_question["chroma_precision_omega"].to_numpy()
        rows.append(part)
    return pd.concat(rows, ignore_index=True)


def report_table(per_question: pd.DataFrame, ks: Sequence[int], published: pd.DataFrame,
                 model: str = "all-MiniLM-L6-v2") -> pd.DataFrame:
    """Mean ± sd (points, as the report) per strategy and depth, with the published value of the
    same model where the reference file has one (NaN where it has none)."""
    long = _long(per_question, ks)
    rows = []
    for (strategy, k), group in long.groupby(["strategy", "retrieved"], sort=False):
        row = {"strategy": strategy, "label": strategy_label(strategy), "retrieved": k, "questions": int(group["recall"].notna().sum())}
        for metric in METRICS:
            values = group[metric].to_numpy(dtype=float)
            values = values[~np.isnan(values)]
            row[f"{metric} mean"] = 100 * values.mean() if values.size else np.nan
            row[f"{metric} sd"] = 100 * values.std() if values.size else np.nan
            match = published[(published["model"] == model) & (published["strategy"] == strategy)
                              & (published["metric"] == metric)
                              & (published["retrieved"].isna() | (published["retrieved"] == k))]
            row[f"{metric} published"] = float(match["mean"].iloc[0]) if len(match) else np.nan
        rows.append(row)
    order = {s: i for i, s in enumerate(REPORT_ROWS)}
    table = pd.DataFrame(rows)
    return table.sort_values(["retrieved", "strategy"], key=lambda c: c.map(order) if c.name == "strategy" else c,
                             kind="stable").reset_index(drop=True)


def paired_rows(per_question: pd.DataFrame, ks: Sequence[int], metric: str,
                pairs: Sequence[tuple[str, str]], resamples: int = 2000, seed: int = 0) -> pd.DataFrame:
    """Paired ``a − b`` differences of ``metric`` (points) for each pair, per depth: the clustered
    (document = Chroma corpus) and the plain paired interval, their hull (``low``, ``high``: the
    lower low, the higher high) and its verdict (``claims.pair_verdict``), so the more cautious
    interval always decides."""
    import warnings

    long = _long(per_question, ks)
    rows = []
    for k in ks:
        wide = long[long["retrieved"] == k].pivot_table(index=["qid", "doc_id"], columns="strategy", values=metric)
        wide = wide.dropna()
        clusters = wide.index.get_level_values("doc_id").to_numpy()
        for a, b in pairs:
            diff = 100 * (wide[a].to_numpy() - wide[b].to_numpy())
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                clustered = clustered_bootstrap_ci(diff, clusters, resamples, seed)
            plain = paired_difference_ci(100 * wide[a].to_numpy(), 100 * wide[b].to_numpy(), resamples, seed)
            low, high = min(clustered.low, float(plain.low)), max(clustered.high, float(plain.high))
            rows.append({"retrieved": k, "a": strategy_label(a), "b": strategy_label(b), "questions": len(diff),
                         "clusters": len(set(clusters)), f"{metric} a − b": clustered.mean,
                         "clustered low": clustered.low, "clustered high": clustered.high,
                         "plain low": float(plain.low), "plain high": float(plain.high), "low": low, "high": high,
                         "verdict": pair_verdict(strategy_label(a), strategy_label(b), low, high),
                         "few clusters": bool(caught)})
    return pd.DataFrame(rows)


def neighbour_differences(per_question: pd.DataFrame, ks: Sequence[int], metric: str = "recall",
                          strategies: Sequence[str] = REPORT_ROWS, resamples: int = 2000, seed: int = 0) -> pd.DataFrame:
    """:func:`paired_rows` for each pair of neighbouring rows of the report (row − next row)."""
    present = [s for s in strategies if s in set(per_question["strategy"])]
    return paired_rows(per_question, ks, metric, list(zip(present, present[1:])), resamples, seed)


def against(per_question: pd.DataFrame, ks: Sequence[int], metric: str, target: str, others: Sequence[str],
            resamples: int = 2000, seed: int = 0) -> pd.DataFrame:
    """:func:`paired_rows` of ``target`` against each of ``others`` (target − other)."""
    present = [s for s in others if s in set(per_question["strategy"]) and s != target]
    return paired_rows(per_question, ks, metric, [(target, s) for s in present], resamples, seed)


def chunk_sizes(result, corpus, strategies: Sequence[str]) -> pd.DataFrame:
    """Per strategy of a ``run_matrix`` result on ``corpus``: its chunks and their mean and median
    size in cl100k_base tokens (``core.tokens``), the size the report's rows are named by."""
    from chunklab_core.core.tokens import count_tokens_many

    rows = []
    for strategy in strategies:
        chunks = result.chunks[(corpus.name, strategy)]
        sizes = np.asarray(count_tokens_many(corpus.doc(c.doc_id).text[c.start:c.end] for c in chunks), dtype=float)
        rows.append({"strategy": strategy, "label": strategy_label(strategy), "chunks": len(chunks),
                     "mean tokens": float(sizes.mean()) if sizes.size else np.nan,
                     "median tokens": float(np.median(sizes)) if sizes.size else np.nan})
    return pd.DataFrame(rows)


def take_questions(corpus, n: int | None, seed: int):
    """The corpus with its first ``n`` questions of a seeded order (all when ``n`` is None);
    documents stay whole (a smaller run for checks; the post's numbers use every question)."""
    from chunklab_core.core.corpus import Corpus

    if n is None or n >= len(corpus.questions):
        return corpus
    order = np.random.default_rng(seed).permutation(len(corpus.questions))[:n]
    return Corpus(corpus.name, corpus.documents, [corpus.questions[i] for i in sorted(order)])
