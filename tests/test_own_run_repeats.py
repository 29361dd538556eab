"""What a whole ``chunklab-own run`` no longer repeats (issue 48, item 4): each kept result equals
the one computed afresh, and what may change it (another text, corpus or threshold) is computed again."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import norm

from chunklab_core.chunking import token_windows
from chunklab_core.core import textmatch
from chunklab_core.core.corpus import Corpus, Document, Question
from chunklab_core.data import gold_advice
from chunklab_core.decision.margin import TOST_ALPHA, questions_to_settle
from chunklab_core.stats.bootstrap import questions_for_power


def test_token_spans_are_kept_per_text_read_only_and_equal_to_a_fresh_tokenisation():
    text = "Kept spans: the same document is measured by every token-counted strategy. ünïcödé 🙂 " * 20
    first = token_windows.token_char_spans(text)
    again = token_windows.token_char_spans(text)
    assert again[0] is first[0] and again[1] is first[1]  # tokenised once
    fresh = token_windows._token_char_spans(text)
    assert np.array_equal(first[0], fresh[0]) and np.array_equal(first[1], fresh[1])
    with pytest.raises(ValueError):
        first[0][0] = 99  # read-only: a caller cannot change what the next one reads
    other = token_windows.token_char_spans(text + " one more")
    assert len(other[0]) > len(first[0])


def test_locate_gold_is_match_gold_where_the_snippet_is_found():
    document = "The cap resets at midnight UTC on the first day of the month, and a webhook notifies you."
    for snippet in ("resets at midnight UTC", "the cap resets at midnite UTC on the first day",
                    "nothing of the kind appears here at all"):
        full, fast = textmatch.match_gold(document, snippet), textmatch.locate_gold(document, snippet)
        assert fast.found == full.found
        if full.found:
            assert fast == full
    assert textmatch.match_gold(document, "nothing of the kind appears here at all").score is not None


def _corpus(text: str, gold: str) -> Corpus:
    return Corpus("t", [Document("a.md", text), Document("b.md", text + " More.")],
                  [Question("q1", "When?", "", ((gold,),))])


def test_corpus_advice_is_kept_for_the_same_objects_only():
    corpus = _corpus("# Title\n\nThe budget cap resets at midnight UTC.", "resets at midnight UTC")
    lines = gold_advice.corpus_advice(corpus)
    assert any("found in 2 documents" in line for line in lines)
    assert gold_advice.corpus_advice(corpus) == lines
    gold_advice._LAST_ADVICE.clear()
    assert gold_advice.corpus_advice(corpus) == lines  # computed afresh: the same
    corpus.documents[1] = Document("b.md", "Another text entirely.")  # same list, same length, another document
    assert not any("found in 2 documents" in line for line in gold_advice.corpus_advice(corpus))
    other = _corpus("# Title\n\nSomething else.", "resets at midnight UTC")
    assert gold_advice.corpus_advice(other) != lines


def test_normal_quantiles_equal_scipy_stats():
    """``ndtri`` replaced ``scipy.stats.norm.ppf`` (not imported by a run now): the sizes are unchanged."""
    for n, diff, low, high in ((40, 0.01, -0.03, 0.05), (9, 0.0, -0.1, 0.1), (120, 0.03, 0.001, 0.06)):
        z_level, z_power = norm.ppf(1 - TOST_ALPHA), norm.ppf(0.8)
        se = (high - low) / (2 * z_level)
        gaps = [g for g in (0.02 - abs(diff), diff) if g > 1e-9]
        expected = max(n + 1, min(int(np.ceil(round(n * ((z_level + z_power) * se / g) ** 2, 6))) for g in gaps))
        assert questions_to_settle(n, diff, low, high, margin=0.02, power=0.8) == expected
    z, zp = norm.ppf(0.975), norm.ppf(0.8)
    se = 0.08 / (2 * z)
    assert questions_for_power(50, 0.02, (-0.02, 0.06), power=0.8) == max(51, int(np.ceil(round(50 * ((z + zp) * se / 0.02) ** 2, 6))))


def test_truncation_mask_is_kept_and_returned_as_a_copy():
    from chunklab_core.retrieval import dense

    retriever = dense.DenseRetriever("all-MiniLM-L6-v2")
    texts = ["short", "word " * 300, "A line.\n\nAnother one. " * 40]
    tokenizer, limit = dense.fast_tokenizer(str(retriever.model_folder))
    expected = (dense.piece_counts(tokenizer, [retriever.passage_prefix + t for t in texts]) > limit).tolist()
    assert expected[:2] == [False, True]
    first = retriever.truncated_mask(texts)
    assert first.tolist() == expected
    first[:] = False  # the caller's copy
    assert retriever.truncated_mask(texts).tolist() == expected
    assert retriever.truncated_mask(texts[:1]).tolist() == expected[:1]
