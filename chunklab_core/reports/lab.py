"""The lab: rankings to shape, the series' recorded rankings, budgets and footprints, one page.

Handles: the data the page ``lab.html`` of the website shows, computed here in Python from the
recorded runs (``data/runs``, replayed) and written beside the page as ``lab-data.js``, plus
the page itself (the static template ``lab.html`` beside this module, with ``static/csv_cells.js``
inlined, whose script only re-reads and re-sorts those data; styled by the site's one style sheet,
``site.css``, copied beside it, whose lab section is scoped to ``<body class="lab">``). Panels:

* **a ranking you build** (page only): grades 0/1/2 set by click or key, items added and
  removed, the total relevant in the qrels; the page's metrics are :func:`reference_metrics`
  (depth 0), shown with the formula and the numbers substituted;
* **ranking** (:func:`ranking_panel`): post 07's corpora, strategies and first stage (BM25),
  the first :attr:`LabConfig.ranking_questions` questions of each corpus's seeded order, the
  top :attr:`LabConfig.top` contexts of each ranking with the series' gold-slot grade
  (``slot_metrics.judge_context`` on the full text: 2 full, 1 partial, 0 none; the text shown
  is :attr:`LabConfig.text_chars` characters, :func:`excerpt`: from the start, or around the
  gold when it lies further in, the page marking the gold alternatives) and post 07's recorded
  re-scorer scores (``rerank.scorers.RecordedScorer``, the same call as post 07's depth sweep,
  so the replay reads the same record). The page computes P@k, recall@k, MRR@k, nDCG@k (gain
  2^g − 1, log2 discount, under either rule of :data:`GAIN_RULES`) and the relevant inside k,
  and re-orders the prefix of the chosen depth (:func:`reference_metrics` is the same
  computation through ``evaluation.ranking_metrics`` and ``rerank.stage``, for the tests);
* **context budget** (:func:`context_budget`, page and Python): k chunks × chunk size plus
  prompt and answer → tokens per question, fit in a model's window, cost per 1,000
  questions, with the recorded recall at :func:`measured_budget` from the budget panel;
* **budget** (:func:`budget_panel`): post 02's SQuAD and NQ samples (of its five:
  :attr:`LabConfig.budget_corpora`, for the build's time), strategies, retrievers and first
  model; slot recall within each budget of :func:`budget_grid` (``evaluation.budget.recall_at_budget``,
  post 02's budgets in one call as post 02 makes it, so the values there are the post's),
  its 95% interval (documents resampled where the questions share them, as
  ``post02.tables.budget_intervals``), and each candidate's verdict against the leader
  (``stats.claims.candidate_verdicts`` on the paired interval leader − candidate);
* **footprint** (:func:`footprint_estimate`): stride, estimated chunks, indexed tokens and
  duplication of a fixed token window over a corpus of T tokens (the formulas the page's
  script repeats; equal to ``retrieval.footprint`` on ``chunking.token_windows.fixed_tokens``
  chunks of one text, which a test checks), with the corpus sizes of post 07's corpora.

The formulas are ``lab_formulas``' (imported here under the same names). Every value a link carries is bounded in the page (clamped or replaced by its default, with a
notice naming it) before anything is computed, so the numbers shown are always those of the
controls; exports carry the state and pass through ``static/csv_cells.js`` (the formula-start rule of
``core.csv_cells``).

Not handled: live retrieval (nothing is computed in the browser but the metrics of recorded
rankings), questions beyond the subset, judging contexts outside the recorded top N (the page
says so: the total of relevant contexts is what the judged top N holds unless the reader
raises it), models other than post 02's first in the budget panel, first stages other than
post 07's BM25 in the ranking panel, the first stage's own scores (the score shown is the
re-scorer's; the run store keeps first-stage scores of chunks, not of the contexts shown).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np

from chunklab_core.reports.lab_formulas import (GAIN_RULES, budget_grid, context_budget, excerpt,  # noqa: F401
                                                footprint_estimate, measured_budget, reference_metrics)
from chunklab_core.reports.posts import post
from chunklab_core.reports.site_style import write_style
from chunklab_core.retrieval.registry import BASELINE, model_column

SEED = 20260729
PAGE = "lab.html"
DATA_FILE = "lab-data.js"
TEMPLATE = Path(__file__).with_name("lab.html")
CSV_SCRIPT = Path(__file__).parent / "static" / "csv_cells.js"  # the pages' one CSV writer (inlined): formula starts neutralised
GRADE_WORDS = {2: "full", 1: "partial", 0: "none"}


@dataclass
class LabConfig:
    """What the lab shows; the defaults are the posts' own settings (post 07 and post 02)."""

    seed: int = SEED
    # ranking panel: post 07's sweep
    ranking_corpora: Sequence[str] = ("squad", "nq")
    squad_articles: int = 48
    squad_questions: int = 2000
    ranking_strategies: Sequence[str] = ("fixed_500", "recursive_500", "fixed_500_o125")
    first_stage: str = BASELINE
    rescorer: str = "all-MiniLM-L6-v2"
    rescore_depth: int = 50  # post 07's deepest depth: its recorded scores are of the top 50
    ranking_questions: int = 100
    top: int = 20
    text_chars: int = 200
    # budget panel: post 02's corpora, strategies and retrievers, its first model
    budget_corpora: Sequence[str] = ("squad", "nq")
    budget_strategies: Sequence[str] = post("02").strategies  # declared once in reports/posts.py
    budget_retrievers: Sequence[str] | None = None  # None: post 02's retrievers, read when used (posts.py)
    budget_model: str = "all-MiniLM-L6-v2"
    post_budgets: Sequence[int] = (500, 1000, 2000, 4000)
    resamples: int = 10000
    threshold: float = 0.90
    footprint_corpora: Sequence[str] = field(default_factory=lambda: ("squad", "nq"))


# --------------------------------------------------------------------------- panels


def _round(value: float, places: int = 5) -> float:
    """As the posts write their tables (``float_format="%.5f"``)."""
    return float(f"{value:.{places}f}")


def ranking_panel(config: LabConfig) -> dict:
    """The ranking panel's cells: one per (corpus, strategy), first stage ``config.first_stage``."""
    from chunklab_core.evaluation.slot_metrics import judge_context
    from chunklab_core.reports import samples
    from chunklab_core.chunking import strategy_label
    from chunklab_core.rerank.scorers import RecordedScorer
    from chunklab_core.rerank.study import candidate_texts, first_stage_runs, rerank_corpus

    scorer = RecordedScorer(config.rescorer)
    cells = []
    for name in config.ranking_corpora:
        corpus = rerank_corpus(name, None, config.seed, None, config.squad_articles, config.squad_questions)
        label = samples.corpus_sample_label(name, corpus)
        runs = first_stage_runs(corpus, list(config.ranking_strategies), [config.first_stage], config.rescore_depth)
        for (strategy, stage), run in runs.items():
            # post 07's call: every question, the deepest depth (the record is keyed by exactly these)
            questions = [q.text for q in corpus.questions]
            scores = scorer.score_many(questions, candidate_texts(run, config.rescore_depth))
            texts: dict[str, str] = {}
            rows = []
            for row, question in enumerate(corpus.questions[:config.ranking_questions]):
                ids = [int(i) for i in run.ranked[row, :config.top] if i >= 0]
                alternatives = [a for slot in question.gold_slots for a in slot if a.strip()]
                ranks = []
                for position, index in enumerate(ids):
                    full = run.context_text(index)
                    grade = judge_context(full, question.gold_slots, config.threshold).grade
                    start, short = excerpt(full, alternatives if grade else [], config.text_chars)
                    key = str(index) if start == 0 else f"{index}@{start}"
                    texts.setdefault(key, short)
                    ranks.append([index, grade, float(f"{scores[row][position]:.7g}"), key])  # float32's digits
                gold = " | ".join(" / ".join(slot) for slot in question.gold_slots)
                rows.append({"qid": question.qid, "text": question.text, "gold": gold, "gold_alternatives": alternatives,
                             "ranks": ranks})
            cells.append({"corpus": name, "sample": label, "strategy": strategy,
                          "strategy_label": strategy_label(strategy), "retriever": stage,
                          "scorer": scorer.name, "questions": rows,
                          "texts": {str(i): t for i, t in sorted(texts.items())}})
    return {"top": config.top, "cells": cells, "grades": GRADE_WORDS,
            "subset": config.ranking_questions, "rescore_depth": config.rescore_depth}


def _intervals(matrix: np.ndarray, documents: np.ndarray, resamples: int, seed: int):
    """Per-column 95% intervals of the mean: documents resampled when the questions share them
    (``stats.clustered.clustered_bootstrap_ci``), questions otherwise (``stats.bootstrap.bootstrap_ci``);
    the same calls as ``post02.tables.budget_intervals``, on every column at once (the resampled
    documents depend only on their number, the resamples and the seed, so each column's interval
    equals its own call)."""
    import warnings

    from chunklab_core.stats import bootstrap as stats
    from chunklab_core.stats.clustered import clustered_bootstrap_ci, shares_documents

    if shares_documents(documents) and len(set(documents)) > 1:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            return clustered_bootstrap_ci(matrix, documents, resamples, seed)
    return stats.bootstrap_ci(matrix, resamples, seed)


def budget_tables(config: LabConfig):
    """Per-question budget recall of every (corpus, strategy, retriever) of post 02's first model:
    ``{corpus: (corpus object, tidy frame)}`` with the columns of ``evaluation.budget.recall_at_budget``.

    Computed by ``recall_at_budget`` on judged tables, so that each context is judged once
    (``budget_run`` and ``judge_run``, the steps it takes on a run): the deep ranking is cut for the
    largest budget and judged once per cell (one judgment cache per corpus, shared by its
    retrievers), and every budget reads a prefix of it (the same contexts at the same ranks as
    a cut for a smaller budget, so the recall is post 02's). "Depth binds" is relative to the
    largest budget of the call, as in ``recall_at_budget``: post 02's budgets as post 02 asks
    them (one call), the page's other budgets as one more call.
    """
    import pandas as pd

    from chunklab_core.data.corpora import load_corpus
    from chunklab_core.evaluation.budget import budget_run, recall_at_budget
    from chunklab_core.evaluation.matrix import run_matrix
    from chunklab_core.evaluation.slot_metrics import judge_run
    from chunklab_core.retrieval.registry import needs_model

    grid = budget_grid(config.post_budgets)
    retrievers = post("02").retriever_names(config.budget_retrievers)  # the cells post 02 records, as registered now
    calls = [list(config.post_budgets), [b for b in grid if b not in set(config.post_budgets)]]
    out = {}
    for name in config.budget_corpora:
        corpus = load_corpus(name, squad_articles=config.squad_articles, squad_questions=config.squad_questions,
                             seed=config.seed)
        matrix = run_matrix({name: corpus}, list(config.budget_strategies), retrievers,
                            [config.budget_model], None, [1, 3, 5, 10], config.threshold, progress=False)
        cache: dict = {}
        frames = []
        for (_, model, strategy, retriever), run in matrix.runs.items():
            if model != config.budget_model and needs_model(retriever):
                continue
            cut, _ = budget_run(run, max(grid))
            judged = judge_run(cut, config.threshold, cache)
            for budgets in calls:
                _, binds = budget_run(run, max(budgets))
                table = recall_at_budget(judged, budgets)  # judged tables: every budget a prefix
                per_budget = np.tile(binds, len(budgets))  # recall_at_budget stacks budgets in order
                table["depth_binds"] = per_budget & (table["tokens_used"].to_numpy() < table["budget"].to_numpy())
                frames.append(table)
        out[name] = (corpus, pd.concat(frames, ignore_index=True))
    return out


def budget_panel(config: LabConfig, tables=None) -> dict:
    """Recall within every budget, its interval and the verdict against the leader, per
    (corpus, retriever): ``{"grid", "post_budgets", "model", "cells": [...]}``."""
    from chunklab_core.chunking import strategy_label
    from chunklab_core.reports import samples
    from chunklab_core.reports.verdict_tables import design_of
    from chunklab_core.stats.claims import candidate_verdicts

    tables = budget_tables(config) if tables is None else tables
    cells = []
    for name, (corpus, tidy) in tables.items():
        documents_of = {q.qid: q.doc_id for q in corpus.questions}
        for retriever, group in tidy.groupby("retriever", sort=False):
            scored = group[group["recall"].notna()]
            wide = scored.pivot_table(index="qid", columns=["budget", "strategy"], values="recall", aggfunc="first")
            binds = scored.groupby(["budget", "strategy"])["depth_binds"].mean()
            tokens = scored.groupby(["budget", "strategy"])["tokens_used"].mean()
            wide = wide.dropna()  # every candidate on the same questions (paired)
            documents = wide.index.map(documents_of).to_numpy()
            interval = _intervals(wide.to_numpy(), documents, config.resamples, config.seed)
            rows = []
            for budget in sorted(set(wide.columns.get_level_values(0))):
                columns = [c for c in wide.columns if c[0] == budget]
                position = [wide.columns.get_loc(c) for c in columns]
                means = np.asarray(interval.mean)[position]
                leader = int(np.argmax(means))
                diffs = wide[columns[leader]].to_numpy()[:, None] - wide[columns].to_numpy()
                others = [i for i in range(len(columns)) if i != leader]
                paired = _intervals(diffs[:, others], documents, config.resamples, config.seed)
                against = {columns[i][1]: (float(np.asarray(paired.low)[j]), float(np.asarray(paired.high)[j]))
                           for j, i in enumerate(others)}
                words = candidate_verdicts(columns[leader][1], against)
                candidates = []
                for i, column in enumerate(columns):
                    strategy = column[1]
                    candidates.append({
                        "strategy": strategy, "label": strategy_label(strategy),
                        "recall": _round(float(means[i])), "low": _round(float(np.asarray(interval.low)[position[i]])),
                        "high": _round(float(np.asarray(interval.high)[position[i]])),
                        "diff_low": None if i == leader else _round(against[strategy][0]),
                        "diff_high": None if i == leader else _round(against[strategy][1]),
                        "verdict": words[strategy], "tokens": _round(float(tokens[(budget, strategy)]), 1),
                        "binds": _round(float(binds[(budget, strategy)]), 3)})
                rows.append({"budget": int(budget), "leader": columns[leader][1], "candidates": candidates})
            cells.append({"corpus": name, "sample": samples.sample_label(name, len(wide), len(set(documents))),
                          "retriever": retriever, "model": model_column(retriever, config.budget_model),
                          "questions": int(len(wide)), "design": design_of(documents), "rows": rows})
    return {"grid": budget_grid(config.post_budgets), "post_budgets": [int(b) for b in config.post_budgets],
            "model": config.budget_model, "resamples": config.resamples, "cells": cells}


def footprint_panel(config: LabConfig) -> dict:
    """Corpus sizes in cl100k_base tokens of post 07's corpora (the panel's presets)."""
    from chunklab_core.core.tokens import count_tokens_many
    from chunklab_core.reports import samples
    from chunklab_core.rerank.study import rerank_corpus

    presets = []
    for name in config.footprint_corpora:
        corpus = rerank_corpus(name, None, config.seed, None, config.squad_articles, config.squad_questions)
        tokens = int(count_tokens_many([d.text for d in corpus.documents]).sum())
        presets.append({"corpus": name, "sample": samples.corpus_sample_label(name, corpus),
                        "documents": len(corpus.documents), "tokens": tokens})
    return {"presets": presets, "size": 500, "overlap": 125}


def build_lab_data(config: LabConfig | None = None) -> dict:
    """Every panel's data (replays the recorded runs: ``CHUNKLAB_RUNS=replay`` is set for the call)."""
    import os

    config = config or LabConfig()
    previous = os.environ.get("CHUNKLAB_RUNS")
    os.environ["CHUNKLAB_RUNS"] = "replay"
    try:
        return {"ranking": ranking_panel(config), "budget": budget_panel(config), "footprint": footprint_panel(config)}
    finally:
        if previous is None:
            os.environ.pop("CHUNKLAB_RUNS", None)
        else:
            os.environ["CHUNKLAB_RUNS"] = previous


# --------------------------------------------------------------------------- the page


def data_script(data: dict) -> str:
    """``lab-data.js``: the data as one JSON literal (ASCII, ``<`` escaped so no text closes a tag)."""
    literal = json.dumps(data, ensure_ascii=True, separators=(",", ":"), allow_nan=False)
    return "window.LAB_DATA = " + literal.replace("<", "\\u003c") + ";\n"


def write_lab(folder: Path, data: dict, nav: str = "") -> list[Path]:
    """Write ``lab.html`` (the template with the site's navigation and ``static/csv_cells.js`` inlined),
    ``lab-data.js`` and the site's one style sheet (``site_style.STYLE_FILE``, which the page links and
    whose lab section styles it) into ``folder``, so the page is styled when opened by itself."""
    folder = Path(folder)
    style = write_style(folder)
    page = TEMPLATE.read_text(encoding="utf-8").replace("<!--NAV-->", nav).replace("<!--CSV-->", CSV_SCRIPT.read_text(encoding="utf-8"))
    (folder / PAGE).write_text(page, encoding="utf-8")
    (folder / DATA_FILE).write_text(data_script(data), encoding="utf-8")
    return [folder / PAGE, folder / DATA_FILE, style]
