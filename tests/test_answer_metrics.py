"""Answer metrics: SQuAD EM/F1, ROUGE-L, grounding, numbers, abstention.

Expected numbers are written by hand from the formulas (SQuAD v1.1 evaluation script
semantics), not recomputed with a second implementation.
"""

from __future__ import annotations


import pytest

from chunklab_core.answers.metrics import (
    context_grounding,
    exact_match,
    is_abstention,
    mean_ignoring_none,
    rouge_l_f1,
    squad_normalize,
    token_f1,
    token_prf,
    unsupported_number_rate,
    unsupported_numbers,
)

# --------------------------------------------------------------------------- SQuAD


@pytest.mark.parametrize(
    "raw, normalised",
    [
        ("The Denver Broncos!", "denver broncos"),
        ("  A  tale of an   apple, the end. ", "tale of apple end"),
        ("Theater", "theater"),  # articles only as whole words
        ("Don't", "dont"),
        ("1,000.5", "10005"),
        ("the-end", "theend"),  # punctuation goes before articles, as in the script
        ("", ""),
    ],
)
def test_squad_normalize(raw, normalised):
    assert squad_normalize(raw) == normalised


def test_exact_match():
    assert exact_match("the Denver Broncos", ["Denver Broncos"]) == 1.0
    assert exact_match("Denver", ["Denver Broncos"]) == 0.0
    assert exact_match("Broncos", ["Denver Broncos", "Broncos"]) == 1.0  # max over golds
    assert exact_match("Broncos", "Broncos.") == 1.0  # a single gold string
    assert exact_match("the", ["a"]) == 1.0  # both normalise to "" (the script agrees)


def test_token_f1_hand_values():
    # Broncos won / Denver Broncos: same 1, P 1/2, R 1/2, F1 1/2
    assert token_f1("Broncos won", ["Denver Broncos"]) == pytest.approx(0.5)
    # Counter intersection: pred cat cat dog, gold cat -> same 1, P 1/3, R 1, F1 1/2
    assert token_prf("cat cat dog", "cat") == pytest.approx((1 / 3, 1.0, 0.5))
    # max-F1 gold: "cat dog" gives same 2, P 2/3, R 1, F1 0.8 (beats "dog": 0.5)
    assert token_prf("cat cat dog", ["dog", "cat dog"]) == pytest.approx((2 / 3, 1.0, 0.8))
    assert token_f1("Carolina Panthers", "Denver Broncos") == 0.0
    assert token_f1("", "Denver Broncos") == 0.0  # an empty answer is measured: 0
    assert token_f1("the", "a") == 0.0  # v1.1 script: no common token -> 0, even both empty


def test_rouge_l_hand_values():
    # police killed gunman / police kill gunman: LCS 2, P 2/3, R 2/3, F 2/3
    assert rouge_l_f1("police killed the gunman", "police kill the gunman") == pytest.approx(2 / 3)
    # gunman kill police / police killed gunman: LCS 1 -> 1/3
    assert rouge_l_f1("the gunman kill police", "police killed the gunman") == pytest.approx(1 / 3)
    # a b c d / a c d: LCS 3, P 3/4, R 1, F 6/7 ; order matters, unlike token F1
    assert rouge_l_f1("w x y z", "w y z") == pytest.approx(6 / 7)
    assert rouge_l_f1("z y x w", "w x y z") == pytest.approx(1 / 4)
    assert token_f1("z y x w", "w x y z") == 1.0
    assert rouge_l_f1("", "w x") == 0.0
    assert rouge_l_f1("w", ["q", "w"]) == 1.0


ROUGE_FIXTURES = [
    ("police killed gunman", "police kill gunman"),
    ("gunman kill police", "police killed gunman"),
    ("one two three four five", "one three five seven"),
    ("x x y y z", "x y z x y"),
    ("denver broncos won 24 10", "broncos beat panthers 24 10"),
    ("nothing shared", "entirely different words"),
]


@pytest.mark.parametrize("prediction, reference", ROUGE_FIXTURES)
def test_rouge_l_equals_rouge_score_package(prediction, reference):
    from rouge_score import rouge_scorer  # reference library (dev extra): missing = failure, not a skip
    scorer = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=False)
    expected = scorer.score(reference, prediction)["rougeL"].fmeasure  # (target, prediction)
    assert rouge_l_f1(prediction, reference) == pytest.approx(expected)


def test_metrics_of_a_missing_answer_are_none():
    assert exact_match(None, "x") is None
    assert token_f1(None, "x") is None
    assert token_prf(None, "x") is None
    assert rouge_l_f1(None, "x") is None
    assert context_grounding(None, "ctx") is None
    assert unsupported_number_rate(None, "ctx") is None
    assert unsupported_numbers(None, "ctx") == []


@pytest.mark.parametrize("bad", [[], [None], 3])
def test_bad_golds_raise(bad):
    with pytest.raises(ValueError, match="golds"):
        exact_match("x", bad)


# --------------------------------------------------------------------------- None handling


def test_mean_ignoring_none():
    assert mean_ignoring_none([1.0, None, 0.0, float("nan")]) == 0.5
    assert mean_ignoring_none([0.0, None]) == 0.0  # a measured 0 stays
    assert mean_ignoring_none([None, None]) is None
    assert mean_ignoring_none([]) is None
    assert mean_ignoring_none(iter([1, 2])) == 1.5


# --------------------------------------------------------------------------- grounding


def test_context_grounding():
    context = "The Denver Broncos defeated Carolina in 2016."
    # content words: denver broncos won 2016 -> 3 of 4 in the context
    assert context_grounding("The Denver Broncos won in 2016", context) == 0.75
    assert context_grounding("Denver Broncos", context) == 1.0
    assert context_grounding("It is.", context) is None  # no content words
    assert context_grounding("", context) is None
    assert context_grounding("The context does not mention it.", context) is None


def test_unsupported_numbers():
    context = "In 2019, 1,200 people attended; 15 left early."
    answer = "About 1,500 people attended in 2019 and 5 left; 1,500 is a lot."
    assert unsupported_numbers(answer, context) == ["1,500", "5"]
    assert unsupported_number_rate(answer, context) == pytest.approx(2 / 3)
    assert unsupported_numbers("It was 1200 people", context) == []
    assert unsupported_number_rate("It was 1200 people", context) == 0.0
    assert unsupported_number_rate("Many people", context) is None
    assert unsupported_number_rate("I don't know.", context) is None


# --------------------------------------------------------------------------- abstention


@pytest.mark.parametrize(
    "answer",
    [
        "Not in the context.",
        "I don't know.",
        "I don\u2019t know",
        "I do not know the answer.",
        "It cannot be determined from the context.",
        "The date cannot be found in the provided text.",
        "The context does not mention the founding date.",
        "The provided passage doesn't say.",
        "The answer is not mentioned in the provided text.",
        "There is no information about this in the context.",
        "I cannot answer this question based on the given context.",
        "I don't have enough information to answer that.",
        "The text does not specify how many people attended.",
        "Unknown.",
        "N/A",
        "This question is unanswerable from the excerpt.",
    ],
)
def test_abstentions_are_recognised(answer):
    assert is_abstention(answer)


@pytest.mark.parametrize(
    "answer",
    [
        "Denver Broncos",
        "No, the treaty was never ratified.",
        "It was not mentioned by name until 1850.",
        "None",
        "The element cannot be found free in nature.",
        "Its value cannot be known in advance by the sender.",
        "The document was signed in 1919.",
        "I know it was 1,200 people.",
    ],
)
def test_answers_are_not_abstentions(answer):
    assert not is_abstention(answer)
