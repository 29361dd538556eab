"""The planning pass of ``make runs RUNS_CLUSTER=...``: list the cells to record, compute none.

Handles: when ``CHUNKLAB_RUNS_PLAN`` names a file and the run store is in ``record`` mode,
:func:`plan_ranking` is what ``RunStore.ranking`` does for a missing or stale cell instead of
computing it: it appends the cell's spec (the cell, its corpus loader arguments, strategy
options, depth and the digests of its texts and queries: everything a worker needs to rebuild
and rank it, see ``reports.run_cluster.compute_cell``) as one JSON line, and returns a
placeholder ranking of the right shape (ids ``0..width-1`` for every query, zero scores, an
all-false truncation mask) so the post carries on asking for its next cells. The post's output
is thrown away (``run_recording.record`` executes into a temporary file). A record that is not
a ranking (``RunStore.keyed``: re-scorer scores, timings) would be keyed by placeholder inputs,
so :func:`stop_keyed` ends the post's planning there (:class:`PlanStop`); the final in-process
pass records those.

Not handled: chunk spans of strategies that need a model to cut (computed and recorded in the
planning pass as in ``record`` mode: the cells' texts depend on them), running the plan
(``reports.run_cluster``).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Sequence

import numpy as np

PLAN_ENV = "CHUNKLAB_RUNS_PLAN"


class PlanStop(RuntimeError):
    """The planning pass of a post ends here: what follows depends on real rankings."""


def plan_file() -> Path | None:
    """The plan file named by ``CHUNKLAB_RUNS_PLAN`` (``None``: no planning pass)."""
    value = os.environ.get(PLAN_ENV, "").strip()
    return Path(value) if value else None


def cell_spec(cell, texts: Sequence[str], queries: Sequence[str], depth: int, corpus_source: dict | None,
              strategy_options: dict | None, scope: dict | None = None) -> dict:
    """The JSON-able spec of one cell to record (``depth``: the depth the record will hold)."""
    from chunklab_core.core.hashing import texts_sha256

    scoped = {} if getattr(cell, "scope", "corpus") == "corpus" else {"scope": cell.scope}  # as provenance_cell
    return {"cell": {"corpus": cell.corpus, "strategy": cell.strategy, "retriever": cell.retriever,
                     "model": cell.model, **scoped},
            "corpus_source": dict(corpus_source or {}), "strategy_options": dict(strategy_options or {}),
            "depth": int(depth), "texts": {"n": len(texts), "sha256": texts_sha256(texts)},
            "queries": {"n": len(queries), "sha256": texts_sha256(queries)},
            **({"scope": scope} if scope else {})}


def plan_ranking(cell, texts: Sequence[str], queries: Sequence[str], depth: int, corpus_source: dict | None,
                 strategy_options: dict | None, asked: int, scope: dict | None = None) -> tuple[np.ndarray, np.ndarray, dict]:
    """Append the cell's spec to the plan file (when it can be rebuilt); a placeholder ranking."""
    path = plan_file()
    if corpus_source:  # a cell without a loader's corpus (post 04's questions) is left to the final pass
        line = json.dumps(cell_spec(cell, texts, queries, depth, corpus_source, strategy_options, scope), sort_keys=True)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, (line + "\n").encode("utf-8"))
        finally:
            os.close(fd)
    width = min(int(asked), len(texts))
    ids = np.tile(np.arange(width, dtype=np.int64), (len(queries), 1))
    scores = np.zeros((len(queries), width), np.float32)
    extra = {"truncated": np.packbits(np.zeros(len(texts), bool))} if cell.retriever == "dense" else {}
    return ids, scores, extra


def stop_keyed(describe: str) -> None:
    raise PlanStop(f"planning stops at {describe}: it depends on real rankings (recorded in the final pass)")


def read_plan(path: str | os.PathLike) -> list[dict]:
    """The specs of a plan file, one per cell (the deepest asked when a cell is listed twice), in order."""
    specs: dict[str, dict] = {}
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if line.strip():
            spec = json.loads(line)
            key = json.dumps(spec["cell"], sort_keys=True)  # one cell: corpus, strategy, retriever, model
            if key not in specs or spec["depth"] > specs[key]["depth"]:
                specs[key] = spec
    return list(specs.values())
