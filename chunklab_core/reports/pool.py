"""The candidate pool: one set of strategies per (corpus, retriever, model), compared at matched cost.

Posts 02, 08 (its builder section) and 00 read their recommendations from this module, so no
post can rule out what another recommends. Handles:

* the pool (:data:`SERIES`, :data:`LIBRARY`, :data:`POOL`): the series' strategies, and each
  library splitter at its documented default (``"default"`` only where the library documents
  it, checked against the installed libraries' signatures: LangChain's recursive
  ``TextSplitter`` 4,000/200 characters (its TokenText splitter at the same sizes runs on
  cl100k_base, not its default gpt2, and its label says so), LlamaIndex's ``SentenceSplitter`` 1,024/200, chonkie's chunkers 2,048 characters);
  LangChain recursive 1,000/200 is its docs' example and semchunk has no default size (512 is
  chosen here), and their labels say so. :func:`candidates` gives a setting's candidates;
* one declared measure per corpus (:data:`MEASURES`, :func:`measure_table`): token span recall
  where gold is an evidence span in long documents (CUAD, Chroma's corpora: post 02 finds no
  single chunk holds the whole gold of a quarter and a sixth of their questions), containment
  recall where gold is a short answer string (SQuAD, NQ, QASPER, your documents). Every verdict
  on a corpus ranks by its measure; the other is shown beside, never deciding;
* matched cost (:func:`budget_per_question`): recall within a context budget of B tokens
  (:data:`BUDGETS`, tokenizer :data:`TOKENIZER`), filled greedily from each cell's recorded deep
  ranking (``evaluation.budget.budget_run``): contexts are read in rank order while the running
  total stays within B; **the first context that would overflow B is not read, and reading
  stops there** (it is neither cut to fit nor skipped for a smaller one further down). A
  first context larger than B reads nothing. ``depth_binds`` marks a question whose recorded
  ranking ended before B was spent (:func:`depth_report` lists such cells);
* what the model reads (:func:`chunk_facts`): per (corpus, strategy) the median chunk size in
  cl100k_base tokens and the share of the chunks' word pieces beyond the embedding model's
  window (its ``max_seq_length``, special tokens counted as sentence-transformers counts them);
* the verdicts (:func:`setting_table`): per setting every (strategy, budget) candidate, ranked by
  the corpus's measure, by ``verdict_tables.robust_verdicts`` (ruled out only when the
  question-level and the document-clustered interval both clear 0 at the precision shown),
  with recall@k and tokens@k as the secondary view in the same row;
* the recommendation (:func:`setting_guide`): per setting the cheapest budget, and at it the
  best strategy, that no candidate rules out; the others at that budget that cannot be ruled
  out ("as good"), ties named as ties, whether the setting is decided (the two designs give the
  same verdict for every candidate at or below that budget, and every one ruled out clears 0 at
  the precision shown), else the questions that would decide (``stats.bootstrap.questions_for_power``).

Not handled: retrieval (``evaluation.matrix.run_matrix``), the sentences (``pool.md`` through
:func:`setting_sentences`), post-specific views.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from chunklab_core.chunking import strategy_label
from chunklab_core.core import numbers
from chunklab_core.core.csv_cells import read_frame
from chunklab_core.core.tokens import ENCODING_NAME
from chunklab_core.evaluation.budget import MATCHED_BUDGETS, recall_at_budget
from chunklab_core.reports import samples
from chunklab_core.reports.posts import post
from chunklab_core.reports.templates import Templates
from chunklab_core.reports.verdict_tables import (DIGITS, clears_zero, design_of, identical_columns, paired_interval,
                                                  question_documents, robust_verdicts)
from chunklab_core.retrieval.registry import needs_model
from chunklab_core.stats import claims
from chunklab_core.stats.bootstrap import questions_for_power

SERIES = post("02").strategies  # post 02's strategies, declared once in reports/posts.py
DOCUMENTED_DEFAULT = "documented default"
LIBRARY: Mapping[str, str] = {
    "lc_recursive_default": DOCUMENTED_DEFAULT,
    "lc_recursive_1000_200": "the docs' example",
    "lc_token_default": "its documented sizes, on cl100k_base (its default tokenizer, gpt2, is not shipped offline)",
    "llama_sentence_default": DOCUMENTED_DEFAULT,
    "chonkie_token_default": DOCUMENTED_DEFAULT,
    "chonkie_sentence_default": DOCUMENTED_DEFAULT,
    "chonkie_recursive_default": DOCUMENTED_DEFAULT,
    "semchunk_512": "a size chosen here (semchunk has no default size)",
}
POOL = SERIES + tuple(LIBRARY)
BUDGETS = MATCHED_BUDGETS
TOKENIZER = ENCODING_NAME
READ_SHARE = 0.80  # a recommendation the model reads less of says so
FIT_SHARE = 0.9  # a candidate must read at least one context for this share of the questions to be compared at a budget
FEW_DOCUMENTS = 10  # below this many documents the document-resampled interval is unreliable (post 03)
DOES_NOT_FIT = "does not fit the budget"
PAYS, STOPS_PAYING = "more context pays", "cannot be told apart"
FLOOR = 0.15  # below this score for every candidate, chunking is not what limits the setting
SETTING = ["corpus", "retriever", "model"]
LIST_SEPARATOR = "; "  # between labels in a cell (labels hold commas: "1,000 chars")
PROSE = Templates(__file__, "pool.md")
COLUMNS = {"containment": "recall", "span": "token_recall"}
MEASURE_NAMES = {"containment": "containment recall", "span": "token span recall"}
_SHORT, _LONG = "reason.short", "reason.long"  # templates of pool.md
MEASURES: Mapping[str, tuple[str, str]] = {
    "squad": ("containment", _SHORT), "nq": ("containment", _SHORT), "qasper": ("containment", _SHORT),
    "own": ("containment", _SHORT), "cuad": ("span", _LONG), "chroma": ("span", _LONG),
}


def candidates(corpus: str, retriever: str, model: str, available: Sequence[str] | None = None) -> list[str]:
    """The pool's strategies for one setting, in pool order (those of ``available`` when given:
    a cell that did not run is not a candidate). The same pool in every setting: the series'
    strategies and the library splitters (Chroma's chunkers ran on Chroma's corpora with other
    questions in post 08's report section, not on post 02's samples, so they are not here)."""
    del corpus, retriever, model  # one pool for every setting; the arguments name what it is for
    return [s for s in POOL if available is None or s in set(available)]


def measure_of(corpus: str) -> str:
    """``containment`` or ``span``: the declared measure of a corpus (:data:`MEASURES`)."""
    if corpus not in MEASURES:
        raise KeyError(f"no declared measure for corpus {corpus!r}; declared: {', '.join(MEASURES)}")
    return MEASURES[corpus][0]


def measure_table(corpora: Sequence[str] | None = None) -> pd.DataFrame:
    """corpus, measure (the one that decides), shown beside (the other), reason."""
    names = list(corpora) if corpora is not None else list(MEASURES)
    rows = []
    for name in names:
        measure = measure_of(name)
        other = "span" if measure == "containment" else "containment"
        rows.append({"corpus": name, "measure": MEASURE_NAMES[measure], "shown beside": MEASURE_NAMES[other],
                     "reason": PROSE.fill(MEASURES[name][1])})
    return pd.DataFrame(rows)


def check_measures(computed: pd.DataFrame) -> list[str]:
    """Corpora where post 02's data-driven choice (``long_evidence.corpus_measures``: column
    ``measure``) differs from the declared one; empty when they agree."""
    return [row["corpus"] for _, row in computed.iterrows()
            if row["corpus"] in MEASURES and row["measure"] != measure_of(row["corpus"])]


def _runs_of(matrix, model: str):
    for (corpus, run_model, strategy, retriever), run in matrix.runs.items():
        if run_model == model or not needs_model(retriever):
            yield corpus, strategy, retriever, run


def budget_scores(run, budgets: Sequence[int] = BUDGETS, threshold: float = 0.90) -> pd.DataFrame:
    """Per question and budget of one run: containment ``recall`` and ``token_recall`` (token span
    recall) of the contexts read within the budget (module docstring: the overflowing context
    is not read), ``tokens_used``, ``contexts_read``, ``depth_binds`` and ``doc_id``."""
    from chunklab_core.evaluation.token_metrics import token_recall_of_prefixes

    table = recall_at_budget(run, budgets, threshold)
    deep = np.asarray(run.ranked_deep if run.ranked_deep is not None else run.ranked)
    order = {q.qid: i for i, q in enumerate(run.corpus.questions)}
    budgets = sorted(set(int(b) for b in budgets))
    lengths = np.zeros((len(order), len(budgets)), dtype=np.int64)
    rows = table["qid"].map(order).to_numpy()
    cols = table["budget"].map({b: j for j, b in enumerate(budgets)}).to_numpy()
    lengths[rows, cols] = table["contexts_read"].to_numpy()
    spans = token_recall_of_prefixes(run, deep, lengths)
    documents = {q.qid: q.doc_id for q in run.corpus.questions}
    return table.assign(token_recall=spans[rows, cols], doc_id=table["qid"].map(documents))


def budget_per_question(matrix, model: str, budgets: Sequence[int] = BUDGETS, threshold: float = 0.90,
                        strategies: Sequence[str] | None = None) -> pd.DataFrame:
    """:func:`budget_scores` of every run of ``matrix`` for ``model`` (BM25 runs under no
    model), column ``model`` as in the per-question tables (``—`` for BM25)."""
    from chunklab_core.retrieval.registry import model_column

    frames = []
    for corpus, strategy, retriever, run in _runs_of(matrix, model):
        if strategies is not None and strategy not in strategies:
            continue
        frames.append(budget_scores(run, budgets, threshold).assign(corpus=corpus,
                                                                     model=model_column(retriever, model)))
    if not frames:
        raise ValueError(f"no run of model {model!r} in the matrix")
    return pd.concat(frames, ignore_index=True)


def fixed_k_per_question(matrix, model: str, k: int) -> pd.DataFrame:
    """The secondary view per question: recall@k, token_recall@k and tokens@k."""
    from chunklab_core.reports.post02.long_evidence import token_span_recall
    from chunklab_core.retrieval.registry import rows_of_model

    spans = pd.concat([token_span_recall(run, [k]) for _, _, _, run in _runs_of(matrix, model)], ignore_index=True)
    base = rows_of_model(matrix.per_question, model)[["corpus", "model", "strategy", "retriever", "qid",
                                                      f"recall@{k}", f"tokens@{k}"]]
    return base.merge(spans, on=["corpus", "strategy", "retriever", "qid"], how="left")


def beyond_window(counts: Sequence[int], limit: int) -> float:
    """Share of word pieces beyond a window of ``limit``: Σ max(0, nᵢ − L) / Σ nᵢ over the texts'
    piece counts nᵢ (0 when there are no pieces, NaN for no texts)."""
    counts = np.asarray(counts, dtype=np.int64)
    if not len(counts):
        return float("nan")
    return float(np.maximum(counts - limit, 0).sum() / counts.sum()) if counts.sum() else 0.0


def window_share(texts: Sequence[str], model: str) -> float:
    """Share of the word pieces of ``texts`` beyond the model's window: Σ max(0, nᵢ − L) / Σ nᵢ,
    nᵢ the pieces of text i with special tokens (``retrieval.dense.word_pieces``) and L the model's
    ``max_seq_length`` (:func:`beyond_window`)."""
    from chunklab_core.retrieval.dense import window_tokenizer, word_pieces

    if not len(texts):
        return float("nan")
    return beyond_window(word_pieces(texts, model), window_tokenizer(model)[1])


def chunk_facts(matrix, model: str, store=None) -> pd.DataFrame:
    """Per (corpus, strategy): chunks, median chunk cl100k_base tokens, and ``beyond window``
    (:func:`beyond_window` of its chunks' word pieces for ``model``). A chunk's text is what is
    searched and embedded (a parent-document child, not the parent it returns: the budget counts
    that). The word pieces of a recorded cell are read from its stored judgments file when current
    (``evaluation.judgment_store``; ``store``, default the process's), counted otherwise, and added
    to the file by ``make runs``."""
    from chunklab_core.core.tokens import count_tokens_many
    from chunklab_core.evaluation import judgment_store
    from chunklab_core.retrieval.dense import window_tokenizer, word_pieces

    store = judgment_store.default_store() if store is None else store
    limit = window_tokenizer(model)[1]
    tokenizer = judgment_store.tokenizer_identity(model)
    documents, corpus_of = {}, {}
    for (corpus, _, _, _), run in matrix.runs.items():
        documents.setdefault(corpus, {d.doc_id: d.text for d in run.corpus.documents})
        corpus_of.setdefault(corpus, run.corpus)
    rows = []
    for (corpus, strategy), chunks in matrix.chunks.items():
        texts = [c.text(documents[corpus][c.doc_id]) for c in chunks]
        pieces = store.piece_counts(corpus_of[corpus], strategy, texts, tokenizer) if texts else None
        if pieces is None:
            pieces = word_pieces(texts, model)
            if texts:
                store.add_piece_counts(corpus_of[corpus], strategy, texts, tokenizer, pieces)
        rows.append({"corpus": corpus, "strategy": strategy, "chunks": len(chunks),
                     "median chunk tokens": float(np.median(count_tokens_many(texts))) if texts else float("nan"),
                     "beyond window": beyond_window(pieces, limit)})
    return pd.DataFrame(rows)


def candidate_name(strategy: str, budget: int) -> str:
    """``strategy@budget``: one (strategy, budget) candidate of a setting."""
    return f"{strategy}@{int(budget)}"


def setting_table(budgets: pd.DataFrame, fixed: pd.DataFrame | None, facts: pd.DataFrame | None, k: int,
                  resamples: int, seed: int, samples_of: Mapping[str, str] | None = None,
                  source: str = "pool") -> pd.DataFrame:
    """The long table: per setting (corpus, retriever, model) one row per (strategy, budget) of
    the pool. **Each budget is compared on its own** (:func:`robust_verdicts` over the candidates
    at that budget, in pool order so ties go to the earlier): ``leader`` is that budget's leader,
    ``leader − this`` with both designs' intervals and the verdict; a candidate whose first
    context is read for fewer than :data:`FIT_SHARE` of the questions is not compared
    there (verdict :data:`DOES_NOT_FIT`). Between budgets, each budget's leader row carries the
    **gain** of the next budget's leader over it (:func:`_budget_gain`). Beside: the other
    measure, tokens read, tokens per context read, the share of questions whose recorded depth
    ended the reading, the secondary view (recall@k, token_recall@k, tokens@k), the median chunk
    tokens, the share beyond the embedding window (dense and hybrid only) and ``source``/``key``."""
    rows = []
    for (corpus, retriever, model), cell in budgets.groupby(SETTING, sort=False):
        measure = measure_of(corpus)
        value, other = COLUMNS[measure], COLUMNS["span" if measure == "containment" else "containment"]
        present = candidates(corpus, retriever, model, cell["strategy"].unique())
        cell = cell[cell["strategy"].isin(present)]
        cell = cell.assign(candidate=[candidate_name(s, b) for s, b in zip(cell["strategy"], cell["budget"])])
        wide = cell.pivot_table(index="qid", columns="candidate", values=value).dropna()
        budget_list = [int(b) for b in sorted(cell["budget"].unique())]
        names = [n for n in (candidate_name(s, b) for b in budget_list for s in present) if n in wide.columns]
        if len(names) < 2 or wide.empty:
            continue
        wide = wide[names]
        documents = question_documents(cell)
        read = cell[cell["qid"].isin(wide.index)]
        means = read.groupby("candidate")[[value, other, "tokens_used", "depth_binds"]].mean()
        sums = read.groupby("candidate")[["tokens_used", "contexts_read"]].sum()
        fits = read.assign(fits=read["contexts_read"] > 0).groupby("candidate")["fits"].mean()
        sec = None
        if fixed is not None:
            here = fixed[(fixed["corpus"] == corpus) & (fixed["retriever"] == retriever) & (fixed["model"] == model)]
            sec = here[here["qid"].isin(wide.index)].groupby("strategy")[
                [f"recall@{k}", f"token_recall@{k}", f"tokens@{k}"]].mean()
        n_docs = len(np.unique(documents.reindex(wide.index))) if documents is not None else len(wide)
        sample = (samples_of or {}).get(corpus) or samples.sample_label(corpus, len(wide), n_docs)
        if (samples_of or {}).get(corpus) and cell["qid"].nunique() != len(wide):  # the label counts every question
            sample += f" ({len(wide):,} with gold)"
        found, leaders = _within_budget_verdicts(wide, names, value, resamples, seed, documents,
                                                 {n: float(fits[n]) >= FIT_SHARE for n in names})
        gains = _budget_gain(wide, leaders, resamples, seed, documents)
        for name in names:
            strategy, budget = name.rsplit("@", 1)
            fact = (facts[(facts["corpus"] == corpus) & (facts["strategy"] == strategy)].iloc[0]
                    if facts is not None and ((facts["corpus"] == corpus) & (facts["strategy"] == strategy)).any()
                    else None)
            row = {"sample": sample, "corpus": corpus, "retriever": retriever, "model": model, "strategy": strategy,
                   "label": strategy_label(strategy), "library": strategy in LIBRARY,
                   "what it is": LIBRARY.get(strategy, "series"), "budget": int(budget),
                   "measure": MEASURE_NAMES[measure], "score": float(means.loc[name, value]),
                   "other measure": float(means.loc[name, other]), "tokens read": float(means.loc[name, "tokens_used"]),
                   "tokens per context": (float(sums.loc[name, "tokens_used"] / sums.loc[name, "contexts_read"])
                                          if sums.loc[name, "contexts_read"] else float("nan")),
                   "fits": float(fits[name]), "depth binds": float(means.loc[name, "depth_binds"]),
                   **found[name], **gains.get(name, {}),
                   "questions": len(wide), "documents": n_docs,
                   "median chunk tokens": float(fact["median chunk tokens"]) if fact is not None else float("nan"),
                   "beyond window": (float(fact["beyond window"]) if fact is not None and needs_model(retriever)
                                     else float("nan"))}
            if sec is not None and strategy in sec.index:
                row.update({c: float(sec.loc[strategy, c]) for c in sec.columns})
            row.update({"source": source, "key": f"corpus={corpus}; retriever={retriever}; strategy={strategy}; "
                                                 f"budget={int(budget)}"})
            rows.append(row)
    return pd.DataFrame(rows)


_NOT_COMPARED = {"leader − this": float("nan"), "low": float("nan"), "high": float("nan"),
                 "question low": float("nan"), "question high": float("nan"), "designs agree": True,
                 "ties leader": False, "at the edge": False, "ties": ""}


def _within_budget_verdicts(wide: pd.DataFrame, names: Sequence[str], value: str, resamples: int, seed: int,
                            documents, fits: Mapping[str, bool]) -> tuple[dict[str, dict], dict[int, str]]:
    """Per candidate, its verdict among the candidates that fit **its own budget**
    (:func:`robust_verdicts` over them); and per budget its leader (candidate name). A candidate
    that does not fit is :data:`DOES_NOT_FIT`, compared with nothing."""
    out, leaders = {}, {}
    for budget in dict.fromkeys(int(n.rsplit("@", 1)[1]) for n in names):
        at = [n for n in names if int(n.rsplit("@", 1)[1]) == budget]
        here = [n for n in at if fits[n]]
        for n in at:
            if not fits[n]:
                out[n] = {"leader": "", "verdict": DOES_NOT_FIT, "document verdict": DOES_NOT_FIT,
                          "question verdict": DOES_NOT_FIT, "design": "", **_NOT_COMPARED}
        if not here:
            continue
        leaders[budget] = here[0]
        if len(here) == 1:
            out[here[0]] = {"leader": here[0].rsplit("@", 1)[0], "verdict": claims.NOT_RULED_OUT,
                            "document verdict": claims.NOT_RULED_OUT, "question verdict": claims.NOT_RULED_OUT,
                            "design": design_of(documents), **_NOT_COMPARED}
            continue
        found = robust_verdicts(wide[here], value, resamples, seed, documents).set_index("strategy")
        leaders[budget] = found.index[0]
        for n in here:
            f = found.loc[n]
            out[n] = {"leader": found.index[0].rsplit("@", 1)[0], "leader − this": float(f["leader − strategy"]),
                      "low": float(f["low"]), "high": float(f["high"]), "question low": float(f["question low"]),
                      "question high": float(f["question high"]), "verdict": f["verdict"],
                      "document verdict": f["document verdict"], "question verdict": f["question verdict"],
                      "designs agree": bool(f["designs agree"]), "ties leader": bool(f["ties leader"]),
                      "design": f["design"], "at the edge": at_edge(f["low"]) or at_edge(f["question low"]),
                      "ties": LIST_SEPARATOR.join(strategy_label(t.rsplit("@", 1)[0])
                                                  for t in identical_columns(wide[here], n))}
    return out, leaders


def _budget_gain(wide: pd.DataFrame, leaders: Mapping[int, str], resamples: int, seed: int,
                 documents) -> dict[str, dict]:
    """On each budget's leader: the next budget's leader minus it, paired on the same questions,
    with the document-resampled and the question-level 95% interval, and ``gain verdict``
    :data:`PAYS` only when both clear 0 at the precision shown (else :data:`STOPS_PAYING`): where
    more context stops paying. The largest budget's leader has no gain (NaN)."""
    from chunklab_core.stats.bootstrap import paired_difference_ci

    ordered = sorted(leaders)
    clusters = documents.reindex(wide.index).to_numpy() if documents is not None else None
    out = {}
    for budget, following in zip(ordered, ordered[1:]):
        a, b = wide[leaders[following]].to_numpy(), wide[leaders[budget]].to_numpy()
        diff, low, high = paired_interval(a, b, resamples, seed, clusters)
        _, q_low, q_high = paired_difference_ci(a, b, resamples, seed)
        document, question = clears_zero(low, high), clears_zero(q_low, q_high)
        out[leaders[budget]] = {"next budget": int(following), "next leader": leaders[following].rsplit("@", 1)[0],
                                "gain": float(diff), "gain low": float(low), "gain high": float(high),
                                "gain question low": float(q_low), "gain question high": float(q_high),
                                "gain verdict": PAYS if document and question and diff > 0 else STOPS_PAYING,
                                "gain designs agree": document == question,
                                "gain at the edge": at_edge(low) or at_edge(q_low)}
    return out


def at_edge(low: float) -> bool:
    """An interval of ``leader − other`` whose lower bound excludes 0 but is shown as 0 at
    :data:`verdict_tables.DIGITS` decimals (``[+0.000, …]``): decided by a hair, not at the precision shown."""
    return bool(not np.isnan(low) and low > 0 and round(float(low), DIGITS) == 0)


def depth_report(table: pd.DataFrame) -> pd.DataFrame:
    """The (setting, strategy, budget) rows where the recorded depth ended some question's
    reading before its budget was spent (``depth binds`` > 0); empty when depth 100 fills every budget."""
    return table.loc[table["depth binds"] > 0, ["corpus", "retriever", "strategy", "budget", "depth binds"]]


def _what_would_decide(row: pd.Series, gain: bool = False) -> str:
    lead, low, high = (("gain", "gain question low", "gain question high") if gain
                       else ("leader − this", "question low", "question high"))
    needed = questions_for_power(int(row["questions"]), float(row[lead]), (float(row[low]), float(row[high])))
    return numbers.count(needed, "question") if needed is not None else PROSE.fill("decide.never")


def _listed(value) -> str:
    """A list cell as text ("" for an empty cell read back from a CSV as NaN)."""
    return "" if value is None or (isinstance(value, float) and math.isnan(value)) else str(value)


def _names(value) -> list[str]:
    """The labels of a list cell (:data:`LIST_SEPARATOR`-joined; empty or NaN: none)."""
    return [n for n in _listed(value).split(LIST_SEPARATOR) if n]


def _with_ties(use: str, ties) -> str:
    """``use`` with the labels that score identically on every question, joined by ``≡``."""
    return " ≡ ".join([use, *_names(ties)])


def _flag(value) -> bool:
    """A boolean cell, also when read back from a CSV (NaN: False)."""
    return False if value is None or (isinstance(value, float) and math.isnan(value)) else bool(value)


def _as_good(here: pd.DataFrame, pick: pd.Series) -> tuple[str, str]:
    """(as good, ties) at one budget: the candidates not ruled out beside ``pick``, those that
    score identically on every question joined by ``≡``; and the pick's own ties."""
    ties = _names(pick["ties"])
    kept = here[here["verdict"].isin([claims.NOT_RULED_OUT, claims.WINNER]) & (here["label"] != pick["label"])]
    kept = kept[~kept["label"].isin(ties)].sort_values("score", ascending=False, kind="stable")
    groups, seen = [], set()
    for _, row in kept.iterrows():
        if row["label"] in seen:
            continue
        group = [row["label"], *[t for t in _names(row["ties"]) if t in set(kept["label"]) and t not in seen]]
        seen.update(group)
        groups.append(" ≡ ".join(group))
    return LIST_SEPARATOR.join(groups), LIST_SEPARATOR.join(ties)


def _leader_row(part: pd.DataFrame) -> pd.Series | None:
    lead = part[(part["strategy"] == part["leader"]) & (part["verdict"] != DOES_NOT_FIT)]
    return lead.iloc[0] if len(lead) else None


def setting_guide(table: pd.DataFrame) -> pd.DataFrame:
    """One row per setting of :func:`setting_table`: the budget where more context stops paying
    (``tokens``: the smallest budget whose leader the next budget's leader does not beat by an
    interval clearing 0 in both designs, :func:`_budget_gain`; the largest budget when every
    step pays), ``use`` (that budget's leader), ``as good`` (the others not ruled out at it, ties
    joined by ``≡``), ``ties`` (equal to the pick on every question), its score, ``gain`` to the
    next budget with its interval, the best score at any budget (``leader``), ``verdict``
    (``decided`` when at that budget every candidate has the same verdict under both designs and no
    interval sits at the edge, and so has every budget step up to it; else ``undecided``),
    ``what would decide`` (the first disputed comparison's questions at 80% power), ``reads``
    (1 − share beyond the embedding window), ``does not fit`` (candidates too large for that
    budget), ``below floor`` (every candidate under :data:`FLOOR`), ``candidates`` and source/key."""
    rows = []
    for keys, cell in table.groupby(SETTING, sort=False):
        budgets = sorted(int(b) for b in cell["budget"].unique())
        leads = {b: _leader_row(cell[cell["budget"] == b]) for b in budgets}
        leads = {b: r for b, r in leads.items() if r is not None}
        chosen = next((b for b in leads if leads[b].get("gain verdict") != PAYS), max(leads))
        pick = leads[chosen]
        here = cell[cell["budget"] == chosen]
        good, ties = _as_good(here, pick)
        steps = [leads[b] for b in leads if b <= chosen and not pd.isna(leads[b].get("gain", float("nan")))]
        disputed = here[here["low"].notna() & (~here["designs agree"].map(_flag) | here["at the edge"].map(_flag))]
        gain_disputed = [r for r in steps if not _flag(r["gain designs agree"]) or _flag(r["gain at the edge"])]
        best = cell[cell["verdict"] != DOES_NOT_FIT].sort_values(["score", "budget"], ascending=[False, True],
                                                                 kind="stable").iloc[0]
        decide = ("—" if not len(disputed) and not gain_disputed else
                  _what_would_decide(disputed.iloc[0]) if len(disputed) else _what_would_decide(gain_disputed[0], True))
        rows.append({"sample": pick["sample"], "corpus": keys[0], "retriever": keys[1], "model": keys[2],
                     "measure": pick["measure"], "use": pick["label"], "strategy": pick["strategy"], "tokens": chosen,
                     "score": float(pick["score"]), "tokens read": float(pick["tokens read"]),
                     "tokens per context": float(pick["tokens per context"]),
                     "median chunk tokens": float(pick["median chunk tokens"]),
                     "as good": good, "ties": ties,
                     "next budget": pick.get("next budget", float("nan")), "next leader": pick.get("next leader", ""),
                     "gain": pick.get("gain", float("nan")), "gain low": pick.get("gain low", float("nan")),
                     "gain high": pick.get("gain high", float("nan")),
                     "leader": best["label"], "leader tokens": int(best["budget"]), "leader score": float(best["score"]),
                     "winner": pick["verdict"] == claims.WINNER,
                     "verdict": "undecided" if len(disputed) or gain_disputed else "decided",
                     "what would decide": decide,
                     "reads": 1.0 - float(pick["beyond window"]) if not np.isnan(pick["beyond window"]) else float("nan"),
                     "does not fit": LIST_SEPARATOR.join(here.loc[here["verdict"] == DOES_NOT_FIT, "label"]),
                     "below floor": bool(cell["score"].max() < FLOOR),
                     "candidates": ", ".join(dict.fromkeys(cell["strategy"])),
                     "questions": int(pick["questions"]), "documents": int(pick["documents"]), "design": pick["design"],
                     "source": pick["source"], "key": pick["key"]})
    return pd.DataFrame(rows)


def budget_guide(table: pd.DataFrame) -> pd.DataFrame:
    """One row per (setting, budget) of :func:`setting_table`, for a builder whose context budget
    is fixed: ``use`` (the budget's leader, compared only with the candidates at that budget),
    its score, ``as good`` and ``ties`` (as in :func:`setting_guide`), ``winner``, and ``verdict``
    (``decided`` when every candidate at that budget has the same verdict under both designs and
    no interval of one sits at the edge, else ``undecided``)."""
    rows = []
    for keys, cell in table.groupby(SETTING + ["budget"], sort=False):
        lead = _leader_row(cell)
        if lead is None:
            continue
        good, ties = _as_good(cell, lead)
        disputed = cell[cell["low"].notna() & (~cell["designs agree"].map(_flag) | cell["at the edge"].map(_flag))]
        rows.append({"sample": lead["sample"], "corpus": keys[0], "retriever": keys[1], "model": keys[2],
                     "budget": int(keys[3]), "measure": lead["measure"], "use": lead["label"],
                     "strategy": lead["strategy"], "score": float(lead["score"]), "as good": good, "ties": ties,
                     "winner": lead["verdict"] == claims.WINNER,
                     "verdict": "undecided" if len(disputed) else "decided",
                     "tokens per context": float(lead["tokens per context"]),
                     "does not fit": LIST_SEPARATOR.join(cell.loc[cell["verdict"] == DOES_NOT_FIT, "label"]),
                     "source": lead["source"], "key": lead["key"]})
    return pd.DataFrame(rows)


def _count_listed(value) -> int:
    return len([n for n in _listed(value).replace(" ≡ ", LIST_SEPARATOR).split(LIST_SEPARATOR) if n])


def _fixed_budget_clause(row: pd.Series, budgets: pd.DataFrame | None) -> str:
    """The sentence's tail: the pick at each other budget of ``row``'s setting (:func:`budget_guide`)."""
    if budgets is None or budgets.empty:
        return ""
    here = budgets[(budgets["corpus"] == row["corpus"]) & (budgets["retriever"] == row["retriever"])
                   & (budgets["model"] == row["model"]) & (budgets["budget"] != int(row["tokens"]))]
    if here.empty:
        return ""
    parts = []
    for _, b in here.sort_values("budget").iterrows():
        use = _with_ties(b["use"], b["ties"])
        unfit = _count_listed(b.get("does not fit", ""))
        parts.append(PROSE.fill("budget.part", tokens=f"{int(b['budget']):,}", use=use, score=numbers.number(b["score"]),
                                others=numbers.count(_count_listed(b["as good"]), "other candidate"),
                                verdict=b["verdict"],
                                unfit=PROSE.fill("budget.unfit", n=unfit) if unfit else ""))
    return " " + PROSE.fill("budget.fixed", parts="; ".join(parts))


def _stop_clause(row: pd.Series) -> str:
    if pd.isna(row.get("gain", float("nan"))):
        return PROSE.fill("stop.largest", tokens=f"{int(row['tokens']):,}")
    return PROSE.fill("stop", next=f"{int(row['next budget']):,}", next_use=row["next leader"] and strategy_label(
        row["next leader"]), gain=numbers.number(row["gain"], signed=True),
        low=numbers.number(row["gain low"], signed=True), high=numbers.number(row["gain high"], signed=True))


def setting_sentences(guide: pd.DataFrame, budgets: pd.DataFrame | None = None) -> list[str]:
    """One sentence per setting of :func:`setting_guide` (templates: ``pool.md``), followed, when
    ``budgets`` (:func:`budget_guide`) is given, by the pick at each other budget."""
    from chunklab_core.retrieval.registry import setting_name

    out = []
    for _, row in guide.iterrows():
        setting = f"{row['sample']}, {setting_name(row['retriever'], row['model'])}"
        if row["below floor"]:
            out.append(PROSE.fill("floor", setting=setting, floor=numbers.number(FLOOR, 2), measure=row["measure"],
                                  leader=row["leader"], leader_tokens=f"{int(row['leader tokens']):,}",
                                  leader_score=numbers.number(row["leader score"])))
            continue
        good = PROSE.fill("use.good", names=_listed(row["as good"])) if _listed(row["as good"]) else ""
        ties = PROSE.fill("use.ties", names=_listed(row["ties"])) if _listed(row["ties"]) else ""
        if _flag(row.get("winner", False)):
            ties += PROSE.fill("use.winner")
        verdict = (PROSE.fill("use.decided") if row["verdict"] == "decided"
                   else PROSE.fill("use.undecided", questions=row["what would decide"]))
        notes = ""
        if not pd.isna(row["reads"]) and row["reads"] < READ_SHARE:
            notes += " " + PROSE.fill("use.reads", share=numbers.number(row["reads"], 0, scale="percent"))
        if _listed(row.get("does not fit", "")):
            notes += " " + PROSE.fill("use.fit", names=_listed(row["does not fit"]), tokens=f"{int(row['tokens']):,}")
        if int(row["documents"]) < FEW_DOCUMENTS and str(row["design"]).startswith("documents"):
            notes += " " + PROSE.fill("use.few", documents=int(row["documents"]), few=FEW_DOCUMENTS)
        out.append(PROSE.fill("use", setting=setting, use=row["use"], tokens=f"{int(row['tokens']):,}",
                              tokenizer=TOKENIZER, measure=row["measure"], score=numbers.number(row["score"]),
                              context=numbers.number(row["tokens per context"], 0), good=good, ties=ties,
                              stop=_stop_clause(row), verdict=verdict, notes=notes)
                   + _fixed_budget_clause(row, budgets))
    return out


def compact_guide(guide: pd.DataFrame, budgets: pd.DataFrame | None = None) -> pd.DataFrame:
    """The guide as a builder scans it: setting, use, tokens, verdict, and, when ``budgets``
    (:func:`budget_guide`) is given, the pick at each budget (``at B``)."""
    from chunklab_core.retrieval.registry import setting_name

    table = pd.DataFrame({"setting": [f"{s}, {setting_name(r, m)}" for s, r, m in
                                      zip(guide["sample"], guide["retriever"], guide["model"])],
                          "use": guide["use"], "tokens": guide["tokens"], "verdict": guide["verdict"]})
    if budgets is None or budgets.empty:
        return table
    budgets = budgets.assign(use=[_with_ties(u, t) for u, t in zip(budgets["use"], budgets["ties"])])
    picks = budgets.pivot_table(index=SETTING, columns="budget", values="use", aggfunc="first")
    for budget in picks.columns:
        table[f"at {int(budget):,}"] = [picks.loc[tuple(r), budget] if tuple(r) in picks.index else ""
                                        for r in guide[SETTING].itertuples(index=False)]
    return table


def extend(matrix, corpora: Mapping, retrievers: Sequence[str], model: str, k: int, **options):
    """``matrix`` with every pool strategy it lacks run as well (``run_matrix`` on the same
    corpora, retrievers and ``model``, depth ``k``): what posts 02 and 08 compare."""
    from chunklab_core.evaluation.matrix import MatrixResult, run_matrix

    have = {strategy for _, strategy in matrix.chunks}
    missing = [s for s in POOL if s not in have]
    if not missing:
        return matrix
    more = run_matrix(corpora, missing, retrievers, [model], ks=[k], progress=False, **options)
    truncated = pd.concat([t for t in (matrix.truncated, more.truncated) if t is not None and len(t)],
                          ignore_index=True) if any(t is not None and len(t) for t in (matrix.truncated,
                                                                                        more.truncated)) else None
    return MatrixResult(pd.concat([matrix.per_question, more.per_question], ignore_index=True),
                        {**matrix.runs, **more.runs}, {**matrix.chunks, **more.chunks}, truncated)


def pool_tables(matrix, model: str, k: int, resamples: int, seed: int, labels: Mapping[str, str] | None = None,
                budgets: Sequence[int] = BUDGETS, source: str = "pool") -> tuple[pd.DataFrame, pd.DataFrame]:
    """(:func:`setting_table`, :func:`setting_guide`) of the pool's runs of ``matrix`` for
    ``model``: the one computation post 02 makes and posts 08 and 00 read
    (:func:`budget_guide` of the first is the per-budget view)."""
    chunks = {key: value for key, value in matrix.chunks.items() if key[1] in POOL}
    facts = chunk_facts(type(matrix)(matrix.per_question, matrix.runs, chunks, matrix.truncated), model)
    scores = budget_per_question(matrix, model, budgets, strategies=POOL)
    fixed = fixed_k_per_question(matrix, model, k)
    table = setting_table(scores, fixed, facts, k, resamples, seed, labels, source)
    return table, setting_guide(table)


def committed_tables(data_dir=None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(``02_pool.csv``, ``02_pool_guide.csv``) as post 02 wrote them (``data_dir``, default
    ``data/``): what post 08's builder section shows, so the two posts cannot differ."""
    from chunklab_core.core.paths import DATA_DIR

    folder = Path(data_dir) if data_dir is not None else DATA_DIR
    missing = [name for name in ("02_pool.csv", "02_pool_guide.csv") if not (folder / name).exists()]
    if missing:
        raise FileNotFoundError(f"{', '.join(missing)} missing in {folder}: execute post 02 first "
                                f"(make notebooks/02_retrievers.ipynb)")
    return (read_frame(folder / "02_pool.csv", keep_default_na=False, na_values=[""]),
            read_frame(folder / "02_pool_guide.csv", keep_default_na=False, na_values=[""]))


def measures_view(corpora: Sequence[str], labels: Mapping[str, str] | None = None) -> pd.DataFrame:
    """:func:`measure_table` with each corpus named by its sample label."""
    table = measure_table(corpora)
    return table.assign(corpus=[(labels or {}).get(c, c) for c in table["corpus"]])


def depth_text(table: pd.DataFrame, depth: int) -> str:
    """Whether the recorded depth fills every budget (:func:`depth_report`), naming the cells where it does not."""
    binds = depth_report(table)
    if binds.empty:
        return PROSE.fill("depth.fills", depth=depth)
    names = [f"{strategy_label(r['strategy'])} at {int(r['budget']):,} tokens ({r['corpus']}, {r['retriever']}: "
             f"{numbers.number(r['depth binds'], 1, scale='percent')} of its questions)" for _, r in binds.iterrows()]
    return PROSE.fill("depth.binds", depth=depth, cells=numbers.count(len(binds), "cell"), names="; ".join(names))


def measures_text(computed: pd.DataFrame, labels: Mapping[str, str] | None = None) -> str:
    """Whether post 02's data-driven measure per corpus (:func:`check_measures`) agrees with the declared one."""
    differ = check_measures(computed)
    if not differ:
        return PROSE.fill("measures.agree")
    return PROSE.fill("measures.differ", names=", ".join((labels or {}).get(c, c) for c in differ))
