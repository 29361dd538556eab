"""Post 07's cost table: what each re-scorer reads and how long it takes per question.

Handles: :func:`time_embedding_scorer` (wall seconds of an embedding re-scorer by depth, a
recorded input replayed by ``make all``), :func:`timing_source` (where those seconds come
from), :func:`embedding_cost` and :func:`llm_cost` (tokens read per question, seconds per
question, hit@k and nDCG@k gained per second). These columns describe, they compare nothing,
so they carry no interval (the README says which tables are descriptive).

Not handled: the stage table the gains come from (``post07.tables``), the LLM's recorded calls
(``rerank.study.llm_sweep``).
"""

from __future__ import annotations

import time
from typing import Sequence

import numpy as np
import pandas as pd


def time_embedding_scorer(run, scorer_factory, depths: Sequence[int], n_queries: int, model: str = "") -> pd.DataFrame:
    """Wall seconds to re-score N candidates of each of the first ``n_queries`` questions, by N.

    Measured with a fresh in-memory cache per query and depth (nothing served from disk),
    after one untimed call that loads the model. The measurement is a recorded input like the
    rankings (``retrieval.recorded_runs``, kind ``timings``: measured once by ``make runs`` on the
    machine its record names, replayed by ``make all``), keyed by ``model``, the depths and the
    candidates; live (``CHUNKLAB_RUNS=live``) it is measured in this execution.
    """
    from chunklab_core.rerank.study import candidate_texts
    from chunklab_core.retrieval.recorded_runs import default_store, texts_sha256

    rows_timed = list(range(min(n_queries, run.ranked.shape[0])))
    texts_of = {(d, r): candidate_texts(run, d, [r])[0] for d in depths for r in rows_timed}

    def measure():
        seconds, shown = [], []
        if rows_timed:  # an untimed call loads the model (and warms torch) first
            scorer_factory().score(run.corpus.questions[0].text, candidate_texts(run, 1, [0])[0])
        for depth in depths:
            for row in rows_timed:
                scorer = scorer_factory()
                start = time.perf_counter()
                scorer.score(run.corpus.questions[row].text, texts_of[(depth, row)])
                seconds.append(time.perf_counter() - start)
                shown.append(depth)
        return {"depth": np.asarray(shown, dtype=np.int64), "seconds": np.asarray(seconds, dtype=np.float64)}

    key = {"measure": "embedding re-scorer seconds", "model": model or getattr(scorer_factory, "args", [""])[0],
           "depths": [int(d) for d in depths], "queries": texts_sha256([run.corpus.questions[r].text for r in rows_timed]),
           "candidates": texts_sha256([t for d in depths for r in rows_timed for t in texts_of[(d, r)]])}
    arrays = default_store().keyed("timings", key, measure, f"timing {key['model']} at depths {key['depths']}")
    qids = [run.corpus.questions[r].qid for _ in depths for r in rows_timed]
    return pd.DataFrame({"depth": arrays["depth"], "qid": qids[:len(arrays["depth"])], "seconds": arrays["seconds"]},
                        columns=["depth", "qid", "seconds"])


def timing_source() -> str:
    """Where the re-scorer's seconds come from: measured now (live) or replayed from ``make runs``."""
    from chunklab_core.retrieval.recorded_runs import current_mode

    return "measured in this execution" if current_mode() == "live" else "measured by make runs (recorded)"


def embedding_cost(stage: pd.DataFrame, seconds: pd.DataFrame) -> pd.DataFrame:
    """Per depth for one embedding re-scorer: tokens read, seconds per query (measured), gains per second."""
    rows = []
    per_depth = seconds.groupby("depth")["seconds"].mean()
    for depth, group in stage.groupby("depth"):
        if depth not in per_depth.index:
            continue
        per_query = float(per_depth[depth])
        gain = float((group["hit_after"] - group["hit_before"]).mean())
        rows.append({"scorer": group["scorer"].iloc[0], "depth": depth, "cells": len(group),
                     "tokens_read_per_query": group["tokens_read"].mean(), "tokens_unit": "cl100k_base",
                     "seconds_per_query": per_query, "seconds_source": timing_source(),
                     "hit_gain": gain, "hit_gain_per_second": gain / per_query,
                     "ndcg_gain_per_second": float(group["d_ndcg"].mean()) / per_query})
    return pd.DataFrame(rows)


def llm_cost(llm_stage: pd.DataFrame, calls: pd.DataFrame, depth: int) -> pd.DataFrame:
    """The LLM re-scorer's cost per question from its recorded calls (seconds, prompt tokens)."""
    if llm_stage.empty or calls.empty:
        return pd.DataFrame()
    seconds = float(calls.groupby("question")["seconds"].sum().mean())
    gain = float((llm_stage["hit_after"] - llm_stage["hit_before"]).mean())
    return pd.DataFrame([{
        "scorer": llm_stage["scorer"].iloc[0], "depth": depth, "cells": len(llm_stage),
        "tokens_read_per_query": float(calls.groupby("question")["prompt_tokens"].sum().mean()),
        "tokens_unit": "Qwen prompt tokens", "seconds_per_query": seconds,
        "seconds_source": "recorded with the calls", "hit_gain": gain, "hit_gain_per_second": gain / seconds,
        "ndcg_gain_per_second": float(llm_stage["d_ndcg"].mean()) / seconds}])
