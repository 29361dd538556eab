"""Post 00's sentences: the templates of ``prose.md`` filled with the guide's and findings' values.

Handles: :func:`guide_text` (per kind of document and retriever, what to use; the multiplicity
sentence), :func:`counts_text` (a comparison-count table as one bullet per group: post 02's
retriever and model pairs, post 07's stage, depth and scorer comparisons), :func:`judge_text`
(every judge of post 06, and PPI beside the grades-only estimate), :func:`findings_text` and
:func:`limitations`. Python only picks the template and formats the values
(:mod:`chunklab_core.core.numbers`); every sentence is in ``prose.md``.

Not handled: the tables (``tables``, ``findings``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from chunklab_core.chunking import STRATEGIES, strategy_label
from chunklab_core.core import numbers
from chunklab_core.core.csv_cells import read_frame
from chunklab_core.reports.samples import DATASETS
from chunklab_core.reports.templates import Templates
from chunklab_core.stats import claims
from chunklab_core.reports.post00.tables import (DECIDED, KINDS, NO_DIFFERENCE, PAIRED_TABLES, POWER, judge_trust,
                                                 series_comparisons)
from chunklab_core.reports.post00.sources import read_table
from chunklab_core.decision.engine import DECIDED as SETTING_DECIDED

__all__ = ["PROSE", "guide_text", "cost_text", "counts_text", "retriever_text", "model_text", "rerank_text", "judge_text", "findings_text", "limitations", "guide_view"]

PROSE = Templates(__file__, "prose.md")
AUDIT_SHEET = "audit/post05_v2_sheet.csv"


def _tokens(value: float, column: str) -> str:
    return f"{numbers.number(value, 0)} {column}"


MIN_SAVING = 0.10  # a cheaper candidate saving less than this share of the leader's tokens is not worth naming


def _choice(row: pd.Series, tokens: str) -> str:
    if row["leader verdict"] == claims.WINNER:
        return PROSE.fill("guide.choice.winner", leader=row["leader"])
    candidates = numbers.count(row["candidates"], "strategy", "strategies")
    if row["cheapest"] == row["leader"]:
        return PROSE.fill("guide.choice.leader_cheapest", leader=row["leader"], candidates=candidates,
                          tokens=_tokens(row[f"cheapest {tokens}"], tokens))
    values = dict(candidates=candidates, cheapest=row["cheapest"], tokens=_tokens(row[f"cheapest {tokens}"], tokens),
                  leader=row["leader"], leader_tokens=_tokens(row[f"leader {tokens}"], tokens))
    if row["leader − cheapest"] == 0 and row["low"] == 0 and row["high"] == 0:
        return PROSE.fill("guide.choice.identical", metric=row["metric"], **values)
    difference = numbers.estimate(row["leader − cheapest"], row["low"], row["high"], signed=True)
    saving = numbers.number(row["saving"], 0, scale="percent")
    if row["saving"] < MIN_SAVING:
        return PROSE.fill("guide.choice.cheaper_small", saving=saving, difference=difference, **values)
    decide = row["what would decide"]
    power = numbers.number(POWER, 0, scale="percent")
    return PROSE.fill("guide.choice.cheaper", saving=saving, difference=difference, verdict=row["verdict"],
                      decide=PROSE.fill("guide.choice.decide", needed=decide, power=power)
                      if decide not in (DECIDED, NO_DIFFERENCE) else "", **values)


def _caveats(row: pd.Series) -> str:
    subject = "the leader is" if row["cheapest"] == row["leader"] else "the cheaper one"
    verdict = row["question verdict"]
    if row["cheapest"] == row["leader"]:
        verdict = row["leader verdict"] if verdict == row["leader verdict"] else verdict
    parts = []
    if row["few documents"]:
        parts.append(PROSE.fill("guide.caveat.few", documents=numbers.count(row["documents"], "document"),
                                subject=subject, question_verdict=verdict))
    elif row["at the edge"]:
        parts.append(PROSE.fill("guide.caveat.edge", subject=subject, question_verdict=verdict))
    return "".join(" " + p for p in parts)


def _truncation(row: pd.Series) -> str:
    share = float(row["leader truncated"])
    if np.isnan(share) or share <= 0.5:
        return ""
    return " " + PROSE.fill("guide.truncation", share=numbers.number(share, 0, scale="percent"), model=row["model"])


def guide_text(guide: pd.DataFrame, tests: int, separated: int, winners: int) -> str:
    """The reading of :func:`tables.chunking_guide`'s table, one bullet per row, and multiplicity."""
    tokens = next(c for c in guide.columns if c.startswith("cheapest tokens@")).removeprefix("cheapest ")
    winner_rows = guide[guide["leader verdict"] == claims.WINNER]
    undecided = (~guide["what would decide"].isin([DECIDED, NO_DIFFERENCE])).any()
    metric = guide["metric"].iloc[0]
    parts = [PROSE.fill("guide.reading", cells=numbers.count(len(guide), "setting"), metric=metric,
                        winners=(numbers.count(len(winner_rows), "row") + " (" + "; ".join(
                            f"{r['leader']} on {r['kind of document']} under {r['retriever']}"
                            for _, r in winner_rows.iterrows()) + ")") if len(winner_rows) else "no row",
                        tokens=tokens, power=numbers.number(POWER, 0, scale="percent"),
                        decide_note=PROSE.fill("guide.decide_note.some" if undecided else "guide.decide_note.none"))]
    parts.append("\n".join(PROSE.fill("guide.kind", kind=r["kind of document"], sample=r["sample"],
                                      retriever=r["retriever"], choice=_choice(r, tokens), metric=r["metric"],
                                      level=numbers.estimate(r[f"leader {r['metric']}"], r["leader low"],
                                                             r["leader high"]),
                                      truncation=_truncation(r), caveats=_caveats(r))
                           for _, r in guide.iterrows()))
    parts.append(PROSE.fill("guide.multiplicity", multiplicity=claims.multiplicity_text(tests, separated),
                            tests=tests, separated=separated,
                            winners=numbers.count(winners, "winner")))
    return "\n\n".join(parts)


def cost_text(table: pd.DataFrame, metric: str) -> str:
    """Post 02's balanced verdicts at one penalty (:func:`tables.cost_aware_guide`), one bullet per corpus."""
    if table.empty:
        raise ValueError("no balanced verdicts to report")
    bullets = [PROSE.fill("cost.row", kind=r["kind of document"], sample=r["sample"], leader=r["leader"],
                          value=numbers.number(r["balanced"], 3), verdict=r["verdict"],
                          kept=r["cannot be ruled out"], settings=r["settings"],
                          question_verdict=r["question verdict"]) for _, r in table.iterrows()]
    return (PROSE.fill("cost.reading", metric=metric, penalty=numbers.number(table["lambda"].iloc[0], 2))
            + "\n\n" + "\n".join(bullets))


def _spread(low: float, high: float) -> str:
    return numbers.span(low, high, 3, signed=True)


def counts_text(counts: pd.DataFrame, heading: str, where: list[str], comparison, sides, **values) -> str:
    """One bullet per row of :func:`tables.comparison_counts` under the template ``heading``.

    ``where``: the columns that name the group; ``comparison(row)`` its wording and ``sides(row)``
    the names of the two sides (a, b).
    """
    if counts.empty:
        raise ValueError(f"no comparison to report under {heading!r}")
    bullets = []
    for _, r in counts.iterrows():
        a, b = sides(r)
        place = ", ".join(KINDS.get(str(r[c]), str(r[c])) if c == "corpus" else f"depth {r[c]}" if c == "depth"
                          else str(r[c]) for c in where)
        if r["compared"] == 1:
            side = a if r["a ahead"] else b if r["b ahead"] else None
            bullets.append(PROSE.fill("counts.row.one", where=place, comparison=comparison(r),
                                      estimate=numbers.number(r["lowest"], 3, signed=True),
                                      verdict=f"{side} ahead" if side else claims.NOT_TOLD_APART,
                                      questions=numbers.count(r["questions"], "question"), design=r["design"]))
            continue
        one = int(r.get("one design only", 0) or 0)
        bullets.append(PROSE.fill("counts.row", where=place, comparison=comparison(r), a=a, b=b,
                                  a_n=r["a ahead"], b_n=r["b ahead"], told=r[claims.NOT_TOLD_APART],
                                  compared=numbers.count(r["compared"], "comparison"),
                                  spread=_spread(r["lowest"], r["highest"]),
                                  questions=numbers.count(r["questions"], "question"), design=r["design"],
                                  one=PROSE.fill("counts.one", n=one) if one else ""))
    return PROSE.fill(heading, **values) + "\n\n" + "\n".join(bullets)


def _who(data_dir) -> tuple[str, str, int]:
    from chunklab_core.audit.graders import grader_words

    sheet = read_table_any(AUDIT_SHEET, "06", data_dir)
    graded = sheet[sheet["grade"].notna() & (sheet["grade"].astype(str).str.len() > 0)]
    graders = graded[["grader", "grader_kind"]].drop_duplicates().sort_values("grader").reset_index(drop=True)
    words = grader_words(graders)
    kind = ("limits.grader.human" if words.all_human else "limits.grader.mixed" if words.any_human
            else "limits.grader.model")
    return words.who, kind, len(graded)


def read_table_any(name: str, post: str, data_dir) -> pd.DataFrame:
    """A committed file that is not one of ``sources.SOURCES`` (the audit sheet), with the same error."""
    from chunklab_core.core.paths import DATA_DIR
    from chunklab_core.reports.post00.sources import MissingTable

    path = Path(data_dir or DATA_DIR) / name
    if not path.exists():
        raise MissingTable(f"{path} is missing: re-execute post {post} (make notebooks/{post}_*.ipynb), then post 00")
    return read_frame(path)


def judge_text(agreement: pd.DataFrame, accuracy: pd.DataFrame, gaps: pd.Series, data_dir=None) -> str:
    """Every judge of post 06: its weighted κ per scale, its accuracy alone and by the grades, PPI."""
    who, _, _ = _who(data_dir)
    bullets = []
    for judge in dict.fromkeys(agreement["judge"]):
        kappas = "; ".join(PROSE.fill("judge.kappa", estimate=numbers.estimate(r["estimate"], r["low"], r["high"], 2),
                                      scale=r["scale"], verdict=r["verdict"])
                           for _, r in agreement[agreement["judge"] == judge].iterrows())
        rows = accuracy[accuracy["judge"] == judge].set_index("variant")
        strict, lenient = rows.loc["strict"], rows.loc["lenient"]
        bullets.append(PROSE.fill(
            "judge.row", judge=judge, kappas=kappas,
            alone=numbers.estimate(strict["judge alone"], strict["judge alone low"], strict["judge alone high"], 1,
                                   scale="percent"),
            grades=numbers.estimate(strict["by the audit's grades"], strict["grades low"], strict["grades high"], 1,
                                    scale="percent"),
            difference=numbers.estimate(strict["estimate"], strict["low"], strict["high"], 1, True, "points"),
            reading=strict["verdict"],
            lenient=numbers.estimate(lenient["estimate"], lenient["low"], lenient["high"], 1, True, "points"),
            lenient_reading=lenient["verdict"]))
    lenient_gap = float(gaps.get("lenient", np.nan))
    lenient = (PROSE.fill("judge.ppi_lenient_equal") if lenient_gap < 1e-9 else
               PROSE.fill("judge.ppi_lenient", gap=numbers.number(lenient_gap, 1, scale="points")))
    strict_gap = float(gaps["strict"])
    ppi = (PROSE.fill("judge.ppi_equal", lenient=lenient) if strict_gap < 1e-9 else
           PROSE.fill("judge.ppi_differs", gap=numbers.number(strict_gap, 1, scale="points"), lenient=lenient))
    binary = agreement.sort_values("estimate", ascending=False, kind="stable")
    use = judge_use_text(judge_trust(accuracy)) + " " + PROSE.fill("judge.best", best=binary.iloc[0]["judge"])
    return (PROSE.fill("judge.reading", who=who) + "\n\n" + "\n".join(bullets) + "\n\n" + use
            + "\n\n" + ppi)


def judge_use_text(trust: pd.DataFrame) -> str:
    """Which judges can stand in for the audit's grades (:func:`tables.judge_trust`), each branch of
    the rule named with its judges ("none" where a branch holds none) and the margin it uses."""
    from chunklab_core.reports.post00.tables import JUDGE_EQUIVALENT, JUDGE_OFF, JUDGE_UNDECIDED

    def names(verdict: str) -> str:
        rows = trust[trust["verdict"] == verdict]
        return "; ".join(rows["judge"]) or "none"

    undecided = trust[trust["verdict"] == JUDGE_UNDECIDED]
    settle = "; ".join(f"{r['judge']}: " + ("more than 100,000" if r["items to settle"] == float("inf")
                                            else f"about {int(r['items to settle']):,}")
                       for _, r in undecided.iterrows())
    variants = [c for c in trust.columns if c in ("strict", "lenient")]
    margin = float(trust["margin"].iloc[0])
    return PROSE.fill("judge.use", margin=numbers.number(margin, 2), points=numbers.number(100 * margin, 0),
                      variants=" and ".join(variants), equivalent=names(JUDGE_EQUIVALENT), off=names(JUDGE_OFF),
                      undecided=names(JUDGE_UNDECIDED), graded=numbers.count(int(trust["graded"].max()), "item"),
                      settle=" " + PROSE.fill("judge.settle", settle=settle) if len(undecided) else "")


def _spread_n(values) -> str:
    low, high = int(min(values)), int(max(values))
    return str(low) if low == high else f"{low} to {high}"


def _paired(table: pd.DataFrame) -> pd.DataFrame:
    return table[table["finding"].str.contains("−") & table["low"].notna()]


def findings_text(table: pd.DataFrame, below: int = 50) -> str:
    """What the findings table holds, computed from it (counts, separations, small samples)."""
    paired = _paired(table)
    separated = int(sum(claims.excludes_zero(lo, hi) for lo, hi in zip(paired["low"], paired["high"])))
    from chunklab_core.reports.post00.findings import small_rows

    small = small_rows(table, below)
    posts = ", ".join(dict.fromkeys(table["post"]))
    small_text = (PROSE.fill("findings.small", count=numbers.count(len(small), "row"), below=below,
                             range=_spread_n(small["n"]),
                             posts=", ".join(dict.fromkeys(small["post"])))
                  if len(small) else PROSE.fill("findings.no_small", below=below))
    return PROSE.fill("findings.reading", rows=numbers.count(len(table), "row"), posts=f"posts {posts}",
                      separated=separated, paired=len(paired), small=small_text)


def limitations(guide: pd.DataFrame, tests: int, separated: int, data_dir=None) -> list[str]:
    """The series' limitations, each worded from a committed table."""
    who, kind, graded = _who(data_dir)
    checks = read_table("04_checks.csv", data_dir)
    flags = [c for c in checks.columns if not c.endswith("evidence") and checks[c].dtype == bool]
    generated = checks[checks["set"] == "generated"]
    retrieval = read_table("04_retrieval.csv", data_dir)
    sides = np.array([claims.interval_side(lo, hi) for lo, hi in zip(retrieval["low"], retrieval["high"])])
    by_corpus = "; ".join(
        PROSE.fill("limits.generated.corpus", corpus=DATASETS.get(corpus, corpus),
                   up=int((sides[part.index] > 0).sum()), down=int((sides[part.index] < 0).sum()),
                   cells=numbers.count(len(part), "cell"))
        for corpus, part in retrieval.reset_index(drop=True).groupby("corpus", sort=False))
    sizes = "; ".join(dict.fromkeys(f"{r['kind of document']}: {r['sample']}" for _, r in guide.iterrows()))
    return [
        PROSE.fill("limits.grader", graded=numbers.count(graded, "item"), who=who, kind=PROSE.fill(kind)),
        PROSE.fill("limits.samples", sizes=sizes),
        PROSE.fill("limits.generated", flagged=int(generated[flags].any(axis=1).sum()), generated=len(generated),
                   separated=int((sides != 0).sum()), cells=len(retrieval), by_corpus=by_corpus),
        PROSE.fill("limits.answerer"),
        PROSE.fill("limits.multiplicity", multiplicity=claims.multiplicity_text(*series_comparisons(data_dir)),
                   tables=numbers.count(len(PAIRED_TABLES), "paired table")),
    ]


def guide_view(guide: pd.DataFrame) -> pd.DataFrame:
    """The decision guide as a reader scans it: an estimate and its interval in one cell."""
    tokens = next(c for c in guide.columns if c.startswith("cheapest tokens@"))
    return pd.DataFrame({
        "kind of document": guide["kind of document"], "sample": guide["sample"], "retriever": guide["retriever"],
        "cannot be ruled out": guide["cannot be ruled out"], "cheapest of them": guide["cheapest"],
        tokens.removeprefix("cheapest "): guide[tokens].round(0).astype(int),
        "leader − cheapest": [numbers.estimate(d, lo, hi, signed=True)
                              for d, lo, hi in zip(guide["leader − cheapest"], guide["low"], guide["high"])],
        "verdict": guide["verdict"], "resampled": guide["design"], "what would decide": guide["what would decide"],
    })


def _split(row) -> tuple[str, str]:
    a, b = str(row["comparison"]).split(" − ")
    return a, b


def retriever_text(counts: pd.DataFrame, metric: str, pool_table: pd.DataFrame | None = None) -> str:
    """Post 02's retriever pairs (``02_paired_retrievers`` counted per corpus and comparison);
    ``pool_table`` (``02_pool``) names every candidate of the pool, library splitters included,
    more than half of whose chunk word pieces lie beyond the embedding model's window on some kind
    of document (its ``beyond window``)."""
    text = counts_text(counts, "retriever.reading", ["corpus"], lambda r: r["comparison"], _split, metric=metric)
    if pool_table is None or "beyond window" not in pool_table:
        return text
    shares = pool_table.dropna(subset=["beyond window"]).groupby("label", sort=False)["beyond window"].max()
    beyond = [f"{label} ({numbers.number(share, 0, scale='percent')})" for label, share in shares.items() if share > 0.5]
    if not beyond:
        return text
    return text + "\n\n" + PROSE.fill("retriever.truncation", strategies=", ".join(beyond))


def model_text(counts: pd.DataFrame, metric: str) -> str:
    """Post 02's model pairs (``02_models`` counted per corpus, retriever and comparison), each
    model's window in word pieces named (``decision.scores.model_window``)."""
    from chunklab_core.decision.scores import model_window

    if counts.empty:
        return PROSE.fill("model.none")
    models = list(dict.fromkeys(m.strip() for c in counts["comparison"] for m in str(c).split(" − ") if m.strip()))
    windows = ", ".join(f"{m} {model_window(m):,}" for m in models)
    return counts_text(counts, "model.reading", ["corpus", "retriever"], lambda r: r["comparison"], _split,
                       metric=metric, windows=windows)


def rerank_text(stage: pd.DataFrame, depths: pd.DataFrame, slices: pd.DataFrame,
                stage_rows: pd.DataFrame | None = None) -> str:
    """Post 07's stage, depth and scorer comparisons, counted (:func:`tables.comparison_counts`);
    ``stage_rows`` (``07_stage`` itself) names the first stage, strategies, scorers and the tokens read."""
    rows = stage_rows if stage_rows is not None else pd.DataFrame(
        {"first_stage": stage["first_stage"], "strategy": [""] * len(stage), "scorer": stage["scorer"],
         "tokens_read": [np.nan] * len(stage)})
    tokens = rows["tokens_read"].dropna()
    heading = dict(first_stage=", ".join(dict.fromkeys(rows["first_stage"].astype(str))),
                   strategies=", ".join(strategy_label(s) if s in STRATEGIES else str(s)
                                        for s in dict.fromkeys(rows["strategy"]) if s),
                   scorers=", ".join(dict.fromkeys(rows["scorer"].astype(str))),
                   tokens=numbers.span(tokens.min(), tokens.max(), 0) if len(tokens) else "an unrecorded number of")
    parts = [counts_text(stage, "rerank.reading", ["corpus", "first_stage", "scorer", "depth"],
                         lambda r: "reranked − first stage", lambda r: ("reranked", "first stage"), **heading)]
    if len(depths):
        parts.append(counts_text(depths, "rerank.depths", ["corpus", "first_stage", "scorer"],
                                 lambda r: "deepest − shallowest depth", lambda r: ("deeper", "shallower")))
    if len(slices):
        parts.append(counts_text(slices, "rerank.slices", ["corpus"], lambda r: f"{r['a']} − {r['b']}",
                                 lambda r: (r["a"], r["b"])))
    return "\n\n".join(parts)


def pool_guide_text(guide: pd.DataFrame, budgets: pd.DataFrame | None = None,
                    table: pd.DataFrame | None = None, windows: dict | None = None) -> str:
    """The reading of :func:`tables.pool_guide` after its compact table: the counts (decided at δ,
    and at 0, δ/2 and 2δ from ``table``, ``02_pool``, when given), one short sentence per setting
    (:func:`chunklab_core.reports.pool.setting_sentences`, ``compact``) after its kind of document,
    then how to read it (:func:`chunklab_core.reports.pool.rule_text`)."""
    from chunklab_core.reports import pool

    if guide.empty:
        raise ValueError("no pool guide rows to report")
    counts = {m: None for m in (0.0, pool.DEFAULT_MARGIN / 2, pool.DEFAULT_MARGIN * 2)}
    if table is not None:
        found = pool.robustness(table).set_index("margin")["decided"]
        counts = {m: (int(found[m]) if m in found.index else None) for m in counts}
    decided = int((guide["verdict"] == pool.DECIDED).sum())
    below = int((guide["verdict"] == pool.BELOW_FLOOR).sum())

    def told(n):
        return "not computed" if n is None else numbers.count(n, "setting")

    intro = PROSE.fill("pool.reading", settings=len(guide),
                       margin=numbers.number(pool.DEFAULT_MARGIN, 2), decided=decided,
                       undecided=len(guide) - decided - below, below=below, before=told(counts[0.0]),
                       half=numbers.number(pool.DEFAULT_MARGIN / 2, 3), at_half=told(counts[pool.DEFAULT_MARGIN / 2]),
                       double=numbers.number(pool.DEFAULT_MARGIN * 2, 2),
                       at_double=told(counts[pool.DEFAULT_MARGIN * 2]), source="02_pool.csv", guide="00_guide.csv")
    bullets = [PROSE.fill("pool.kind", kind=kind, sentence=sentence)
               for kind, sentence in zip(guide["kind of document"],
                                         pool.setting_sentences(guide, budgets, windows=windows, compact=True))]
    return intro + "\n\n" + "\n".join(bullets) + "\n\n" + pool.rule_text(short=True, guide=guide)


def pool_guide_view(guide: pd.DataFrame, budgets: pd.DataFrame) -> pd.DataFrame:
    """The compact guide (setting, use, tokens, verdict, and the pick at each budget, marked below
    floor where ``budgets``, post 02's per-budget view, says so, as post 02's table is): the long
    table is the CSV."""
    from chunklab_core.reports import pool

    table = pool.compact_guide(guide, budgets).drop(columns=["setting", "use"])
    table["equivalents"] = [len([n for n in str(e).split(pool.LIST_SEPARATOR) if n.strip()]) if isinstance(e, str)
                            else 0 for e in guide["equivalents"]]
    table.insert(0, "retriever", list(guide["retriever"]))
    if "kind of document" in guide:
        table.insert(0, "kind of document", guide["kind of document"].to_numpy())
    return table.rename(columns={"tokens": "budget", "kind of document": "documents"})


def answer(guide: pd.DataFrame, margin: float, model: str, window: int) -> str:
    """The post's answer in a paragraph (under 150 words), counted from the guide (``00_guide``): how many
    settings are decided at the margin, recommend a budget below the largest, and still gain at the largest."""
    budgets = [int(c[3:].replace(",", "")) for c in guide.columns if c.startswith("at ") and c[3:4].isdigit()]
    largest = max(budgets)
    return PROSE.fill("answer", unit="cl100k_base tokens", margin=numbers.number(margin, 2),
                      decided=int((guide["verdict"] == SETTING_DECIDED).sum()),
                      settings=numbers.count(len(guide), "setting"),
                      below=int((pd.to_numeric(guide["tokens"], errors="coerce") < largest).sum()),
                      largest=f"{largest:,}", rising=int(guide["still rising"].astype(str).eq("True").sum()),
                      model=model, window=window)
