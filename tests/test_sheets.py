"""Audit sampling (allocation pinned by hand), sheet/key files, and import validation."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from chunklab_core.audit.sample import allocate_sample, draw_audit_sample
from chunklab_core.audit.sheets import (DEFAULT_JUDGE_COLUMNS, SHEET_COLUMNS, SheetError,
                                  import_grades, normalize_label, read_key, read_sheet,
                                  write_key, write_sheet, write_sheet_rows)

AGREE_C = ("correct",) * 4
AGREE_W = ("wrong",) * 4
SPLIT_1 = ("correct", "correct", "wrong", "correct")
SPLIT_2 = ("partial", "correct", "correct", "correct")
SPLIT_3 = ("wrong", "correct", "unparsed", "correct")


def graded_table() -> pd.DataFrame:
    """154 answers in five verdict patterns of sizes 100, 40, 10, 3, 1 (shuffled order)."""
    patterns = [AGREE_C] * 100 + [AGREE_W] * 40 + [SPLIT_1] * 10 + [SPLIT_2] * 3 + [SPLIT_3]
    order = np.random.default_rng(0).permutation(len(patterns))
    rows = []
    for i, j in enumerate(order):
        rows.append(dict(item_id=f"it{i:03d}", qid=f"q{i % 77}", strategy=f"s{i // 77}",
                         question=f"Question {i}?", reference=["gold", f"alt {i}"] if i % 9 == 0
                         else f"ref {i}", passage=f"Passage {i}, with \"quotes\"\nand lines.",
                         contexts="ctx", answer=f"answer {i}",
                         **dict(zip(DEFAULT_JUDGE_COLUMNS, patterns[j]))))
    return pd.DataFrame(rows)


# ------------------------------------------------------------------ allocation rule

def test_allocation_pinned_by_hand():
    # floors 2,2,2,2,1 (9), R=21; singleton has no room; pull 100,40,30,9 -> SPLIT_2 quota
    # 21*9/179=1.06 >= its 1 spare row -> capped; R=20 over pull 170: 11.76, 4.71, 3.53 ->
    # floors 11,4,3 and the 2 leftovers go to the fractions .76 and .71.
    assert allocate_sample([100, 40, 10, 3, 1], [False, False, True, True, True], 30) \
        == [14, 7, 5, 3, 1]


def test_allocation_proportional_and_capped():
    assert allocate_sample([50, 30, 20], [False] * 3, 16) == [7, 5, 4]  # 6 + (5, 3, 2)
    # floors 2,2; quota of the small disagreement stratum 16*50/150 = 5.3 >= 3 spare -> all 5
    assert allocate_sample([5, 100], [True, False], 20, disagreement_factor=10) == [5, 15]
    assert allocate_sample([5, 100], [True, False], 105) == [5, 100]


def test_allocation_rejects_impossible_requests():
    with pytest.raises(ValueError, match="min_per_stratum=2"):
        allocate_sample([10] * 5, [False] * 5, 9)
    with pytest.raises(ValueError, match="between 1 and the 50 rows"):
        allocate_sample([10] * 5, [False] * 5, 51)


# ------------------------------------------------------------------ sampling

def test_same_seed_same_sheet_and_other_seed_differs():
    graded = graded_table()
    sheet1, key1 = draw_audit_sample(graded, n=30, seed=6)
    sheet2, key2 = draw_audit_sample(graded, n=30, seed=6)
    pd.testing.assert_frame_equal(sheet1, sheet2)
    pd.testing.assert_frame_equal(key1, key2)
    sheet3, _ = draw_audit_sample(graded, n=30, seed=7)
    assert list(sheet3["question"]) != list(sheet1["question"])


def test_every_pattern_represented_and_disagreements_oversampled():
    graded = graded_table()
    _, key = draw_audit_sample(graded, n=30, seed=6)
    counts = key["stratum"].value_counts()
    expected = {"|".join(AGREE_C): 14, "|".join(AGREE_W): 7, "|".join(SPLIT_1): 5,
                "|".join(SPLIT_2): 3, "|".join(SPLIT_3): 1}
    assert counts.to_dict() == expected
    assert set(key.loc[key["disagreement"], "stratum"]) == {"|".join(s) for s in
                                                          (SPLIT_1, SPLIT_2, SPLIT_3)}
    assert key.loc[key["disagreement"], "inclusion_prob"].min() \
        > key.loc[~key["disagreement"], "inclusion_prob"].max()


def test_weights_are_inverse_inclusion_probabilities_summing_to_the_table():
    graded = graded_table()
    _, key = draw_audit_sample(graded, n=30, seed=6)
    np.testing.assert_allclose(key["weight"] * key["inclusion_prob"], 1.0)
    assert key["weight"].sum() == pytest.approx(len(graded))
    by_stratum = key.groupby("stratum")["weight"].sum()
    assert by_stratum["|".join(AGREE_W)] == pytest.approx(40)
    # the weighted share of an all-agree-correct pattern recovers its population share exactly
    share = (key["weight"] * key["stratum"].eq("|".join(AGREE_C))).sum() / key["weight"].sum()
    assert share == pytest.approx(100 / 154)


def test_sheet_is_blind_shuffled_and_aligned_with_key():
    graded = graded_table()
    sheet, key = draw_audit_sample(graded, n=30, seed=6)
    assert tuple(sheet.columns) == SHEET_COLUMNS
    assert list(sheet["item_id"]) == [f"A{i:03d}" for i in range(1, 31)]
    assert list(key["item_id"]) == list(sheet["item_id"])
    assert (sheet[["grade", "grader", "graded_at", "note"]] == "").all().all()
    source = graded.iloc[key["source_row"]].reset_index(drop=True)
    assert list(sheet["question"]) == list(source["question"])
    assert list(sheet["answer"]) == list(source["answer"])
    assert list(key["source_item_id"]) == list(source["item_id"])
    for column in DEFAULT_JUDGE_COLUMNS:
        assert list(key[column]) == list(source[column])
    joined = [" | ".join(r) if isinstance(r, list) else r for r in source["reference"]]
    assert list(sheet["reference"]) == joined
    runs = 1 + (key["stratum"] != key["stratum"].shift()).iloc[1:].sum()
    assert runs > 2 * key["stratum"].nunique()  # not grouped by verdict pattern


def test_missing_verdict_is_its_own_pattern_and_bad_input_is_named():
    graded = graded_table()
    graded.loc[:4, "reference_grader"] = None
    _, key = draw_audit_sample(graded, n=40, seed=1)
    assert key["stratum"].str.endswith("|missing").any()
    with pytest.raises(ValueError, match="passage"):
        draw_audit_sample(graded.drop(columns="passage"), n=10, seed=1)
    with pytest.raises(ValueError, match="uniquely"):
        draw_audit_sample(pd.concat([graded, graded.iloc[:1]]), n=10, seed=1)


# ------------------------------------------------------------------ files

def test_sheet_and_key_round_trip_tricky_text(tmp_path):
    graded = graded_table()
    graded.loc[:, "answer"] = ["NA", "007", "a, \"b\"\nc", "日本語 ü", ""] * 30 + ["x"] * 4
    sheet, key = draw_audit_sample(graded, n=154, seed=2)
    write_sheet(sheet, tmp_path / "s.csv")
    write_key(key, tmp_path / "k.csv")
    fieldnames, rows = read_sheet(tmp_path / "s.csv")
    assert tuple(fieldnames) == SHEET_COLUMNS
    assert [r["answer"] for r in rows] == list(sheet["answer"])
    assert [r["passage"] for r in rows] == list(sheet["passage"])
    back = read_key(tmp_path / "k.csv")
    pd.testing.assert_frame_equal(back, key, check_dtype=False)
    assert back["source_row"].dtype.kind == "i" and back["disagreement"].dtype == bool
    assert sorted(p.name for p in tmp_path.iterdir()) == ["k.csv", "s.csv"]  # no temp files


# ------------------------------------------------------------------ import

def _sheet(tmp_path, grades, graders=None, ids=None, name="filled.csv"):
    ids = ids or [f"A{i:03d}" for i in range(1, len(grades) + 1)]
    graders = graders or ["ana"] * len(grades)
    rows = [dict(item_id=i, question="q", reference="r", passage="p", answer="a", grade=g,
                 grader=who, graded_at="2025-01-01T00:00:00+00:00" if g else "", note="")
            for i, g, who in zip(ids, grades, graders)]
    write_sheet_rows(tmp_path / name, SHEET_COLUMNS, rows)
    return tmp_path / name


def _key(tmp_path, n):
    key = pd.DataFrame({"item_id": [f"A{i:03d}" for i in range(1, n + 1)],
                        "weight": np.arange(1.0, n + 1)})
    write_key(key, tmp_path / "key.csv")
    return tmp_path / "key.csv"


def test_import_reports_every_problem_at_once_with_rows(tmp_path):
    path = _sheet(tmp_path, ["c", "maybe", "wrong", "p", "correct"],
                  graders=["ana", "ana", "ana", "", "ana"],
                  ids=["A001", "A002", "A999", "A004", "A001"])
    with pytest.raises(SheetError) as info:
        import_grades(path, key_path=_key(tmp_path, 5))
    assert info.value.problems == [
        "row 3: grade 'maybe' is not one of correct/partial/wrong (or c/p/w, or blank for "
        "not graded)",
        "row 4: item_id 'A999' is not in the key",
        "row 5: graded 'partial' but no grader (fill the grader column or pass grader=...)",
        "rows 2, 6: item_id 'A001' appears 2 times",
    ]
    assert "4 problem(s)" in str(info.value)


def test_import_accepts_letters_and_case_and_joins_key(tmp_path):
    path = _sheet(tmp_path, ["C", "p", " WRONG ", "", "Partial"],
                  graders=["ana", "ana", "", "", ""])
    with pytest.raises(SheetError):
        import_grades(path)
    tidy = import_grades(path, key_path=_key(tmp_path, 5), grader="bo")
    assert list(tidy["grade"]) == ["correct", "partial", "wrong", None, "partial"]
    assert list(tidy["graded"]) == [True, True, True, False, True]
    assert list(tidy["grader"]) == ["ana", "ana", "bo", "", "bo"]
    assert list(tidy["weight"]) == [1.0, 2.0, 3.0, 4.0, 5.0]


def test_import_spreadsheet_export_with_bom_and_crlf(tmp_path):
    path = tmp_path / "excel.csv"
    path.write_bytes("item_id,grade,grader\r\nA001,W,ana\r\nA002,,\r\n".encode("utf-8-sig"))
    tidy = import_grades(path)
    assert list(tidy["grade"]) == ["wrong", None]
    with pytest.raises(SheetError, match="lacks column"):
        path.write_text("item_id,verdict\nA001,c\n")
        import_grades(path)


def test_normalize_label():
    assert [normalize_label(v) for v in ("c", "P", " w ", "Correct", "", None)] == \
        ["correct", "partial", "wrong", "correct", None, None]
    with pytest.raises(ValueError, match="'x'"):
        normalize_label("x")


def test_yes_no_and_three_way_agreeing_is_not_a_disagreement():
    graded = pd.DataFrame({
        "item_id": [f"i{i}" for i in range(12)], "qid": [f"q{i}" for i in range(12)], "strategy": "s",
        "question": "q", "reference": "r", "passage": "p", "answer": "a",
        "judge_qwen15_3way": ["correct"] * 6 + ["wrong"] * 3 + ["partial"] * 3,
        "judge_qwen15_yesno": ["YES"] * 6 + ["NO"] * 3 + ["YES"] * 3,
        "judge_qwen05_3way": ["correct"] * 6 + ["partial"] * 3 + ["correct"] * 3,
        "reference_grader": ["correct"] * 6 + ["wrong"] * 3 + ["wrong"] * 3,
    })
    _, key = draw_audit_sample(graded, n=8, seed=0, min_per_stratum=1)
    by_pattern = key.drop_duplicates("stratum").set_index("stratum")["disagreement"]
    assert not by_pattern["correct|YES|correct|correct"]      # YES agrees with correct
    assert not by_pattern["wrong|NO|partial|wrong"]            # partial and wrong both fail
    assert by_pattern["partial|YES|correct|wrong"]             # pass against fail
    _, key = draw_audit_sample(graded, n=8, seed=0, min_per_stratum=1, scale="pass/fail")
    assert set(key["stratum"]) == {"pass|pass|pass|pass", "fail|fail|fail|fail", "fail|pass|pass|fail"}
    assert (key["stratum_scale"] == "pass/fail").all()
    with pytest.raises(ValueError, match="scale"):
        draw_audit_sample(graded, n=8, seed=0, scale="coarse")
