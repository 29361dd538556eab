"""Post 01: the SQuAD chunking benchmark, as one call per notebook section.

Handles: loading the seeded SQuAD sample, running every strategy under one retriever,
the results table with 95% percentile-bootstrap intervals (questions resampled, the same
resamples for every strategy), chunk statistics, answers cut by chunk boundaries, and the
side-by-side with the published ChunkLab SQuAD benchmark (:mod:`chunklab_core.reports.reference_results`),
and the post's sentences built from those tables (:func:`sample_text`, :func:`results_reading`
by paired intervals, :func:`threshold_reading`: recall against 0.90 by its interval, never by a
point estimate; :func:`cut_example_text`). Not handled: the computations
themselves (``evaluation.scoring``, ``evaluation.ranking_metrics``, ``stats``), which this module only sequences.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd

from chunklab_core.stats import bootstrap as stats
from chunklab_core.chunking import STRATEGIES, strategy_label
from chunklab_core.core.corpus import Corpus
from chunklab_core.evaluation.measures import KS, column, columns, depth_columns, interval_columns, largest_k
from chunklab_core.evaluation.scoring import evaluate, summarize
from chunklab_core.retrieval.run import RetrievalRun
from chunklab_core.data.corpora import load_corpus
from chunklab_core.core import numbers
from chunklab_core.reports.verdict_tables import leader_verdicts
from chunklab_core.stats import claims

# Quoted from the published ChunkLab SQuAD benchmark, its README's results table (SQuAD v1.1
# dev, 800 questions from 40 articles, seed 20260729; reference_results.REFERENCE_SOURCE).
# Shown beside our numbers; never used in any computation.
REFERENCE_RUN = {
    "fixed_1000": {column("hit", 10): 0.931, column("rr", 10): 0.792, column("ndcg", 10): 0.615},
    "fixed_500": {column("hit", 10): 0.885},
    "semantic_tfidf": {column("hit", 10): 0.8725},
}


def load_squad_sample(n_articles: int, n_questions: int, seed: int) -> Corpus:
    """The seeded SQuAD v1.1 dev sample, through the one corpus loader (``data.corpora``), under
    the sample's descriptive name (e.g. ``squad-dev-sample-40a-800q-seed20260729``, the corpus
    column of post 01's tables); procedure in ``data.squad.sample_corpus``."""
    return load_corpus("squad", squad_articles=n_articles, squad_questions=n_questions, seed=seed,
                       descriptive_name=True)


def strategy_table(strategies: Sequence[str]) -> pd.DataFrame:
    """Name, label and parameters of each strategy, as registered."""
    unknown = [s for s in strategies if s not in STRATEGIES]
    if unknown:
        raise ValueError(f"unknown strategies {unknown}; known: {sorted(STRATEGIES)}")
    rows = []
    for name in strategies:
        spec = STRATEGIES[name]
        params = ", ".join(f"{k}={v}" for k, v in spec.params.items() if not callable(v))
        rows.append({"strategy": name, "label": strategy_label(name), "parameters": params})
    return pd.DataFrame(rows)


@dataclass
class BenchmarkResult:
    per_question: pd.DataFrame
    runs: dict[str, RetrievalRun]
    ks: tuple[int, ...]


def run_benchmark(corpus: Corpus, strategies: Sequence[str], retriever: str = "bm25",
                  ks: Sequence[int] = KS, progress: bool = True) -> BenchmarkResult:
    """Every strategy under one retriever; keeps each run for the later sections."""
    if not strategies:
        raise ValueError("STRATEGIES is empty: name at least one strategy")
    strategy_table(strategies)  # validates names before any work
    if any((not isinstance(k, int)) or k < 1 for k in ks):
        raise ValueError(f"every k must be an integer >= 1, got {list(ks)}")
    runs: dict[str, RetrievalRun] = {}
    per_question = evaluate(corpus, strategies, retriever, ks, progress=progress, on_run=lambda r: runs.__setitem__(r.strategy, r))
    return BenchmarkResult(per_question, runs, tuple(ks))


def chunk_statistics(result: BenchmarkResult) -> pd.DataFrame:
    """Per strategy: chunks, indexed-span tokens and returned-context tokens."""
    rows = []
    for name, run in result.runs.items():
        rows.append({
            "strategy": name,
            "label": strategy_label(name),
            "chunks": len(run.chunks),
            "contexts": len(run.contexts),
            "median chunk tokens": float(np.median(run.chunk_tokens)),
            "mean chunk tokens": float(np.mean(run.chunk_tokens)),
            "mean context tokens": float(np.mean(run.context_tokens)),
        })
    return pd.DataFrame(rows)


INTERVAL_METRICS = (*columns("hit", KS), *depth_columns(max(KS)))  # hit@1 .. hit@10, rr@10, ndcg@10


def results_with_intervals(result: BenchmarkResult, resamples: int, seed: int,
                           metrics: Sequence[str] = INTERVAL_METRICS) -> pd.DataFrame:
    """Summary per strategy plus ``<metric>_low``/``_high`` 95% percentile-bootstrap bounds.

    The same question resamples serve every strategy and metric (paired by construction).
    """
    summary = summarize(result.per_question, result.ks)
    summary.insert(1, "label", [strategy_label(s) for s in summary["strategy"]])
    order = list(summary["strategy"])
    for metric in metrics:
        wide = result.per_question.pivot(index="qid", columns="strategy", values=metric)[order]
        interval = stats.bootstrap_ci(wide.to_numpy(), resamples=resamples, seed=seed)
        low, high = interval_columns(metric)
        summary[low] = interval.low
        summary[high] = interval.high
    return summary


def display_table(summary: pd.DataFrame, ks: Sequence[int]) -> pd.DataFrame:
    """The post's main table: point estimates with their 95% intervals as text.

    MRR and nDCG are shown at the summary's depth (its largest k, where ``scoring`` reports them).
    """
    def fmt(row, metric):
        low, high = interval_columns(metric)
        return numbers.estimate(row[metric], row[low], row[high])

    depth = largest_k(summary.columns)
    rr, ndcg = column("rr", depth), column("ndcg", depth)
    rows = []
    for _, row in summary.iterrows():
        out = {"strategy": row["label"]}
        for k in ks:
            hit = column("hit", k)
            out[f"R@{k}"] = fmt(row, hit) if interval_columns(hit)[0] in row else f"{row[hit]:.3f}"
        out[f"MRR@{depth}"] = fmt(row, rr)
        out[f"nDCG@{depth}"] = fmt(row, ndcg)
        out["P@1"] = f"{row[column('p', 1)]:.3f}"
        out[f"P@{ks[-1]}"] = f"{row[column('p', ks[-1])]:.3f}"
        out[f"tokens@{ks[-1]}"] = f"{row[column('tokens', ks[-1])]:.0f}"
        cost = row["context_cost_tokens"]
        out["context cost (point estimate)"] = "n/a" if pd.isna(cost) else f"{cost:.0f} (k={int(row['cost_k'])})"
        rows.append(out)
    return pd.DataFrame(rows)


def chunk_starts(run: RetrievalRun) -> dict[str, np.ndarray]:
    """Sorted distinct start offsets of the indexed chunks, per document."""
    starts: dict[str, list[int]] = {}
    for c in run.chunks:
        starts.setdefault(c.doc_id, []).append(c.start)
    return {d: np.unique(np.asarray(s)) for d, s in starts.items()}


def cut_answers(run: RetrievalRun, k: int = 10, max_examples: int = 3, width: int = 160) -> pd.DataFrame:
    """Missed questions whose every gold answer span is cut by an indexed-chunk boundary.

    Returns one row per example with an excerpt of the article around the answer, the
    boundary marked with ``⟂`` and the answer in «guillemets».
    """
    corpus = run.corpus
    boundaries = chunk_starts(run)
    rows = []
    for index, q in enumerate(corpus.questions):
        hit = np.isin(run.ranked[index, :k], run.relevant[index]).any()
        if hit or not q.evidence_spans:
            continue
        cuts = []
        for _, start, end in q.evidence_spans:
            inside = boundaries.get(q.doc_id, np.zeros(0))
            cut = inside[(inside > start) & (inside < end)]
            if len(cut) == 0:
                break
            cuts.append((start, end, int(cut[0])))
        else:
            if not cuts:
                continue
            start, end, cut = cuts[0]
            text = corpus.doc(q.doc_id).text
            lo, hi = max(0, start - width // 2), min(len(text), end + width // 2)
            excerpt = (text[lo:start] + "«" + text[start:cut] + "⟂" + text[cut:end] + "»" + text[end:hi])
            rows.append({"qid": q.qid, "question": q.text, "answer": text[start:end],
                         "excerpt": " ".join(excerpt.split())})
        if len(rows) >= max_examples:
            break
    return pd.DataFrame(rows)


def count_cut_misses(run: RetrievalRun, k: int = 10) -> dict:
    """How many misses at k have every gold span cut by an indexed-chunk boundary."""
    starts = chunk_starts(run)
    misses = cut = 0
    for index, q in enumerate(run.corpus.questions):
        if np.isin(run.ranked[index, :k], run.relevant[index]).any():
            continue
        misses += 1
        b = starts.get(q.doc_id, np.zeros(0))
        if q.evidence_spans and all(((b > s) & (b < e)).any() for _, s, e in q.evidence_spans):
            cut += 1
    return {"strategy": run.strategy, "misses": misses, "misses with every answer cut": cut}


def reference_comparison(summary: pd.DataFrame) -> pd.DataFrame:
    """Our numbers beside the quoted reference run, for the strategies it reported."""
    rows = []
    ours = summary.set_index("strategy")
    for strategy, values in REFERENCE_RUN.items():
        if strategy not in ours.index:
            continue
        for metric, reference in values.items():
            low, high = ours.loc[strategy].get(f"{metric}_low"), ours.loc[strategy].get(f"{metric}_high")
            ours_value = ours.loc[strategy, metric]
            rows.append({
                "strategy": strategy_label(strategy), "metric": metric, "reference (other sample)": reference,
                "ours": round(float(ours_value), 4),
                "ours 95% CI": f"[{low:.3f}, {high:.3f}]" if low is not None else "",
                "reference inside our CI": bool(low is not None and low <= reference <= high),
            })
    return pd.DataFrame(rows)


def sample_text(summary: dict, seed: int, label: str | None = None) -> str:
    """The sample by name (``label``: :func:`chunklab_core.reports.samples.corpus_sample_label`),
    its characters and seed; without a label, its articles and questions (``Corpus.summary()``)."""
    if label is not None:
        return (f"The sample is **{label}** ({summary['characters']:,} characters, seed {seed}); "
                "every table and finding below is on it.")
    return (f"The sample holds **{summary['documents']} articles** ({summary['characters']:,} characters) "
            f"and **{summary['questions']} questions** (seed {seed}).")


def results_reading(results: pd.DataFrame, verdicts: pd.DataFrame, sample: str) -> str:
    """The recall@k leader and what its paired intervals say (:func:`chunklab_core.reports.verdict_tables.leader_verdicts`).

    ``verdicts`` is the leader-verdict table of recall@k per question (leader first); k is the
    table's largest k (the depth): 10 in the post (``measures.largest_k``). Nothing is read from
    overlapping intervals or from point estimates: the words are the series' one rule on the
    paired intervals leader - strategy.
    """
    k = largest_k(results.columns)
    hit, ndcg = column("hit", k), column("ndcg", k)
    low, high = interval_columns(hit)
    by_strategy = results.set_index("strategy")
    leader = by_strategy.loc[verdicts["strategy"].iloc[0]]
    open_ = verdicts.iloc[1:][verdicts["verdict"].iloc[1:] != claims.RULED_OUT]
    ruled = verdicts.iloc[1:][verdicts["verdict"].iloc[1:] == claims.RULED_OUT]
    labels = lambda rows: ", ".join(by_strategy.loc[name, "label"] for name in rows["strategy"])
    winner = verdicts["verdict"].iloc[0] == claims.WINNER
    text = (f"On {sample}, **{leader['label']}** has the highest recall@{k}, "
            f"{numbers.estimate(leader[hit], leader[low], leader[high])}; by the paired intervals "
            "(leader − strategy, the same question resamples) it is "
            + ("the **winner**: " if winner else "not the winner: "))
    if open_.empty:
        text += "every other strategy is ruled out."
    else:
        text += (f"{numbers.count(len(open_), 'strategy', 'strategies')} cannot be ruled out "
                 f"({labels(open_)})" + (f", {numbers.count(len(ruled), 'strategy is', 'strategies are')} "
                                         f"ruled out ({labels(ruled)})." if len(ruled) else "."))
    best_ndcg = results.sort_values(ndcg, ascending=False).iloc[0]
    bounds = [best_ndcg.get(name, np.nan) for name in interval_columns(ndcg)]
    return (text + f" The highest nDCG@{k} point estimate is **{best_ndcg['label']}**'s "
            f"({numbers.estimate(best_ndcg[ndcg], *bounds)}); post 03 compares every metric paired.")


def recall_verdicts(result: BenchmarkResult, k: int, resamples: int, seed: int) -> pd.DataFrame:
    """The recall@k leader's paired intervals against every other strategy, with verdict words
    (:func:`chunklab_core.reports.verdict_tables.leader_verdicts` on the questions x strategies hits)."""
    metric = column("hit", k)
    wide = result.per_question.pivot(index="qid", columns="strategy", values=metric)
    return leader_verdicts(wide, metric, resamples, seed)


def threshold_reading(results: pd.DataFrame, ks: Sequence[int], target: float = 0.90) -> str:
    """Where recall@k stands against ``target``, by its 95% interval, never by its point estimate.

    Per strategy, the smallest k whose recall@k interval lies wholly above ``target``
    (:func:`chunklab_core.stats.claims.interval_side` on ``[low - target, high - target]``);
    strategies with none are split into those whose interval at the largest k lies wholly below
    ``target`` and those whose interval contains it (the sample cannot say on which side they
    are). Tokens are the mean returned tokens at that k, a descriptive figure. The table's
    ``context_cost_tokens`` column is read from point estimates and is described, not used, here.
    """
    above, unsure, below = [], [], []
    for _, row in results.iterrows():
        for k in ks:
            low, high = interval_columns(column("hit", k))
            if low in row and claims.interval_side(row[low] - target, row[high] - target) == 1:
                above.append((row[column("tokens", k)], row["label"], k))
                break
        else:
            last = column("hit", ks[-1])
            low, high = interval_columns(last)
            side = claims.interval_side(row[low] - target, row[high] - target)
            (below if side == -1 else unsure).append(
                f"{row['label']} {numbers.estimate(row[last], row[low], row[high])}")
    threshold = f"{target:.2f}"
    parts = []
    if above:
        listed = "; ".join(f"{label} from k = {k} ({tokens:.0f} tokens returned on average)"
                           for tokens, label, k in sorted(above))
        parts.append(f"Recall@k lies above {threshold} by its whole 95% interval for "
                     f"{numbers.count(len(above), 'strategy', 'strategies')}, fewest tokens first: "
                     f"{listed}.")
    else:
        parts.append(f"No strategy's recall@k interval lies wholly above {threshold} within "
                     f"k ≤ {ks[-1]}.")
    if unsure:
        parts.append(f"At k = {ks[-1]}, {numbers.count(len(unsure), 'interval contains', 'intervals contain')} "
                     f"{threshold}, so the sample cannot say on which side of it the strategy lies: "
                     + "; ".join(unsure) + ".")
    if below:
        parts.append(f"Wholly below {threshold} at k = {ks[-1]}: " + "; ".join(below) + ".")
    parts.append("The token counts are descriptive means without an interval; the table's context "
                 f"cost column reads the first k whose point estimate exceeds {threshold} and is not "
                 "a verdict.")
    return " ".join(parts)


def context_cost_text(results: pd.DataFrame, ks: Sequence[int]) -> str:
    """Kept for callers of earlier versions: :func:`threshold_reading` at 0.90."""
    return threshold_reading(results, ks)


def cut_example_text(row) -> str:
    """One answer cut by a chunk boundary: the question, the answer and the excerpt around the cut."""
    return f"**Q:** {row['question']}  \n**A:** {row['answer']}  \n> …{row['excerpt']}…"


def full_set_verdicts(strategies: Sequence[str], n_articles: int, n_questions: int, seed: int, k: int,
                      resamples: int, retriever: str = "bm25") -> pd.DataFrame:
    """Post 01's design on a larger SQuAD sample: the hit@k leader against every strategy.

    The same strategies and retriever on ``n_articles`` articles and a seeded sample of
    ``n_questions`` of their questions (every dev article and 2,000 questions in the post:
    post 02's SQuAD evidence, its rankings read from the recorded runs). The paired intervals
    resample articles (``verdict_tables.leader_verdicts`` with the questions' documents), since
    questions come from the same articles; the question-level verdict is kept beside it.
    """
    from chunklab_core.reports.verdict_tables import leader_verdicts

    corpus = load_squad_sample(n_articles, n_questions, seed)
    result = run_benchmark(corpus, strategies, retriever, KS, progress=False)
    metric = column("hit", k)
    frame = result.per_question.assign(label=result.per_question["strategy"].map(strategy_label))
    wide = frame.pivot(index="qid", columns="label", values=metric)[[strategy_label(s) for s in strategies]]
    documents = frame.drop_duplicates("qid").set_index("qid")["doc_id"]
    table = leader_verdicts(wide, metric, resamples, seed, documents)
    return table.assign(sample=f"SQuAD v1.1 dev, {corpus.summary()['questions']:,} questions from "
                               f"{len(corpus.documents)} articles")


def full_set_reading(table: pd.DataFrame, reference: pd.DataFrame) -> str:
    """What the larger sample adds to the reference-design reading: its leader, how many strategies it
    rules out, and whether the 800-question leader is among those that cannot be ruled out."""
    from chunklab_core.stats import claims

    leader = table.iloc[0]
    ruled = table[table["verdict"] == claims.RULED_OUT]["strategy"].tolist()
    kept = table[(table["verdict"] != claims.RULED_OUT) & (table.index != leader.name)]["strategy"].tolist()
    small_leader = reference.sort_values(table["metric"].iloc[0], ascending=False)["label"].iloc[0]
    where = ("is the leader here too" if small_leader == leader["strategy"] else
             "cannot be ruled out here" if small_leader in kept else "is ruled out here")
    return (f"On {table['sample'].iloc[0]} (articles resampled), the {table['metric'].iloc[0]} leader is "
            f"**{leader['strategy']}** ({leader['mean']:.3f}), verdict *{leader['verdict']}*; "
            f"{len(ruled)} of {len(table) - 1} other strategies are ruled out"
            + (f" ({', '.join(ruled)})" if ruled else "")
            + (f", and {', '.join(kept)} cannot be ruled out" if kept else "")
            + f". The leader of the reference-design sample, {small_leader}, {where}.")
