"""The end-to-end evaluator: what a user of your pipeline gets per request, in one table.

Per query: ``exact_match`` and ``token_f1`` of the final answer (the generation stage's
functions, ``answers.metrics``, not measured on an abstention as in post 05), ``task_success``
(``generation.task_success``), and per request ``cost`` and ``tokens`` (prompt + completion, or
the total you give); over queries: ``latency_p50_ms`` and ``latency_p95_ms`` of the total
latency (``common.percentile``). Means are over the queries where each was measured.

Not handled: costs you do not record (we never estimate a price), per-stage latency (each
stage's evaluator has its own).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from chunklab_core.evaluators.common import StageResult
from chunklab_core.evaluators.generation import evaluate_generation


def evaluate_end_to_end(qids: Sequence[str], answers: Sequence[str | None] | None = None,
                        references: Sequence[Sequence[str] | None] | None = None,
                        answerable: Sequence[bool | None] | None = None,
                        latency_ms: Sequence[float | None] | None = None,
                        cost: Sequence[float | None] | None = None,
                        tokens: Sequence[float | None] | None = None) -> StageResult:
    """Score whole requests; every argument per query, ``None`` = not given."""
    generation = evaluate_generation(qids, answers=answers, references=references, answerable=answerable)
    stage = StageResult("end_to_end", list(qids))
    for name in ("exact_match", "token_f1", "task_success"):
        if name in generation.values:
            stage.values[name] = generation.values[name]
        else:
            stage.not_measured[name] = generation.not_measured[name]
    for name, values in (("cost", cost), ("tokens", tokens)):
        if values is None:
            stage.not_measured[name] = name
        elif len(values) != len(qids):
            raise ValueError(f"{name} has {len(values)} entries for {len(qids)} queries")
        else:
            stage.values[name] = np.array([np.nan if v is None else float(v) for v in values], dtype=float)
    if latency_ms is None:
        stage.not_measured["latency_p50_ms"] = stage.not_measured["latency_p95_ms"] = "latency_ms.total"
    else:
        if len(latency_ms) != len(qids):
            raise ValueError(f"latency_ms has {len(latency_ms)} entries for {len(qids)} queries")
        values = np.array([np.nan if v is None else float(v) for v in latency_ms], dtype=float)
        stage.percentiles["latency_p50_ms"] = (values, 50.0)
        stage.percentiles["latency_p95_ms"] = (values, 95.0)
    return stage
