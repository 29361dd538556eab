"""Post 06: auditing post 05's LLM judges against the audit's grades, as one call per notebook section.

Handles: the sampling design and who graded (id and kind) when; per judge, agreement with
each grader's grades and, with several graders, the adjudicated label (matches out of n,
percent agreement, Cohen's kappa with a bootstrap interval over questions, and the
population-weighted agreement), on the three-way scale where the judge has one and always on
the binary "correct vs not" scale (``YES`` <-> correct); confusion tables; the direction of
the binary disagreements (lenient: the judge passed what the grader failed; strict: the
reverse) with the items quoted (a readable sample, :func:`readable_sample`; all of them in a
CSV); the judges against each other on the whole population; and
the accuracy of the answers by the audit's grades (:mod:`chunklab_core.stats.stratified`; the
function keeps its historical name :func:`corrected_accuracy`: the grades are one grader's
reading, not the truth).
Whether the grades are a person's or a model's is data (``grader_kind``); nothing here calls
them hand grades (the words come from :func:`chunklab_core.audit.graders.grader_words`).

Sample statistics (matches, kappa, confusion counts) describe the graded items, which are
drawn at different rates per stratum (small strata and flagged disagreements get more than
their share), so they are not comparable with post 05's statistics on all answers; the
``weighted`` columns (agreement and design-weighted kappa) estimate the same quantity for the
whole population with the design weights. ``unparsed`` is a label throughout:
on the binary scale it is neither a pass nor a fail, so it counts as a disagreement with the
grader, and the judge-only accuracy counts it as not correct.

Not handled: reading and validating the files (:mod:`chunklab_core.audit.loading`), figures
(:mod:`chunklab_core.reports.post06.figures`), paired differences (:mod:`chunklab_core.audit.paired`),
agreement between graders (:mod:`chunklab_core.audit.graders`).
Writing the tables: :func:`chunklab_core.reports.tables.save_table`, as in every post.
"""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pandas as pd

from chunklab_core.core.csv_cells import read_frame
from chunklab_core.stats.agreement import kappa_ci
from chunklab_core.answers.verdicts import (BINARY, CORRECT, GRADE_LABELS, NOT_CORRECT, THREE_WAY, UNPARSED, binary_labels,
                                            is_yesno, grader_name, pass_fail, scale_of, verdict_confusion)
from chunklab_core.audit.loading import AuditData, for_grader, grader_table, load_audit
# moved to the audit stage so that ``chunklab-own audit`` computes them exactly as this post does
from chunklab_core.audit.estimates import (GRADES_ONLY, JUDGE_ONLY, PPI, _weighted_share, agreement_table,  # noqa: F401
                                           clip_share, corrected_accuracy, question_clusters, references)


__all__ = ["references", "load_audit", "grader_name", "sampling_design", "graders", "agreement_table",
           "confusion_tables", "disagreement_directions", "disagreement_items", "readable_sample", "judge_pairs",
           "corrected_accuracy"]


def sampling_design(data: AuditData) -> pd.DataFrame:
    """One row per stratum: verdict pattern, population size, drawn, graded, inclusion prob., weight.

    ``oversampled`` is the key's flag (the sampler gave the stratum ``disagreement_factor``);
    ``judges disagree`` says whether the verdicts differ on the binary scale.
    """
    drawn = data.key["stratum"].value_counts()
    flagged = data.key.drop_duplicates("stratum").set_index("stratum")["disagreement"] \
        if "disagreement" in data.key.columns else pd.Series(dtype=bool)
    graded = data.graded["stratum"].value_counts()
    rows = []
    for stratum, size in data.stratum_sizes.items():
        labels = stratum.split("|")
        n_graded = int(graded.get(stratum, 0))
        rows.append({"verdicts": " · ".join(labels), "population": int(size),
                     "drawn": int(drawn.get(stratum, 0)), "graded": n_graded,
                     "inclusion prob.": drawn.get(stratum, 0) / size,
                     "weight": size / n_graded if n_graded else np.nan,
                     "oversampled": bool(flagged.get(stratum, False)),
                     "judges disagree": len({pass_fail(label) for label in labels}) > 1})
    return pd.DataFrame(rows).sort_values("population", ascending=False, ignore_index=True)


def graders(data: AuditData) -> pd.DataFrame:
    """Who graded how many items, of which kind, and when (:func:`chunklab_core.audit.loading.grader_table`)."""
    return grader_table(data)


def confusion_tables(data: AuditData, grade_label: str = "grade") -> dict[str, pd.DataFrame]:
    """Per judge: counts of graded items by (judge verdict, grade); every label shown.

    ``grade_label`` names the columns (``hand grade`` only when people graded:
    :func:`chunklab_core.audit.graders.grader_words`).
    """
    tables = {}
    for column in data.judge_columns:
        tables[grader_name(column)] = verdict_confusion(
            data.graded[column], data.graded["grade"], scale_of(column, data.yesno_columns), GRADE_LABELS,
            (f"{grader_name(column)} verdict", grade_label))
    return tables


def _directions(data: AuditData, column: str) -> dict[str, np.ndarray]:
    judge = binary_labels(data.graded[column])
    grader = binary_labels(data.graded["grade"])
    return {"agree": judge == grader,
            "lenient": (judge == CORRECT) & (grader == NOT_CORRECT),
            "strict": (judge == NOT_CORRECT) & (grader == CORRECT),
            "unparsed": judge == UNPARSED}


def disagreement_directions(data: AuditData, confidence: float = 0.95) -> pd.DataFrame:
    """Per judge, on the binary scale: counts agree/lenient/strict/unparsed and weighted shares.

    lenient: the judge said correct (or YES), the grader partial or wrong; strict: the judge
    said partial, wrong or NO, the grader correct. The weighted shares estimate how often
    that happens among all answers; judge-only accuracy is off by ``lenient - strict -
    (unparsed items the grader graded correct)``.
    """
    rows = []
    for column in data.judge_columns:
        kinds = _directions(data, column)
        row = {"judge": grader_name(column), "graded": len(data.graded)}
        row.update({kind: int(mask.sum()) for kind, mask in kinds.items()})
        for kind in ("lenient", "strict"):
            share, low, high = _weighted_share(data, kinds[kind], confidence)
            row.update({f"{kind} share (weighted)": share, f"{kind} low": low, f"{kind} high": high})
        rows.append(row)
    return pd.DataFrame(rows)


def disagreement_items(data: AuditData, direction: str) -> pd.DataFrame:
    """The graded items where some judge erred in ``direction`` ('lenient' or 'strict'), quoted in full.

    One row per item: item id, the judges that erred with their verdicts, the grade,
    question, reference, answer and the grader's note (never cut; the post wraps them).
    """
    if direction not in ("lenient", "strict"):
        raise ValueError(f"direction must be 'lenient' or 'strict', got {direction!r}")
    erred = pd.DataFrame({column: _directions(data, column)[direction]
                          for column in data.judge_columns})
    rows = []
    for i in np.flatnonzero(erred.any(axis=1).to_numpy()):
        item = data.graded.iloc[i]
        judges = [f"{grader_name(c)}: {item[c]}" for c in data.judge_columns if erred.iloc[i][c]]
        rows.append({"item": item["item_id"], "judges": "; ".join(judges),
                     "grade": item["grade"],
                     **{c: " ".join(str(item[c]).split()) for c in ("question", "reference", "answer")},
                     "note": " ".join(str(item["note"]).split())})
    columns = ["item", "judges", "grade", "question", "reference", "answer", "note"]
    return pd.DataFrame(rows, columns=columns)


def readable_sample(items: pd.DataFrame, n: int) -> pd.DataFrame:
    """At most ``n`` rows of :func:`disagreement_items` to quote, the rest left to its CSV.

    Deterministic and readable: in rounds over the judges that erred (in the order they first
    appear), each round takes for every judge the first item (by item id) that names it and is
    not taken yet, until ``n`` rows; so every judge that erred is shown at least once when
    ``n`` is at least their number. The rows keep item-id order.
    """
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}")
    if len(items) <= n:
        return items
    ordered = items.sort_values("item", kind="stable")
    named = [[part.split(":")[0].strip() for part in str(j).split(";")] for j in ordered["judges"]]
    judges = list(dict.fromkeys(name for names in named for name in names))
    taken: list[int] = []
    while len(taken) < n:
        before = len(taken)
        for judge in judges:
            for position, names in enumerate(named):
                if judge in names and position not in taken:
                    taken.append(position)
                    break
            if len(taken) == n:
                break
        if len(taken) == before:
            break
    return ordered.iloc[sorted(taken)].reset_index(drop=True)


def judge_pairs(data: AuditData, resamples: int = 10_000, seed: int = 0,
                confidence: float = 0.95) -> tuple[pd.DataFrame, dict[tuple[str, str], pd.DataFrame]]:
    """Every pair of judges on the whole population: agreement and kappa [interval], confusions.

    All pairs on the binary scale; pairs of three-way judges also on the three-way scale.
    Kappa intervals resample questions (:func:`question_clusters`).
    """
    population = data.population
    units = question_clusters(population)
    rows, tables = [], {}
    for a, b in combinations(data.judge_columns, 2):
        scales = [("binary", binary_labels(population[a]), binary_labels(population[b]), BINARY)]
        if not is_yesno(a, data.yesno_columns) and not is_yesno(b, data.yesno_columns):
            scales.insert(0, ("three-way", population[a].to_numpy(dtype=object),
                              population[b].to_numpy(dtype=object), THREE_WAY))
        for scale, x, y, labels in scales:
            kappa = kappa_ci(x, y, resamples=resamples, seed=seed, confidence=confidence,
                             labels=labels, clusters=units)
            rows.append({"judge a": grader_name(a), "judge b": grader_name(b), "scale": scale,
                         "items": len(x), "matches": int((x == y).sum()),
                         "agreement": float(np.mean(x == y)), "kappa": kappa.kappa,
                         "kappa low": kappa.low, "kappa high": kappa.high})
        tables[(grader_name(a), grader_name(b))] = verdict_confusion(
            population[a], population[b], scale_of(a, data.yesno_columns),
            scale_of(b, data.yesno_columns), (grader_name(a), grader_name(b)))
    return pd.DataFrame(rows), tables


def read_probes(path) -> pd.DataFrame | None:
    """Post 05's probe summary (``data/05_probes.csv``: per judge, ``retest_changed`` at temperature 0), or None."""
    from chunklab_core.audit.loading import resolve_path

    found = resolve_path(path)
    return read_frame(found) if found.is_file() else None


def population_check(data: AuditData, answers_path) -> pd.DataFrame | None:
    """Per corpus: items in the audit's population against the items post 05 publishes now.

    ``answers_path`` is post 05's ``data/05_answers.csv`` (questions per corpus and strategy);
    published items = the sum over strategies of one measure's question counts. ``None``
    when the file or the population's ``corpus`` column is missing.
    """
    from chunklab_core.audit.loading import resolve_path

    found = resolve_path(answers_path)
    if not found.is_file() or "corpus" not in data.population.columns:
        return None
    answers = read_frame(found)
    first = answers["measure"].iloc[0]
    published = answers[answers["measure"] == first].groupby("corpus")["questions"].sum()
    drawn = data.population["corpus"].value_counts()
    corpora = sorted(set(published.index) | set(drawn.index))
    return pd.DataFrame({"corpus": corpora,
                         "in the audit population": [int(drawn.get(c, 0)) for c in corpora],
                         "published by post 05": [int(published.get(c, 0)) for c in corpora]})

