"""Post 02's "Model or window?": how much of the second model's difference is its longer window.

Handles: :func:`control_models` (the first model, the second, and the second cut to the first's window,
``retrieval.model_windows``: ``all-mpnet-base-v2@256`` beside all-MiniLM-L6-v2's 256 word pieces and
all-mpnet-base-v2's own 384), :func:`control_cells` (which of the three models' dense cells the run store
holds per corpus and strategy, in the scope each corpus is searched in: nothing is loaded),
:func:`window_control` (on every corpus and strategy where all three are recorded, dense recall@k of the
three on the same questions, replayed through ``evaluation.matrix.run_matrix``, and the paired
intervals of the **same-window** difference, variant − first, the **window** difference, second −
variant, and their sum, the model comparison as post 02 shows it, second − first: ``post02.tables.paired_models``,
so documents are resampled where questions share them and the question-level interval sits beside),
:func:`window_view` (the table) and :func:`window_text` (the prose, ``window.md``, worded by the series'
one rule: a side ahead only where both designs agree, ``post02.prose.agreed_verdicts``). Cells still
missing are named with the command that records them (``make window-control``); a missing cell is
never computed here (a replay stays a replay, ``make runs`` does not start the hours of encoding).

Not handled: recording the cells (``make window-control``: ``reports.run_cluster second-model``), hybrid
retrieval (fused from the same dense cells: the dense difference is the one the window acts on), windows
other than the first model's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pandas as pd

from chunklab_core.chunking import strategy_label
from chunklab_core.core import numbers
from chunklab_core.evaluation.measures import column
from chunklab_core.reports.post02.prose import agreed_verdicts
from chunklab_core.reports.post02.tables import paired_models
from chunklab_core.reports.templates import Templates
from chunklab_core.retrieval.model_windows import split_window, window_label
from chunklab_core.retrieval.registry import EMBEDDER

PROSE = Templates(__file__, "window.md")
COMMAND = "`make window-control`"  # the Makefile target that records the cells (README, docs/recorded-runs.md)
PARTS = ("same window", "window", "model and window")  # variant − first, second − variant, second − first

__all__ = ["control_models", "control_cells", "WindowControl", "window_control", "window_view", "window_text"]


def control_models(models: Sequence[str]) -> tuple[str, str, str] | None:
    """``(first, second, second cut to the first's window)``, or ``None`` when there is no second model or
    its window is not longer than the first's (``decision.scores.model_window``)."""
    from chunklab_core.decision.scores import model_window

    if len(models) < 2:
        return None
    first, second = models[0], models[1]
    short, long = model_window(first), model_window(second)
    if long <= short:
        return None
    return first, second, window_label(split_window(second)[0], short)


def control_cells(corpora: Mapping, trio: Sequence[str], strategies: Sequence[str], store=None) -> pd.DataFrame:
    """One row per (corpus, strategy, model) of ``trio``: its dense cell's path under the store's root and
    whether the store holds it (in the scope the corpus is searched in). Asks for the files only."""
    from chunklab_core.retrieval.recorded_runs import Cell, corpus_sample_label, default_store

    store = store if store is not None else default_store()
    rows = []
    for name, corpus in corpora.items():
        sample = corpus_sample_label(corpus)
        for strategy in strategies:
            for model in trio:
                cell = Cell(sample, strategy, EMBEDDER, model, getattr(corpus, "scope", "corpus"))
                rows.append({"corpus": name, "strategy": strategy, "model": model,
                             "path": cell.relative_path().as_posix(), "recorded": store.path(cell).exists()})
    return pd.DataFrame(rows, columns=["corpus", "strategy", "model", "path", "recorded"])


@dataclass
class WindowControl:
    """What :func:`window_control` found: the models, the cells, the intervals and the chunks' lengths."""

    trio: tuple[str, str, str] | None
    windows: dict[str, int] = field(default_factory=dict)
    cells: pd.DataFrame = field(default_factory=pd.DataFrame)
    intervals: pd.DataFrame = field(default_factory=pd.DataFrame)  # paired_models rows, column "part"
    beyond: pd.DataFrame = field(default_factory=pd.DataFrame)  # corpus, strategy, chunks, beyond the first's window
    k: int = 5


def _part(rows: pd.DataFrame, part: str) -> pd.DataFrame:
    return rows.assign(part=part)


def window_control(corpora: Mapping, trio: tuple[str, str, str] | None, strategies: Sequence[str], k: int,
                   threshold: float, resamples: int, seed: int, store=None) -> WindowControl:
    """The window control on every corpus and strategy of ``corpora`` x ``strategies`` where the three
    models' dense cells are all recorded (``trio``: :func:`control_models`)."""
    from chunklab_core.decision.scores import model_window
    from chunklab_core.evaluation.matrix import run_matrix

    if trio is None:
        return WindowControl(None, k=k)
    first, second, variant = trio
    windows = {m: model_window(m) for m in trio}
    cells = control_cells(corpora, trio, strategies, store)
    complete = cells.groupby(["corpus", "strategy"], sort=False)["recorded"].all()
    frames, beyond = [], []
    for name in corpora:
        ready = [s for s in strategies if complete.get((name, s), False)]
        if not ready:
            continue
        matrix = run_matrix({name: corpora[name]}, ready, [EMBEDDER], list(trio), ks=(k,), threshold=threshold,
                            progress=False, store=store)
        frames.append(matrix.per_question)
        cut = matrix.truncated[matrix.truncated["model"] == variant]
        beyond += [{"corpus": name, "strategy": r["strategy"], "chunks": int(r["chunks"]), "beyond": int(r["truncated"])}
                   for _, r in cut.iterrows()]
    intervals = pd.DataFrame()
    if frames:
        data = pd.concat(frames, ignore_index=True)
        intervals = pd.concat([_part(paired_models(data, k, [first, variant], resamples, seed), PARTS[0]),
                               _part(paired_models(data, k, [variant, second], resamples, seed), PARTS[1]),
                               _part(paired_models(data, k, [first, second], resamples, seed), PARTS[2])],
                              ignore_index=True)
        intervals["verdict"] = agreed_verdicts(intervals)
    return WindowControl(trio, windows, cells, intervals, pd.DataFrame(beyond), k)


def window_view(control: WindowControl, labels: Mapping[str, str]) -> pd.DataFrame | None:
    """One row per (corpus, strategy): each part's difference with its interval and verdict, the questions,
    and the share of chunks beyond the first model's window (``None`` while no corpus has its three
    cells: the prose names what is still being recorded, and an empty table would say nothing)."""
    if control.trio is None or control.intervals.empty:
        return None
    rows = {}
    for _, r in control.intervals.iterrows():
        key = (labels.get(r["corpus"], r["corpus"]), r["strategy"])
        row = rows.setdefault(key, {"corpus": key[0], "strategy": key[1], "questions": int(r["questions"])})
        row[f"{r['part']}: {r['comparison']}"] = numbers.estimate(r["difference"], r["low"], r["high"], 3, signed=True)
        row[f"{r['part']}: verdict"] = r["verdict"]
    for _, b in control.beyond.iterrows():
        key = (labels.get(b["corpus"], b["corpus"]), strategy_label(b["strategy"]))
        if key in rows:
            rows[key][f"chunks beyond {control.windows[control.trio[0]]:,}"] = numbers.number(
                b["beyond"] / b["chunks"] if b["chunks"] else 0.0, 0, scale="percent")
    return pd.DataFrame(list(rows.values()))


def _counts(group: pd.DataFrame) -> str:
    counts = group["verdict"].value_counts()
    return ", ".join(f"{verdict} on {numbers.count(int(n), 'strategy', 'strategies')}" for verdict, n in counts.items())


def window_text(control: WindowControl, labels: Mapping[str, str]) -> str:
    """The basis, one paragraph per corpus where the three models' cells are recorded, and the cells still
    being recorded with the command that records them."""
    if control.trio is None:
        return PROSE.fill("none")
    first, second, variant = control.trio
    windows = control.windows
    parts = [PROSE.fill("basis", first=first, second=second, variant=variant, first_window=f"{windows[first]:,}",
                        second_window=f"{windows[second]:,}", metric=column("recall", control.k))]
    for corpus, group in (control.intervals.groupby("corpus", sort=False) if not control.intervals.empty else ()):
        by_part = {part: g for part, g in group.groupby("part", sort=False)}
        lengths = control.beyond[control.beyond["corpus"] == corpus]
        chunks, cut = int(lengths["chunks"].sum()), int(lengths["beyond"].sum())
        beyond = (PROSE.fill("corpus.beyond", share=numbers.number(cut / chunks, 0, scale="percent"),
                             first_window=f"{windows[first]:,}", second=second) if cut else
                  PROSE.fill("corpus.none_beyond", first_window=f"{windows[first]:,}", second=second))
        parts.append(PROSE.fill(
            "corpus", sample=labels.get(corpus, corpus),
            strategies=numbers.count(group["strategy"].nunique(), "strategy", "strategies"),
            same_counts=_counts(by_part[PARTS[0]]), same_mean=numbers.number(by_part[PARTS[0]]["difference"].mean(), 3, signed=True),
            window_counts=_counts(by_part[PARTS[1]]),
            window_mean=numbers.number(by_part[PARTS[1]]["difference"].mean(), 3, signed=True),
            total_mean=numbers.number(by_part[PARTS[2]]["difference"].mean(), 3, signed=True), beyond=beyond))
    missing = control.cells[~control.cells["recorded"]]
    if len(missing):
        pending = [PROSE.fill("pending.cell", model=model, sample=labels.get(corpus, corpus),
                              strategies=", ".join(strategy_label(s) for s in group["strategy"]))
                   for (corpus, model), group in missing.groupby(["corpus", "model"], sort=False)]
        parts.append(PROSE.fill("pending", cells="; ".join(pending), command=COMMAND))
    return "\n\n".join(parts)
