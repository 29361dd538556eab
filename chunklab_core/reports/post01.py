"""Post 01: the SQuAD chunking benchmark, as one call per notebook section.

Handles: loading the seeded SQuAD sample, running every strategy under one retriever,
the results table with 95% percentile-bootstrap intervals (questions resampled, the same
resamples for every strategy), chunk statistics, answers cut by chunk boundaries, and the
side-by-side with the reference run quoted in the issue, and the post's sentences built from
those tables (:func:`sample_text`, :func:`results_reading`, :func:`context_cost_text`,
:func:`cut_example_text`). Not handled: the computations
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

# Quoted from the issue "Foundation and post 01": an independent run of the same design on a
# different 800-question sample. Shown beside our numbers; never used in any computation.
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
        return f"{row[metric]:.3f} [{row[low]:.3f}, {row[high]:.3f}]"

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
        out["context cost"] = "n/a" if pd.isna(cost) else f"{cost:.0f} (k={int(row['cost_k'])})"
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


def sample_text(summary: dict, seed: int) -> str:
    """How many articles, characters and questions the sample holds (``Corpus.summary()``)."""
    return (f"The sample holds **{summary['documents']} articles** ({summary['characters']:,} characters) "
            f"and **{summary['questions']} questions** (seed {seed}).")


def results_reading(results: pd.DataFrame, n_questions: int) -> str:
    """Highest and lowest recall@k, the nDCG@k leader, and how many intervals reach the leader's lower bound.

    k is the table's largest k (the depth): 10 in the post (``measures.largest_k``).
    """
    k = largest_k(results.columns)
    hit, ndcg = column("hit", k), column("ndcg", k)
    low, high = interval_columns(hit)
    best = results.sort_values(hit, ascending=False).iloc[0]
    worst = results.sort_values(hit).iloc[0]
    best_ndcg = results.sort_values(ndcg, ascending=False).iloc[0]
    overlapping = results[results[high] >= best[low]]
    return (f"**{best['label']}** has the highest recall@{k}, {best[hit]:.3f} "
            f"[{best[low]:.3f}, {best[high]:.3f}]; **{worst['label']}** the lowest, "
            f"{worst[hit]:.3f}. By nDCG@{k} the first is **{best_ndcg['label']}** ({best_ndcg[ndcg]:.3f}). "
            f"{len(overlapping)} of {len(results)} strategies have a recall@{k} interval that reaches the "
            f"leader's lower bound, so the ranking among them is not settled by {n_questions} questions "
            f"alone; post 03 does the paired comparison.")


def context_cost_text(results: pd.DataFrame, ks: Sequence[int]) -> str:
    """The cheapest strategy past 90% recall (tokens at its smallest such k), or that none passes."""
    cheapest = results.dropna(subset=["context_cost_tokens"]).sort_values("context_cost_tokens")
    if not len(cheapest):
        return f"No strategy passes 90% recall within k ≤ {ks[-1]}."
    c = cheapest.iloc[0]
    return (f"The cheapest way past 90% recall is **{c['label']}**: {c['context_cost_tokens']:.0f} tokens "
            f"on average at k = {int(c['cost_k'])}. "
            f"{int(results['context_cost_tokens'].isna().sum())} strategies never pass 0.90 within k ≤ {ks[-1]}.")


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
