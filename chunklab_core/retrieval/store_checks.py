"""The structure of every file of the run store, checked on every load: a file is what its path says.

Handles (:func:`structure_problems`, called by ``RunStore.load`` after the file's own sha256 has
matched): a file's *kind* by its path --

* ``<corpus sample>/<strategy>/<retriever>[@<model>].npz``: a ranking. Its provenance names the
  cell its path names (a file copied over another is caught here, not only by the caller that
  asked for one cell); ``ids`` is (questions, depth) and ``scores`` (questions, min(depth,
  score depth)) as the provenance counts them; every id lies in [0, texts) or is padding; the
  dense truncation mask holds one bit per text.
* ``<corpus sample>/<strategy>/<retriever>[@<model>].chunks.npz``: a model-cut strategy's chunks,
  ``spans`` (chunks, 5) with the count the provenance gives and spans that are spans.
* ``<corpus sample>/<strategy>/judgments@<threshold>.npz``: stored judgments; only the kind and
  the cell are checked here (the arrays by ``evaluation.judgment_checks``, the stage that knows them).
* ``<kind>/<16 hex>.npz``: a content-addressed record (re-scorer scores, timings); its name is
  the sha256 of the key it records.

A file whose structure is wrong is a :class:`~chunklab_core.retrieval.recorded_runs.RunStoreError`
naming the file, what is wrong and the command that rebuilds it; it is never used. A checksum
re-computed after an edit is no defence against these checks: they compare the arrays with the
counts the provenance gives and with the path, which a checksum does not.

Not handled: whether the counts are the current inputs' (the stale checks of ``RunStore`` and
``JudgmentStore``), recomputing a ranking (``make verify-runs``).
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import numpy as np

JUDGMENTS = re.compile(r"^judgments@[0-9.e+-]+\.npz$")
KEYED = re.compile(r"^[0-9a-f]{16}\.npz$")


def file_kind(path: Path, root: Path) -> str:
    """``ranking``, ``chunks``, ``judgments``, ``keyed`` or ``other`` (outside the store's layout)."""
    try:
        parts = Path(path).resolve().relative_to(Path(root).resolve()).parts
    except ValueError:
        parts = Path(path).parts[-3:]
    name = parts[-1] if parts else ""
    if len(parts) == 3 and JUDGMENTS.match(name):
        return "judgments"
    if len(parts) == 3 and name.endswith(".chunks.npz"):
        return "chunks"
    if len(parts) == 3 and name.count(".") == 1:
        return "ranking"
    if len(parts) == 2 and KEYED.match(name):
        return "keyed"
    return "other"


def _kind_of_meta(meta: dict) -> str:
    if meta.get("kind") == "judgments":
        return "judgments"
    cell = meta.get("cell")
    if isinstance(cell, dict) and "retriever" in cell:
        return "ranking"
    if "spans" in meta or "n_chunks" in meta:
        return "chunks"
    if "key" in meta:
        return "keyed"
    return "unknown"


def _rel(path: Path, root: Path) -> Path:
    try:
        return Path(path).resolve().relative_to(Path(root).resolve())
    except ValueError:
        return Path(*Path(path).parts[-3:])


def _shape(array) -> tuple:
    return tuple(np.shape(array))


def structure_problems(path: Path, root: Path, meta: dict, arrays: dict[str, np.ndarray], layout) -> list[str]:
    """What is wrong with the structure of the loaded file ``path`` of the store at ``root``
    (``arrays``: every array but ``meta`` and ``sha256``); empty when it is what its path says.
    ``layout``: the run store's module (``recorded_runs``: its ``Cell``, ``unpack_ids``, ``_safe``),
    passed down rather than imported (it imports this module)."""
    Cell, unpack_ids, _safe = layout.Cell, layout.unpack_ids, layout._safe

    kind = file_kind(path, root)
    inside = _kind_of_meta(meta)
    if kind == "judgments" and inside != "judgments":
        return [f"it is a {inside} file under a judgments name (a file copied over another)"]
    if kind == "ranking" and inside not in ("ranking",):
        return [f"it is a {inside} file under a ranking's name (a file copied over another)"]
    if kind == "chunks" and inside in ("judgments", "ranking"):
        return [f"it is a {inside} file under a chunks file's name (a file copied over another)"]
    rel = _rel(path, root)
    problems: list[str] = []
    if kind == "ranking":
        try:
            cell = Cell(**{k: meta["cell"].get(k) for k in ("corpus", "strategy", "retriever", "model")})
            expected = cell.relative_path()
        except (TypeError, AttributeError, KeyError):
            return ["its provenance names no cell"]
        if expected != rel:
            return [f"it holds another cell: its provenance names another cell ({cell.describe()}, recorded as "
                    f"{expected}), a file copied over another"]
    if kind == "chunks":
        recorded = meta.get("cell") if isinstance(meta.get("cell"), dict) else {}
        model = recorded.get("model")
        if ((recorded.get("corpus"), _safe(str(recorded.get("strategy")))) != tuple(rel.parts[:2])
                or (model and not rel.name.endswith(f"@{_safe(model)}.chunks.npz"))):
            return [f"it holds another cell: its provenance names another cell ({recorded.get('corpus')}/"
                    f"{recorded.get('strategy')}, model {model}), a file copied over another"]
    if kind == "ranking":
        try:
            n_q, n_texts, depth = int(meta["queries"]["n"]), int(meta["texts"]["n"]), int(meta["depth"])
        except (KeyError, TypeError, ValueError):
            return ["its provenance does not count its questions, texts and depth"]
        if "ids" not in arrays:
            return ["it holds no ids"]
        if _shape(arrays["ids"]) != (n_q, depth):
            problems.append(f"ids are {_shape(arrays['ids'])}, not ({n_q} questions, depth {depth})")
        else:
            ids = unpack_ids(arrays["ids"])
            if ids.size and (ids.max() >= n_texts or ids.min() < -1):
                problems.append(f"an id lies outside the cell's {n_texts} texts")
        width = min(depth, int(meta.get("score_depth", 10)))
        if "scores" in arrays and _shape(arrays["scores"]) != (n_q, width):
            problems.append(f"scores are {_shape(arrays['scores'])}, not ({n_q} questions, {width} ranks)")
        if "truncated" in arrays and _shape(arrays["truncated"]) != ((n_texts + 7) // 8,):
            problems.append(f"the truncation mask holds {8 * int(np.size(arrays['truncated']))} bits, not one per "
                            f"text ({n_texts})")
    elif kind == "chunks":
        spans = arrays.get("spans")
        n = meta.get("n_chunks")
        if spans is None or spans.ndim != 2 or spans.shape[1] != 5 or (n is not None and len(spans) != int(n)):
            problems.append(f"spans are {_shape(spans)}, not ({n} chunks, 5)")
        elif len(spans) and ((spans[:, 1:] < 0).any() or (spans[:, 1] > spans[:, 2]).any()
                             or (spans[:, 3] > spans[:, 4]).any()):
            problems.append("a span ends before it starts or lies before the document")
    elif kind == "keyed":
        key = meta.get("key")
        digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode("utf-8")).hexdigest()[:16]
        if rel.parts[0] != meta.get("kind") or rel.name != f"{digest}.npz":
            problems.append(f"its key is recorded as {meta.get('kind')}/{digest}.npz, not {rel}")
    elif kind == "judgments":
        recorded = meta.get("cell") or {}
        if (recorded.get("corpus"), _safe(str(recorded.get("strategy")))) != (rel.parts[0], rel.parts[1]):
            problems.append(f"it holds another cell: its provenance names another cell ({recorded.get('corpus')}/"
                            f"{recorded.get('strategy')}), a file copied over another")
        threshold = rel.name[len("judgments@"):-len(".npz")]
        try:
            if float(threshold) != float(meta.get("threshold", "nan")):
                problems.append(f"it records threshold {meta.get('threshold')}, its name says {threshold}")
        except (TypeError, ValueError):
            problems.append(f"its threshold {meta.get('threshold')!r} is not a number")
    return problems
