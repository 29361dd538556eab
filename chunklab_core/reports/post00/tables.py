"""Post 00's tables: the decision guide per kind of document and retriever, what to use, at what cost, how sure.

Handles, from the tables the posts commit (read through :mod:`.sources`, never recomputed):

- :func:`chunking_guide`: per (corpus, retriever) of post 02's ``02_recall_verdicts``, the
  strategies that cannot be ruled out (leader included), the cheapest of them in mean
  tokens@k (``02_matrix``), its ``leader − strategy`` interval, verdict, n, documents and
  resampling design, and what would decide (:func:`questions_to_decide`);
- :func:`comparison_counts`: a paired table (post 02's retriever and model pairs, post 07's
  stage, depth and scorer comparisons) counted per group by the side its interval excludes 0
  on; a row whose verdict word contradicts its interval is an error, not a count;
- :func:`judge_agreement`, :func:`judge_accuracy`, :func:`ppi_gaps`: every judge of post 06
  (its population-weighted κ against the audit's grades, judge-only minus accuracy by the
  audit's grades, and how far PPI moves from the grades-only estimate);
- :func:`guide_comparisons`: how many paired intervals the guide rests on and how many exclude 0.

Every row that quotes a number carries ``source`` (the table) and ``key`` (the row, by
:func:`.sources.key_text`), so a test finds the cited row by key.

Not handled: the wording (``prose`` and ``prose.md``), the findings of each post (``findings``).
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pandas as pd

from chunklab_core.reports.samples import sample_label
from chunklab_core.retrieval.registry import needs_model, rows_of_model
from chunklab_core.stats import claims
from chunklab_core.stats.bootstrap import questions_for_power
from chunklab_core.reports.post00.sources import key_text, parse_key, read_table, row_by_key

__all__ = ["judge_trust", "JUDGE_EQUIVALENT", "JUDGE_OFF", "JUDGE_UNDECIDED", "pool_guide", "pool_candidates", "KINDS", "DECIDED", "NO_DIFFERENCE", "documents_of", "questions_to_decide", "chunking_guide", "cost_aware_guide", "comparison_counts",
           "judge_agreement", "judge_accuracy", "ppi_gaps", "guide_comparisons", "decision_counts",
           "series_comparisons", "PAIRED_TABLES"]

KINDS = {"squad": "short encyclopaedia passages", "nq": "long web pages", "cuad": "contracts",
         "qasper": "scientific papers", "chroma": "Chroma's mixed corpora", "own": "your documents"}
CAP = 100_000
DECIDED = "—"  # "what would decide" of a row its intervals already decide
NO_DIFFERENCE = "no difference measured"
FEW_DOCUMENTS = 10  # below this many documents a document-clustered interval is a rough guide (stats.clustered)
POWER = 0.80


def documents_of(design: str, questions: int) -> int:
    """Documents behind a resampling design: ``documents (n)`` -> n; ``questions`` (no two questions
    share a document) -> one document per question."""
    found = re.fullmatch(r"documents \((\d+)\)", str(design))
    if found:
        return int(found.group(1))
    if str(design) == "questions":
        return int(questions)
    raise ValueError(f"unknown resampling design {design!r} (expected 'questions' or 'documents (n)')")


def questions_to_decide(n: int, difference: float, low: float, high: float, power: float = 0.80) -> str:
    """What would tell a cheaper candidate from the leader: the questions at which a lead as large
    as measured would exclude 0 with probability ``power`` (``stats.bootstrap.questions_for_power``,
    the interval shrinking like 1/√n), as text; decided cells (an interval that excludes 0, or no
    interval: the leader itself) get ``—``."""
    if any(math.isnan(float(v)) for v in (low, high)) or claims.excludes_zero(low, high):
        return DECIDED
    needed = questions_for_power(int(n), float(difference), (float(low), float(high)), power, cap=CAP)
    if needed is None:
        return (NO_DIFFERENCE if abs(float(difference)) < 1e-9 else f"more than {CAP:,} questions")
    return f"{needed:,} questions"


def _k_of(metric: str) -> int:
    found = re.fullmatch(r"recall@(\d+)", str(metric))
    if not found:
        raise ValueError(f"02_recall_verdicts: metric {metric!r} is not recall@k")
    return int(found.group(1))


def _at_edge(low: float, high: float, digits: int = 3) -> bool:
    """True when an interval touches 0 at the shown precision (``[+0.000, …]``): decided by a hair."""
    return any(not math.isnan(float(v)) and round(float(v), digits) == 0 for v in (low, high))


def chunking_guide(data_dir: Path | None = None, model: str = "all-MiniLM-L6-v2") -> pd.DataFrame:
    """One row per (corpus, retriever): candidates, the cheapest of them, its verdict and interval,
    the leader's own level (``02_matrix``), the verdict the question-level interval gives, and the
    share of the leader's chunks the dense model truncates (``02_chunk_health``)."""
    verdicts = read_table("02_recall_verdicts.csv", data_dir)
    matrix = read_table("02_matrix.csv", data_dir)
    health = read_table("02_chunk_health.csv", data_dir).set_index(["corpus", "strategy"])
    rows = []
    for (corpus, retriever), cell in verdicts.groupby(["corpus", "retriever"], sort=False):
        cell = cell.reset_index(drop=True)
        leader = cell.iloc[0]
        if not (np.isnan(leader["low"]) and leader["leader − strategy"] == 0):
            raise ValueError(f"02_recall_verdicts.csv: the first row of {corpus}/{retriever} is not its leader")
        k = _k_of(leader["metric"])
        tokens, metric = f"tokens@{k}", leader["metric"]
        for column in (tokens, metric, f"{metric}_low", f"{metric}_high"):
            if column not in matrix:
                raise ValueError(f"02_matrix.csv has no column {column} for post 02's {metric}")
        here = rows_of_model(matrix[(matrix["corpus"] == corpus) & (matrix["retriever"] == retriever)],
                             model).set_index("strategy")
        if here.index.duplicated().any():
            raise ValueError(f"02_matrix.csv: {corpus}/{retriever} has several rows per strategy for {model}")
        missing = sorted(set(cell["strategy"]) - set(here.index))
        if missing:
            raise ValueError(f"02_matrix.csv has no {corpus}/{retriever} row for {', '.join(missing)}")
        kept = cell[cell["verdict"] != claims.RULED_OUT].copy()
        kept["tokens"] = kept["strategy"].map(here[tokens])
        cheapest = kept.sort_values(["tokens", "leader − strategy"], kind="stable").iloc[0]
        label = here["label"]
        n = int(leader["questions"])
        best = here.loc[leader["strategy"]]
        truncated = (float(health.loc[(corpus, leader["strategy"]), "share truncated"])
                     if needs_model(retriever) and (corpus, leader["strategy"]) in health.index else float("nan"))
        documents = documents_of(leader["design"], n)
        rows.append({
            "kind of document": KINDS.get(corpus, corpus), "corpus": corpus,
            "sample": sample_label(corpus, n, documents),
            "retriever": retriever, "model": best["model"],
            "leader": label[leader["strategy"]], "leader verdict": leader["verdict"],
            f"leader {metric}": float(best[metric]), "leader low": float(best[f"{metric}_low"]),
            "leader high": float(best[f"{metric}_high"]), "leader truncated": truncated,
            "cannot be ruled out": ", ".join(label[s] for s in kept["strategy"]),
            "candidates": len(kept), "strategies": len(cell),
            "cheapest": label[cheapest["strategy"]], f"cheapest {tokens}": float(cheapest["tokens"]),
            f"leader {tokens}": float(best[tokens]),
            "saving": 1.0 - float(cheapest["tokens"]) / float(best[tokens]) if float(best[tokens]) else 0.0,
            "leader − cheapest": float(cheapest["leader − strategy"]),
            "low": float(cheapest["low"]), "high": float(cheapest["high"]), "verdict": cheapest["verdict"],
            "question verdict": cheapest["question verdict"],
            "at the edge": _at_edge(cheapest["low"], cheapest["high"]),
            "few documents": documents < FEW_DOCUMENTS and leader["design"] != "questions",
            "metric": metric, "questions": n, "documents": documents, "design": leader["design"],
            "what would decide": questions_to_decide(n, cheapest["leader − strategy"], cheapest["low"],
                                                     cheapest["high"]),
            "source": "02_recall_verdicts.csv",
            "key": key_text(corpus=corpus, retriever=retriever, strategy=cheapest["strategy"]),
        })
    return pd.DataFrame(rows)


def cost_aware_guide(data_dir: Path | None = None, penalty: float = 0.05) -> pd.DataFrame:
    """Per corpus, post 02's balanced verdicts (recall minus ``penalty`` times tokens over the
    cheapest cell's, every strategy × retriever together) at one penalty: the leader, its verdict,
    how many settings cannot be ruled out, and the question-level verdict beside."""
    table = read_table("02_balanced_verdicts.csv", data_dir)
    here = table[np.isclose(table["lambda"], penalty)]
    if here.empty:
        raise ValueError(f"02_balanced_verdicts.csv has no rows at lambda {penalty}; "
                         f"it has {sorted(table['lambda'].unique())}")
    rows = []
    for corpus, cell in here.groupby("corpus", sort=False):
        cell = cell.reset_index(drop=True)
        leader = cell.iloc[0]
        kept = cell[cell["verdict"] != claims.RULED_OUT]
        n = int(leader["questions"])
        rows.append({"kind of document": KINDS.get(corpus, corpus), "corpus": corpus,
                     "sample": sample_label(corpus, n, documents_of(leader["design"], n)),
                     "leader": leader["strategy"], "balanced": float(leader["mean"]), "verdict": leader["verdict"],
                     "question verdict": leader["question verdict"], "lambda": float(leader["lambda"]),
                     "cannot be ruled out": len(kept), "settings": len(cell), "questions": n,
                     "design": leader["design"], "source": "02_balanced_verdicts.csv",
                     "key": key_text(corpus=corpus, strategy=leader["strategy"], **{"lambda": leader["lambda"]})})
    return pd.DataFrame(rows)


def guide_comparisons(data_dir: Path | None = None) -> tuple[int, int, int]:
    """(paired intervals behind the chunking guide, how many exclude 0, cells with a winner)."""
    verdicts = read_table("02_recall_verdicts.csv", data_dir)
    paired = verdicts[verdicts["low"].notna()]
    separated = int(sum(claims.excludes_zero(lo, hi) for lo, hi in zip(paired["low"], paired["high"])))
    winners = int((verdicts["verdict"] == claims.WINNER).sum())
    return len(paired), separated, winners


# The paired tables post 00 reads: (table, low column, high column); a row without an interval is a leader.
PAIRED_TABLES = (("01_full_set_verdicts.csv", "low", "high"), ("02_recall_verdicts.csv", "low", "high"),
                 ("02_balanced_verdicts.csv", "low", "high"), ("02_paired_retrievers.csv", "low", "high"),
                 ("02_models.csv", "low", "high"), ("03_paired_vs_leader.csv", "low", "high"),
                 ("04_retrieval.csv", "low", "high"), ("05_strategy_differences.csv", "low", "high"),
                 ("06_paired.csv", "low", "high"), ("07_stage.csv", "d_ndcg_low", "d_ndcg_high"),
                 ("07_depths.csv", "low", "high"), ("07_slice_comparisons.csv", "low", "high"),
                 ("02_pool.csv", "low", "high"), ("02_pool.csv", "gain low", "gain high"),
                 ("08_neighbours.csv", "low", "high"),
                 ("08_llm_pairs.csv", "low", "high"))


def series_comparisons(data_dir: Path | None = None) -> tuple[int, int]:
    """(paired intervals in every paired table post 00 reads, how many exclude 0)."""
    tests = separated = 0
    for name, low, high in PAIRED_TABLES:
        table = read_table(name, data_dir)
        paired = table[table[low].notna() & table[high].notna()]
        tests += len(paired)
        separated += int(sum(claims.excludes_zero(lo, hi) for lo, hi in zip(paired[low], paired[high])))
    return tests, separated


def comparison_counts(name: str, by: list[str], estimate: str = "difference", low: str = "low",
                      high: str = "high", data_dir: Path | None = None) -> pd.DataFrame:
    """Per group of the paired table ``name``: how many intervals exclude 0 above (``a ahead``),
    below (``b ahead``) or contain it, the range of the estimates and the questions behind them.
    Where the table has the question-level interval beside the document-resampled one, a
    comparison is counted as separated only when both designs put it on the same side; those
    separated under one design only are counted as not told apart (``one design only``)."""
    table = read_table(name, data_dir)
    sides = np.array([claims.interval_side(lo, hi) for lo, hi in zip(table[low], table[high])])
    if "verdict" in table:
        told = (table["verdict"] == claims.NOT_TOLD_APART).to_numpy()
        wrong = told != (sides == 0)
        if wrong.any():
            first = table[wrong].iloc[0]
            raise ValueError(f"{name}: verdict {first['verdict']!r} contradicts its interval "
                             f"[{first[low]}, {first[high]}] ({key_text(**{c: first[c] for c in by})})")
    one_design = np.zeros(len(table), dtype=bool)
    if f"question {low}" in table and f"question {high}" in table:  # one rule for both designs (post 08, section 2)
        question = np.array([claims.interval_side(lo, hi) for lo, hi in zip(table[f"question {low}"],
                                                                            table[f"question {high}"])])
        one_design = (sides != 0) & (question != sides)
        sides = np.where(one_design, 0, sides)
    table = table.assign(_side=sides, _one=one_design)
    rows = []
    for group, part in table.groupby(by, sort=False):
        group = group if isinstance(group, tuple) else (group,)
        rows.append({**dict(zip(by, group)), "compared": len(part), "a ahead": int((part["_side"] > 0).sum()),
                     "b ahead": int((part["_side"] < 0).sum()), claims.NOT_TOLD_APART: int((part["_side"] == 0).sum()),
                     "one design only": int(part["_one"].sum()),
                     "lowest": float(part[estimate].min()), "highest": float(part[estimate].max()),
                     "questions": int(part["questions"].max()), "design": ", ".join(dict.fromkeys(part["design"])),
                     "source": name, "key": key_text(**dict(zip(by, group)))})
    return pd.DataFrame(rows)


def judge_agreement(data_dir: Path | None = None) -> pd.DataFrame:
    """Every judge and scale of ``06_agreement``: κ against the audit's grades weighted to the
    population (post 06's first figure), the sample's κ beside it, and whether it is above chance."""
    table = read_table("06_agreement.csv", data_dir)
    rows = []
    for _, r in table.iterrows():
        side = claims.interval_side(r["weighted kappa low"], r["weighted kappa high"])
        rows.append({"judge": r["judge"], "scale": r["scale"], "against": r["against"], "graded": int(r["graded"]),
                     "estimate": r["weighted kappa"], "low": r["weighted kappa low"], "high": r["weighted kappa high"],
                     "sample kappa": r["kappa"], "sample low": r["kappa low"], "sample high": r["kappa high"],
                     "verdict": "above chance" if side > 0 else "not above chance",
                     "source": "06_agreement.csv", "key": key_text(judge=r["judge"], scale=r["scale"])})
    return pd.DataFrame(rows)


def judge_accuracy(data_dir: Path | None = None) -> pd.DataFrame:
    """Every judge and variant of ``06_paired`` (judge-only minus accuracy by the audit's grades,
    paired on the graded items, with post 06's reading), with both accuracies of ``06_accuracy``."""
    paired = read_table("06_paired.csv", data_dir)
    accuracy = read_table("06_accuracy.csv", data_dir).set_index(["judge", "variant", "estimator"])
    rows = []
    for _, r in paired.iterrows():
        alone = accuracy.loc[(r["judge"], r["variant"], "judge only")]
        grades = accuracy.loc[(r["judge"], r["variant"], "grades only")]
        rows.append({"judge": r["judge"], "variant": r["variant"], "graded": int(r["graded"]),
                     "population": int(alone["population"]), "judge alone": float(alone["accuracy"]),
                     "judge alone low": float(alone["low"]), "judge alone high": float(alone["high"]),
                     "by the audit's grades": float(grades["accuracy"]), "grades low": float(grades["low"]),
                     "grades high": float(grades["high"]), "estimate": r["difference"], "low": r["low"],
                     "high": r["high"], "verdict": r["reading"], "source": "06_paired.csv",
                     "key": key_text(judge=r["judge"], variant=r["variant"])})
    return pd.DataFrame(rows)


JUDGE_EQUIVALENT, JUDGE_OFF, JUDGE_UNDECIDED = "equivalent to the grades", "off the grades", "undecided"


def judge_trust(accuracy: pd.DataFrame, margin: float | None = None) -> pd.DataFrame:
    """Which judges post 00 says can stand in for the audit's grades, by the series' one rule: the
    paired interval (``claims.interval_side``) and the declared margin δ (``decision.margin``).

    Per judge of :func:`judge_accuracy`, under every scoring variant, the paired 95% interval of
    judge-only accuracy minus accuracy by the audit's grades is read as: **equivalent** when it lies
    inside ±δ (two one-sided tests, ``decision.margin.inside_margin``), **off** when it excludes 0
    (the judge alone counts too many or too few answers correct), else **undecided**. A judge is
    ``equivalent to the grades`` only when every variant is equivalent, ``off the grades`` when any
    variant is off, else ``undecided`` with the graded items that would settle its slowest variant
    at ±δ (``decision.margin.questions_to_settle``, the spread per item held at what was measured)."""
    from chunklab_core.decision.margin import DEFAULT_MARGIN, inside_margin, questions_to_settle

    margin = DEFAULT_MARGIN if margin is None else margin
    rows = []
    for judge, part in accuracy.groupby("judge", sort=False):
        readings, needed = {}, []
        for _, r in part.iterrows():
            if inside_margin(r["low"], r["high"], margin):
                readings[r["variant"]] = JUDGE_EQUIVALENT
            elif claims.excludes_zero(r["low"], r["high"]):
                readings[r["variant"]] = JUDGE_OFF
            else:
                readings[r["variant"]] = JUDGE_UNDECIDED
                needed.append(questions_to_settle(int(r["graded"]), abs(float(r["estimate"])), float(r["low"]),
                                                  float(r["high"]), margin))
        verdict = (JUDGE_OFF if JUDGE_OFF in readings.values() else
                   JUDGE_EQUIVALENT if set(readings.values()) == {JUDGE_EQUIVALENT} else JUDGE_UNDECIDED)
        settle = (None if verdict != JUDGE_UNDECIDED else
                  float("inf") if any(n is None for n in needed) else max(needed))
        rows.append({"judge": judge, "verdict": verdict, **{f"{v}": w for v, w in readings.items()},
                     "graded": int(part["graded"].max()), "margin": margin, "items to settle": settle,
                     "source": "06_paired.csv", "key": key_text(judge=judge)})
    return pd.DataFrame(rows)


def ppi_gaps(data_dir: Path | None = None) -> pd.Series:
    """Per variant: the largest |PPI − grades only| accuracy over the judges of ``06_accuracy``."""
    table = read_table("06_accuracy.csv", data_dir)
    wide = table.pivot_table(index=["variant", "judge"], columns="estimator", values="accuracy", aggfunc="first")
    for needed in ("grades only", "PPI (judge + grades)"):
        if needed not in wide:
            raise ValueError(f"06_accuracy.csv has no {needed!r} rows: re-execute post 06")
    gap = (wide["PPI (judge + grades)"] - wide["grades only"]).abs()
    return gap.groupby(level="variant", sort=False).max()


def decision_counts(data_dir: Path | None = None) -> dict[str, pd.DataFrame]:
    """The paired tables of the guide's later questions, counted: post 02's retriever and model
    pairs, post 07's stage, depth and scorer comparisons (:func:`comparison_counts`)."""
    return {
        "retriever": comparison_counts("02_paired_retrievers.csv", ["corpus", "comparison"], data_dir=data_dir),
        "model": comparison_counts("02_models.csv", ["corpus", "retriever", "comparison"], data_dir=data_dir),
        "stage": comparison_counts("07_stage.csv", ["corpus", "first_stage", "scorer", "depth"], "d_ndcg",
                                   "d_ndcg_low", "d_ndcg_high", data_dir),
        "depths": comparison_counts("07_depths.csv", ["corpus", "first_stage", "scorer"], data_dir=data_dir),
        "slices": comparison_counts("07_slice_comparisons.csv", ["corpus", "a", "b"], data_dir=data_dir),
    }


def pool_guide(data_dir: Path | None = None) -> pd.DataFrame:
    """Post 02's recommendation per (corpus, retriever) at matched cost (``02_pool_guide``, by
    :func:`chunklab_core.reports.pool.setting_guide` over the one candidate pool), each row checked
    against the ``02_pool`` row its key cites (strategy, budget, score) and named by its kind of
    document; ``source`` and ``key`` cite that row."""
    guide = read_table("02_pool_guide.csv", data_dir)
    table = read_table("02_pool.csv", data_dir)
    for _, row in guide.iterrows():
        cited = row_by_key(table, parse_key(row["key"]), "02_pool.csv")
        if cited["strategy"] != row["strategy"] or int(cited["budget"]) != int(row["tokens"]) or not math.isclose(
                float(cited["score"]), float(row["score"]), abs_tol=1e-9):
            raise ValueError(f"02_pool_guide.csv: the row for {row['key']} does not equal its 02_pool.csv row")
    guide = guide.assign(source="02_pool.csv")
    guide.insert(0, "kind of document", guide["corpus"].map(lambda c: KINDS.get(c, c)))
    return guide


def pool_budgets(data_dir: Path | None = None) -> pd.DataFrame:
    """Post 02's pick at each fixed budget per setting (:func:`chunklab_core.reports.pool.budget_guide`
    of ``02_pool``: each candidate compared only with the others at its budget), its rows the
    ``02_pool`` rows they cite by key."""
    from chunklab_core.reports import pool

    return pool.budget_guide(read_table("02_pool.csv", data_dir))


def pool_candidates(data_dir: Path | None = None) -> dict[tuple[str, str, str], list[str]]:
    """Per (corpus, retriever, model) of ``02_pool``: the strategies compared, in table order."""
    table = read_table("02_pool.csv", data_dir)
    return {keys: list(dict.fromkeys(part["strategy"]))
            for keys, part in table.groupby(["corpus", "retriever", "model"], sort=False)}


def model_windows(guide: pd.DataFrame) -> dict[str, int]:
    """Each embedding model of the guide and its window in word pieces (``decision.scores.model_window``),
    named beside a window share."""
    from chunklab_core.decision.scores import model_window
    from chunklab_core.retrieval.registry import uses_no_model

    return {m: model_window(m) for m in dict.fromkeys(guide["model"]) if not uses_no_model(m)}
