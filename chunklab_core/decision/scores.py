"""Per-question scores at matched cost, and what the embedding model reads of each candidate's chunks.

Handles:

* matched cost (:func:`budget_scores`, :func:`budget_per_question`): recall within a context
  budget of B tokens (``candidates.BUDGETS``, tokenizer ``candidates.TOKENIZER``), filled greedily
  from each cell's recorded deep ranking (``evaluation.budget.budget_run``): contexts are read in
  rank order while the running total stays within B; **the first context that would overflow B
  is not read, and reading stops there** (it is neither cut to fit nor skipped for a smaller one
  further down). A first context larger than B reads nothing. ``depth_binds`` marks a question
  whose recorded ranking ended before B was spent. The result is the per-question table the
  engine (``decision.engine``) consumes, whoever made it (posts 02/08/00 and chunklab-own);
* the secondary view (:func:`fixed_k_per_question`): recall@k, token_recall@k and tokens@k;
* what the model reads (:func:`chunk_facts`, :func:`beyond_window`, :func:`window_share`): per
  (corpus, strategy) the median chunk size in cl100k_base tokens and the share of the chunks'
  word pieces beyond the embedding model's window (its ``max_seq_length``, special tokens counted
  as sentence-transformers counts them), for every candidate, library splitters included.

* :func:`extend`: a matrix with the pool's missing strategies run too.

Not handled: retrieval itself (``evaluation.matrix.run_matrix``), verdicts (``decision.engine``).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from chunklab_core.decision.candidates import BUDGETS
from chunklab_core.evaluation.budget import recall_at_budget
from chunklab_core.retrieval.registry import needs_model


def runs_of(matrix, model: str):
    """(corpus, strategy, retriever, run) of every run of ``matrix`` under ``model`` (BM25 under none)."""
    for (corpus, run_model, strategy, retriever), run in matrix.runs.items():
        if run_model == model or not needs_model(retriever):
            yield corpus, strategy, retriever, run


def budget_scores(run, budgets: Sequence[int] = BUDGETS, threshold: float = 0.90) -> pd.DataFrame:
    """Per question and budget of one run: containment ``recall`` and ``token_recall`` (token span
    recall) of the contexts read within the budget (the overflowing context is not read),
    ``tokens_used``, ``contexts_read``, ``depth_binds`` and ``doc_id``."""
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
    for corpus, strategy, retriever, run in runs_of(matrix, model):
        if strategies is not None and strategy not in strategies:
            continue
        frames.append(budget_scores(run, budgets, threshold).assign(corpus=corpus,
                                                                     model=model_column(retriever, model)))
    if not frames:
        raise ValueError(f"no run of model {model!r} in the matrix")
    return pd.concat(frames, ignore_index=True)


def fixed_k_per_question(matrix, model: str, k: int) -> pd.DataFrame:
    """The secondary view per question: recall@k, token_recall@k and tokens@k."""
    from chunklab_core.evaluation.token_metrics import token_span_recall
    from chunklab_core.retrieval.registry import rows_of_model

    spans = pd.concat([token_span_recall(run, [k]) for _, _, _, run in runs_of(matrix, model)], ignore_index=True)
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


# Each shipped model's max_seq_length as its sentence_bert_config.json declares it, for a reader (post 00 reads
# committed tables and loads no model) on a machine where the model is not assembled; read from the model
# itself whenever it is there.
DECLARED_WINDOWS = {"all-MiniLM-L6-v2": 256, "all-mpnet-base-v2": 384}


def model_window(model: str) -> int:
    """The embedding model's window in word pieces (its ``max_seq_length``; a window variant's shorter
    one, ``retrieval.model_windows``): from its own files, else the window it declares
    (:data:`DECLARED_WINDOWS`, or the variant's label) when those files are not on this machine."""
    from chunklab_core.retrieval.dense import window_tokenizer
    from chunklab_core.retrieval.model_windows import split_window

    try:
        return int(window_tokenizer(model)[1])
    except FileNotFoundError:
        base, window = split_window(model)  # a window variant names its window (retrieval.model_windows)
        if base in DECLARED_WINDOWS:
            return window if window is not None else DECLARED_WINDOWS[base]
        raise


def chunk_facts(matrix, model: str, store=None) -> pd.DataFrame:
    """Per (corpus, strategy): chunks, median chunk cl100k_base tokens, and ``beyond window``
    (:func:`beyond_window` of its chunks' word pieces for ``model``), and ``window`` (the
    model's window). A chunk's text is what is searched and embedded (a parent-document child,
    not the parent it returns: the budget counts that). The word pieces of a recorded cell are
    read from its stored judgments file when current (``evaluation.judgment_store``; ``store``,
    default the process's), counted otherwise, and added to the file by ``make runs``."""
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
                     "beyond window": beyond_window(pieces, limit), "window": int(limit)})
    return pd.DataFrame(rows)


def extend(matrix, corpora, retrievers: Sequence[str], model: str, k: int, pool: Sequence[str] | None = None,
           **options):
    """``matrix`` with every pool strategy it lacks run as well (``run_matrix`` on the same
    corpora, retrievers and ``model``, depth ``k``): what posts 02 and 08 compare."""
    from chunklab_core.decision.candidates import POOL
    from chunklab_core.evaluation.matrix import MatrixResult, run_matrix

    have = {strategy for _, strategy in matrix.chunks}
    missing = [s for s in (POOL if pool is None else pool) if s not in have]
    if not missing:
        return matrix
    more = run_matrix(corpora, missing, retrievers, [model], ks=[k], progress=False, **options)
    parts = [t for t in (matrix.truncated, more.truncated) if t is not None and len(t)]
    truncated = pd.concat(parts, ignore_index=True) if parts else None
    return MatrixResult(pd.concat([matrix.per_question, more.per_question], ignore_index=True),
                        {**matrix.runs, **more.runs}, {**matrix.chunks, **more.chunks}, truncated)
