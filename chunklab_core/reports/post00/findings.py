"""Post 00's findings table: what each post 01–07 found, each row citing one row of the post's table.

Handles: :func:`findings_table` (rows: post, finding, sample, n, estimate with its 95% interval,
verdict, ``source`` table and ``key`` of the cited row; the estimate, interval and verdict
are the cited row's, never recomputed: a verdict is the post's own word where its table has one,
else the series' :func:`chunklab_core.stats.claims.pair_verdict` of the cited interval),
:data:`READING_ORDER` (every post, 07 included), :func:`posts_with_findings` and
:func:`small_rows` (the rows resting on fewer than ``n`` questions, computed, not listed by post).

Not handled: the decision guide (``tables``), the wording (``prose``).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

from chunklab_core.answers.verdicts import REFERENCE_NAME
from chunklab_core.chunking import strategy_label
from chunklab_core.core import numbers
from chunklab_core.reports import posts
from chunklab_core.reports.samples import DATASETS, sample_label
from chunklab_core.stats import claims
from chunklab_core.reports.post00.tables import documents_of, judge_accuracy, judge_agreement
from chunklab_core.reports.post00.sources import key_text, read_table

__all__ = ["READING_ORDER", "POST_FINDINGS", "post_findings", "reading_order", "findings_table", "findings_view", "posts_with_findings", "small_rows"]

READING_ORDER = posts.reading_order()  # from the one list of posts (reports.posts)
from chunklab_core.reports.templates import Templates

_NOTES = Templates(__file__, "findings.md")


_FINDERS: dict[str, Callable[[Path | None], list[dict]]] = {}


def _finds(key: str):
    """Register a findings function under ``key``: the numbers of the posts it cites first (``"01, 03"``),
    then, for a second function of the same post, what it adds (``"01 full set"``)."""
    def register(func):
        _FINDERS[key] = func
        return func
    return register


def _in_post_order(finders: dict) -> dict:
    """``finders`` ordered by the position of their first post in ``reports.posts.POSTS`` (stable);
    a key naming a post that is not registered is a ``KeyError``."""
    order = [p.number for p in posts.POSTS]
    for key in finders:
        for number in re.findall(r"\b\d\d\b", key):
            posts.post(number)
    return dict(sorted(finders.items(), key=lambda item: order.index(posts.post(item[0][:2]).number)))


def reading_order() -> pd.DataFrame:
    """The order in which to read the posts, and what each one adds."""
    return pd.DataFrame(READING_ORDER, columns=["post", "title", "read it for"])


def _row(post, finding, sample, n, estimate, low, high, verdict, source, key, counts: str = "questions") -> dict:
    """One findings row; ``counts`` says what ``n`` counts (questions, items, passages, strategies)."""
    return {"post": post, "finding": finding, "sample": sample, "n": int(n), "n counts": counts,
            "estimate": float(estimate), "low": float(low), "high": float(high), "verdict": verdict,
            "source": source, "key": key}


def _passages_label(corpus: str, passages: int) -> str:
    return f"{DATASETS.get(corpus, corpus)}, {numbers.count(passages, 'passage')} (a human and a generated question each)"


@_finds('01, 03')
def _post01_03(data_dir) -> list[dict]:
    """Post 01's recall@10 per strategy with articles resampled (post 03's honest interval for
    questions that share articles; post 01's question-resampled interval of the same quantity is
    not repeated), post 03's paired differences and its calibration."""
    clustered = read_table("03_clustered.csv", data_dir)
    rows = []
    n = int(clustered["n_questions"].max())
    label = sample_label("squad", n, int(clustered["n_documents"].max()))
    for _, r in read_table("03_paired_vs_leader.csv", data_dir).iterrows():
        rows.append(_row("03", f"recall@10: {r['strategy']} − {r['minus']} (paired, questions resampled)", label, n,
                         r["difference"], r["low"], r["high"],
                         claims.pair_verdict(r["strategy"], r["minus"], r["low"], r["high"]),
                         "03_paired_vs_leader.csv", key_text(strategy=r["strategy"])))
    for _, r in clustered.iterrows():
        rows.append(_row("03", f"recall@10 of {r['cell']}, articles resampled "
                               f"({numbers.number(r['width_ratio'], 2)}× as wide, worth about "
                               f"{numbers.count(round(r['effective_questions']), 'question')})",
                         sample_label("squad", int(r["n_questions"]), int(r["n_documents"])), r["n_questions"],
                         r["mean"], r["clustered_low"], r["clustered_high"], "—", "03_clustered.csv",
                         key_text(cell=r["cell"])))
    calibration = read_table("03_calibration.csv", data_dir)
    top = calibration[calibration["band"] == calibration["band"].iloc[-1]]
    for _, r in top.iterrows():
        rows.append(_row("03", f"reported P(best) {r['band']} (mean {numbers.number(r['mean_reported'], 2)}): share "
                               f"truly best, simulated rate spread {numbers.number(r['rate spread'], 2)}",
                         "simulated comparisons", r["comparisons"], r["share_correct"], r["ci_low"], r["ci_high"],
                         "overconfident" if r["ci_high"] < r["mean_reported"] else "not shown overconfident",
                         "03_calibration.csv", key_text(**{"rate spread": r["rate spread"], "band": r["band"]})))
    return rows


@_finds('01 full set')
def _post01_full(data_dir) -> list[dict]:
    """Post 01's design on the larger SQuAD sample: the leader's paired interval against each strategy."""
    rows = []
    table = read_table("01_full_set_verdicts.csv", data_dir)
    leader = table["strategy"].iloc[0]
    for _, r in table.iloc[1:].iterrows():
        rows.append(_row("01", f"{r['metric']}: {leader} − {r['strategy']} (paired, {r['design']} resampled)",
                         r["sample"], r["questions"], r["leader − strategy"], r["low"], r["high"], r["verdict"],
                         "01_full_set_verdicts.csv", key_text(strategy=r["strategy"])))
    return rows


@_finds('02')
def _post02(data_dir) -> list[dict]:
    """Post 02's ranking stability: Kendall's τ between two settings' rankings of the same strategies."""
    rows = []
    for _, r in read_table("02_stability.csv", data_dir).iterrows():
        side = claims.interval_side(r["low"], r["high"])
        rows.append(_row("02", f"Kendall's τ of the strategy ranking, {r['setting a']} against {r['setting b']}",
                         f"{numbers.count(r['strategies'], 'strategy', 'strategies')} ranked in both settings",
                         r["strategies"], r["tau"], r["low"], r["high"],
                         "rankings agree" if side > 0 else "rankings disagree" if side < 0 else "agreement not shown",
                         "02_stability.csv", key_text(**{"setting a": r["setting a"], "setting b": r["setting b"]}),
                         counts="strategies"))
    return rows


@_finds('04')
def _post04(data_dir) -> list[dict]:
    rows = []
    for _, r in read_table("04_retrieval.csv", data_dir).iterrows():
        rows.append(_row("04", f"hit@5: generated − human questions, {strategy_label(r['strategy'])} / {r['retriever']}",
                         _passages_label(r["corpus"], int(r["passages"])), r["passages"], r["generated − human"],
                         r["low"], r["high"], claims.pair_verdict("generated", "human", r["low"], r["high"]),
                         "04_retrieval.csv",
                         key_text(corpus=r["corpus"], strategy=r["strategy"], retriever=r["retriever"])))
    for _, r in read_table("04_trend.csv", data_dir).iterrows():
        where = "both corpora pooled" if r["corpus"] == "both" else DATASETS.get(r["corpus"], r["corpus"])
        rows.append(_row("04", f"slope of BM25's advantage over dense on question-passage overlap, {where}",
                         f"{where}, {numbers.count(r['questions'], 'question')} on "
                         f"{numbers.count(r['passages'], 'passage')}", r["questions"], r["slope"], r["low"], r["high"],
                         "slope above 0" if claims.interval_side(r["low"], r["high"]) > 0 else
                         "slope below 0" if claims.interval_side(r["low"], r["high"]) < 0 else "no slope shown",
                         "04_trend.csv", key_text(corpus=r["corpus"])))
    return rows


@_finds('05')
def _post05(data_dir) -> list[dict]:
    rows = []
    answers = read_table("05_answers.csv", data_dir)
    documents = answers.groupby("corpus")["documents"].max()
    for _, r in answers[answers["measure"] == REFERENCE_NAME].iterrows():
        rows.append(_row("05", f"share of answers the {REFERENCE_NAME} passes, {r['strategy']}",
                         sample_label(r["corpus"], int(r["questions"]), int(r["documents"])), r["questions"],
                         r["share"], r["low"], r["high"], "—", "05_answers.csv",
                         key_text(corpus=r["corpus"], strategy=r["strategy"], measure=r["measure"])))
    for _, r in read_table("05_strategy_differences.csv", data_dir).iterrows():
        rows.append(_row("05", f"answers passed: {r['strategy A']} − {r['strategy B']} (paired)",
                         sample_label(r["corpus"], int(r["questions"]), int(documents.get(r["corpus"], r["questions"]))),
                         r["questions"], r["A - B"], r["low"], r["high"],
                         claims.pair_verdict(r["strategy A"], r["strategy B"], r["low"], r["high"]),
                         "05_strategy_differences.csv",
                         key_text(corpus=r["corpus"], **{"strategy A": r["strategy A"], "strategy B": r["strategy B"]})))
    agreement = read_table("05_agreement.csv", data_dir)
    for _, r in agreement[agreement["scale"] == "pass/fail"].iterrows():
        rows.append(_row("05", f"Cohen's κ of the {r['grader B']} against the {r['grader A']} (pass/fail)",
                         f"post 05's answers, {numbers.count(r['items'], 'item')}", r["items"], r["kappa"],
                         r["low"], r["high"],
                         "above chance" if claims.interval_side(r["low"], r["high"]) > 0 else "not above chance",
                         "05_agreement.csv", key_text(**{"grader A": r["grader A"], "grader B": r["grader B"],
                                                         "scale": r["scale"]})))
    return rows


@_finds('06')
def _post06(data_dir) -> list[dict]:
    rows = []
    for _, r in judge_agreement(data_dir).iterrows():
        rows.append(_row("06", f"κ of the {r['judge']} with the audit's grades, {r['scale']}, weighted to the population",
                         f"post 05's answers, {numbers.count(r['graded'], 'item')} graded", r["graded"], r["estimate"],
                         r["low"], r["high"], r["verdict"], r["source"], r["key"]))
    for _, r in judge_accuracy(data_dir).iterrows():
        rows.append(_row("06", f"accuracy, {r['variant']}: the {r['judge']} alone − by the audit's grades (paired)",
                         f"post 05's answers, {numbers.count(r['population'], 'item')}, "
                         f"{numbers.count(r['graded'], 'item')} graded", r["graded"], r["estimate"], r["low"],
                         r["high"], r["verdict"], r["source"], r["key"]))
    return rows


@_finds('07')
def _post07(data_dir) -> list[dict]:
    rows = []
    stage = read_table("07_stage.csv", data_dir)
    for _, r in stage.iterrows():
        n = int(r["questions"])
        rows.append(_row("07", f"ΔnDCG@k reranked − first stage: {strategy_label(r['strategy'])}, {r['first_stage']} then "
                               f"{r['scorer']}, depth {r['depth']}",
                         sample_label(r["corpus"], n, documents_of(r["design"], n)), n, r["d_ndcg"], r["d_ndcg_low"],
                         r["d_ndcg_high"], r["verdict"], "07_stage.csv",
                         key_text(corpus=r["corpus"], strategy=r["strategy"], first_stage=r["first_stage"],
                                  scorer=r["scorer"], depth=r["depth"])))
    return rows


@_finds('08')
def _post08(data_dir) -> list[dict]:
    """Post 08: Chroma's report re-run (each pair of neighbouring rows, and the LLM chunker on its
    slice against each other row), paired differences of recall in points with the hull of the
    corpus-clustered and question-level intervals, post 08's verdict."""
    rows = []
    for name, what in (("08_neighbours.csv", "Chroma's corpora"), ("08_llm_pairs.csv", "the LLM chunker's slice")):
        for _, r in read_table(name, data_dir).iterrows():
            rows.append(_row("08", f"recall (points) at {r['retrieved']} retrieved: {r['a']} − {r['b']}, {what}",
                             f"{what}, {numbers.count(r['questions'], 'question')} from "
                             f"{numbers.count(r['clusters'], 'corpus', 'corpora')}", r["questions"], r["recall a − b"],
                             r["low"], r["high"], r["verdict"], name,
                             key_text(retrieved=r["retrieved"], a=r["a"], b=r["b"])))
    return rows


POST_FINDINGS = _in_post_order(_FINDERS)  # keyed by the posts they cite, in the one list's order (reports.posts)


def post_findings(posts: str, data_dir: Path | None = None) -> pd.DataFrame:
    """The findings rows of one key of :data:`POST_FINDINGS` (``"01, 03"``, ``"04"`` … ``"07"``)."""
    if posts not in POST_FINDINGS:
        raise KeyError(f"no findings for {posts!r}; known: {', '.join(POST_FINDINGS)}")
    return pd.DataFrame(POST_FINDINGS[posts](data_dir))


OUTSIDE = _NOTES.fill("findings.outside.tau")
OUTSIDE_OTHER = _NOTES.fill("findings.outside")


def findings_table(data_dir: Path | None = None) -> pd.DataFrame:
    """Every finding of posts 01 and 03–07 and post 02's ranking stability (its verdicts are the
    decision guide), each citing its row; ``note`` flags an estimate outside its own interval
    (:data:`OUTSIDE`, said for τ, the only bootstrap here whose estimate can fall outside it)."""
    table = pd.concat([post_findings(posts, data_dir) for posts in POST_FINDINGS], ignore_index=True)
    outside = (table["estimate"] < table["low"]) | (table["estimate"] > table["high"])
    tau = table["source"] == "02_stability.csv"
    return table.assign(note=np.where(outside & tau, OUTSIDE, np.where(outside, OUTSIDE_OTHER, "")))


def posts_with_findings(*tables: pd.DataFrame) -> list[str]:
    """The posts whose tables post 00 cites, from the ``source`` columns of ``tables``."""
    sources = pd.concat([t["source"] for t in tables if len(t)])
    return sorted({name[:2] for name in sources})


def small_rows(table: pd.DataFrame, below: int = 50, n_column: str = "n") -> pd.DataFrame:
    """The rows of ``table`` resting on fewer than ``below`` questions (or items, passages): a row
    whose ``n counts`` is strategies (a ranking's length, not a sample) is not one of them."""
    sampled = table["n counts"] != "strategies" if "n counts" in table else np.ones(len(table), bool)
    return table[(np.asarray(table[n_column]) < below) & np.asarray(sampled)]


def findings_view(table: pd.DataFrame) -> pd.DataFrame:
    """The findings table as a reader scans it: the estimate and its interval in one cell."""
    return pd.DataFrame({
        "post": table["post"], "finding": table["finding"], "sample": table["sample"], "n": table["n"],
        "estimate [95% interval]": [numbers.estimate(e, lo, hi) for e, lo, hi in
                                    zip(table["estimate"], table["low"], table["high"])],
        "verdict": [v + (f" ({note})" if isinstance(note, str) and note else "")
                    for v, note in zip(table["verdict"], table.get("note", [""] * len(table)))],
        "source": table["source"], "key": table["key"]})
