"""The decision engine: per setting and budget, the leader, its equivalents, the pick, and the budget to use.

One computation for posts 02, 08 and 00 and for chunklab-own: :func:`setting_table` takes a
per-question table at matched cost (``decision.scores.budget_per_question``, or any table with
its columns: corpus, retriever, model, strategy, qid, doc_id, budget, the measure's column,
tokens_used, contexts_read, depth_binds) and decides, for every setting (corpus, retriever, model):

* **at each budget on its own**, among the candidates whose first context fits the budget for at
  least :data:`candidates.FIT_SHARE` of the questions (the others: :data:`DOES_NOT_FIT`): the
  **leader** (highest mean; an exact tie goes to the simplest, ``candidates.simplicity``), and
  per other candidate the paired 95% interval of ``leader − candidate`` under the question-level
  design and, where questions share documents, the document-clustered one. A candidate is
  **equivalent** when both intervals lie inside (−δ, +δ) (two one-sided tests, ``decision.margin``),
  **ruled out** when both clear 0 (and it is not equivalent), else **undecided**. The **pick** is
  the simplest of the leader and its equivalents. A budget is *decided* when no candidate is
  undecided, and *below floor* when its leader scores under :data:`FLOOR` (chunking is then not
  what limits the setting);
* **between budgets**: the recommended budget is the smallest whose pick is equivalent to the
  leader of every larger budget (paired interval ``leader(B′) − pick(B)`` inside ±δ in both
  designs); the largest budget when none is. A smaller budget is *decidedly* rejected when some
  larger budget's leader beats its pick with both intervals clearing 0. Each budget's leader row
  also carries the gain of the next (doubled) budget's leader over it;
* **the setting's verdict** at margin m: ``decided`` when its recommended budget is decided and
  every smaller budget is decidedly rejected, ``below floor`` when the recommended budget is, else
  ``undecided``, with the questions that would settle the first undecided comparison at that margin
  (``margin.questions_to_settle``). Computed at every margin of ``margins`` (δ·``margin.ROBUSTNESS``
  and 0, the rule before a margin was declared), from one set of intervals.

Not handled: the per-question scores (``decision.scores``), the per-setting and per-budget views
(``decision.guide``), the sentences (``reports.pool``).
"""

from __future__ import annotations

from typing import Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from chunklab_core.decision.candidates import (COLUMNS, LIBRARY, MEASURE_NAMES, candidates, measure_of,
                                               simplicity)
from chunklab_core.decision.margin import DEFAULT_MARGIN, ROBUSTNESS, clears_zero, inside_margin
from chunklab_core.decision.verdicts import design_of
from chunklab_core.stats import claims
from chunklab_core.stats.clustered import shares_documents

FIT_SHARE = 0.9  # a candidate must read at least one context for this share of the questions to be compared at a budget
FLOOR = 0.15  # a budget whose leader scores below this is "below floor": chunking is not what limits it
SETTING = ["corpus", "retriever", "model"]
DOES_NOT_FIT = "does not fit the budget"
LEADER, EQUIVALENT, RULED_OUT, UNDECIDED = "leader", "equivalent", "ruled out", "undecided"
DECIDED, BELOW_FLOOR = "decided", "below floor"
LIST_SEPARATOR = "; "  # between labels in a cell (labels hold commas: "1,000 chars")


def candidate_name(strategy: str, budget: int) -> str:
    """``strategy@budget``: one (strategy, budget) candidate of a setting."""
    return f"{strategy}@{int(budget)}"


def margins_of(margin: float = DEFAULT_MARGIN) -> tuple[float, ...]:
    """The margins every decision is computed at: 0 (no margin), then δ times each of ``ROBUSTNESS``."""
    return (0.0, *(round(margin * f, 6) for f in ROBUSTNESS))


def margin_column(name: str, margin: float) -> str:
    """A column of the decision at one margin: ``"<name> at δ=0.02"``."""
    return f"{name} at δ={margin:g}"


class _Intervals:
    """Paired intervals of ``a − b`` under both designs, each pair computed once. Every pair shares
    the resamples (one seed), so the resampled means of every candidate are drawn once per design
    (``stats.bootstrap.resampled_means``, ``stats.clustered.clustered_resampled_means``) and a pair's
    percentile interval is read off the difference of its two columns: the same resamples
    ``paired_difference_ci`` and ``paired_difference_clustered_ci`` draw for the pair alone."""

    def __init__(self, wide: pd.DataFrame, clusters, resamples: int, seed: int):
        self.wide, self.resamples, self.seed = wide, resamples, seed
        self.clusters = clusters if clusters is not None and shares_documents(clusters) else None
        self.cache: dict[tuple[str, str], dict] = {}
        self.column = {name: j for j, name in enumerate(wide.columns)}
        self._means: dict[str, np.ndarray] = {}

    def _resampled(self, design: str) -> np.ndarray:
        if design not in self._means:
            import warnings

            from chunklab_core.stats.bootstrap import resampled_means
            from chunklab_core.stats.clustered import clustered_resampled_means

            matrix = self.wide.to_numpy(dtype=float)
            if design == "questions":
                self._means[design] = resampled_means(matrix, self.resamples, self.seed)
            else:
                with warnings.catch_warnings():  # few documents: the sentences say so where it matters
                    warnings.simplefilter("ignore", UserWarning)
                    self._means[design] = clustered_resampled_means(matrix, self.clusters, self.resamples, self.seed)
        return self._means[design]

    def _interval(self, design: str, a: str, b: str) -> tuple[float, float]:
        from chunklab_core.stats.bootstrap import percentile_interval

        means = self._resampled(design)
        low, high = percentile_interval(means[:, self.column[a]] - means[:, self.column[b]])
        return float(low), float(high)

    def __call__(self, a: str, b: str) -> dict:
        if (a, b) not in self.cache:
            diff = float((self.wide[a].to_numpy(dtype=float) - self.wide[b].to_numpy(dtype=float)).mean())
            q_low, q_high = self._interval("questions", a, b)
            low, high = self._interval("documents", a, b) if self.clusters is not None else (q_low, q_high)
            self.cache[(a, b)] = {"diff": diff, "low": low, "high": high, "question low": q_low,
                                  "question high": q_high}
        return self.cache[(a, b)]


def word(interval: Mapping[str, float], margin: float) -> str:
    """:data:`EQUIVALENT` (both designs inside ±margin, or both exactly [0, 0]: a tie), :data:`RULED_OUT`
    (both clear 0), else :data:`UNDECIDED`."""
    lows, highs = (interval["low"], interval["question low"]), (interval["high"], interval["question high"])
    if all(v == 0 for v in (*lows, *highs)):  # equal on every resample: a tie is equivalent at any margin
        return EQUIVALENT
    if margin > 0 and all(inside_margin(lo, hi, margin) for lo, hi in zip(lows, highs)):
        return EQUIVALENT
    if all(clears_zero(lo, hi) for lo, hi in zip(lows, highs)):
        return RULED_OUT
    return UNDECIDED


def _budget_decision(at: list[str], fits: Mapping[str, bool], means: pd.Series, keys: Mapping[str, tuple],
                     intervals: _Intervals, margins: Sequence[float]) -> dict:
    """One budget: leader (ties to the simplest), intervals against it, and per margin each word and the pick."""
    here = sorted([n for n in at if fits[n]], key=lambda n: keys[n])
    if not here:
        return {}
    best = max(means[n] for n in here)
    leader = next(n for n in here if means[n] == best)
    found = {n: intervals(leader, n) for n in here if n != leader}
    words = {m: {leader: LEADER, **{n: word(found[n], m) for n in found}} for m in margins}
    picks = {m: min([n for n in here if words[m][n] in (LEADER, EQUIVALENT)], key=lambda n: keys[n])
             for m in margins}
    return {"leader": leader, "compared": here, "intervals": found, "words": words, "picks": picks}


def _budget_rule(decisions: Mapping[int, dict], intervals: _Intervals, margin: float) -> dict:
    """Per budget (ascending) with a pick: whether it settles (equivalent to every larger budget's
    leader), whether a rejection is decided, and the least favourable comparison; the recommended budget."""
    budgets = [b for b in sorted(decisions) if decisions[b]]
    out = {}
    for i, b in enumerate(budgets):
        pick = decisions[b]["picks"][margin]
        larger = [(B, intervals(decisions[B]["leader"], pick)) for B in budgets[i + 1:]
                  if decisions[B]["leader"] != pick]
        worst = max(larger, key=lambda item: item[1]["high"], default=None)
        words = [word(iv, margin) for _, iv in larger]
        out[b] = {"settles": all(w == EQUIVALENT for w in words), "rejected decidedly": RULED_OUT in words,
                  "worst": worst}
    recommended = next((b for b in budgets if out[b]["settles"]), budgets[-1] if budgets else None)
    return {"steps": out, "recommended": recommended}


def _setting_verdict(decisions: Mapping[int, dict], rule: dict, means: pd.Series, margin: float) -> str:
    chosen = rule["recommended"]
    here = decisions[chosen]
    if means[here["leader"]] < FLOOR:
        return BELOW_FLOOR
    undecided = any(w == UNDECIDED for w in here["words"][margin].values())
    unsettled = any(not rule["steps"][b]["rejected decidedly"] for b in rule["steps"] if b < chosen)
    return UNDECIDED if undecided or unsettled else DECIDED


def _gains(decisions: Mapping[int, dict], intervals: _Intervals) -> dict[str, dict]:
    """On each budget's leader: the next budget's leader minus it (the gain per doubling)."""
    budgets = [b for b in sorted(decisions) if decisions[b]]
    out = {}
    for b, nxt in zip(budgets, budgets[1:]):
        lead, following = decisions[b]["leader"], decisions[nxt]["leader"]
        iv = intervals(following, lead) if following != lead else {
            "diff": 0.0, "low": 0.0, "high": 0.0, "question low": 0.0, "question high": 0.0}
        out[lead] = {"next budget": int(nxt), "next leader": following.rsplit("@", 1)[0], "gain": iv["diff"],
                     "gain low": iv["low"], "gain high": iv["high"], "gain question low": iv["question low"],
                     "gain question high": iv["question high"]}
    return out


def setting_table(budgets: pd.DataFrame, fixed: pd.DataFrame | None, facts: pd.DataFrame | None, k: int,
                  resamples: int, seed: int, label_of: Callable[[str, int, int, int], str] | None = None,
                  source: str = "pool", margin: float = DEFAULT_MARGIN, measure: str | None = None,
                  strategies: Sequence[str] | None = None, embeds: Callable[[str], bool] | None = None,
                  label: Callable[[str], str] | None = None,
                  simple: Callable[[str, float], tuple] | None = None) -> pd.DataFrame:
    """The long table: per setting one row per (strategy, budget) (module docstring). ``label_of``
    (corpus, questions scored, documents, questions in all) names the sample; ``measure`` overrides the corpus's declared
    one (chunklab-own); ``strategies`` replaces the pool (chunklab-own's candidates, in its order);
    ``embeds(retriever)`` whether a setting's retriever embeds chunks (its window share is shown);
    ``label`` and ``simple`` (candidate, tokens per context) name and order candidates that are not
    pool strategies (chunklab-own's overall scope: a strategy under a retriever)."""
    from chunklab_core.chunking import strategy_label
    from chunklab_core.retrieval.registry import needs_model

    strategy_label = label or strategy_label
    simple = simple or simplicity
    embeds = embeds or needs_model
    margins = margins_of(margin)
    margin = round(margin, 6)  # δ as the margins hold it
    rows = []
    for (corpus, retriever, model), cell in budgets.groupby(SETTING, sort=False):
        chosen_measure = measure or measure_of(corpus)
        value, other = COLUMNS[chosen_measure], COLUMNS["span" if chosen_measure == "containment" else "containment"]
        present = ([s for s in strategies if s in set(cell["strategy"])] if strategies is not None
                   else candidates(corpus, retriever, model, cell["strategy"].unique()))
        cell = cell[cell["strategy"].isin(present)]
        cell = cell.assign(candidate=[candidate_name(s, b) for s, b in zip(cell["strategy"], cell["budget"])])
        wide = cell.pivot_table(index="qid", columns="candidate", values=value).dropna()
        budget_list = [int(b) for b in sorted(cell["budget"].unique())]
        names = [n for n in (candidate_name(s, b) for b in budget_list for s in present) if n in wide.columns]
        if len(names) < 2 or wide.empty:
            continue
        wide = wide[names]
        documents = (cell.drop_duplicates("qid").set_index("qid")["doc_id"] if "doc_id" in cell else None)
        clusters = documents.reindex(wide.index).to_numpy() if documents is not None else None
        if clusters is not None and len(np.unique(clusters)) < 2:  # one document: only the question design exists
            clusters = None
        read = cell[cell["qid"].isin(wide.index)]
        grouped = read.groupby("candidate")
        means = grouped[[value, other, "tokens_used", "depth_binds"]].mean()
        sums = grouped[["tokens_used", "contexts_read"]].sum()
        fits = read.assign(fits=read["contexts_read"] > 0).groupby("candidate")["fits"].mean()
        per_context = {n: float(sums.loc[n, "tokens_used"] / sums.loc[n, "contexts_read"])
                       if sums.loc[n, "contexts_read"] else float("nan") for n in names}
        keys = {n: simple(n.rsplit("@", 1)[0], per_context[n]) for n in names}
        intervals = _Intervals(wide, clusters, resamples, seed)
        decisions = {b: _budget_decision([n for n in names if int(n.rsplit("@", 1)[1]) == b],
                                         {n: float(fits[n]) >= FIT_SHARE for n in names}, means[value], keys,
                                         intervals, margins) for b in budget_list}
        rules = {m: _budget_rule(decisions, intervals, m) for m in margins}
        verdicts = {m: _setting_verdict(decisions, rules[m], means[value], m) for m in margins}
        gains = _gains(decisions, intervals)
        sec = None
        if fixed is not None:
            here = fixed[(fixed["corpus"] == corpus) & (fixed["retriever"] == retriever) & (fixed["model"] == model)]
            sec = here[here["qid"].isin(wide.index)].groupby("strategy")[
                [f"recall@{k}", f"token_recall@{k}", f"tokens@{k}"]].mean()
        n_docs = len(np.unique(clusters)) if clusters is not None else len(wide)
        sample = label_of(corpus, len(wide), n_docs, cell["qid"].nunique()) if label_of is not None else corpus
        design = design_of(clusters)
        for name in names:
            strategy, budget = name.rsplit("@", 1)
            budget = int(budget)
            d = decisions[budget]
            fact = None
            if facts is not None:
                match = facts[(facts["corpus"] == corpus) & (facts["strategy"] == strategy)]
                fact = match.iloc[0] if len(match) else None
            row = {"sample": sample, "corpus": corpus, "retriever": retriever, "model": model, "strategy": strategy,
                   "label": strategy_label(strategy), "library": strategy in LIBRARY,
                   "what it is": LIBRARY.get(strategy, "series"), "budget": budget,
                   "measure": MEASURE_NAMES[chosen_measure], "score": float(means.loc[name, value]),
                   "other measure": float(means.loc[name, other]),
                   "tokens read": float(means.loc[name, "tokens_used"]), "tokens per context": per_context[name],
                   "fits": float(fits[name]), "depth binds": float(means.loc[name, "depth_binds"])}
            row.update(_verdict_columns(name, d, design, wide, strategy_label))
            for m in margins:
                rule = rules[m]
                row[margin_column("decision", m)] = (d["words"][m].get(name, DOES_NOT_FIT) if d else DOES_NOT_FIT)
                row[margin_column("pick", m)] = bool(d) and d["picks"][m] == name
                row[margin_column("recommended", m)] = bool(d) and rule["recommended"] == budget and d["picks"][m] == name
                row[margin_column("setting verdict", m)] = verdicts[m]
            row.update(_pick_columns(name, d, rules[margin], budget, margin, decisions))
            row.update(gains.get(name, {}))
            row.update({"questions": len(wide), "documents": n_docs, "design": design,
                        "median chunk tokens": float(fact["median chunk tokens"]) if fact is not None else float("nan"),
                        "beyond window": (float(fact["beyond window"]) if fact is not None and embeds(retriever)
                                          else float("nan")),
                        "window": (int(fact["window"]) if fact is not None and embeds(retriever) and "window" in fact
                                   and not pd.isna(fact["window"]) else float("nan"))})
            if sec is not None and strategy in sec.index:
                row.update({c: float(sec.loc[strategy, c]) for c in sec.columns})
            row.update({"source": source, "key": f"corpus={corpus}; retriever={retriever}; strategy={strategy}; "
                                                 f"budget={budget}"})
            rows.append(row)
    return pd.DataFrame(rows)


def _verdict_columns(name: str, d: dict, design: str, wide: pd.DataFrame, label) -> dict:
    """The verdict of the series' one rule (ruled out / cannot be ruled out / winner) beside the intervals."""
    if not d or name not in d["compared"]:
        return {"leader": "", "leader − this": float("nan"), "low": float("nan"), "high": float("nan"),
                "question low": float("nan"), "question high": float("nan"), "verdict": DOES_NOT_FIT,
                "document verdict": DOES_NOT_FIT, "question verdict": DOES_NOT_FIT, "designs agree": True,
                "ties leader": False, "ties": "", "design": ""}
    leader = d["leader"]
    others = d["intervals"]
    ruled = {n: clears_zero(iv["low"], iv["high"]) and clears_zero(iv["question low"], iv["question high"])
             for n, iv in others.items()}
    ties = [t for t in d["compared"] if t != name and np.array_equal(wide[t].to_numpy(), wide[name].to_numpy())]
    base = {"leader": leader.rsplit("@", 1)[0], "design": design,
            "ties": LIST_SEPARATOR.join(label(t.rsplit("@", 1)[0]) for t in ties)}
    if name == leader:
        word_ = claims.WINNER if others and all(ruled.values()) else claims.NOT_RULED_OUT
        return {**base, "leader − this": 0.0, "low": float("nan"), "high": float("nan"),
                "question low": float("nan"), "question high": float("nan"), "verdict": word_,
                "document verdict": word_, "question verdict": word_, "designs agree": True, "ties leader": False}
    iv = others[name]
    document = claims.RULED_OUT if clears_zero(iv["low"], iv["high"]) else claims.NOT_RULED_OUT
    question = claims.RULED_OUT if clears_zero(iv["question low"], iv["question high"]) else claims.NOT_RULED_OUT
    return {**base, "leader − this": iv["diff"], "low": iv["low"], "high": iv["high"],
            "question low": iv["question low"], "question high": iv["question high"],
            "verdict": claims.RULED_OUT if ruled[name] else claims.NOT_RULED_OUT,
            "document verdict": document, "question verdict": question, "designs agree": document == question,
            "ties leader": np.array_equal(wide[leader].to_numpy(), wide[name].to_numpy())}


def _pick_columns(name: str, d: dict, rule: dict, budget: int, margin: float, decisions: Mapping[int, dict]) -> dict:
    """On the pick of a budget at margin δ: whether it settles the budget rule and its least favourable comparison."""
    nan = float("nan")
    empty = {"settles": False, "rejected decidedly": False, "against budget": nan, "against leader": "",
             "against": nan, "against low": nan, "against high": nan, "against question low": nan,
             "against question high": nan}
    if not d or d["picks"][margin] != name or budget not in rule["steps"]:
        return empty
    step = rule["steps"][budget]
    out = {**empty, "settles": step["settles"], "rejected decidedly": step["rejected decidedly"]}
    if step["worst"] is not None:
        other, iv = step["worst"]
        out.update({"against budget": int(other), "against leader": decisions[other]["leader"].rsplit("@", 1)[0],
                    "against": iv["diff"], "against low": iv["low"],
                    "against high": iv["high"], "against question low": iv["question low"],
                    "against question high": iv["question high"]})
    return out
