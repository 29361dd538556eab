"""Word overlap and the five validity checks, on hand fixtures (and sklearn for the overlap)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.feature_extraction.text import CountVectorizer

from chunklab_core.questions.checks import (CHECK_NAMES, answer_not_in_passage, check_all, context_dependent,
                                           is_yes_no, near_duplicates, numbers_disagree, overlap_words,
                                           word_overlap, yes_no_restatement)

PASSAGE = ("The Handmaid 's Tale is an American dystopian drama web television series created by Bruce Miller . "
           "It was ordered by Hulu as a straight - to - series order of 10 episodes . "
           "Production began in late 2016 in Toronto .")


# --------------------------------------------------------------------------- overlap

@pytest.mark.parametrize("text, expected", [
    ("Who created the Handmaid's Tale?", ["created", "handmaids", "tale"]),
    ("The Handmaid 's Tale", ["handmaids", "tale"]),               # NQ tokenisation undone
    ("They do n't know", ["know"]),                                 # "don't" is a stopword
    ("a straight-to-series order", ["straight", "series", "order"]),
    ("1,000 or 1000 or 3.5 people", ["1000", "3.5", "people"]),
    ("Zürich's Café, Zürich", ["zürichs", "café", "zürich"]),
    ("", []),
    ("What is the of and?", []),
])
def test_overlap_words(text, expected):
    assert overlap_words(text) == expected


@pytest.mark.parametrize("question, expected", [
    # created, handmaids, tale: all three in the passage
    ("Who created the Handmaid's Tale?", 3 / 3),
    # how, were, by, or: stopwords; many, episodes, ordered, hulu, netflix: 3 of 5 in the passage
    ("How many episodes were ordered by Hulu or Netflix?", 3 / 5),
    # filmed, vancouver, 2017: none in the passage
    ("Was it filmed in Vancouver in 2017?", 0.0),
    # straight, series: both in ("straight - to - series")
    ("Is it straight-to-series?", 1.0),
    ("What is it?", None),                                          # no content word
])
def test_word_overlap_hand_fixtures(question, expected):
    assert word_overlap(question, PASSAGE) == expected


def test_word_overlap_matches_sklearn_binary_counts():
    questions = ["Who created the Handmaid's Tale?", "How many episodes were ordered by Hulu or Netflix?",
                 "When did production begin in Toronto?", "Was it filmed in Vancouver in 2017?"]
    vectorizer = CountVectorizer(tokenizer=overlap_words, lowercase=False, binary=True, token_pattern=None)
    matrix = vectorizer.fit_transform(questions + [PASSAGE]).toarray()
    q, p = matrix[:-1], matrix[-1]
    theirs = (q @ p) / q.sum(axis=1)
    ours = np.array([word_overlap(x, PASSAGE) for x in questions])
    np.testing.assert_allclose(ours, theirs)


def test_overlap_rejects_non_strings():
    with pytest.raises(ValueError, match="string"):
        overlap_words(None)


# --------------------------------------------------------------------------- the five checks

@pytest.mark.parametrize("answer, flagged", [
    ("Bruce Miller", False), ("bruce   miller", False), ("10 episodes", False),
    ("Bruce Millar", True), ("Netflix", True), ("", True), ("   ", True),
])
def test_answer_not_in_passage(answer, flagged):
    check = answer_not_in_passage(answer, PASSAGE)
    assert check.flag is flagged
    assert (check.evidence == "") is (not flagged)


def test_answer_not_in_passage_shows_the_closest_text():
    check = answer_not_in_passage("Bruce Millar", PASSAGE)
    assert "Bruce Mill" in check.evidence and "partial ratio" in check.evidence


@pytest.mark.parametrize("question, flagged, evidence", [
    ("How many episodes were ordered in 2016?", False, ""),
    ("Were 10 episodes ordered?", False, ""),
    ("Were 12 episodes ordered in 2016?", True, "not in the passage: 12"),
    ("Did production begin in 2017 with 1,000 extras?", True, "not in the passage: 2017, 1,000"),
    ("Were 100 episodes ordered?", True, "not in the passage: 100"),   # 10 does not support 100
])
def test_numbers_disagree(question, flagged, evidence):
    assert numbers_disagree(question, PASSAGE) == (flagged, evidence)


@pytest.mark.parametrize("question, kind", [
    ("What does the passage say about Hulu?", "document reference"),
    ("According to the text, who created the series?", "document reference"),
    ("What did the study find?", "document reference"),
    ("What is this algorithm used for?", "demonstrative"),
    ("Where were these species found?", "demonstrative"),
    ("When was it ordered?", "pronoun"),
    ("Who did he marry?", "pronoun"),
    ("Who created The Handmaid's Tale?", None),
    ("What did Bruce Miller create in 2016?", None),
    ("Which item was listed?", None),                               # "it" inside a word is not a pronoun
])
def test_context_dependent(question, kind):
    check = context_dependent(question)
    assert check.flag is (kind is not None)
    assert check.evidence.startswith(kind) if kind else check.evidence == ""


@pytest.mark.parametrize("question, expected", [
    ("Is it true?", True), ("Did Hulu order it?", True), ("  can they?", True), ("Who did it?", False),
    ("Hulu ordered it?", False), ("", False), ("123?", False),
])
def test_is_yes_no(question, expected):
    assert is_yes_no(question) is expected


@pytest.mark.parametrize("question, flagged", [
    # ordered, hulu, straight, series, order, 10, episodes: all in sentence 2 -> restatement
    ("Was it ordered by Hulu as a straight-to-series order of 10 episodes?", True),
    # production, began, late, 2016, toronto: all in sentence 3
    ("Did production begin in late 2016 in Toronto?", False),       # "begin" is not "began": 4/5 = 0.8
    # the same at a stricter threshold is not flagged; a wh-question never is
    ("Who ordered a straight-to-series order of 10 episodes?", False),
    ("Was it filmed in Vancouver?", False),
])
def test_yes_no_restatement(question, flagged):
    assert yes_no_restatement(question, PASSAGE, threshold=0.85).flag is flagged


def test_yes_no_restatement_threshold_and_evidence():
    question = "Did production begin in late 2016 in Toronto?"
    check = yes_no_restatement(question, PASSAGE, threshold=0.8)
    assert check.flag and "80%" in check.evidence and "Production began in late 2016 in Toronto ." in check.evidence


def test_near_duplicates():
    questions = ["Who created the series?", "who created the series", "Who created the Series ?",
                 "When did production begin?", "", ""]
    checks = near_duplicates(questions, threshold=90)
    assert [c.flag for c in checks] == [True, True, True, False, False, False]
    assert "who created the series" in checks[0].evidence and checks[0].evidence.startswith("100")
    assert [c.flag for c in near_duplicates(["Who created the series?"], 90)] == [False]
    assert near_duplicates([], 90) == []
    # token sort: word order does not matter
    assert near_duplicates(["series the created who", "who created the series"], 100)[0].flag
    with pytest.raises(ValueError, match="threshold"):
        near_duplicates(questions, 120)


def test_check_all_runs_every_check_and_checks_lengths():
    results = check_all(["When was it ordered?"], ["Hulu"], [PASSAGE])
    assert list(results[0]) == list(CHECK_NAMES)
    assert results[0]["context-dependent"].flag and not results[0]["answer not in passage"].flag
    with pytest.raises(ValueError, match="same length"):
        check_all(["q"], [], [PASSAGE])


def test_answer_found_when_only_the_spacing_differs():
    from chunklab_core.questions.checks import answer_not_in_passage

    passage = "The series premiered on April 26 , 2017 on Hulu ( U.S. v. Schoon ) ."
    assert not answer_not_in_passage("April 26, 2017", passage).flag
    assert not answer_not_in_passage("U. S. v. Schoon", passage).flag
    assert answer_not_in_passage("April 27, 2017", passage).flag


def test_locate_ignoring_spacing_maps_back_to_the_text():
    from chunklab_core.questions.checks import locate_ignoring_spacing

    passage = "The series premiered on April 26 , 2017 on Hulu ( U.S. v. Schoon ) ; april 26 , 2017 again."
    spans = locate_ignoring_spacing(passage, "April 26, 2017")
    assert [passage[s:e] for s, e in spans] == ["April 26 , 2017", "april 26 , 2017"]
    assert [passage[s:e] for s, e in locate_ignoring_spacing(passage, "U. S. v. Schoon")] == ["U.S. v. Schoon"]
    assert locate_ignoring_spacing(passage, "Hulu") == [(passage.index("Hulu"), passage.index("Hulu") + 4)]
    assert locate_ignoring_spacing(passage, "April 27, 2017") == []
    assert locate_ignoring_spacing(passage, "   ") == []
    # a character whose lower case is two characters keeps the offsets right
    text = "x İstanbul 1 , 2"
    assert [text[s:e] for s, e in locate_ignoring_spacing(text, "1,2")] == ["1 , 2"]


# ---------------------------------------------------------------- issue 14: self-answering and non-questions
from chunklab_core.questions.checks import answer_in_question, not_a_question  # noqa: E402


def test_answer_in_question_flags_a_question_that_gives_its_answer():
    assert answer_in_question("Who is Mrs. Farrow?", "Mrs. Farrow").flag
    assert answer_in_question("What happened in 1995?", "1995").flag
    assert not answer_in_question("In which city was Tesla's consultant job for Westinghouse?", "Pittsburgh").flag
    assert not answer_in_question("Who wrote it?", "").flag


def test_not_a_question_flags_statements_but_not_search_queries():
    assert not_a_question("The passage describes the Farrow family.").flag
    assert not not_a_question("who sings the song from the movie").flag
    assert not not_a_question("Name the river that floods.").flag
    assert not not_a_question("Where is it?").flag


def test_bigram_overlap_hand_computed():
    from chunklab_core.questions.checks import bigram_overlap

    # question bigrams: (who, wrote), (wrote, the), (the, handmaids), (handmaids, tale) -> 4 distinct
    # passage bigrams include (wrote, the), (the, handmaids), (handmaids, tale) but not (who, wrote)
    passage = "Margaret Atwood wrote The Handmaid's Tale in 1985."
    assert bigram_overlap("Who wrote the Handmaid's Tale?", passage) == 3 / 4
    assert bigram_overlap("Atwood", passage) is None  # fewer than two words: nothing to measure
    assert bigram_overlap("tale handmaids the", passage) == 0.0  # the words occur, the phrasing does not


def test_reference_overlap_text_states_ratios_not_levels():
    import pandas as pd

    from chunklab_core.reports import reference_results

    measures = pd.DataFrame({"corpus": ["squad", "squad"], "set": ["generated", "human"],
                             "content words": [0.8, 0.5], "bigrams": [0.4, 0.2]})
    text = reference_results.overlap_text(measures)
    assert "ratio 1.60" in text and "ratio 2.00" in text and "40.9%" in text and "27.1%" in text
