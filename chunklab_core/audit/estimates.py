"""The audit's estimates of the judges, shared by post 06 and ``chunklab-own audit``.

Handles, on a loaded audit (:class:`chunklab_core.audit.loading.AuditData`):

* :func:`agreement_table`: per judge and reference (each grader's grades, and the adjudicated
  label with several graders), on the three-way scale where the judge has one and always on
  the binary "correct vs not" scale: graded items, matches, percent agreement, Cohen's kappa
  with a bootstrap interval that resamples questions (:func:`chunklab_core.stats.agreement.kappa_ci`
  with ``clusters`` = ``qid``), and the population-weighted agreement with its stratified
  interval (:func:`chunklab_core.stats.stratified.stratified_mean_ci`);
* :func:`corrected_accuracy`: the accuracy of the answers per judge by three estimators --
  the judge alone on every item (:func:`~chunklab_core.stats.stratified.judge_only_mean_ci`),
  the grades alone (stratified mean), and stratified prediction-powered inference
  (:func:`~chunklab_core.stats.stratified.stratified_ppi_mean_ci`: Angelopoulos et al.,
  Science 2023, per stratum, combined with the design's stratum shares) -- strict (correct)
  and lenient (correct or partial).

These were post 06's (``reports.post06.tables``, which re-exports them); they live in the
audit stage so that a user's audit (``chunklab_core.own.audit``) is computed by the very same
code. Every formula is in the ``stats`` function named; the tests pin them there.

Not handled: reading the files (``audit.loading``), prose and figures (``reports.post06``),
paired differences (``audit.paired``), grader-vs-grader agreement (``audit.graders``).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from chunklab_core.answers.verdicts import BINARY, THREE_WAY, binary_labels, binary_scores, grader_name, is_yesno
from chunklab_core.audit.loading import AuditData, for_grader
from chunklab_core.stats.agreement import kappa_ci
from chunklab_core.stats.stratified import judge_only_mean_ci, stratified_mean_ci, stratified_ppi_mean_ci

JUDGE_ONLY, GRADES_ONLY, PPI = "judge only", "grades only", "PPI (judge + grades)"


def clip_share(low: float, high: float) -> tuple[float, float]:
    """A share's normal-approximation interval clipped to [0, 1] (a share cannot leave it)."""
    return max(0.0, low) if np.isfinite(low) else low, min(1.0, high) if np.isfinite(high) else high


def _weighted_share(data: AuditData, indicator: np.ndarray, confidence: float) -> tuple[float, float, float]:
    """Population share of ``indicator`` (graded items) with its interval.

    NaN when it cannot be estimated: a stratum without graded items, or no stratum with two
    (no within-stratum variance at all).
    """
    if data.empty_strata or (data.graded["stratum"].value_counts() < 2).all():
        return np.nan, np.nan, np.nan
    result = stratified_mean_ci(indicator.astype(float), data.graded["stratum"].to_numpy(),
                                data.stratum_sizes, confidence)
    return result.estimate, *clip_share(result.low, result.high)


def question_clusters(items: pd.DataFrame) -> np.ndarray | None:
    """The question of each item (``qid``), the kappa bootstrap's resampling unit; ``None`` without one.

    The strategies' answers to one question are not independent items (they share its
    difficulty and often its answer), so kappa intervals resample questions
    (``agreement.kappa_ci(clusters=...)``).
    """
    return items["qid"].astype(str).to_numpy() if "qid" in items.columns else None


def references(data: AuditData) -> dict[str, AuditData]:
    """What the judges are measured against: each grader's view, and ``adjudicated`` with several."""
    names = sorted(set(data.grades["grader"]))
    views = {name: for_grader(data, name) for name in names}
    if len(names) > 1:
        views["adjudicated"] = data
    return views


def _agreement_rows(data: AuditData, against: str, resamples: int, seed: int,
                    confidence: float) -> list[dict]:
    grade = data.graded["grade"].to_numpy(dtype=object)
    units = question_clusters(data.graded)
    if units is not None and len(set(units)) < 2:  # a cluster bootstrap needs two clusters (issue 41)
        warnings.warn(f"{against}: the {len(units)} graded item(s) answer one question, so the kappa intervals "
                      "resample items, not questions (a question-level interval needs at least two questions)",
                      UserWarning, stacklevel=2)
        units = None
    weights = data.graded["graded_weight"].to_numpy(dtype=float)
    rows = []
    for column in data.judge_columns:
        verdicts = data.graded[column].to_numpy(dtype=object)
        scales = [("binary", binary_labels(verdicts), binary_labels(grade), BINARY)]
        if not is_yesno(column, data.yesno_columns):
            scales.insert(0, ("three-way", verdicts, grade, THREE_WAY))
        for scale, judge, grader, labels in scales:
            agree = judge == grader
            kappa = kappa_ci(judge, grader, resamples=resamples, seed=seed,
                             confidence=confidence, labels=labels, clusters=units)
            weighted = kappa_ci(judge, grader, resamples=resamples, seed=seed,
                                confidence=confidence, labels=labels, clusters=units,
                                weights=weights)
            share, low, high = _weighted_share(data, agree, confidence)
            rows.append({"judge": grader_name(column), "against": against, "scale": scale,
                         "graded": len(agree), "matches": int(agree.sum()),
                         "agreement": float(agree.mean()), "kappa": kappa.kappa,
                         "kappa low": kappa.low, "kappa high": kappa.high,
                         "kappa undefined share": kappa.undefined_share,
                         "weighted agreement": share, "weighted low": low, "weighted high": high,
                         "weighted kappa": weighted.kappa, "weighted kappa low": weighted.low,
                         "weighted kappa high": weighted.high})
    return rows


def agreement_table(data: AuditData, resamples: int = 10_000, seed: int = 0,
                    confidence: float = 0.95) -> pd.DataFrame:
    """Per judge, reference (each grader; ``adjudicated`` with several) and scale: graded,
    matches, agreement, kappa [interval] on the graded items; weighted agreement [interval]
    and weighted kappa [interval] for the population.

    ``kappa`` is the sample's: the graded items over-represent the disagreement strata, so it
    describes the sample, not post 05's answers, and is not comparable with post 05's kappa
    on all items. ``weighted kappa`` weighs every graded item by its design weight ``N_h /
    n_h`` (:func:`chunklab_core.stats.agreement.design_weighted_kappa`), an estimate for the
    population. Kappa intervals resample questions (:func:`question_clusters`), keeping the
    weights; the weighted agreement uses the stratified estimator of ``stats.stratified``.
    """
    rows = []
    for against, view in references(data).items():
        rows += _agreement_rows(view, against, resamples, seed, confidence)
    return pd.DataFrame(rows)


def corrected_accuracy(data: AuditData, confidence: float = 0.95,
                       variants: tuple[str, ...] = ("strict", "lenient")) -> pd.DataFrame:
    """Accuracy of post 05's answers per judge: judge only, grades only, and stratified PPI.

    ``strict``: the share of answers graded correct; ``lenient``: correct or partial (a YES
    counts as a pass in both). Raises ``ValueError`` when a stratum has no graded item.
    """
    if data.empty_strata:
        raise ValueError(f"{len(data.empty_strata)} verdict pattern(s) have no graded item: "
                         f"{data.empty_strata}; grade at least one item of each before "
                         "estimating accuracy")
    strata_all = data.population["stratum"].to_numpy(dtype=object)
    strata_graded = data.graded["stratum"].to_numpy(dtype=object)
    rows = []
    for variant in variants:
        if variant not in ("strict", "lenient"):
            raise ValueError(f"variant must be 'strict' or 'lenient', got {variant!r}")
        lenient = variant == "lenient"
        graded = binary_scores(data.graded["grade"], lenient)
        by_grades = stratified_mean_ci(graded, strata_graded, data.stratum_sizes, confidence)
        for column in data.judge_columns:
            judge_all = binary_scores(data.population[column], lenient)
            estimates = {
                JUDGE_ONLY: judge_only_mean_ci(judge_all, confidence),
                GRADES_ONLY: by_grades,
                PPI: stratified_ppi_mean_ci(
                    judge_all, strata_all, binary_scores(data.graded[column], lenient), graded,
                    strata_graded, confidence),
            }
            for estimator, result in estimates.items():
                rows.append({"judge": grader_name(column), "variant": variant,
                             "estimator": estimator, "accuracy": result.estimate,
                             **dict(zip(("low", "high"), clip_share(result.low, result.high))),
                             "se": result.se,
                             "population": len(judge_all), "graded": len(graded),
                             "strata with pooled variance": len(result.pooled_strata)})
    return pd.DataFrame(rows)


