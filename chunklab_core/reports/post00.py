"""The series' findings in one place, computed from the committed tables of posts 01–06.

Handles: reading ``data/*.csv`` (never re-running an experiment), one findings table (each row:
the post, the finding, corpus, n, model or grader, estimate with its 95% interval, and the
verdict word of :mod:`chunklab_core.stats.claims`), the "which chunker?" answers of posts 01, 02 and
03 side by side, and the series' limitations worded from the data (who graded, how many,
how small the long-document samples are, what the generated-question checks found).

Post 02's verdicts per corpus and retriever are computed here from its committed per-question
table (``02_per_question.csv.gz``): the paired interval of the recall@k leader against every
other strategy, resampling questions with one seed, the same way post 03 does it for post 01.

Not handled: tables a post has not written yet (a missing file raises FileNotFoundError naming
it), re-estimating anything a post already reports with an interval.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from chunklab_core.data.corpora import CORPUS_LABELS
from chunklab_core.answers.verdicts import REFERENCE_NAME
from chunklab_core.stats import claims
from chunklab_core.chunking import strategy_label
from chunklab_core.core.paths import AUDIT_DIR, DATA_DIR
from chunklab_core.evaluation.measures import column, interval_columns
from chunklab_core.reports.verdict_tables import balanced_verdicts, leader_verdicts

READING_ORDER = (
    ("01", "Which chunking strategy finds the answer?", "one retriever, one clean corpus: recall@k and its token cost"),
    ("03", "How far can N questions be trusted?", "post 01's ranking with paired intervals, the verdict rule, calibration, clustering"),
    ("02", "Retrievers, embedding models, other documents", "whether post 01's answer survives other retrievers and corpora"),
    ("04", "Where do test questions come from?", "what generated test questions hide"),
    ("05", "Answers from retrieved chunks, graded by LLM judges", "whether retrieval turns into right answers"),
    ("06", "Can the judges be trusted?", "the judges against an audit grader"),
)



def read_table(name: str, data_dir: Path | None = None) -> pd.DataFrame:
    """One committed table by file name; a clear error names the missing file and its post."""
    path = Path(data_dir or DATA_DIR) / name
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing: execute post {name[:2]} first (make notebooks/{name[:2]}_*.ipynb)")
    return pd.read_csv(path)


def reading_order() -> pd.DataFrame:
    """The order in which to read the posts, and what each one adds."""
    return pd.DataFrame(READING_ORDER, columns=["post", "title", "read it for"])


def post02_verdicts(per_question: pd.DataFrame, k: int = 5, model: str = "all-MiniLM-L6-v2",
                    resamples: int = 10_000, seed: int = 0) -> pd.DataFrame:
    """Per corpus and retriever of post 02: the recall@k leader's verdicts against every strategy.

    BM25 rows have no model (``—``); dense and hybrid rows use ``model``. Only questions that
    every strategy of the cell scored are used (paired).
    """
    metric = column("recall", k)
    cells = per_question[(per_question["model"] == "—") | (per_question["model"] == model)]
    parts = []
    for (corpus, retriever), group in cells.groupby(["corpus", "retriever"], sort=False):
        wide = group.pivot_table(index="qid", columns="strategy", values=metric, aggfunc="first").dropna()
        if wide.shape[1] < 2:
            continue
        table = leader_verdicts(wide, metric, resamples, seed)
        parts.append(table.assign(corpus=corpus, retriever=retriever,
                                  model="—" if retriever == "bm25" else model))
    return pd.concat(parts, ignore_index=True)


def _row(post, finding, corpus, n, model, estimate, low, high, verdict) -> dict:
    return {"post": post, "finding": finding, "corpus": corpus, "n": n, "model / grader": model,
            "estimate": estimate, "low": low, "high": high, "verdict": verdict}


def _leader_row(verdicts: pd.DataFrame) -> tuple[str, pd.Series, list[str]]:
    leader = verdicts.iloc[0]
    kept = verdicts.loc[(verdicts["verdict"] == claims.NOT_RULED_OUT) & (verdicts.index > 0), "strategy"].tolist()
    return leader["strategy"], leader, kept


def findings_table(data_dir: Path | None = None, post02: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per finding, each with its estimate, 95% interval, n, model or grader, corpus and post."""
    rows = []
    p01 = read_table("01_results.csv", data_dir)
    p03 = read_table("03_paired_vs_leader.csv", data_dir)
    leader = p03["minus"].iloc[0]
    words = claims.verdict_table(p03, leader, row_minus_leader=True)
    best = p01.loc[p01["label"] == leader].iloc[0]
    verdict = claims.WINNER if (words["verdict"] == claims.RULED_OUT).all() else claims.NOT_RULED_OUT
    hit, (hit_low, hit_high) = column("hit", 10), interval_columns(column("hit", 10))
    rows.append(_row("01, 03", f"recall@10 of the leader, {leader} (BM25)", "SQuAD v1.1 (sample)",
                     int(best["questions"]), "BM25 (no model)", best[hit], best[hit_low], best[hit_high], verdict))
    for _, r in words[words["verdict"] == claims.NOT_RULED_OUT].iterrows():
        rows.append(_row("03", f"recall@10: {r['strategy']} − {leader} (paired)", "SQuAD v1.1 (sample)",
                         int(best["questions"]), "BM25 (no model)", r["difference"], r["low"], r["high"],
                         claims.NOT_TOLD_APART))
    clustered = read_table("03_clustered.csv", data_dir).set_index("cell").loc[leader]
    rows.append(_row("03", f"recall@10 of {leader}, resampling articles (clustered)", "SQuAD v1.1 (sample)",
                     int(clustered["n_questions"]), "BM25 (no model)", clustered["mean"],
                     clustered["clustered_low"], clustered["clustered_high"],
                     f"{clustered['width_ratio']:.2f}× as wide; worth ≈{clustered['effective_questions']:.0f} questions"))
    calibration = read_table("03_calibration.csv", data_dir)
    top = calibration[calibration["band"] == calibration["band"].iloc[-1]]
    for _, r in top.iterrows():
        rows.append(_row("03", f"P(best) reported {r['band']}: share truly best (simulation, spread {r['rate spread']:.2f})",
                         "simulated", int(r["comparisons"]), "simulation", r["share_correct"], r["ci_low"],
                         r["ci_high"], "overconfident" if r["ci_high"] < r["mean_reported"] else "calibrated"))
    if post02 is not None:
        recall, (recall_low, recall_high) = column("recall", 5), interval_columns(column("recall", 5))
        for (corpus, retriever), group in post02.groupby(["corpus", "retriever"], sort=False):
            name, lead, kept = _leader_row(group.reset_index(drop=True))
            matrix = read_table("02_matrix.csv", data_dir)
            cell = matrix[(matrix["corpus"] == corpus) & (matrix["retriever"] == retriever)
                          & (matrix["strategy"] == name) & (matrix["model"] == lead["model"])].iloc[0]
            word = lead["verdict"] + (f" ({len(kept)} others cannot be ruled out)" if kept else "")
            rows.append(_row("02", f"recall@5 leader under {retriever}: {cell['label']}", CORPUS_LABELS.get(corpus, corpus),
                             int(lead["questions"]), lead["model"], cell[recall], cell[recall_low],
                             cell[recall_high], word))
    p04 = read_table("04_retrieval.csv", data_dir)
    for _, r in p04[p04["strategy"] == "fixed_1000"].iterrows():
        rows.append(_row("04", f"hit@5: generated − human questions, Fixed 1000 / {r['retriever']}",
                         CORPUS_LABELS.get(r["corpus"], r["corpus"]), int(r["passages"]),
                         "questions by Qwen2.5-Coder-1.5B" + ("" if r["retriever"] == "bm25" else "; all-MiniLM-L6-v2"),
                         r["generated − human"], r["low"], r["high"],
                         claims.pair_verdict("generated", "human", r["low"], r["high"])))
    p05 = read_table("05_answers.csv", data_dir)
    graded = p05[p05["measure"] == REFERENCE_NAME]
    differences = read_table("05_strategy_differences.csv", data_dir)
    for corpus, group in graded.groupby("corpus", sort=False):
        top5 = group.sort_values("share", ascending=False).iloc[0]
        pairs = differences[differences["corpus"] == corpus]
        apart = [claims.pair_verdict(a, b, lo, hi) for a, b, lo, hi in
                 zip(pairs["strategy A"], pairs["strategy B"], pairs["low"], pairs["high"])]
        word = (claims.NOT_TOLD_APART + " (every pair)") if all(w == claims.NOT_TOLD_APART for w in apart) \
            else "; ".join(w for w in apart if w != claims.NOT_TOLD_APART)
        rows.append(_row("05", f"answers passed by the {REFERENCE_NAME}, {top5['strategy']}",
                         CORPUS_LABELS.get(corpus, corpus), int(top5["questions"]),
                         "answers by Qwen2.5-Coder-1.5B; graded by rules", top5["share"], top5["low"],
                         top5["high"], word))
    agreement = read_table("05_agreement.csv", data_dir)
    for _, r in agreement[(agreement["grader A"] == REFERENCE_NAME) & (agreement["scale"] == "pass/fail")].iterrows():
        rows.append(_row("05", f"Cohen's κ of the {r['grader B']} against the {REFERENCE_NAME}, pass/fail",
                         "SQuAD + Natural Questions", int(r["items"]), r["grader B"] + " (Qwen2.5-Coder)",
                         r["kappa"], r["low"], r["high"], "agreement above chance" if claims.interval_side(r["low"], r["high"]) > 0 else "not above chance"))
    audit = read_table("06_accuracy.csv", data_dir)
    words = audit_grader_words(data_dir)
    for _, r in audit[(audit["variant"] == "strict") & (audit["judge"] == audit["judge"].iloc[0])].iterrows():
        judge_only = r["estimator"] == "judge only"
        rows.append(_row("06", f"answer accuracy (strict), {r['estimator']}", "SQuAD + Natural Questions (post 05 items)",
                         int(r["population"]) if judge_only else int(r["graded"]),
                         r["judge"] if judge_only else f"{r['judge']}; graded by {words.who}",
                         r["accuracy"], r["low"], r["high"], "—"))
    return pd.DataFrame(rows)


def _lens_row(lens, corpus, setting, table) -> dict:
    leader = table["strategy"].iloc[0]
    kept = table.loc[(table["verdict"] == claims.NOT_RULED_OUT) & (table["strategy"] != leader), "strategy"]
    return {"lens": lens, "corpus": corpus, "setting": setting, "questions": int(table["questions"].iloc[0]),
            "leader": strategy_label(leader), "verdict": table["verdict"].iloc[0],
            "cannot be ruled out besides the leader": ", ".join(strategy_label(s) for s in kept) or "—",
            "ruled out": int((table["verdict"] == claims.RULED_OUT).sum())}


def which_chunker(data_dir: Path | None = None, post02: pd.DataFrame | None = None, lams=(0.02, 0.05, 0.10),
                  resamples: int = 10_000, seed: int = 0) -> pd.DataFrame:
    """The "which chunker?" answers of posts 01/03 (recall alone, balanced with tokens) and 02 (per setting).

    Every answer is the verdict of the same rule on paired intervals; post 01's balanced score
    is given at several λ because the leader depends on the price put on tokens.
    """
    per_question = read_table("01_per_question.csv", data_dir)
    hit = per_question.pivot(index="qid", columns="strategy", values=column("hit", 10))
    tokens = per_question.pivot(index="qid", columns="strategy", values=column("tokens", 10))
    rows = [_lens_row("recall alone (posts 01, 03)", "SQuAD v1.1 (sample)", "BM25, recall@10",
                      leader_verdicts(hit, "recall@10", resamples, seed))]
    balanced = balanced_verdicts(hit, tokens, lams, resamples, seed)
    for lam, table in balanced.groupby("lambda", sort=False):
        rows.append(_lens_row("balanced with tokens (post 03)", "SQuAD v1.1 (sample)",
                              f"BM25, recall@10 − {lam:g}·(tokens/T_min − 1)", table.reset_index(drop=True)))
    if post02 is not None:
        for (corpus, retriever, model), table in post02.groupby(["corpus", "retriever", "model"], sort=False):
            setting = retriever if model == "—" else f"{retriever}, {model}"
            rows.append(_lens_row("across retrievers and corpora (post 02)", CORPUS_LABELS.get(corpus, corpus),
                                  f"{setting}, recall@5", table.reset_index(drop=True)))
    return pd.DataFrame(rows)


# post 06's published sheet (the 48-item pilot feeds no number), relative to the data folder
AUDIT_SHEET = (AUDIT_DIR / "post05_v2_sheet.csv").relative_to(DATA_DIR).as_posix()


def audit_grader_words(data_dir: Path | None = None):
    """``audit.graders.grader_words`` of the published audit sheet's graders (kinds decide the words)."""
    from chunklab_core.audit.graders import grader_words

    sheet = read_table(AUDIT_SHEET, data_dir)
    graded = sheet[sheet["grade"].notna() & (sheet["grade"].astype(str).str.len() > 0)]
    graders = graded[["grader", "grader_kind"]].drop_duplicates().sort_values("grader").reset_index(drop=True)
    return grader_words(graders)


def limitations(data_dir: Path | None = None) -> list[str]:
    """The series' limitations, each worded from a committed table."""
    sheet = read_table(AUDIT_SHEET, data_dir)
    graded = sheet[sheet["grade"].notna() & (sheet["grade"].astype(str).str.len() > 0)]
    words = audit_grader_words(data_dir)
    matrix = read_table("02_matrix.csv", data_dir)
    sizes = matrix.groupby("corpus")["questions"].max()
    checks = read_table("04_checks.csv", data_dir)
    flags = [c for c in checks.columns if not c.endswith("evidence") and checks[c].dtype == bool]
    generated = checks[checks["set"] == "generated"]
    flagged = int(generated[flags].any(axis=1).sum())
    answers = read_table("05_answers.csv", data_dir)
    nq = answers[answers["corpus"] == "nq"]["questions"].max()
    return [
        f"**Grader kind and count.** Post 06's audit grades ({len(graded)} items) were made by {words.who}; "
        "post 05's judges are models and its reference grader is a script. "
        + ("Every audit grade is a person's." if words.all_human else
           "Some audit grades are a person's, some a model's." if words.any_human else
           "No accuracy in this series is checked against a person's grades yet."),
        "**Small long-document samples.** Post 02 reads " + ", ".join(
            f"{CORPUS_LABELS.get(c, c)}: {int(n)} questions" for c, n in sizes.items())
        + f"; post 05's Natural Questions arm has {int(nq)} questions. On those corpora most strategies "
        "cannot be told apart (see the table above), which says the samples are small, not that the strategies are equal.",
        f"**Generated-question bias.** {flagged} of {len(generated)} generated questions of post 04 trip at "
        f"least one validity check ({', '.join(flags)}); generated questions reuse their passage's words, which favours lexical retrieval. "
        "Chroma's corpora in post 02 carry generated questions too, so their rankings inherit this bias.",
        "**One answerer, small models.** Every answer in post 05 comes from one 1.5B model and every judge "
        "is a 0.5B or 1.5B model of the same family; the series says nothing about larger answerers.",
        "**Multiplicity.** The posts show unadjusted 95% intervals. Post 02 states how many of its paired "
        "tests would exclude 0 by chance alone; elsewhere, and in the table above, read each interval on its "
        "own: among many 95% intervals of differences that are truly 0, about one in twenty excludes 0 by chance.",
    ]


def _reconciled(recall, balanced, winners, leaders, n_settings: int) -> str:
    """The reconciling sentence, each clause chosen by the verdicts (never by point leaders alone)."""
    text = (f"recall alone cannot separate {recall['leader']} from {recall['cannot be ruled out besides the leader']}"
            if recall["verdict"] != claims.WINNER else f"recall alone names {recall['leader']} the winner")
    balanced_leaders = list(dict.fromkeys(balanced["leader"]))
    balanced_winners = balanced[balanced["verdict"] == claims.WINNER]
    if balanced_leaders != [recall["leader"]]:
        text += (f"; pricing tokens moves the point lead to {' / '.join(balanced_leaders)}"
                 + (f", a winner at {len(balanced_winners)} of {len(balanced)} prices" if len(balanced_winners)
                    else ", though no price names a winner"))
    distinct_winners = sorted(set(winners["leader"]))
    if len(distinct_winners) > 1:
        text += (f"; and different strategies win in different settings of post 02 ({', '.join(distinct_winners)}), "
                 "so the best chunker does depend on the retriever and the corpus")
    else:
        text += (f"; the {n_settings} settings of post 02 have {len(leaders)} different point leaders but "
                 + (f"only one strategy wins anywhere ({distinct_winners[0]})" if distinct_winners else "no winner")
                 + ", so these samples do not show that the best chunker depends on the setting — only that they "
                 "cannot identify one")
    return text + ". Measure on your own questions (post 02 and `chunklab-own` run on your documents)."


def which_chunker_text(table: pd.DataFrame) -> str:
    """The reconciled answer, in prose, from :func:`which_chunker`'s table."""
    recall = table[table["lens"].str.startswith("recall alone")].iloc[0]
    balanced = table[table["lens"].str.startswith("balanced")]
    across = table[table["lens"].str.startswith("across")]
    winners = across[across["verdict"] == claims.WINNER]
    leaders = across["leader"].value_counts()
    parts = [
        f"**Recall alone** (BM25, SQuAD, {recall['questions']} questions): the leader {recall['leader']} "
        f"{'is the winner' if recall['verdict'] == claims.WINNER else 'is no winner'}; "
        f"{recall['cannot be ruled out besides the leader']} cannot be told apart from it, and "
        f"{recall['ruled out']} strategies are ruled out.",
        "**Balanced with tokens** (same questions): the leader depends on the price of a token — "
        + "; ".join(f"{r['setting'].split(', ')[1]}: {r['leader']} ({r['verdict']}"
                    + (f", with {r['cannot be ruled out besides the leader']} not ruled out)" if r["verdict"] != claims.WINNER else ")")
                    for _, r in balanced.iterrows()) + ".",
        f"**Across retrievers and corpora** (post 02, {len(across)} settings): the recall@5 leader changes with the "
        f"setting ({', '.join(f'{name} leads {count}' for name, count in leaders.items())}); "
        + (f"only {len(winners)} setting(s) name a winner ("
           + "; ".join(f"{r['leader']} on {r['corpus']} under {r['setting'].split(',')[0]}" for _, r in winners.iterrows())
           + ")" if len(winners) else "no setting names a winner")
        + ".",
        "**Reconciled:** " + _reconciled(recall, balanced, winners, leaders, len(across)),
    ]
    return "\n\n".join(parts)


def findings_reading(table: pd.DataFrame) -> str:
    """What to look at in :func:`findings_table`, computed from it."""
    winners = table[table["verdict"] == claims.WINNER]
    apart = table["verdict"].astype(str).str.contains("ahead")
    small = table[(table["n"] < 50) & table["post"].isin(["02", "05"])]
    text = (f"{len(table)} findings. Only {len(winners)} name a winner"
            + (" (" + "; ".join(f"{r['finding']}, {r['corpus']}" for _, r in winners.iterrows()) + ")" if len(winners) else "")
            + f"; {int(apart.sum())} paired comparison(s) separate one side"
            + (" (" + "; ".join(f"{r['finding']}, {r['corpus']}: {r['verdict']}" for _, r in table[apart].iterrows()) + ")"
               if apart.any() else "")
            + ". Everything else is worded as cannot be ruled out or cannot be told apart.")
    if len(small):
        text += (f" Read the rows resting on fewer than 50 questions with care ({len(small)} rows, "
                 f"n from {int(small['n'].min())} to {int(small['n'].max())}): their intervals are wide, and "
                 "a leader there is a leader of a small sample.")
    return text
