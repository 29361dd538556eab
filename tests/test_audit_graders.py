"""Post 06's graders: kinds and the wording rule, several sheets and adjudication, the paired
difference (hand-computed fixture, cross-checked against numpy and scipy), the sample
sizing from a precision target, batch grading, and the committed v2 audit."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from scipy.stats import bootstrap

from chunklab_core.audit import graders
from chunklab_core.audit import paired
from chunklab_core.reports.post06 import reading
from chunklab_core.reports.post06 import reading_bias
from chunklab_core.reports.post06 import tables as ar
from chunklab_core.audit.bias import reference_advantage, self_preference
from chunklab_core.audit.loading import AuditError, for_grader, load_audit
from chunklab_core.audit.sample import draw_audit_sample
from chunklab_core.audit.sizing import (items_to_halve_interval, planned_half_width,
                                        planning_variances, sample_size_for_precision)
from chunklab_core.audit.synthetic import write_synthetic_audit
from chunklab_core.audit.grade_batch import apply_grades
from chunklab_core.core.paths import AUDIT_DIR
from chunklab_core.audit.sheets import (DEFAULT_JUDGE_COLUMNS, SheetError, grader_kind_problem,
                                  import_grades, read_sheet, write_key, write_sheet)

HUMAN_WORDS = re.compile(r"\b(hand|person|people|human|humans|persons)\b", re.IGNORECASE)


# ------------------------------------------------------------------ kinds

def test_grader_kinds():
    assert grader_kind_problem("human") is None
    assert grader_kind_problem("model:claude") is None
    assert grader_kind_problem("model:qwen-1.5b/q8") is None
    for bad in ("", "Human", "model:", "model: x", "robot", "model:a b"):
        assert grader_kind_problem(bad), bad


def test_import_requires_a_kind(tmp_path):
    files, _ = write_synthetic_audit(tmp_path, n_items=240, n_sample=60, seed=4)
    _, rows = read_sheet(files["sheet"])
    for row in rows:
        row["grader_kind"] = ""
    write_sheet(pd.DataFrame(rows), files["sheet"])
    with pytest.raises(SheetError, match="no grader_kind"):
        import_grades(files["sheet"], require_kind=True)
    assert import_grades(files["sheet"], grader_kind="human")["grader_kind"].eq("human").all()
    rows[0]["grader_kind"] = "robot"
    write_sheet(pd.DataFrame(rows), files["sheet"])
    with pytest.raises(SheetError, match="row 2: grader_kind 'robot'"):
        import_grades(files["sheet"], grader_kind="human")


# ------------------------------------------------------------------ adjudication

def test_adjudicate_majority_then_lowest_tied_grade():
    labels = pd.DataFrame({"a": ["correct", "correct", "partial", "correct", None, "wrong"],
                           "b": ["correct", "wrong", "correct", None, None, "partial"],
                           "c": ["wrong", None, None, None, None, "partial"]})
    assert list(graders.adjudicate(labels)) == ["correct", "wrong", "partial", "correct", None,
                                                "partial"]
    with pytest.raises(ValueError, match="unknown grade"):
        graders.adjudicate(pd.DataFrame({"a": ["maybe"]}))


# ------------------------------------------------------------------ several sheets

@pytest.fixture(scope="module")
def two_graders(tmp_path_factory):
    folder = tmp_path_factory.mktemp("two")
    files, population = write_synthetic_audit(folder, n_items=240, n_sample=60, seed=4,
                                              second_grader="second", second_kind="human",
                                              second_flip=0.3)
    audit = load_audit([files["sheet"], files["sheet_2"]], files["key"], files["population"])
    return audit, files


def test_several_sheets_adjudicate_and_split_by_grader(two_graders):
    audit, files = two_graders
    assert len(audit.grades) == 2 * len(audit.graded) == 120
    wide = audit.grades.pivot(index="item_id", columns="grader", values="grade")
    expected = graders.adjudicate(wide)
    assert list(audit.graded["grade"]) == list(expected.loc[audit.graded["item_id"]])
    assert (wide["second"] != wide["synthetic-grader"]).any()  # the fixture has disagreements
    second = for_grader(audit, "second")
    assert list(second.graded["grade"]) == list(wide.loc[second.graded["item_id"], "second"])
    table = ar.agreement_table(audit, resamples=200)
    assert set(table["against"]) == {"synthetic-grader", "second", "adjudicated"}
    pairs = graders.grader_agreement(audit.grades, resamples=200)
    three = pairs[pairs["scale"] == "three-way"].iloc[0]
    assert three["items"] == 60 and three["matches"] == int((wide["second"] == wide["synthetic-grader"]).sum())
    differing = graders.grader_disagreements(audit.grades, audit.graded.set_index("item_id"))
    assert len(differing) == 60 - three["matches"]


def test_several_sheets_refuse_a_grader_twice(two_graders, tmp_path):
    _, files = two_graders
    with pytest.raises(AuditError, match="graded twice by the same grader"):
        load_audit([files["sheet"], files["sheet"]], files["key"], files["population"])


# ------------------------------------------------------------------ the wording rule

def _all_prose(audit) -> list[str]:
    who = ar.graders(audit)
    words = graders.grader_words(who)
    design = ar.sampling_design(audit)
    agreement = ar.agreement_table(audit, resamples=100)
    accuracy = ar.corrected_accuracy(audit)
    differences = paired.paired_differences(audit, resamples=100)
    contrasts = paired.judge_contrasts(audit, resamples=100)
    pairs, _ = ar.judge_pairs(audit, resamples=100)
    tagged, table = reference_advantage(audit)
    confusion = ar.confusion_tables(audit, words.grade)
    return [reading.design_summary(audit, design, words),
            reading.graders_summary(audit, graders.grader_agreement(audit.grades, 100), agreement, words),
            reading.agreement_summary(agreement, paired.agreement_contrasts(audit, 100), words),
            reading.directions_summary(paired.direction_rates(audit, 100), words),
            reading.accuracy_summary(accuracy, differences, words, 0.07),
            reading.contrasts_summary(contrasts), reading.pairs_summary(pairs, words),
            reading.quoted_items(ar.disagreement_items(audit, "lenient"), words, "None."),
            reading_bias.reference_summary(tagged, table, agreement, words),
            reading_bias.self_preference_summary(self_preference(audit, resamples=100)),
            reading_bias.honest_reading(audit, words, accuracy, differences, contrasts, 0.07),
            " ".join(t.columns.name + " " + t.index.name for t in confusion.values()),
            " ".join(accuracy["estimator"]), words.grades, words.grade]


@pytest.mark.parametrize("kind", ["model:synthetic", "human"])
def test_words_follow_the_grader_kind(tmp_path, kind):
    files, _ = write_synthetic_audit(tmp_path, n_items=240, n_sample=60, seed=4, grader_kind=kind)
    text = "\n".join(_all_prose(load_audit(files["sheet"], files["key"], files["population"])))
    if kind == "human":
        assert "hand grades" in text and "1 person" in text
    else:
        assert not HUMAN_WORDS.search(text), HUMAN_WORDS.search(text)
        assert "model" in text


def test_mixed_graders_name_both_kinds(two_graders):
    words = graders.grader_words(ar.graders(two_graders[0]))
    assert not words.all_human and words.any_human
    assert "1 human and 1 model grader(s)" in words.who and words.grades == "the graders' grades"


# ------------------------------------------------------------------ the paired difference

def test_weighted_mean_against_numpy_and_scipy():
    values = np.tile([1.0, 0.0, -1.0, 0.0, 1.0, 1.0], 2)
    weights = np.tile([2.0, 2.0, 1.0, 1.0, 3.0, 3.0], 2)
    result = paired.weighted_mean_ci(values, weights, [f"q{i}" for i in range(12)], 2000, 0)
    assert result.estimate == pytest.approx(7 / 12)  # (2 + 0 - 1 + 0 + 3 + 3) / 12, by hand
    assert result.estimate == pytest.approx(np.average(values, weights=weights))
    rng = np.random.default_rng(1)
    x = rng.random(200)
    mine = paired.weighted_mean_ci(x, np.ones(200), np.arange(200), 4000, 3)
    ref = bootstrap((x,), np.mean, n_resamples=4000, method="percentile", random_state=3)
    assert mine.low == pytest.approx(ref.confidence_interval.low, abs=0.01)
    assert mine.high == pytest.approx(ref.confidence_interval.high, abs=0.01)


def _tiny_audit(tmp_path, grade_b: str):
    """6 items: stratum A (every judge passes) 4 items, B (every judge fails) 2; 2 + 1 graded."""
    rows = []
    for i in range(6):
        verdicts = ("correct", "YES", "correct", "correct") if i < 4 else ("wrong", "NO", "wrong", "wrong")
        rows.append({"item_id": f"q{i}|s", "corpus": "hand", "qid": f"q{i}", "strategy": "s",
                     "question": f"Q{i}?", "reference": "R", "answer": f"A{i}", "passage": "P",
                     **dict(zip(DEFAULT_JUDGE_COLUMNS, verdicts))})
    population = pd.DataFrame(rows)
    sheet, key = draw_audit_sample(population, 3, seed=0, min_per_stratum=1, scale="pass/fail")
    in_a = key["stratum"].str.startswith("pass").to_numpy()
    assert in_a.sum() == 2  # the allocation gives A the extra item
    grades_a = iter(["correct", "wrong"])
    sheet["grade"] = [next(grades_a) if a else grade_b for a in in_a]
    sheet["grader"], sheet["grader_kind"] = "g", "model:test"
    sheet["graded_at"] = "2026-11-30T10:00:00+00:00"
    population.drop(columns="passage").to_csv(tmp_path / "p.csv", index=False)
    write_key(key, tmp_path / "k.csv")
    write_sheet(sheet, tmp_path / "s.csv")
    return load_audit(tmp_path / "s.csv", tmp_path / "k.csv", tmp_path / "p.csv")


@pytest.mark.filterwarnings("ignore:only 3 documents")
@pytest.mark.parametrize("grade_b, expected", [("wrong", 1 / 3), ("correct", 0.0)])
def test_paired_difference_by_hand(tmp_path, grade_b, expected):
    # judge-only (strict) = 4/6 for every judge; corrected = (4/6)(1/2) + (2/6)[grade_b correct]
    # -> judge-only minus corrected = 1/3 when B is graded wrong, 0 when correct
    audit = _tiny_audit(tmp_path, grade_b)
    table = paired.paired_differences(audit, resamples=200, variants=("strict",))
    assert table["difference"].to_numpy() == pytest.approx([expected] * 4)
    accuracy = ar.corrected_accuracy(audit, variants=("strict",))
    naive = accuracy[accuracy["estimator"] == "judge only"]["accuracy"].to_numpy()
    corrected = accuracy[accuracy["estimator"] == "grades only"]["accuracy"].to_numpy()
    assert naive - corrected == pytest.approx(table["difference"].to_numpy())


def test_reading_rule():
    assert paired.reading_of(0.01, 0.2) == "higher"
    assert paired.reading_of(-0.2, -0.01) == "lower"
    assert paired.reading_of(-0.01, 0.2) == "cannot be told apart"


# ------------------------------------------------------------------ sizing

def test_planned_half_width_by_hand():
    # W = (.75, .25); var = .75^2 * .25/30 + .25^2 * .25/10 = 0.00625; z * sqrt(var)
    assert planned_half_width([300, 100], [0.25, 0.25], [30, 10]) == \
        pytest.approx(1.959963984540054 * np.sqrt(0.00625))


def test_planning_variance_upper_bound_by_hand():
    # 0 minority grades in 10 agreement items: Clopper-Pearson upper bound 1 - 0.05^(1/10)
    upper = 1 - 0.05 ** (1 / 10)
    result = planning_variances([1.0] * 10, ["s"] * 10, [False] * 10)
    assert result[False] == pytest.approx(upper * (1 - upper))
    assert result[True] == 0.25  # no pilot item: the worst case


def test_sample_size_meets_the_target_and_is_at_least_120():
    sizes, flags = [400, 120, 60, 30, 26], [False, False, True, True, True]
    variances = [0.12, 0.12, 0.2, 0.2, 0.2]
    n, width = sample_size_for_precision(sizes, flags, variances, 0.07, min_n=120)
    assert n >= 120 and width <= 0.07
    n_loose, _ = sample_size_for_precision(sizes, flags, variances, 0.5, min_n=120)
    assert n_loose == 120
    with pytest.raises(ValueError, match="exceeds"):
        sample_size_for_precision(sizes, flags, variances, 0.07, min_n=1000)
    assert items_to_halve_interval(140) == (560, 420)


# ------------------------------------------------------------------ batch grading

def test_grade_batch_writes_validates_and_never_overwrites(tmp_path):
    files, _ = write_synthetic_audit(tmp_path, n_items=240, n_sample=60, seed=4, ungraded=30)
    ids = [r["item_id"] for r in read_sheet(files["sheet"])[1]][::-1]  # the last 30 are blank
    batch = [{"item_id": ids[0], "grade": "c", "note": "fine"}, {"item_id": ids[1], "grade": "wrong"}]
    with pytest.raises(SheetError) as info:
        apply_grades(files["sheet"], batch + [{"item_id": "nope", "grade": "c"},
                                              {"item_id": ids[2], "grade": "maybe"}], "g", "robot")
    assert len(info.value.problems) == 3  # bad kind, unknown id, bad label: all at once
    assert sum(bool(r["grade"]) for r in read_sheet(files["sheet"])[1]) == 30  # nothing written
    assert apply_grades(files["sheet"], batch, "claude-test", "model:claude") == 2
    rows = {r["item_id"]: r for r in read_sheet(files["sheet"])[1]}
    assert rows[ids[0]]["grade"] == "correct" and rows[ids[0]]["grader_kind"] == "model:claude"
    with pytest.raises(SheetError, match="already graded"):
        apply_grades(files["sheet"], batch[:1], "claude-test", "model:claude")
    with pytest.raises(SheetError, match="already graded"):
        apply_grades(files["sheet"], [{"item_id": ids[-1], "grade": "w"}], "g", "human")


# ------------------------------------------------------------------ the committed audit

def test_committed_v2_audit_is_whole_and_model_graded():
    audit = load_audit(AUDIT_DIR / "post05_v2_sheet.csv", AUDIT_DIR / "post05_v2_key.csv",
                       AUDIT_DIR / "post05_v2_population.csv")
    assert len(audit.graded) >= 120 and audit.ungraded.empty and not audit.empty_strata
    assert set(audit.grades["grader_kind"]) == {"model:claude"}
    assert sum(audit.stratum_sizes.values()) == len(audit.population)
    assert set(audit.population["corpus"]) == {"squad", "nq"}
    words = graders.grader_words(ar.graders(audit))
    assert not words.any_human and not HUMAN_WORDS.search(words.grades + words.grade)


def test_readme_audit_claims_match_the_files():
    """The audit page (docs/auditing.md, linked from the README) states sheet sizes and the pilot's
    stamps: they match the files."""
    from chunklab_core.core.paths import PROJ_ROOT

    text = (PROJ_ROOT / "docs" / "auditing.md").read_text(encoding="utf-8")
    section = text[text.index("## Auditing the LLM judges"):]
    v2 = import_grades(AUDIT_DIR / "post05_v2_sheet.csv")
    pilot = import_grades(AUDIT_DIR / "post05_sheet.csv")
    pilot_population = pd.read_csv(AUDIT_DIR / "post05_population.csv")
    assert f"post05_v2_sheet.csv` ({len(v2)} items)" in section
    assert f"{len(pilot)}-item sheet" in section and f"from the {len(pilot_population)} items" in section
    stamps = pd.to_datetime(pilot["graded_at"], format="ISO8601")
    assert f"its {pilot['graded'].sum()} stamps fall\nwithin {(stamps.max() - stamps.min()).seconds} seconds" \
        in section.replace("stamps fall within", "stamps fall\nwithin")
    for grader, kind in set(zip(v2["grader"], v2["grader_kind"])) | set(zip(pilot["grader"], pilot["grader_kind"])):
        assert f"`{grader}`" in section and kind == "model:claude"


# ------------------------------------------------------------------ a second wave

def test_top_up_adds_a_wave_and_keeps_the_grades(tmp_path):
    from chunklab_core.audit.synthetic import simulate_population
    from chunklab_core.audit.topup import top_up

    full = simulate_population(300, seed=9)
    first = full.iloc[:240].reset_index(drop=True)
    sheet, key = draw_audit_sample(first, 80, seed=1, scale="pass/fail")
    sheet["grade"] = first["true_grade"].to_numpy()[key["source_row"].to_numpy()]
    sheet["grader"], sheet["grader_kind"], sheet["graded_at"] = "g", "model:test", "2026-11-30T10:00:00Z"
    first.drop(columns=["passage", "true_grade"]).to_csv(tmp_path / "w_population.csv", index=False)
    write_key(key, tmp_path / "w_key.csv")
    write_sheet(sheet, tmp_path / "w_sheet.csv")
    before = read_sheet(tmp_path / "w_sheet.csv")[1]
    added = top_up(tmp_path, "w", full.drop(columns="true_grade"), seed=2)
    assert 0 < added <= 60  # a wave of 60 items: the first wave's rate, at least 2 per pattern
    rows = read_sheet(tmp_path / "w_sheet.csv")[1]
    assert rows[:80] == before and len(rows) == 80 + added
    audit = load_audit(tmp_path / "w_sheet.csv", tmp_path / "w_key.csv", tmp_path / "w_population.csv")
    assert len(audit.population) == 300 and len(audit.ungraded) == added
    assert all(s.startswith("wave 2: ") for s in audit.ungraded["stratum"])
    assert sum(v for s, v in audit.stratum_sizes.items() if s.startswith("wave 2: ")) == 60
    assert top_up(tmp_path, "w", full.drop(columns="true_grade"), seed=2) == 0
