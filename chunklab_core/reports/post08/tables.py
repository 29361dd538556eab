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
from chunklab_core.stats.claims import interval_side, pair_verdict
from chunklab_core.stats.clustered import clustered_bootstrap_ci
from chunklab_core.retrieval.registry import model_column

PUBLISHED_CSV = DATA_DIR / "reference" / "chroma_published.csv"
PUBLISHED_COLUMNS = ("model", "chroma_chunker", "size", "overlap", "retrieved", "metric", "mean", "sd",
                     "mean_tokens", "strategy", "source")
PUBLISHED_MODELS = ("text-embedding-3-large", "all-MiniLM-L6-v2")  # the report's two tables, in its order
PUBLISHED_DEPTH = 5  # "We report the results for n=5 retrieved chunks"
EMBEDDING_CHUNKERS = ("kamradt", "kamradt_modified_300", "cluster_400", "cluster_250", "cluster_200")
ROUNDING = 0.05 + 1e-9  # a value published to one decimal agrees when within half its last digit
TOKEN_ROUNDING = 0.5 + 1e-9  # a mean size published as a whole number of tokens
METRICS = ("recall", "precision", "precision_omega", "iou")

# The report's rows, in its order, as the series' strategies (token sizes in cl100k_base).
REPORT_ROWS = ("lc_recursive_tok_800_400", "lc_token_800_400", "lc_recursive_tok_400_200", "lc_token_400_200",
               "lc_recursive_tok_400_0", "lc_token_400_0", "lc_recursive_tok_200_0", "lc_token_200_0",
               "lc_recursive_tok_250_125", "lc_token_250_125", "kamradt", "kamradt_modified_300",
               "cluster_400", "cluster_200", "llm_semantic", "lc_recursive_tok_250_0", "lc_token_250_0",
               "cluster_250")



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
        for field in ("size", "overlap", "retrieved", "mean", "sd", "mean_tokens"):
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
    for field in ("size", "overlap", "retrieved", "mean", "sd", "mean_tokens"):
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
        if "chroma_precision_omega_summed" in per_question:
            part["precision_omega_summed"] = per_question["chroma_precision_omega_summed"].to_numpy()
        rows.append(part)
    return pd.concat(rows, ignore_index=True)


def report_table(per_question: pd.DataFrame, ks: Sequence[int]) -> pd.DataFrame:
    """The re-run's mean ± sd (points, as the report) per strategy and depth, and precision_Ω
    with the chunks' lengths summed beside the union (what the union changes). The published
    values are compared at the report's depth only, by :func:`comparison_table`."""
    long = _long(per_question, ks)
    rows = []
    for (strategy, k), group in long.groupby(["strategy", "retrieved"], sort=False):
        row = {"strategy": strategy, "label": strategy_label(strategy), "retrieved": k, "questions": int(group["recall"].notna().sum())}
        for metric in (*METRICS, "precision_omega_summed"):
            values = group[metric].to_numpy(dtype=float)
            values = values[~np.isnan(values)]
            row[f"{metric} mean"] = 100 * values.mean() if values.size else np.nan
            row[f"{metric} sd"] = 100 * values.std() if values.size else np.nan
        rows.append(row)
    return _report_order(pd.DataFrame(rows), ["retrieved", "strategy"])


def _report_order(table: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    order = {s: i for i, s in enumerate(REPORT_ROWS)}
    return table.sort_values(by, key=lambda c: c.map(order) if c.name == "strategy" else c,
                             kind="stable").reset_index(drop=True)


def _basis(table_model: str, model: str, strategy: str, metric: str, rerun: set) -> str:
    """Why a published value can (or cannot) be set beside the re-run."""
    if strategy not in rerun:
        return "not re-run here"
    if table_model == model:
        return "same model"
    if metric != "precision_omega":
        return "other retrieval model"
    return "chunks cut with the other model" if strategy in EMBEDDING_CHUNKERS else "chunks only"


COMPARABLE = ("same model", "chunks only")


def yardstick(basis: str, strategy: str, metric: str) -> str:
    """How a published value is compared: ``"rounding"`` where the computation is deterministic
    (precision_Ω of a chunker no embedding model cuts depends on the chunks and the excerpts alone:
    the same corpora and the same chunks must give the same number to the published decimal),
    ``"SEM"`` where it runs through an embedding model whose exact vectors the re-run cannot have
    (the report's stored question vectors, its approximate index), ``""`` where not comparable."""
    if basis not in COMPARABLE:
        return ""
    if metric == "precision_omega" and strategy not in EMBEDDING_CHUNKERS:
        return "rounding"
    return "SEM"


def comparison_table(per_question: pd.DataFrame, published: pd.DataFrame, model: str, n_published: int,
                     depth: int = PUBLISHED_DEPTH) -> pd.DataFrame:
    """Every published value at the report's depth beside the re-run's (points), one row per
    (table, chunker row, metric): the published mean, sd and standard error of the mean
    ``sd / sqrt(n_published)`` (the report's questions), the re-run's mean and sd over its
    questions, their difference, the yardstick (:func:`yardstick`) and whether the re-run meets
    it (``agrees``: within rounding, ``|difference| <= 0.05``, or within the SEM), filled only where
    the value is comparable (``basis``: the same embedding model, or precision_Ω of a chunker that
    no embedding model cuts); NaN elsewhere."""
    long = _long(per_question, [depth])
    rerun = set(long["strategy"])
    rows = []
    for _, pub in published[published["retrieved"] == depth].iterrows():
        strategy, metric = pub["strategy"], pub["metric"]
        values = long.loc[long["strategy"] == strategy, metric].to_numpy(dtype=float)
        values = values[~np.isnan(values)]
        basis = _basis(pub["model"], model, strategy, metric, rerun)
        mean = 100 * values.mean() if values.size else np.nan
        sem = pub["sd"] / np.sqrt(n_published)
        diff = mean - pub["mean"]
        stick = yardstick(basis, strategy, metric)
        tolerance = ROUNDING if stick == "rounding" else sem
        rows.append({"table": pub["model"], "retrieved": depth, "chunker": pub["chroma_chunker"], "size": pub["size"],
                     "overlap": pub["overlap"], "strategy": strategy,
                     "label": strategy_label(strategy) if strategy in rerun else pub["chroma_chunker"],
                     "metric": metric, "published mean": pub["mean"], "published sd": pub["sd"],
                     "published sem": sem, "published mean tokens": pub["mean_tokens"], "re-run mean": mean,
                     "re-run sd": 100 * values.std() if values.size else np.nan, "questions": int(values.size),
                     "re-run − published": diff, "basis": basis, "yardstick": stick,
                     "agrees": bool(abs(diff) <= tolerance) if stick else np.nan})
    return pd.DataFrame(rows)


def published_omega_pairs(published: pd.DataFrame) -> pd.DataFrame:
    """precision_Ω of every row both published tables share (the same chunker and size, whose
    chunks no embedding model cuts): the value depends on the chunks alone, so the two should agree."""
    omega = published[(published["metric"] == "precision_omega") & ~published["strategy"].isin(EMBEDDING_CHUNKERS)]
    wide = omega.pivot_table(index="strategy", columns="model", values="mean").dropna()
    wide = wide[[m for m in PUBLISHED_MODELS if m in wide]]
    return wide.reset_index().assign(label=lambda f: f["strategy"].map(strategy_label))


def _agreement(row) -> str:
    if not row["yardstick"]:
        return ""
    return f"{'✓' if row['agrees'] else '✗'} {row['yardstick']}"


def comparison_wide(comparison: pd.DataFrame, table_model: str) -> pd.DataFrame:
    """One published table as the report prints it, one row per chunker row: per metric the
    published ``mean ± sd``, the re-run's, and the agreement (``✓``/``✗`` by the value's yardstick,
    rounding or the SEM; empty where the value is not comparable, named in ``basis``); the mean
    chunk size here and in the report, marked where the report's size is a measured mean."""
    part = comparison[comparison["table"] == table_model]
    rows = []
    for (chunker, size, overlap), group in part.groupby(["chunker", "size", "overlap"], sort=False, dropna=False):
        first = group.iloc[0]
        row = {"chunker": chunker, "size": "N/A" if pd.isna(size) else f"{size:.0f}",
               "overlap": f"{overlap:.0f}", "tokens here / report": _tokens_pair(first),
               "re-run as": first["label"]}
        for _, value in group.iterrows():
            name = value["metric"]
            row[f"{name} report"] = f"{value['published mean']:.1f} ± {value['published sd']:.1f}"
            row[f"{name} re-run"] = ("" if np.isnan(value["re-run mean"])
                                     else f"{value['re-run mean']:.1f} ± {value['re-run sd']:.1f}")
            row[f"{name} agrees"] = _agreement(value)
        bases = dict(zip(group["metric"], group["basis"]))
        row["basis"] = (next(iter(bases.values())) if len(set(bases.values())) == 1 else
                        "; ".join(f"{metric}: {basis}" for metric, basis in bases.items() if basis != "same model"))
        rows.append(row)
    return pd.DataFrame(rows)


def _tokens_pair(row) -> str:
    here = row.get("re-run mean tokens", np.nan)
    here = "—" if pd.isna(here) else f"{here:.0f}"
    mark = row.get("tokens agree", np.nan)
    mark = "" if pd.isna(mark) else (" ✓" if mark else " ✗")
    return f"{here} / {row['published mean tokens']:.0f}{mark}"


# The report's heuristic rows whose bracketed size is a measured mean (a TokenText row's size is its
# window, not a mean); the embedding chunkers' means depend on the model that cut them.
MEASURED_SIZES = ("RecursiveCharacterTextSplitter",)


def with_chunk_tokens(comparison: pd.DataFrame, sizes: pd.DataFrame) -> pd.DataFrame:
    """``comparison`` with the re-run's mean chunk size (cl100k_base tokens, :func:`chunk_sizes`) and,
    where the report's size is a measured mean of chunks no embedding model cuts, whether the two
    agree to the published whole token (``tokens agree``)."""
    tokens = comparison["strategy"].map(dict(zip(sizes["strategy"], sizes["mean tokens"])))
    measured = comparison["chunker"].isin(MEASURED_SIZES) & tokens.notna()
    agree = ((tokens - comparison["published mean tokens"]).abs() <= TOKEN_ROUNDING).where(measured)
    return comparison.assign(**{"re-run mean tokens": tokens, "tokens agree": agree})


def agreement_counts(comparison: pd.DataFrame) -> pd.DataFrame:
    """Per published table and yardstick: comparable values and how many agree by it."""
    part = comparison[comparison["yardstick"] != ""]
    return (part.groupby(["table", "yardstick"], sort=False)
            .agg(values=("metric", "size"), agree=("agrees", "sum"))
            .reset_index().astype({"agree": int}))


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


MINILM_TABLE_ROWS = ("lc_recursive_tok_250_125", "lc_token_250_125", "lc_recursive_tok_250_0", "lc_token_250_0",
                     "lc_recursive_tok_200_0", "lc_token_200_0", "cluster_250", "cluster_200")

# The report's claims, each a comparison on the re-run: "best" (the claimed row against every
# other row of its table, ``a`` alone) or "pair" (``a − b``, the report says ``a`` is higher).
# ``table`` is the published table that makes the claim (its values are shown beside).
CLAIMS = (
    {"claim": "best recall", "kind": "best", "metric": "recall", "a": "lc_token_250_125",
     "rows": MINILM_TABLE_ROWS, "table": "all-MiniLM-L6-v2"},
    {"claim": "best IoU", "kind": "best", "metric": "iou", "a": "cluster_200", "rows": MINILM_TABLE_ROWS,
     "table": "all-MiniLM-L6-v2"},
    {"claim": "best precision", "kind": "best", "metric": "precision", "a": "cluster_200", "rows": MINILM_TABLE_ROWS,
     "table": "all-MiniLM-L6-v2"},
    {"claim": "best precision_Ω", "kind": "best", "metric": "precision_omega", "a": "cluster_200",
     "rows": MINILM_TABLE_ROWS, "table": "all-MiniLM-L6-v2"},
    {"claim": "overlap costs IoU", "kind": "pair", "metric": "iou", "a": "lc_recursive_tok_400_0",
     "b": "lc_recursive_tok_400_200", "table": "text-embedding-3-large"},
    {"claim": "overlap costs IoU", "kind": "pair", "metric": "iou", "a": "lc_token_400_0", "b": "lc_token_400_200",
     "table": "text-embedding-3-large"},
    {"claim": "overlap costs IoU", "kind": "pair", "metric": "iou", "a": "lc_recursive_tok_250_0",
     "b": "lc_recursive_tok_250_125", "table": "all-MiniLM-L6-v2"},
    {"claim": "overlap costs IoU", "kind": "pair", "metric": "iou", "a": "lc_token_250_0", "b": "lc_token_250_125",
     "table": "all-MiniLM-L6-v2"},
    {"claim": "overlap helps recall at small sizes", "kind": "pair", "metric": "recall", "a": "lc_token_250_125",
     "b": "lc_token_250_0", "table": "all-MiniLM-L6-v2"},
    {"claim": "small chunks: higher IoU", "kind": "pair", "metric": "iou", "a": "lc_recursive_tok_200_0",
     "b": "lc_recursive_tok_400_0", "table": "text-embedding-3-large"},
    {"claim": "small chunks: higher IoU", "kind": "pair", "metric": "iou", "a": "lc_token_200_0",
     "b": "lc_token_400_0", "table": "text-embedding-3-large"},
    {"claim": "small chunks: higher IoU", "kind": "pair", "metric": "iou", "a": "cluster_200", "b": "cluster_400",
     "table": "text-embedding-3-large"},
    {"claim": "small chunks: lower recall", "kind": "pair", "metric": "recall", "a": "cluster_400", "b": "cluster_200",
     "table": "text-embedding-3-large"},
)
REPRODUCED, NOT_REPRODUCED, UNDECIDED = "reproduced", "not reproduced", "not decidable on 5 corpora"


def _published_value(published: pd.DataFrame, table: str, strategy: str, metric: str) -> float:
    match = published[(published["model"] == table) & (published["strategy"] == strategy)
                      & (published["metric"] == metric) & (published["retrieved"] == PUBLISHED_DEPTH)]
    return float(match["mean"].iloc[0]) if len(match) else np.nan


def claims_table(per_question: pd.DataFrame, published: pd.DataFrame, claims: Sequence[dict] = CLAIMS,
                 depth: int = PUBLISHED_DEPTH, resamples: int = 2000, seed: int = 0,
                 model: str | None = None) -> pd.DataFrame:
    """Each claim of the report checked on the re-run at ``depth`` with :func:`paired_rows`'
    intervals (the hull of the corpus-clustered and the question-level one, so the more
    cautious decides). A "pair" claim (``a`` higher than ``b``) is *reproduced* when the
    interval of ``a − b`` lies above 0, *not reproduced* when below, else *not decidable on 5
    corpora*. A "best" claim (``a`` highest of ``rows``) is reproduced when every interval
    ``a − other`` lies above 0 (the series' winner), not reproduced when some other row is
    ahead of ``a`` (an interval below 0), else not decidable. ``closest`` is the pair that
    decides: the other row with the lowest interval ``a − other``. ``model``: the re-run's
    embedding model (column ``checked with``); ``same model`` says whether the claim was made on
    that model's published table: a claim made on another model's table is checked for whether it
    holds with the re-run's model, not for whether the report's numbers reproduce."""
    present = set(per_question["strategy"])
    rows = []
    for claim in claims:
        metric, a = claim["metric"], claim["a"]
        others = [claim["b"]] if claim["kind"] == "pair" else [r for r in claim["rows"] if r != a]
        others = [o for o in others if o in present]
        if a not in present or not others:
            continue
        pairs = paired_rows(per_question, [depth], metric, [(a, o) for o in others], resamples, seed)
        sides = [interval_side(low, high) for low, high in zip(pairs["low"], pairs["high"])]
        if all(side > 0 for side in sides):
            outcome = REPRODUCED
        elif any(side < 0 for side in sides):
            outcome = NOT_REPRODUCED
        else:
            outcome = UNDECIDED
        decide = int(np.argmin(pairs["low"].to_numpy()))
        b = others[decide]
        row = pairs.iloc[decide]
        rows.append({"claim": claim["claim"], "table": claim["table"], "metric": metric, "retrieved": depth,
                     "a": strategy_label(a), "closest": strategy_label(b),
                     "published a": _published_value(published, claim["table"], a, metric),
                     "published closest": _published_value(published, claim["table"], b, metric),
                     "a − closest": row[f"{metric} a − b"], "low": row["low"], "high": row["high"],
                     "questions": int(row["questions"]), "clusters": int(row["clusters"]),
                     "compared with": len(others), "verdict": row["verdict"], "outcome": outcome,
                     "checked with": model or "", "same model": model is not None and claim["table"] == model})
    return pd.DataFrame(rows)


def name_llm_rows(pairs: pd.DataFrame, sizes: pd.DataFrame, corpus, strategy: str = "llm_semantic") -> pd.DataFrame:
    """``pairs`` with the LLM chunker's label naming what ran: its chunks, their mean size in
    cl100k_base tokens and the corpora of the slice (from :func:`chunk_sizes`)."""
    from chunklab_core.core import numbers

    found = sizes[sizes["strategy"] == strategy]
    if found.empty:
        return pairs
    row = found.iloc[0]
    named = (f"{row['label']}: {numbers.count(int(row['chunks']), 'chunk')} of {row['mean tokens']:.0f} tokens "
             f"on average, {numbers.count(len(corpus.documents), 'corpus', 'corpora')}")
    return pairs.replace({"a": {row["label"]: named}, "b": {row["label"]: named}})


def kamradt_breaks(corpus, avg_tokens: int = 300, piece_tokens: int = 50) -> pd.DataFrame:
    """Per document, the modified Kamradt chunker's break count here, ``ceil(T / avg) - 1``
    (``chunking.chroma_semantic.kamradt_modified``), and in Chroma's code, ``T // avg`` (its
    ``number_of_cuts``, which its threshold search reaches at most), with ``T`` the document's
    tokens over its small pieces: they differ by one break where ``avg`` divides ``T``."""
    import math

    from chunklab_core.chunking.chroma_semantic import small_pieces
    from chunklab_core.core.tokens import count_tokens_many

    rows = []
    for doc in corpus.documents:
        pieces = small_pieces(doc.text, piece_tokens)
        total = int(count_tokens_many(doc.text[s:e] for s, e in pieces).sum())
        rows.append({"document": doc.doc_id, "pieces": len(pieces), "tokens": total,
                     "breaks here": min(len(pieces) - 1, max(0, math.ceil(total / avg_tokens) - 1)),
                     "breaks in Chroma's code": total // avg_tokens})
    return pd.DataFrame(rows)


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
