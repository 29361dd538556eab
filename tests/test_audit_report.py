"""Post 06: audit loading and validation, agreement (against scikit-learn), lenient/strict counts
on a hand fixture, stratified PPI (hand-computed and by simulation), and generated prose."""

from __future__ import annotations

import csv

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score

from chunklab_core.audit import graders
from chunklab_core.audit import paired
from chunklab_core.reports.post06 import reading
from chunklab_core.reports.post06 import reading_bias
from chunklab_core.reports.post06 import tables as ar
from chunklab_core.stats.agreement import kappa_ci, ppi_mean_ci
from chunklab_core.answers.verdicts import binary_labels, binary_scores
from chunklab_core.audit.loading import AuditError, load_audit, write_blank_copy
from chunklab_core.audit.sample import allocate_sample, draw_audit_sample
from chunklab_core.audit.synthetic import write_synthetic_audit
from chunklab_core.audit.sheets import DEFAULT_JUDGE_COLUMNS, SheetError, write_key, write_sheet
from chunklab_core.stats.stratified import (judge_only_mean_ci, stratified_mean_ci,
                                                stratified_ppi_mean_ci)

Z95 = 1.959963984540054

# ------------------------------------------------------------------ hand fixture
# (qwen15 3-way, qwen15 yes/no, qwen05 3-way, reference grader) -> hand grade, copies
HAND_ITEMS = [
    (("correct", "YES", "correct", "correct"), "correct", 3),   # everyone agrees
    (("correct", "YES", "partial", "wrong"), "partial", 1),     # 15-3way, yes/no lenient
    (("wrong", "NO", "unparsed", "wrong"), "correct", 1),       # 15-3way, yes/no, ref strict; 05 unparsed
    (("partial", "YES", "correct", "partial"), "wrong", 1),     # yes/no, 05 lenient
    (("correct", "unparsed", "wrong", "correct"), "wrong", 1),  # 15-3way, ref lenient; yes/no unparsed
    (("wrong", "NO", "wrong", "wrong"), "wrong", 3),            # everyone agrees
]
# per judge: agree, lenient, strict, unparsed over the 10 items (counted from the table above)
HAND_DIRECTIONS = {"1.5B three-way judge": (7, 2, 1, 0), "1.5B YES/NO judge": (6, 2, 1, 1),
                   "0.5B three-way judge": (8, 1, 0, 1), "rule-based reference grader": (8, 1, 1, 0)}


def write_audit(folder, population: pd.DataFrame, grade_of: dict, n: int | None = None,
                seed: int = 0, blank: int = 0):
    """Draw a sample of ``population``, grade it from ``grade_of`` (by item_id), write 3 files."""
    sheet, key = draw_audit_sample(population, n or len(population), seed=seed, min_per_stratum=1)
    grades = [grade_of[i] for i in key["source_item_id"]]
    sheet["grade"] = [g if k >= blank else "" for k, g in enumerate(grades)]
    sheet["grader"] = ["ana" if k >= blank else "" for k in range(len(sheet))]
    sheet["grader_kind"] = ["human" if k >= blank else "" for k in range(len(sheet))]
    sheet["graded_at"] = [f"2026-08-0{1 + k % 9}T09:00:00Z" if k >= blank else ""
                          for k in range(len(sheet))]
    files = {name: folder / f"post05_{name}.csv" for name in ("sheet", "key", "population")}
    population.drop(columns=["passage"]).to_csv(files["population"], index=False)
    write_key(key, files["key"])
    write_sheet(sheet, files["sheet"])
    return files


def hand_population() -> tuple[pd.DataFrame, dict]:
    rows, grade_of = [], {}
    for verdicts, grade, copies in HAND_ITEMS:
        for _ in range(copies):
            item_id = f"q{len(rows)}|fixed_500"
            rows.append({"item_id": item_id, "corpus": "hand", "qid": f"q{len(rows)}",
                         "strategy": "fixed_500", "question": f"Q{len(rows)}?",
                         "reference": "NA", "answer": f"A{len(rows)}", "passage": "P",
                         **dict(zip(DEFAULT_JUDGE_COLUMNS, verdicts))})
            grade_of[item_id] = grade
    return pd.DataFrame(rows), grade_of


@pytest.fixture
def hand_audit(tmp_path):
    population, grade_of = hand_population()
    files = write_audit(tmp_path, population, grade_of)
    return load_audit(files["sheet"], files["key"], files["population"])


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    folder = tmp_path_factory.mktemp("synthetic")
    files, population = write_synthetic_audit(folder, n_items=300, n_sample=80, seed=6)
    return load_audit(files["sheet"], files["key"], files["population"]), population


# ------------------------------------------------------------------ loading and validation

def test_load_reads_texts_and_recomputes_weights(tmp_path):
    population, grade_of = hand_population()
    files = write_audit(tmp_path, population, grade_of, blank=2)
    audit = load_audit(files["sheet"], files["key"], files["population"])
    assert len(audit.graded) == 8 and len(audit.ungraded) == 2
    assert set(audit.graded["item_id"]).isdisjoint(audit.ungraded["item_id"])
    assert audit.graded["reference"].eq("NA").all()  # "NA" stays text
    for _, row in audit.graded.iterrows():
        graded_in_stratum = (audit.graded["stratum"] == row["stratum"]).sum()
        assert row["graded_weight"] == audit.stratum_sizes[row["stratum"]] / graded_in_stratum
    # the two blank rows were singletons or part of a 3-copy stratum; either way they are counted
    design = ar.sampling_design(audit)
    assert design["drawn"].sum() == 10 and design["graded"].sum() == 8
    assert design["population"].sum() == 10
    assert len(audit.empty_strata) == (design["graded"] == 0).sum()


def test_load_errors_name_every_problem(tmp_path):
    population, grade_of = hand_population()
    files = write_audit(tmp_path, population, grade_of)
    with pytest.raises(FileNotFoundError, match="audit key file"):
        load_audit(files["sheet"], tmp_path / "nope.csv", files["population"])
    # population re-judged and one item renamed: both reported in one error
    changed = pd.read_csv(files["population"], dtype=str, keep_default_na=False)
    changed.loc[0, "judge_qwen05_3way"] = "wrong"
    changed.loc[5, "item_id"] = "renamed"
    changed.to_csv(tmp_path / "changed.csv", index=False)
    with pytest.raises(AuditError) as info:
        load_audit(files["sheet"], files["key"], tmp_path / "changed.csv")
    assert any("not in the population" in p for p in info.value.problems)
    changed.loc[5, "item_id"] = population.loc[5, "item_id"]
    changed.to_csv(tmp_path / "changed.csv", index=False)
    with pytest.raises(AuditError) as info:
        load_audit(files["sheet"], files["key"], tmp_path / "changed.csv")
    assert any("differ from the population" in p for p in info.value.problems)
    assert any("key says" in p for p in info.value.problems)  # stratum sizes changed too
    changed.loc[0, "judge_qwen05_3way"] = "maybe"
    changed.to_csv(tmp_path / "changed.csv", index=False)
    with pytest.raises(AuditError, match="has label"):
        load_audit(files["sheet"], files["key"], tmp_path / "changed.csv")


def test_load_errors_sheet_and_key_disagree(tmp_path):
    population, grade_of = hand_population()
    files = write_audit(tmp_path, population, grade_of)
    with open(files["sheet"], encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    short = tmp_path / "short.csv"
    write_rows(short, rows[1:])
    with pytest.raises(AuditError, match="not on the sheet"):
        load_audit(short, files["key"], files["population"])
    stranger = tmp_path / "stranger.csv"
    write_rows(stranger, rows + [{**rows[0], "item_id": "Z999"}])
    with pytest.raises(SheetError, match="not in the key"):
        load_audit(stranger, files["key"], files["population"])
    few = tmp_path / "few.csv"
    write_rows(few, [{**r, "grade": ""} if k else r for k, r in enumerate(rows)])
    with pytest.raises(AuditError, match="only 1 of 10"):
        load_audit(few, files["key"], files["population"])


def test_blank_copy_keeps_items_and_clears_grades(tmp_path):
    population, grade_of = hand_population()
    files = write_audit(tmp_path, population, grade_of)
    copy = write_blank_copy(files["sheet"], tmp_path / "mine.csv")
    with pytest.raises(FileExistsError):
        write_blank_copy(files["sheet"], copy)
    with pytest.raises(AuditError, match="only 0 of 10"):
        load_audit(copy, files["key"], files["population"])
    with open(copy, encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 10 and all(r["grade"] == r["grader"] == r["graded_at"] == "" for r in rows)


def write_rows(path, rows):
    with open(path, "w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


# ------------------------------------------------------------------ agreement, directions

def test_lenient_strict_counts_by_hand(hand_audit):
    table = ar.disagreement_directions(hand_audit).set_index("judge")
    for judge, (agree, lenient, strict, unparsed) in HAND_DIRECTIONS.items():
        assert tuple(table.loc[judge, ["agree", "lenient", "strict", "unparsed"]]) == \
            (agree, lenient, strict, unparsed)
        # every item sampled: the weighted share is the plain population share
        assert table.loc[judge, "lenient share (weighted)"] == pytest.approx(lenient / 10)
        assert table.loc[judge, "strict share (weighted)"] == pytest.approx(strict / 10)
    rates = paired.direction_rates(hand_audit, resamples=200).set_index("judge")
    for judge, (_, lenient, strict, unparsed) in HAND_DIRECTIONS.items():
        assert tuple(rates.loc[judge, ["lenient items", "strict items", "unparsed items"]]) == \
            (lenient, strict, unparsed)
        assert rates.loc[judge, "lenient share"] == pytest.approx(lenient / 10)
        assert rates.loc[judge, "lenient - strict share"] == pytest.approx((lenient - strict) / 10)
    words = graders.grader_words(ar.graders(hand_audit))
    text = reading.directions_summary(rates.reset_index(), words)
    assert "**1.5B three-way judge** lenient 20.0%" in text and "strict 10.0%" in text
    assert "Most lenient" not in text  # no ranking by a point estimate
    lenient = ar.disagreement_items(hand_audit, "lenient").set_index("answer")
    assert len(lenient) == 3  # the 2nd, 4th and 5th verdict patterns
    second = lenient.loc[hand_audit.graded.loc[hand_audit.graded["judge_qwen05_3way"] == "partial",
                                               "answer"].iloc[0]]
    assert second["judges"] == "1.5B three-way judge: correct; 1.5B YES/NO judge: YES"
    assert second["grade"] == "partial"
    strict = ar.disagreement_items(hand_audit, "strict")
    assert len(strict) == 1 and strict["judges"].iloc[0] == \
        "1.5B three-way judge: wrong; 1.5B YES/NO judge: NO; rule-based reference grader: wrong"
    with pytest.raises(ValueError, match="lenient"):
        ar.disagreement_items(hand_audit, "sideways")


def test_confusion_by_hand(hand_audit):
    table = ar.confusion_tables(hand_audit)["1.5B YES/NO judge"]
    assert table.index.tolist() == ["YES", "NO", "unparsed"]
    assert table.to_numpy().tolist() == [[3, 1, 1], [1, 0, 3], [0, 0, 1]]
    assert ar.confusion_tables(hand_audit)["rule-based reference grader"].loc["unparsed"].sum() == 0


def test_agreement_kappa_equals_scikit_learn(synthetic):
    audit, _ = synthetic
    table = ar.agreement_table(audit, resamples=500, seed=1)
    human = audit.graded["grade"].to_numpy(dtype=object)
    for column in DEFAULT_JUDGE_COLUMNS:
        judge = audit.graded[column].to_numpy(dtype=object)
        rows = table[table["judge"] == ar.grader_name(column)].set_index("scale")
        binary = rows.loc["binary"]
        expected = cohen_kappa_score(binary_labels(judge), binary_labels(human))
        assert binary["kappa"] == pytest.approx(expected, abs=1e-12)
        assert binary["matches"] == (binary_labels(judge) == binary_labels(human)).sum()
        assert binary["kappa low"] < binary["kappa"] < binary["kappa high"]
        if column != "judge_qwen15_yesno":
            assert rows.loc["three-way", "kappa"] == pytest.approx(cohen_kappa_score(judge, human))
            assert rows.loc["three-way", "agreement"] == pytest.approx(np.mean(judge == human))
        else:
            assert "three-way" not in rows.index
    assert table["weighted agreement"].between(0, 1).all()
    weights = audit.graded["graded_weight"].to_numpy(dtype=float)
    for column in DEFAULT_JUDGE_COLUMNS:
        binary = table[(table["judge"] == ar.grader_name(column)) & (table["scale"] == "binary")].iloc[0]
        judge = binary_labels(audit.graded[column].to_numpy(dtype=object))
        expected = cohen_kappa_score(judge, binary_labels(human), sample_weight=weights)
        assert binary["weighted kappa"] == pytest.approx(expected, abs=1e-12)
        assert binary["weighted kappa low"] <= binary["weighted kappa"] <= binary["weighted kappa high"]


def test_weighted_kappa_estimates_the_population_kappa_where_the_sample_kappa_does_not():
    """Synthetic populations with a hidden true grade: over 30 seeded audit draws (stratified by
    the judges' verdicts, disagreement strata over-sampled, as post 06 draws), the mean design-
    weighted kappa of a judge against the true grade on the graded items is within 0.03 of the
    kappa on all items; the unweighted kappa of the same items is off by more than 0.1."""
    from chunklab_core.audit.synthetic import simulate_population
    from chunklab_core.stats.agreement import cohen_kappa, design_weighted_kappa

    column, gaps_weighted, gaps_plain = "judge_qwen05_3way", [], []
    for seed in range(30):
        population = simulate_population(1500, seed=seed)
        truth = binary_labels(population["true_grade"].to_numpy(dtype=object))
        judge = binary_labels(population[column].to_numpy(dtype=object))
        everyone = cohen_kappa_score(judge, truth)
        sheet, key = draw_audit_sample(population, n=150, seed=seed + 100, scale="pass/fail")
        rows = key["source_row"].to_numpy()
        gaps_weighted.append(design_weighted_kappa(judge[rows], truth[rows], key["weight"]) - everyone)
        gaps_plain.append(cohen_kappa(judge[rows], truth[rows]) - everyone)
    assert abs(np.mean(gaps_weighted)) < 0.03, np.mean(gaps_weighted)
    assert abs(np.mean(gaps_plain)) > 0.1, np.mean(gaps_plain)


def test_judge_pairs_use_the_whole_population(synthetic):
    audit, population = synthetic
    pairs, tables = ar.judge_pairs(audit, resamples=300, seed=1)
    assert len(pairs) == 6 + 3 and len(tables) == 6  # 6 pairs binary, 3 three-way pairs
    row = pairs[(pairs["judge a"] == "1.5B three-way judge") & (pairs["judge b"] == "rule-based reference grader")
                & (pairs["scale"] == "three-way")].iloc[0]
    assert row["items"] == len(population)
    assert row["kappa"] == pytest.approx(cohen_kappa_score(population["judge_qwen15_3way"],
                                                           population["reference_grader"]))
    assert tables[("1.5B three-way judge", "1.5B YES/NO judge")].to_numpy().sum() == len(population)


def test_kappa_intervals_resample_questions(synthetic):
    audit, population = synthetic  # three strategies' answers per question (qid = item // 3)
    assert len(set(ar.question_clusters(population))) == len(population) // 3
    assert ar.question_clusters(population.drop(columns=["qid"])) is None
    pairs, _ = ar.judge_pairs(audit, resamples=400, seed=1)
    row = pairs[(pairs["judge a"] == "1.5B three-way judge") & (pairs["judge b"] == "rule-based reference grader")
                & (pairs["scale"] == "binary")].iloc[0]
    x = binary_labels(population["judge_qwen15_3way"])
    y = binary_labels(population["reference_grader"])
    by_question = kappa_ci(x, y, resamples=400, seed=1, labels=list(ar.BINARY),
                           clusters=population["qid"].to_numpy())
    by_item = kappa_ci(x, y, resamples=400, seed=1, labels=list(ar.BINARY))
    assert (row["kappa low"], row["kappa high"]) == (by_question.low, by_question.high)
    assert (row["kappa low"], row["kappa high"]) != (by_item.low, by_item.high)


# ------------------------------------------------------------------ stratified estimates

STRATA_ALL = ["A"] * 6 + ["B"] * 4
JUDGE_ALL = [1, 1, 1, 0, 1, 1, 0, 0, 1, 0]
GRADED = dict(strata=["A", "A", "A", "B", "B"], judge=[1, 1, 0, 0, 1], human=[1, 0, 0, 1, 1])


def test_stratified_ppi_by_hand():
    # mean_all(f) = .6, var_all(f) = 2.4/9; rectifier A: [0,-1,0] (mean -1/3, var 1/3),
    # B: [1, 0] (mean .5, var .5); W = .6, .4.
    # theta = .6 + .6(-1/3) + .4(.5) = .6; se^2 = (2.4/9)/10 + .36(1/3)/3 + .16(.5)/2 = .10667
    result = stratified_ppi_mean_ci(JUDGE_ALL, STRATA_ALL, GRADED["judge"], GRADED["human"],
                                    GRADED["strata"])
    assert result.estimate == pytest.approx(0.6)
    assert result.se == pytest.approx(np.sqrt(2.4 / 90 + 0.04 + 0.04))
    assert (result.low, result.high) == pytest.approx((0.6 - Z95 * result.se, 0.6 + Z95 * result.se))
    assert result.per_stratum["variance"].tolist() == pytest.approx([1 / 3, 0.5])
    assert result.pooled_strata == []


def test_hand_grades_only_by_hand_and_against_design_weights():
    # ybar: A 1/3 (s^2 1/3), B 1 (s^2 0); estimate .6(1/3) + .4 = .6;
    # se^2 = .36(1/3)/3 + 0 + [.6(1/3 - .6)^2 + .4(1 - .6)^2]/10 = .04 + .010667
    result = stratified_mean_ci(GRADED["human"], GRADED["strata"], {"A": 6, "B": 4})
    assert result.estimate == pytest.approx(0.6)
    assert result.se == pytest.approx(np.sqrt(0.04 + (0.6 * (1 / 3 - 0.6) ** 2 + 0.4 * 0.16) / 10))
    weights = [6 / 3] * 3 + [4 / 2] * 2  # Hajek: sum w y / sum w with w = N_h / n_h
    assert result.estimate == pytest.approx(np.average(GRADED["human"], weights=weights))


def test_one_stratum_reduces_to_plain_ppi_and_plain_mean():
    rng = np.random.default_rng(3)
    judge_all = (rng.random(200) < 0.6).astype(float)
    graded = rng.choice(200, 40, replace=False)
    human = np.where(rng.random(40) < 0.8, judge_all[graded], 1 - judge_all[graded])
    stratified = stratified_ppi_mean_ci(judge_all, ["s"] * 200, judge_all[graded], human, ["s"] * 40)
    plain = ppi_mean_ci(judge_all, judge_all[graded], human)
    assert (stratified.estimate, stratified.low, stratified.high) == pytest.approx(tuple(plain.ppi))
    by_hand = stratified_mean_ci(human, ["s"] * 40, {"s": 200})
    assert (by_hand.estimate, by_hand.low, by_hand.high) == pytest.approx(tuple(plain.classical))
    naive = judge_only_mean_ci(judge_all)
    assert (naive.estimate, naive.low, naive.high) == pytest.approx(tuple(plain.naive))


def test_singleton_strata_pooled_or_fixed_and_bad_input():
    strata_all, judge_all = STRATA_ALL + ["C", "C"], JUDGE_ALL + [1, 0]
    args = (GRADED["judge"] + [1], GRADED["human"] + [0], GRADED["strata"] + ["C"])
    pooled = stratified_ppi_mean_ci(judge_all, strata_all, *args)
    # pooled variance = (2 * 1/3 + 1 * 1/2) / 3
    assert pooled.per_stratum.set_index("stratum").loc["C", "variance"] == pytest.approx(7 / 18)
    assert pooled.pooled_strata == ["C"]
    fixed = stratified_ppi_mean_ci(judge_all, strata_all, *args, singleton=0.25)
    assert fixed.per_stratum.set_index("stratum").loc["C", "variance_from"] == "fixed"

    def se_from(table):  # se^2 = var_all(f)/N + sum_h W_h^2 var_h / n_h
        return np.sqrt(np.var(judge_all, ddof=1) / 12
                       + np.sum(table["share"] ** 2 * table["variance"] / table["graded"]))
    assert pooled.se == pytest.approx(se_from(pooled.per_stratum))
    assert fixed.se == pytest.approx(se_from(fixed.per_stratum)) and fixed.se < pooled.se
    with pytest.raises(ValueError, match=r"no graded item: \['C'\]"):
        stratified_ppi_mean_ci(judge_all, strata_all, GRADED["judge"], GRADED["human"],
                               GRADED["strata"])
    with pytest.raises(ValueError, match="does not have"):
        stratified_mean_ci([1, 0], ["A", "Z"], {"A": 5})
    with pytest.raises(ValueError, match="single graded item"):
        stratified_mean_ci([1, 0], ["A", "B"], {"A": 5, "B": 5})
    with pytest.raises(ValueError, match="same graded items"):
        stratified_ppi_mean_ci(JUDGE_ALL, STRATA_ALL, [1, 0], [1], ["A", "A"])
    with pytest.raises(ValueError, match="NaN"):
        stratified_mean_ci([1, np.nan], ["A", "A"], {"A": 5})


def test_stratified_ppi_covers_the_truth_where_the_judge_does_not():
    """Superpopulation: a lenient judge and a strict one; the sample stratified by their verdicts
    (as the audit draws it), or by the strict judge only (the lenient judge then varies within
    strata). Over 300 seeded populations the 95% intervals should cover the true rate ~95%."""
    true_rate, n_all, n_graded, repeats = 0.55, 1000, 100, 300
    rng = np.random.default_rng(2026)
    covered = {"ppi": 0, "hand": 0, "naive": 0, "ppi other strata": 0}
    estimates, errors = [], []
    for _ in range(repeats):
        human = (rng.random(n_all) < true_rate).astype(float)
        lenient = np.where(human == 1, rng.random(n_all) < 0.92, rng.random(n_all) < 0.35) * 1.0
        strict = np.where(human == 1, rng.random(n_all) < 0.75, rng.random(n_all) < 0.10) * 1.0
        results = {}
        for name, strata in (("ppi", np.char.add(lenient.astype(int).astype(str),
                                                  strict.astype(int).astype(str))),
                             ("ppi other strata", strict.astype(int).astype(str))):
            labels = sorted(set(strata))
            sizes = [int((strata == s).sum()) for s in labels]
            counts = allocate_sample(sizes, [len(set(s)) > 1 for s in labels], n_graded)
            graded = np.concatenate([rng.choice(np.flatnonzero(strata == s), k, replace=False)
                                     for s, k in zip(labels, counts)])
            results[name] = stratified_ppi_mean_ci(lenient, strata, lenient[graded], human[graded],
                                                   strata[graded])
            if name == "ppi":
                results["hand"] = stratified_mean_ci(human[graded], strata[graded],
                                                     dict(zip(labels, sizes)))
        results["naive"] = judge_only_mean_ci(lenient)
        for name, result in results.items():
            covered[name] += result.low <= true_rate <= result.high
        order = ("ppi", "hand", "naive", "ppi other strata")
        estimates.append([results[k].estimate for k in order])
        errors.append([results[k].se for k in order])
    coverage = {name: count / repeats for name, count in covered.items()}
    ppi, hand, naive, other = np.mean(estimates, axis=0)
    # the standard errors match the spread of the estimates across populations
    se_over_sd = np.mean(errors, axis=0) / np.std(estimates, axis=0)
    assert np.all((se_over_sd[[0, 1, 3]] > 0.85) & (se_over_sd[[0, 1, 3]] < 1.15)), se_over_sd
    for name in ("ppi", "hand", "ppi other strata"):  # binomial sd of a 300-run coverage: 0.013
        assert 0.90 <= coverage[name] <= 0.99, coverage
    assert coverage["naive"] < 0.05 and naive - true_rate > 0.1
    assert abs(ppi - true_rate) < 0.01 and abs(other - true_rate) < 0.01
    assert ppi == pytest.approx(hand)  # judge constant within its own verdict strata


# ------------------------------------------------------------------ corrected accuracy

def test_corrected_accuracy_on_synthetic(synthetic):
    audit, population = synthetic
    table = ar.corrected_accuracy(audit)
    assert set(table["variant"]) == {"strict", "lenient"} and len(table) == 2 * 4 * 3
    for (judge, variant), rows in table.groupby(["judge", "variant"]):
        by = rows.set_index("estimator")["accuracy"]
        assert by["PPI (judge + grades)"] == pytest.approx(by["grades only"], abs=1e-12)
        column = next(c for c in DEFAULT_JUDGE_COLUMNS if ar.grader_name(c) == judge)
        assert by["judge only"] == pytest.approx(
            binary_scores(population[column], variant == "lenient").mean())
    hand = table[(table["variant"] == "strict") & (table["estimator"] == "grades only")].iloc[0]
    weights = audit.graded["graded_weight"]
    assert hand["accuracy"] == pytest.approx(np.average(binary_scores(audit.graded["grade"]),
                                                        weights=weights))


def test_corrected_accuracy_refuses_an_ungraded_stratum(tmp_path):
    population, grade_of = hand_population()
    files = write_audit(tmp_path, population, grade_of, blank=10 - 2)  # only 2 graded
    audit = load_audit(files["sheet"], files["key"], files["population"])
    assert audit.empty_strata
    with pytest.raises(ValueError, match="no graded item"):
        ar.corrected_accuracy(audit)
    assert ar.agreement_table(audit, resamples=100)["weighted agreement"].isna().all()
    empty = len(audit.empty_strata)
    assert reading.accuracy_not_estimated(audit) == (
        f"Not estimated: {empty} verdict pattern{'' if empty == 1 else 's'} "
        f"{'has' if empty == 1 else 'have'} no graded item yet.")


def test_not_estimated_sentence_agrees_with_its_count():
    from types import SimpleNamespace

    assert reading.accuracy_not_estimated(SimpleNamespace(empty_strata=["a"])) == (
        "Not estimated: 1 verdict pattern has no graded item yet.")
    assert reading.accuracy_not_estimated(SimpleNamespace(empty_strata=["a", "b"])) == (
        "Not estimated: 2 verdict patterns have no graded item yet.")


# ------------------------------------------------------------------ prose from the tables

def test_prose_states_the_computed_numbers(synthetic):
    audit, _ = synthetic
    words = graders.grader_words(ar.graders(audit))
    agreement = ar.agreement_table(audit, resamples=300, seed=1)
    contrasts = paired.agreement_contrasts(audit, resamples=300, seed=1)
    binary = agreement[agreement["scale"] == "binary"]
    text = reading.agreement_summary(agreement, contrasts, words)
    for _, row in binary.iterrows():
        assert f"{row['judge']} κ = {row['kappa']:.2f} [{row['kappa low']:.2f}" in text
        assert f"{row['judge']} κ = {row['weighted kappa']:.2f} [{row['weighted kappa low']:.2f}" in text
    assert text.index("for the population") < text.index("unweighted") < text.index("not comparable")
    assert "agrees best" not in text  # judges are not ranked by a point estimate
    accuracy = ar.corrected_accuracy(audit)
    differences = paired.paired_differences(audit, resamples=300, seed=1)
    grades = accuracy[(accuracy["variant"] == "strict")
                      & (accuracy["estimator"] == "grades only")].iloc[0]
    summary = reading.accuracy_summary(accuracy, differences, words, 0.07)
    share = reading.ci(grades["accuracy"], grades["low"], grades["high"], True)
    assert f"{share} of the answers are correct" in summary and f"{grades['accuracy']:.1%} [" in share
    assert "Every PPI estimate equals the grades-only one" in summary
    design = ar.sampling_design(audit)
    who = ar.graders(audit)
    assert who["items graded"].tolist() == [len(audit.graded)]
    assert f"the {len(audit.population)} answered items" in reading.design_summary(audit, design, words)
    closing = reading_bias.honest_reading(audit, words, accuracy, differences,
                                          paired.judge_contrasts(audit, resamples=300), 0.07)
    assert f"{len(audit.graded)} of {len(audit.population)} answers" in closing


# ------------------------------------------------------------------ the notebook, end to end

@pytest.mark.slow
def test_notebook_runs_on_a_synthetic_audit(tmp_path):
    """Notebook 06 executed by papermill on synthetic files: no error, every figure shown."""
    import nbformat
    import papermill

    from chunklab_core.core.paths import NOTEBOOKS_DIR

    files, _ = write_synthetic_audit(tmp_path, n_items=300, n_sample=80, seed=6)
    out = tmp_path / "06.ipynb"
    papermill.execute_notebook(str(NOTEBOOKS_DIR / "src" / "06_judge_audit.ipynb"), str(out),
                               kernel_name="chunklab", progress_bar=False,
                               parameters={"SHEET": str(files["sheet"]), "KEY": str(files["key"]),
                                           "POPULATION": str(files["population"]),
                                           "RESAMPLES": 500, "WRITE_OUTPUTS": False})
    outputs = [o for c in nbformat.read(out, as_version=4).cells for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    assert sum("image/png" in o.get("data", {}) for o in outputs) == 5


def test_prose_names_read_in_sentences(synthetic):
    """A judge that opens a sentence is capitalised; pairs read "A vs B"; no "·" between names."""
    audit, _ = synthetic
    words = graders.grader_words(ar.graders(audit))
    accuracy = ar.corrected_accuracy(audit)
    differences = paired.paired_differences(audit, resamples=300, seed=1)
    summary = reading.accuracy_summary(accuracy, differences, words, 0.07)
    assert "The rule-based reference grader alone says" in summary
    assert "The 1.5B three-way judge alone says" in summary
    assert ". rule-based" not in summary and ". 1.5B" not in summary
    text = reading.pairs_summary(ar.judge_pairs(audit, resamples=300, seed=1)[0], words)
    assert "1.5B three-way judge vs 1.5B YES/NO judge, κ = " in text and "·" not in text


def _retest(items: int, drew: int):
    from chunklab_core.audit.bias import Retest

    summary = pd.DataFrame({"judge": ["1.5B three-way judge", "0.5B three-way judge"], "items": items,
                            "samples per item": 3, "unparsed": 0, "verdicts changed": [0.0, 0.1],
                            "verdicts changed low": [0.0, 0.0], "verdicts changed high": [0.0, 0.3],
                            "items with a pass/fail flip": [0.0, 0.2],
                            "items with a pass/fail flip low": [0.0, 0.0],
                            "items with a pass/fail flip high": [0.0, 0.5]})
    return Retest(pd.DataFrame({"item_id": [f"A{i}" for i in range(items)]}), pd.DataFrame(), summary, drew)


def test_stability_summary_says_how_many_items_replayed_and_names_the_judges():
    probes = pd.DataFrame({"judge": ["qwen15_3way", "qwen15_yesno", "qwen05_3way"], "retest_changed": 0.0})
    text = reading_bias.stability_summary(_retest(3, 30), probes, 0.7)
    assert "with 3 sampling seeds on 3 of the 30 items of a seeded subset" in text
    assert "records the missing ones). The 1.5B three-way judge: 0.0% of sampled verdicts" in text
    assert "the 0.5B three-way judge: 10.0%" in text
    assert "none of 3 items" in text  # the exact upper bound where nothing changed
    assert ("changed 0% of the 1.5B three-way judge's verdicts, 0% of the 1.5B YES/NO judge's verdicts, "
            "0% of the 0.5B three-way judge's verdicts") in text
    assert "qwen" not in text
    assert "on all 30 items of a seeded subset" in reading_bias.stability_summary(_retest(30, 30), None, 0.7)


def test_ordered_pairs_read_with_articles():
    row = pd.Series({"judge a": "1.5B YES/NO judge", "judge b": "rule-based reference grader",
                     "low": -0.18, "high": -0.07, "bias a - bias b": -0.12})
    text = reading._ordered(row, "passes more answers than", False, "bias a - bias b")
    assert text == ("the rule-based reference grader passes more answers than the 1.5B YES/NO judge "
                    "(+12.0 points [+7.0, +18.0])")


def test_readable_sample_shows_every_erring_judge_and_keeps_item_order():
    items = pd.DataFrame({"item": ["A005", "A001", "A003", "A002", "A004"],
                          "judges": ["x: correct", "x: correct; y: YES", "x: correct", "z: correct",
                                     "y: YES"]})
    # rounds by judge in first-appearance order (x, y, z; by item id): x -> A001, y -> A004
    # (A001 is taken), z -> A002; then x -> A003
    assert ar.readable_sample(items, 3)["item"].tolist() == ["A001", "A002", "A004"]
    assert ar.readable_sample(items, 4)["item"].tolist() == ["A001", "A002", "A003", "A004"]
    assert ar.readable_sample(items, 9) is items
    with pytest.raises(ValueError, match="at least 1"):
        ar.readable_sample(items, 0)


def test_honest_reading_reports_every_judges_population_kappa(synthetic):
    audit, _ = synthetic
    words = graders.grader_words(ar.graders(audit))
    agreement = ar.agreement_table(audit, resamples=200, seed=1)
    accuracy = ar.corrected_accuracy(audit)
    differences = paired.paired_differences(audit, resamples=200, seed=1)
    text = reading_bias.honest_reading(audit, words, accuracy, differences,
                                       paired.judge_contrasts(audit, resamples=200), 0.07, agreement)
    binary = agreement[agreement["scale"] == "binary"]
    assert len(binary) == len(audit.judge_columns)
    for _, row in binary.iterrows():  # every judge, not a selection
        assert f"{row['judge']} {reading.ci(row['weighted kappa'], row['weighted kappa low'], row['weighted kappa high'])}" in text
    assert "corrected" not in text and "independent grad" not in text


def test_kappa_figure_shows_the_population_and_the_sheet():
    import matplotlib

    matplotlib.use("Agg")
    from chunklab_core.reports.post06.figures import plot_kappa

    table = pd.DataFrame({"judge": ["j1", "j1", "j2"], "against": "g", "scale": ["three-way", "binary", "binary"],
                          "kappa": [0.5, 0.4, 0.1], "kappa low": [0.3, 0.2, -0.1], "kappa high": [0.7, 0.6, 0.3],
                          "weighted kappa": [0.7, 0.6, 0.3], "weighted kappa low": [0.5, 0.4, 0.1],
                          "weighted kappa high": [0.9, 0.8, 0.5]})
    ax = plot_kappa(table, "the grades").axes[0]
    labels = [c.get_label() for c in ax.containers]
    assert labels == ["three-way, for the population (weighted)", "binary, for the population (weighted)",
                      "three-way, sheet as drawn", "binary, sheet as drawn"]
    weighted = ax.containers[1].lines[0].get_xdata().tolist()
    assert weighted == [0.6, 0.3]  # the binary weighted kappas of j1 and j2, as in the table
    assert ax.containers[3].lines[0].get_markerfacecolor() == "white"
