"""Which chunking should I use? The recommendation of a run on your own documents.

Handles, from the per-question table of ``evaluation.matrix.run_matrix`` on one corpus:

* **the decision** (``matched``, :func:`matched_cost`, :func:`scope_decision`): per scope, the
  decision engine posts 02, 08 and 00 decide with (``chunklab_core.decision``): recall within
  context budgets doubling from 256 to 8,192 cl100k_base tokens, each budget on its own, the
  leader's paired intervals under the question-level and, where your questions share documents,
  the document-clustered design, equivalence within ±δ (``decision.margin.DEFAULT_MARGIN``), the
  simplest of the leader and its equivalents as the pick, and the smallest budget whose pick is
  equivalent to every larger budget's best. The box's first lines are this decision;

* the secondary view, recall at k chunks (``verdict``, :func:`at_k_lines`): per retriever (and per
  embedding model for dense/hybrid) over the strategies, and overall over every (strategy,
  retriever, model) cell, the same engine's step on recall@k of the same questions
  (``decision.compare.compare``): leader, paired intervals under both designs, equivalent within
  the same ±δ / ruled out / undecided, the simplest of the leader and its equivalents as the pick,
  the verdict *decided* / *undecided* (with the questions that would settle it at δ) / *below
  floor*. Nothing in the box, the tables, the console or the JSON decides by another rule (the
  earlier ``select_winner`` verdict, "winner / cannot be ruled out", and its probability of being
  best are gone from this report); questions that name no document are each their own cluster
  (``decision.compare.document_clusters``) in both views;
* the tokens each cell returns at the recall target (the mean returned tokens at the
  smallest k <= 10 whose mean slot recall reaches the target, from ``budget.recall_token_curve``);
* warnings from chunk health for the at-k pick and the strategies not ruled out:
  fragments (chunks under 200 characters) and, only for cells that embed chunks (dense,
  hybrid), chunks cut by the embedding model's length limit (``max_seq_length``);
* the box a user reads first (``box``): the matched-cost decision, then the at-k view and the
  tokens its pick costs -- the one source of the console summary, ``recommendation.json`` and the
  report's box; ``use_cell``: the cell to use (``chunklab-own answers --run`` and ``check`` read it);
* one tidy table (the console table and the report's), and JSON-ready records.

Not handled: running retrieval, choosing k or the target for you, several corpora at once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
import pandas as pd

from chunklab_core.evaluation.budget import recall_token_curve
from chunklab_core.chunking import strategy_label
from chunklab_core.evaluation.measures import column
from chunklab_core.decision.compare import (DECIDED, RULED_OUT, UNDECIDED, Comparison, compare,
                                            document_clusters)
from chunklab_core.retrieval.registry import NO_MODEL, model_column, needs_model, setting_name, uses_no_model

FRAGMENT_WARNING_PCT = 10.0  # warn when more than this share (%) of a strategy's chunks are fragments
MAX_K = 10
BOX_LIST = 4  # the box names at most this many candidates per list, then "and N more" (the tables list them all)


@dataclass
class Recommendation:
    """The decision of one scope ("bm25", "dense · all-MiniLM-L6-v2", "overall"): the engine's at matched
    cost (``matched``) and at k chunks (``verdict``, a ``decision.compare.Comparison``), and its extras."""

    scope: str
    verdict: Comparison
    cells: dict[str, tuple[str, str, str]]  # candidate name -> (strategy, retriever, model)
    tokens_at_target: dict[str, float] = field(default_factory=dict)
    k_at_target: dict[str, float] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    matched: dict = field(default_factory=dict)  # the decision engine's setting_guide row (matched cost)

    def row(self, recall_target: float) -> dict:
        """One row of the recommendation table: the at-k decision in the engine's words."""
        v = self.verdict
        open_ = v.first_open
        tokens = self.tokens_at_target.get(v.pick, np.nan)
        return {
            "scope": self.scope, "pick": v.pick, "leader": v.leader, "verdict": v.verdict,
            "equivalent": ", ".join(v.equivalents) or "none",
            "undecided": ", ".join(v.of(UNDECIDED)) or "none",
            "ruled out": ", ".join(v.of(RULED_OUT)) or "none",
            "closest open": v.interval_text(open_) if open_ else "—",
            "questions to decide": (("more than 100,000" if v.what_would_decide is None else f"about {v.what_would_decide:,}")
                                    if v.verdict == UNDECIDED else "decided already" if v.verdict == DECIDED else "—"),
            "margin": v.margin, "design": v.design,
            f"pick's tokens at recall {recall_target:.2f}": tokens,
            "questions": v.n_questions,
            "warnings": "; ".join(self.warnings) or "—",
        }

    def to_record(self, recall_target: float) -> dict:
        """JSON-ready: the row, the headline, the cell to use and every candidate's figures."""
        v = self.verdict
        candidates = [{"candidate": name, "strategy": self.cells[name][0], "retriever": self.cells[name][1],
                       "model": self.cells[name][2], "mean": v.means[name], "status": v.words[name],
                       "pick": name == v.pick,
                       **({f"leader − candidate {key}": float(value) for key, value in v.intervals[name].items()}
                          if name in v.intervals else {}),
                       "tokens_at_target": _none_if_nan(self.tokens_at_target.get(name)),
                       "k_at_target": _none_if_nan(self.k_at_target.get(name))}
                      for name in sorted(v.names, key=lambda n: -v.means[n])]
        row = {key: _none_if_nan(value) for key, value in self.row(recall_target).items()}
        matched = {key: _none_if_nan(value) for key, value in self.matched.items()}
        return {**row, "use": use_cell(self), "matched_cost": matched, "headline": v.headline(),
                "verdict_warnings": list(v.warnings), "resamples": v.resamples, "seed": v.seed,
                "candidates": candidates}


def use_cell(rec: Recommendation) -> dict:
    """The cell the scope recommends, as (strategy, retriever, model): the engine's matched-cost pick
    (the box's *use* line) when there is one, else the pick at k chunks."""
    if rec.matched and isinstance(rec.matched.get("strategy"), str):
        strategy = rec.matched["strategy"]
        if "|" in strategy:  # the overall scope: strategy|retriever|model
            strategy, retriever, model = strategy.split("|")
        else:
            retriever, model = str(rec.matched["retriever"]), str(rec.matched["model"])
        return {"strategy": strategy, "retriever": retriever, "model": model, "basis": "matched cost",
                "tokens": _none_if_nan(rec.matched.get("tokens"))}
    strategy, retriever, model = rec.cells[rec.verdict.pick]
    return {"strategy": strategy, "retriever": retriever, "model": model, "basis": "at k chunks", "tokens": None}


def _none_if_nan(value):
    if isinstance(value, (float, np.floating)):
        return None if np.isnan(value) else float(value)
    return value


def _cell_name(strategy: str, retriever: str, model: str, with_retriever: bool, with_model: bool) -> str:
    name = strategy_label(strategy)
    if with_retriever:
        name += f" / {retriever}"
    if with_model and needs_model(retriever):
        name += f" ({model})"
    return name


def tokens_at_target(runs: dict, recall_target: float) -> pd.DataFrame:
    """Per (strategy, retriever, model) run: the smallest k <= 10 whose mean slot recall reaches
    ``recall_target`` and the mean returned tokens there (NaN when no k reaches it)."""
    rows = []
    for (_, model, strategy, retriever), run in runs.items():
        try:
            curve = recall_token_curve(run)
        except ValueError:
            continue
        reached = curve[curve["recall"] >= recall_target - 1e-12]
        first = reached.iloc[0] if len(reached) else None
        rows.append({"strategy": strategy, "retriever": retriever, "model": model,
                     "k at target": float(first["k"]) if first is not None else np.nan,
                     "tokens at target": float(first["mean_tokens"]) if first is not None else np.nan,
                     column("recall", MAX_K): float(curve["recall"].iloc[-1])})
    return pd.DataFrame(rows)


def health_warnings(health: pd.DataFrame, strategies: Sequence[str], embedding: bool = True) -> dict[str, list[str]]:
    """Chunk-health warnings per strategy name: fragments, and (``embedding``: for a scope whose
    cells read chunks through an embedding model) chunks cut by the model's length limit."""
    notes: dict[str, list[str]] = {}
    for _, row in health.iterrows():
        if row["strategy"] not in strategies:
            continue
        items = []
        fragments = row.get("pct_fragments")
        if fragments is not None and not pd.isna(fragments) and fragments > FRAGMENT_WARNING_PCT:
            items.append(f"{fragments:.0f}% of chunks are fragments (under 200 characters)")
        truncated = row.get("share truncated") if embedding else None
        if truncated is not None and not pd.isna(truncated) and truncated > 0:
            items.append(f"{100 * truncated:.0f}% of chunks are cut by the embedding model's length limit")
        if items:
            notes[row["strategy"]] = items
    return notes


def _simple(per_question: pd.DataFrame, cells: dict, k: int, overall: bool):
    """The simplicity key of a scope's candidates (``candidates.simplicity``): no model first -- in the
    overall scope a retriever that embeds counts as one --, fewer parameters, fewer tokens per context
    (the mean of tokens@k / k over the cell's questions)."""
    from chunklab_core.decision.candidates import simplicity

    tokens = column("tokens", k)
    frame = per_question.set_index(["strategy", "retriever", "model"]).sort_index()
    per_context = {name: (float(frame.loc[key, tokens].mean()) / k if tokens in frame else float("nan"))
                   for name, key in cells.items()}
    return lambda n: simplicity(cells[n][0], per_context[n], overall and needs_model(cells[n][1]))


def simplicity_key(rec: Recommendation, per_question: pd.DataFrame, k: int):
    """:func:`_simple` of a recommendation's scope (the held-out check breaks ties as the scope did)."""
    data = per_question.assign(model=per_question["model"].astype(str))
    return _simple(data, rec.cells, k, rec.scope == "overall")


def _comparison(per_question: pd.DataFrame, metric: str, keys: list[tuple[str, str, str]], names: list[str],
                resamples: int, seed: int, k: int, overall: bool) -> Comparison:
    """The engine's decision (``decision.compare``) on ``metric`` of the scope's cells: questions scored in
    every cell, clustered by document where they share one, ties to the simplest (:func:`_simple`)."""
    frame = per_question.set_index(["strategy", "retriever", "model", "qid"]).sort_index()
    wide = pd.concat([frame.loc[key, metric] for key in keys], axis=1, keys=names).dropna()
    if wide.empty:
        raise ValueError(f"no question has {metric} in every compared cell")
    documents = per_question.drop_duplicates("qid").set_index("qid")["doc_id"] if "doc_id" in per_question else None
    clusters = (document_clusters(documents.reindex(wide.index).tolist(), wide.index.tolist())
                if documents is not None else None)
    return compare(wide, resamples, seed, clusters=clusters, simple=_simple(per_question, dict(zip(names, keys)),
                                                                           k, overall))


def recommend(per_question: pd.DataFrame, runs: dict, health: pd.DataFrame, k: int, recall_target: float,
              resamples: int, seed: int, progress: bool = False, targets: pd.DataFrame | None = None) -> list[Recommendation]:
    """Per-retriever (x model) recommendations, then the overall one (see the module docstring).

    ``progress``: a tqdm bar over the verdicts (each resamples every cell of its scope). ``targets``:
    :func:`tokens_at_target` of ``runs`` at ``recall_target`` when the caller has it (else computed).
    """
    import warnings

    from tqdm import tqdm

    metric = column("recall", k)
    if metric not in per_question:
        raise ValueError(f"the per-question table has no {metric}; run the matrix with k={k} among its ks")
    data = per_question.copy()
    data["model"] = data["model"].astype(str)
    cells_run = list(dict.fromkeys(zip(data["strategy"], data["retriever"], data["model"])))
    targets = tokens_at_target(runs, recall_target) if targets is None else targets
    tokens = {(row["strategy"], row["retriever"], model_column(row["retriever"], row["model"])):
              (row["tokens at target"], row["k at target"]) for _, row in targets.iterrows()}
    strategies = list(dict.fromkeys(data["strategy"]))
    notes = {True: health_warnings(health, strategies), False: health_warnings(health, strategies, embedding=False)}
    models = [m for m in dict.fromkeys(data["model"]) if not uses_no_model(m)]
    scopes: list[tuple[str, list[tuple[str, str, str]], bool]] = []
    for retriever in dict.fromkeys(data["retriever"]):
        for model in ([NO_MODEL] if not needs_model(retriever) else models):
            keys = [(s, retriever, model) for s in strategies if (s, retriever, model) in cells_run]
            label = retriever if not needs_model(retriever) or len(models) < 2 else setting_name(retriever, model)
            if len(keys) >= 2:
                scopes.append((label, keys, False))
    every = cells_run
    if len(scopes) > 1:  # with one retriever (and model) its verdict is the overall one
        scopes.append(("overall", every, True))
    out = []
    scored: dict = {}  # each run's budget table, computed once for every scope that reads it
    for label, keys, overall in tqdm(scopes, desc="verdicts (paired resamples)", disable=not progress):
        names = [_cell_name(s, r, m, overall, overall and len(models) > 1) for s, r, m in keys]
        with warnings.catch_warnings():  # the few-questions warning is kept in verdict.warnings
            warnings.simplefilter("ignore", UserWarning)
            verdict = _comparison(data, metric, keys, names, resamples, seed, k, overall)
        cells = dict(zip(names, keys))
        matched = scope_decision(runs, keys, overall, resamples, seed, scored)
        flagged = [verdict.pick] + [c for c in verdict.names if c != verdict.pick and verdict.words[c] != RULED_OUT]
        warned = []
        for name in flagged:
            strategy, retriever = cells[name][0], cells[name][1]
            for note in notes[needs_model(retriever)].get(strategy, []):  # BM25 reads no embedding
                text = f"{strategy_label(cells[name][0])}: {note}"
                if text not in warned:
                    warned.append(text)
        out.append(Recommendation(
            label, verdict, cells,
            tokens_at_target={n: tokens.get(c, (np.nan, np.nan))[0] for n, c in cells.items()},
            k_at_target={n: tokens.get(c, (np.nan, np.nan))[1] for n, c in cells.items()},
            warnings=warned, matched=matched))
    return out


def recommendation_table(recommendations: Sequence[Recommendation], recall_target: float) -> pd.DataFrame:
    """One row per scope (the console and report table); empty when only one cell was run."""
    rows = [r.row(recall_target) for r in recommendations]
    return pd.DataFrame(rows).set_index("scope") if rows else pd.DataFrame(columns=["scope"]).set_index("scope")


def describe(recommendations: Sequence[Recommendation], k: int, recall_target: float) -> str:
    """The at-k decision as Markdown prose: the overall scope first, then each retriever's."""
    ordered = sorted(recommendations, key=lambda r: r.scope != "overall")
    parts = []
    for rec in ordered:
        v = rec.verdict
        tokens = rec.tokens_at_target.get(v.pick, np.nan)
        cost = (f" At the recall target {recall_target:.2f} the pick returns about {tokens:,.0f} tokens per "
                f"question (k = {rec.k_at_target[v.pick]:.0f})." if not np.isnan(tokens) else
                f" The pick does not reach recall {recall_target:.2f} within the top {MAX_K}.")
        warn = (" Chunk health: " + "; ".join(rec.warnings) + ".") if rec.warnings else ""
        caution = "".join(f" *Caution: {w}.*" for w in v.warnings)
        parts.append(f"**{rec.scope}** (recall@{k}): {v.headline()}.{cost}{warn}{caution}")
    return "\n\n".join(parts)


def primary(recommendations: Sequence[Recommendation]) -> Recommendation:
    """The scope the box speaks for: "overall" when there is one, else the only scope."""
    return next((r for r in recommendations if r.scope == "overall"), recommendations[0])


def single_cell_box(summary: pd.DataFrame, targets: pd.DataFrame, k: int, recall_target: float) -> list[tuple[str, str]]:
    """The box of a run with one cell (one strategy under one retriever): nothing to compare,
    so its recall@k with the 95% interval and its cost, and the advice to add a candidate."""
    from chunklab_core.evaluation.measures import interval_columns

    row = summary.iloc[0]
    recall = column("recall", k)
    low, high = interval_columns(recall)
    cell = targets.iloc[0] if len(targets) else None
    tokens = np.nan if cell is None else cell["tokens at target"]
    name = f"{strategy_label(row['strategy'])} / {row['retriever']}"
    return [("use", f"{name} (the only cell run: nothing to compare it with)"),
            ("recall", f"recall@{k} {row[recall]:.3f} [{row[low]:.3f}, {row[high]:.3f}] (95% interval, "
                       f"n = {int(row['questions'])} questions)"),
            ("cost", f"about {tokens:,.0f} tokens per question to reach recall {recall_target:.2f} "
                     f"(k = {cell['k at target']:.0f})" if not np.isnan(tokens) else
                     f"does not reach recall {recall_target:.2f} within the top {MAX_K}"),
            ("to settle it", "add a second strategy or retriever to the config for a verdict")]


def at_k_lines(rec: Recommendation, k: int, recall_target: float) -> list[tuple[str, str]]:
    """The at-k view of a scope, decided by the engine: *at k chunks* (the pick and the verdict),
    *verdict at k chunks* (the engine's sentence with n and the design) and *cost* (the pick's tokens
    at the recall target)."""
    v = rec.verdict
    scope = "every strategy × retriever cell" if rec.scope == "overall" else f"the {rec.scope} cells"
    use = f"{v.pick} ({v.verdict} at recall@{k} among {scope}, equivalence margin ±{v.margin:g})"
    verdict = f"{v.headline(BOX_LIST)} (paired intervals, {v.design}, recall@{k}, n = {v.n_questions} questions)"
    tokens, at_k = rec.tokens_at_target.get(v.pick, np.nan), rec.k_at_target.get(v.pick, np.nan)
    cost = (f"about {tokens:,.0f} tokens per question for the pick to reach recall {recall_target:.2f} (k = {at_k:.0f})"
            if not np.isnan(tokens) else f"the pick does not reach recall {recall_target:.2f} within the top {MAX_K}")
    return [("at k chunks", use), ("verdict at k chunks", verdict), ("cost", cost)]


def box(recommendations: Sequence[Recommendation], k: int, recall_target: float) -> list[tuple[str, str]]:
    """The recommendation box: ``(label, text)`` lines of the primary scope, every one decided by the engine.

    Lines: the matched-cost decision (``_matched_lines``: *use* with its budget, *equivalent*,
    *decision*, *pick at each budget*), then the secondary view at k chunks (:func:`at_k_lines`),
    then any caution (few questions). Without a matched-cost decision (no budget table), the at-k
    lines lead under the labels *use*, *verdict* and *cost*. The console and ``recommendation.json``
    print these lines as they are.
    """
    rec = primary(recommendations)
    at_k = at_k_lines(rec, k, recall_target)
    if rec.matched:
        lines = _matched_lines(rec.matched) + at_k
    else:
        lines = [("use", at_k[0][1]), ("verdict", at_k[1][1]), at_k[2]]
    return lines + [("caution", w) for w in rec.verdict.warnings]


def matched_cost(budget_table: pd.DataFrame, resamples: int, seed: int, margin: float | None = None,
                 measure: str = "containment", label=None, simple=None) -> pd.DataFrame:
    """The decision of posts 02, 08 and 00 on your documents: one row per retriever (x model) of
    ``decision.guide.setting_guide`` over ``decision.engine.setting_table`` of a per-question
    table at matched cost (``decision.scores.budget_per_question`` of your run): the pick at every
    budget, the recommended budget, the equivalents within ±δ under both resampling designs (the
    document-clustered one where your questions share documents) and the verdict. Candidates are
    your strategies (in your config's order), ranked by ``measure`` (containment recall: gold is
    a snippet)."""
    from chunklab_core.decision import engine, guide
    from chunklab_core.decision.margin import DEFAULT_MARGIN

    margin = DEFAULT_MARGIN if margin is None else margin
    strategies = list(dict.fromkeys(budget_table["strategy"]))
    table = engine.setting_table(budget_table, None, None, MAX_K, resamples, seed, source="per_question.csv",
                                 margin=margin, measure=measure, strategies=strategies, label=label, simple=simple)
    return guide.setting_guide(table, margin)


def scope_decision(runs: dict, keys: Sequence[tuple[str, str, str]], overall: bool, resamples: int,
                   seed: int, scored: dict | None = None) -> dict:
    """The engine's decision for one scope's cells ``keys`` (strategy, retriever, model): the
    :func:`matched_cost` row as a dict ({} when fewer than two cells have a budget table). In the
    overall scope a candidate is a strategy under a retriever, and a retriever that embeds counts
    as a model in the simplicity order. ``scored``: a dict, filled in place, of each run's budget
    table by its key in ``runs`` (the overall scope reads the tables its retrievers' scopes made)."""
    from chunklab_core.decision.candidates import BUDGETS, simplicity
    from chunklab_core.decision.scores import budget_scores

    wanted = set(keys)
    frames = []
    for (corpus, run_model, strategy, retriever), run in runs.items():
        if (strategy, retriever, model_column(retriever, run_model)) not in wanted:
            continue
        name = f"{strategy}|{retriever}|{model_column(retriever, run_model)}" if overall else strategy
        key = (corpus, run_model, strategy, retriever)
        scores = scored.get(key) if scored is not None else None
        if scores is None:
            scores = budget_scores(run, BUDGETS)
            if scored is not None:
                scored[key] = scores
        frames.append(scores.assign(
            doc_id=document_clusters(scores["doc_id"].tolist(), scores["qid"].tolist()), corpus="own", strategy=name, retriever="overall" if overall else retriever,
            model="—" if overall else model_column(retriever, run_model)))
    if len(frames) < 2:
        return {}
    table = pd.concat(frames, ignore_index=True)
    if not overall:
        found = matched_cost(table, resamples, seed)
        return found.iloc[0].to_dict() if len(found) else {}

    def label(name: str) -> str:
        strategy, retriever, model = name.split("|")
        return _cell_name(strategy, retriever, model, True, not uses_no_model(model))

    def simple(name: str, tokens: float) -> tuple:
        strategy, retriever, _ = name.split("|")
        return simplicity(strategy, tokens, needs_model(retriever))

    found = matched_cost(table, resamples, seed, label=label, simple=simple)
    return found.iloc[0].to_dict() if len(found) else {}


def _matched_lines(matched: dict) -> list[tuple[str, str]]:
    """The box's first lines from the engine's decision: the pick and its budget, the equivalents, the verdict."""
    from chunklab_core.decision.margin import DEFAULT_MARGIN

    picks = "; ".join(f"{key[3:]}: {value}" for key, value in matched.items()
                      if key.startswith("at ") and key[3:].replace(",", "").isdigit() and isinstance(value, str))
    equivalents = matched.get("equivalents") if isinstance(matched.get("equivalents"), str) else ""
    ties = matched.get("ties") if isinstance(matched.get("ties"), str) else ""
    def short(text: str) -> str:
        items = [t for t in text.split("; ") if t]
        return "; ".join(items) if len(items) <= BOX_LIST else f"{'; '.join(items[:BOX_LIST])} and {len(items) - BOX_LIST} more"

    equivalents = short(equivalents)
    if ties:  # equal to the pick on every question: equivalent at any margin (the engine's tie)
        equivalents = "; ".join(filter(None, [equivalents, f"{short(ties)} (equal to the pick on every question)"]))
    verdict = matched.get("verdict", "")
    if verdict == "undecided":
        needed = str(matched.get("what would decide"))
        verdict += (f": {'about ' if needed[:1].isdigit() else ''}{needed} questions would settle it "
                    f"at ±{DEFAULT_MARGIN:g}")
    return [("use", f"{matched['use']} at {int(matched['tokens']):,} tokens (the smallest budget whose pick is "
                    f"equivalent within ±{DEFAULT_MARGIN:g} to the best of every larger budget; "
                    f"{matched['measure']} {float(matched['score']):.3f})"),
            ("equivalent", equivalents or f"nothing else within ±{DEFAULT_MARGIN:g}"),
            ("decision", f"{verdict} (paired intervals, {matched.get('design', '')}, n = {matched.get('questions')} "
                         f"questions)"),
            ("pick at each budget", picks)]
