"""Gold matching: numbers, containment (exact, short context, fuzzy), slots, graded evidence."""

from __future__ import annotations

import numpy as np
import pytest
from rapidfuzz import fuzz

from chunklab_core.evaluation.gold_slots import (gold_coverage, normalize_gold, partial_evidence, relevance_grade, slot_found,
                                      slots_found)
from chunklab_core.core.textmatch import (
    canonical_number,
    contains_gold,
    extract_numbers,
    match_gold,
    match_text,
    numbers_consistent,
)

# --------------------------------------------------------------------------- numbers


def test_extract_numbers_as_written_in_order():
    text = "In 2019, 1,000 people paid $3.5 each within 14 days."
    assert extract_numbers(text) == ["2019", "1,000", "3.5", "14"]
    assert extract_numbers("no digits here") == []


@pytest.mark.parametrize(
    "written, canonical",
    [
        ("1,000", "1000"),
        ("1,000,000.5", "1000000.5"),
        ("1000", "1000"),
        ("3,5", "3,5"),  # decimal comma, not a thousands separator
        ("12,34", "12,34"),
        ("3.5", "3.5"),
    ],
)
def test_canonical_number(written, canonical):
    assert canonical_number(written) == canonical


@pytest.mark.parametrize(
    "snippet, region, expected",
    [
        ("within 14 days", "within 30 days", False),
        ("5 business days", "15 business days", False),
        ("$1,000", "1,000 dollars", True),
        ("1000", "a fee of 1,000", True),
        ("1,000", "a fee of 1000", True),
        ("from 10 to 20", "from 10 up to 20", True),
        ("from 10 to 20", "from 20 to 10", False),  # order matters
        ("3.5 percent", "35 percent", False),
        ("no figures at all", "whatever 42", True),
    ],
)
def test_numbers_consistent(snippet, region, expected):
    assert numbers_consistent(snippet, region) is expected


def test_match_text_canonicalises_numbers_and_currency():
    assert match_text("  Fee:\n$1,000  ") == "fee: 1000"
    assert match_text("3,5 and 2019.") == "3,5 and 2019."


# --------------------------------------------------------------------------- containment


def test_number_guard_rejects_other_figures():
    assert not contains_gold("Refunds are accepted within 30 days.", "within 14 days")
    assert not contains_gold("Refunds take 15 business days.", "5 business days")
    # the guard, not the score, rejects these: the fuzzy score alone would pass
    found = match_gold(
        "you may ask for refunds within 30 days of purchase", "refunds within 14 days", 0.8
    )
    assert found.score >= 0.8 and not found.found
    found = match_gold("Refunds take 15 business days.", "5 business days")
    assert found.score >= 0.9 and not found.found


def test_numbers_written_differently_are_found():
    assert contains_gold("The fee is 1,000 dollars.", "$1,000")
    assert contains_gold("The fee is 1,000 dollars.", "1000")
    assert contains_gold("The fee is 1000 dollars.", "1,000 dollars")
    assert not contains_gold("The fee is 1,000,000 dollars.", "1,000 dollars")


def test_guard_tries_other_occurrences_of_the_figure():
    # The best-scoring region holds "15"; the right one, with "5", scores lower but passes.
    context = "Plan A ships within 15 busines days; plan B will ship within 5 business day."
    found = match_gold(context, "ships within 5 busines days")
    assert found.found and found.region == "ship within 5 business day"


def test_exact_match_needs_word_boundaries():
    assert contains_gold("Super Bowl L was played in 2016.", "L")
    assert not contains_gold("hello world", "L")
    assert not contains_gold("from the start", "art")
    assert contains_gold("the Denver Broncos' win", "Denver Broncos")


def test_roman_numerals_are_guarded_like_numbers():
    assert not contains_gold("his first appearance was in super bowl xlix.", "Super Bowl XX")
    assert contains_gold("his first appearance was in super bowl xx.", "Super Bowl XX")


def test_scripts_without_spaces_match_inside_runs():
    assert contains_gold("我住在东京都。", "东京")
    assert not contains_gold("我住在大阪。", "东京")


@pytest.mark.parametrize(
    "snippet",
    ["approved the new library", "committee approved the new library building plans"],
)
def test_one_letter_typo_found_at_090(snippet):
    context = "In spring the committee approved the new library building plans after a debate."
    assert len(snippet) >= 20
    variants = []
    for i in range(len(snippet)):
        variants.append(snippet[:i] + ("x" if snippet[i] != "x" else "y") + snippet[i + 1 :])
        variants.append(snippet[:i] + snippet[i + 1 :])
        variants.append(snippet[:i] + "q" + snippet[i:])
    missed = [v for v in variants if not contains_gold(context, v, threshold=0.90)]
    assert missed == []


def _clause(seed: int) -> str:
    rng = np.random.default_rng(seed)
    words = "licensee shall pay the royalty within term of agreement party notice written".split()
    return " ".join(rng.choice(words, size=60))


def test_long_snippet_with_scattered_typos_is_found_and_a_rewrite_is_not():
    snippet = _clause(0)  # about 400 characters, the size of contract clauses
    context = _clause(1) + ". " + snippet + ". " + _clause(2)
    typo = list(snippet)
    for i in range(10, len(typo), 80):  # five substitutions: ratio about 0.99
        typo[i] = "#"
    assert contains_gold(context, "".join(typo))
    rewritten = " ".join(snippet.split()[::2])  # half the words dropped
    found = match_gold(context, rewritten)
    assert not found.found
    assert 0.0 < found.score < 0.9  # match_gold still reports how close it came


def test_short_snippets_must_match_exactly():
    assert not contains_gold("We visited Parts of town.", "Paris")


def test_short_context_counts_only_as_the_whole_snippet():
    snippet = "The Treaty of Versailles was signed"
    whole = "Treaty of Versailles was signed"
    part = "Versailles was signed"
    assert fuzz.partial_ratio(snippet.lower(), part.lower()) == 100  # naive partial would pass
    found = match_gold(whole, snippet)
    assert found.found and found.method == "whole-context"
    assert not contains_gold(part, snippet)


def test_match_span_points_into_match_text():
    context = "Intro.  The committee APPROVED the new library building plans."
    found = match_gold(context, "approved the new librari")
    assert found.found
    assert match_text(context)[found.start : found.end] == found.region


def test_empty_inputs():
    with pytest.raises(ValueError, match="empty gold snippet"):
        contains_gold("anything", "")
    with pytest.raises(ValueError, match="empty gold snippet"):
        contains_gold("anything", "  \n ")
    with pytest.raises(ValueError, match="threshold"):
        contains_gold("anything", "x", threshold=0)
    assert not contains_gold("", "something")


# --------------------------------------------------------------------------- slots


@pytest.mark.parametrize(
    "gold, slots",
    [
        ("Denver Broncos", (("Denver Broncos",),)),
        (["Denver Broncos", "Broncos"], (("Denver Broncos",), ("Broncos",))),
        ([["Denver Broncos", "Broncos"]], (("Denver Broncos", "Broncos"),)),
        (["required", ["alt1", "alt2"]], (("required",), ("alt1", "alt2"))),
        ([["a"], ["b", "c"]], (("a",), ("b", "c"))),
        ((("a",), ("b", "c")), (("a",), ("b", "c"))),
    ],
)
def test_normalize_gold(gold, slots):
    assert normalize_gold(gold) == slots
    assert normalize_gold(slots) == slots  # idempotent


@pytest.mark.parametrize("bad", ["", " ", [], ["a", []], ["a", ""], ["a", [["b"]]], 3, [1, 2]])
def test_normalize_gold_rejects_bad_specs(bad):
    with pytest.raises(ValueError):
        normalize_gold(bad)


def test_slot_scoring():
    contexts = [
        "The form is required, and alt2 is also accepted.",
        "Only required fields are shown here.",
        "Nothing relevant at all.",
    ]
    found = slots_found(contexts, ["required", ["alt1", "alt2"]])
    assert found.dtype == bool and found.shape == (3, 2)
    np.testing.assert_array_equal(found, [[True, True], [True, False], [False, False]])
    assert found.sum(axis=1).tolist() == [2, 1, 0]
    for i, context in enumerate(contexts):
        assert [slot_found(context, s) for s in (("required",), ("alt1", "alt2"))] == list(
            found[i]
        )
    assert slots_found([], ["a", ["b"]]).shape == (0, 2)


def test_adding_alternatives_never_lowers_a_score():
    fixtures = [
        (
            ["The Denver Broncos won.", "Carolina lost.", "The Broncos celebrated."],
            ["Denver Broncos"],
            "Broncos",
        ),
        (["within 30 days", "within 14 days", "two weeks"], ["14 days"], "two weeks"),
        (["Paris is big.", "Lutetia was its name."], ["Paris"], "Lutetia"),
    ]
    gained = 0
    for contexts, alternatives, extra in fixtures:
        before = slots_found(contexts, [alternatives])
        after = slots_found(contexts, [alternatives + [extra]])
        assert (after >= before).all()
        gained += int(after.sum() - before.sum())
    assert gained == 3  # each extra alternative fills one more context


def test_slot_found_rejects_a_bare_string():
    with pytest.raises(ValueError, match="tuple of alternatives"):
        slot_found("text", "required")


# --------------------------------------------------------------------------- graded evidence


def test_gold_coverage():
    snippet = "refunds within 14 days"
    assert gold_coverage("Ask for refunds within 14 days of purchase.", snippet) == 1.0
    # region "refunds within 30 days": refunds, within, days of 4 tokens; "30" != "14"
    assert gold_coverage("you may ask for refunds within 30 days of purchase", snippet) == 0.75
    assert gold_coverage("Completely unrelated sentence about cats.", snippet) == 0.0


def test_gold_coverage_counts_one_region_only():
    snippet = "alpha beta gamma delta"
    filler = " lorem ipsum dolor sit amet consectetur adipiscing "
    context = "alpha" + filler + "beta" + filler + "gamma" + filler + "delta"
    assert gold_coverage(context, snippet) < 0.5  # a bag of words would say 1.0


def test_relevance_grade():
    slots = ["required", ["alt1", "alt2"]]
    assert relevance_grade("required and alt1", slots) == 2
    assert relevance_grade("only required here", slots) == 1
    assert relevance_grade("nothing", slots) == 0
    snippet = "refunds within 14 days"
    # 3 of 4 tokens, but "30" is not "14": the number guard refuses partial credit
    assert relevance_grade("you may ask for refunds within 30 days of purchase", snippet) == 0
    assert relevance_grade("you may ask for refunds within 14 working days", snippet) == 1
    assert relevance_grade("Ask for refunds within 14 days.", snippet) == 2


def test_partial_credit_never_bypasses_the_number_guard():
    gold = "Invoices are paid within 30 days"
    assert gold_coverage("Invoices are paid within 14 days.", gold) == pytest.approx(5 / 6)  # 5 of 6 tokens
    assert relevance_grade("Invoices are paid within 14 days.", gold) == 0
    assert relevance_grade("Invoices: paid within 30 calendar days of receipt.", gold) == 1  # 4 of 6, same figure


def test_relevance_grade_equals_its_definition():
    # relevance_grade skips gold_coverage when a token bound rules it out; same answers.
    contexts = [
        "you may ask for refunds within 30 days of purchase",
        "you may ask for refunds within 14 working days",
        "Refunds: within 14 days.",
        "days within refunds, but of what?",
        "cats and dogs",
        "",
    ]
    snippets = ["refunds within 14 days", "ask for refunds", "purchase of dogs", "refunds"]
    grades = set()
    for context in contexts:
        for snippet in snippets:
            if contains_gold(context, snippet):
                expected = 2
            else:
                expected = 1 if partial_evidence(context, snippet) else 0
            assert relevance_grade(context, snippet) == expected
            grades.add(expected)
    assert grades == {0, 1, 2}
