"""Judge once, count once: the memoised fast paths equal their definitions, and a post's tables
(per-question scores, budgets, recall-token curves, chunk health) judge each (context, gold)
pair and encode each chunk text once per execution."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from chunklab_core.core import textmatch, tokens
from chunklab_core.core.corpus import Corpus, Document, Question
from chunklab_core.evaluation import budget, gold_slots, matrix as rm, slot_metrics
from chunklab_core.retrieval.run import RetrievalRun

CONTEXTS = [
    "Refunds are issued within 30 days of purchase.",
    "You need the original receipt and a photo ID to claim it.",
    "The store opens at nine.",
    "Bring the orignal receipt when you return goods.",
    "Keep the original receipt.",
    "you may ask for refunds within 14 working days",
    "Invoices: paid within 30 calendar days of receipt.",
    "Invoices are paid within 14 days.",
    "Super Bowl XLIX was played in 2015; Super Bowl 50 in 2016 at Levi's Stadium.",
    "Total | 1,000 | $2,500\nPartner|120|300",
    "days within refunds, but of what?",
    "cats and dogs",
    "",
    "I",
]
GOLDS = [
    (("original receipt",), ("photo ID", "passport")),
    (("refunds within 14 days",),),
    (("invoices are paid within 30 days",),),
    (("Super Bowl XX",), ("Levi's Stadium", "Santa Clara")),
    (("1000",), ("2,500", "2500")),
    (("Partner | 120 | 300",),),
    (("ask for refunds", "purchase of dogs"), ("nine",)),
    (("refunds",),),
    (("cats", "dogs"), ("birds",), ("fish",)),
]


def judge_definition(context: str, slots, threshold: float) -> slot_metrics.ContextJudgment:
    """The judgment as defined before the fast path: slots_found, the first alternative found
    by contains_gold, and the grade by the definition of relevance_grade (no shortcut)."""
    fills = gold_slots.slots_found([context], slots, threshold)[0]
    first = tuple(next((i for i, alt in enumerate(slot) if textmatch.contains_gold(context, alt, threshold)), -1)
                  if filled else -1 for slot, filled in zip(slots, fills))
    if fills.all():
        grade = 2
    elif fills.any():
        grade = 1
    else:
        grade = int(any(gold_slots.partial_evidence(context, alt, threshold) for slot in slots for alt in slot))
    return slot_metrics.ContextJudgment(tuple(bool(f) for f in fills), first, grade)


def relevance_grade_counter(context: str, slots, threshold: float = 0.90, partial_coverage: float = 0.5) -> int:
    """relevance_grade as written with Counter arithmetic before ``unfilled_grade``."""
    gold = gold_slots.normalize_gold(slots)
    filled = [gold_slots.slot_found(context, slot, threshold) for slot in gold]
    if all(filled):
        return 2
    if any(filled):
        return 1
    ctx_tokens = Counter(textmatch.TOKEN.findall(textmatch.match_text(context)))
    for slot in gold:
        for alt in slot:
            snip_tokens = Counter(textmatch.TOKEN.findall(textmatch.matching_snippet(alt)))
            bound = sum((snip_tokens & ctx_tokens).values()) / max(1, snip_tokens.total())
            if bound < partial_coverage:
                continue
            if gold_slots.partial_evidence(context, alt, threshold, partial_coverage):
                return 1
    return 0


@pytest.mark.parametrize("threshold", [0.80, 0.90, 1.0])
def test_fast_judgment_equals_the_definition(threshold):
    grades = Counter()
    for context in CONTEXTS:
        for slots in GOLDS:
            fast = slot_metrics.judge_context(context, slots, threshold)
            assert fast == judge_definition(context, slots, threshold), (context, slots)
            assert fast.grade == gold_slots.relevance_grade(context, slots, threshold)
            assert fast.grade == relevance_grade_counter(context, slots, threshold)
            grades[fast.grade] += 1
    assert set(grades) == {0, 1, 2}  # the fixtures reach every grade


@pytest.mark.parametrize("partial", [0.0, 0.3, 0.5, 1.0])
def test_unfilled_grade_equals_the_counter_bound(partial):
    for context in CONTEXTS:
        for slots in GOLDS:
            assert (gold_slots.relevance_grade(context, slots, 0.9, partial)
                    == relevance_grade_counter(context, slots, 0.9, partial)), (context, slots, partial)


def _hand_run(questions, ranked, retriever="bm25") -> RetrievalRun:
    text = " ".join(CONTEXTS)
    contexts, pos = [], 0
    for segment in CONTEXTS:
        contexts.append(("d0", pos, pos + len(segment)))
        pos += len(segment) + 1
    corpus = Corpus("hand", [Document("d0", text)], list(questions))
    return RetrievalRun(corpus=corpus, strategy="sentences", retriever=retriever, chunks=[], contexts=contexts,
                        ranked=np.array(ranked), context_tokens=np.arange(len(CONTEXTS)) + 3)


def test_judge_run_lays_out_the_definition():
    questions = [Question(f"q{i}", "?", "d0", slots) for i, slots in enumerate(GOLDS)] + [Question("none", "?", "d0", ())]
    rng = np.random.default_rng(7)
    ranked = rng.integers(-1, len(CONTEXTS), size=(len(questions), 6))
    judged = slot_metrics.judge_run(_hand_run(questions, ranked))
    max_slots = max(len(s) for s in GOLDS)
    for row, question in enumerate(questions):
        for rank, index in enumerate(ranked[row]):
            fills = np.zeros(max_slots, bool)
            first = np.full(max_slots, -1)
            grade = 0.0
            if index >= 0 and question.gold_slots:
                j = judge_definition(CONTEXTS[index], question.gold_slots, 0.9)
                n = len(question.gold_slots)
                fills[:n], first[:n], grade = j.fills, j.first_alternative, j.grade
            np.testing.assert_array_equal(judged.fills[row, rank], fills)
            np.testing.assert_array_equal(judged.first_alternative[row, rank], first)
            assert judged.grades[row, rank] == grade
    assert judged.alternative_tokens == [[tuple(tokens.count_tokens(a) for a in slot) for slot in q.gold_slots]
                                         for q in questions]


FILLER = "Lorem ipsum dolor sit amet, consectetur adipiscing elit. " * 12


def _corpus() -> Corpus:
    docs = [
        Document("a", "Returns are accepted within 30 days of purchase. " + FILLER + "The store manager signs refunds."),
        Document("b", FILLER + "Shipping takes 5 business days. " + FILLER),
        Document("c", "Gift cards never expire. " + FILLER + "Returns are accepted within 30 days of purchase."),
    ]
    questions = [
        Question("q1", "How long is the return window?", "a", (("within 30 days",),)),
        Question("q2", "Who signs refunds and how long is shipping?", "a", (("store manager",), ("5 business days",))),
        Question("q3", "Do gift cards expire?", "c", (("never expire",),)),
        Question("q4", "How long does shipping take?", "b", (("15 business days",),)),
        Question("q5", "Return window again?", "c", (("within 30 days",),)),  # same gold as q1
    ]
    return Corpus("tiny", docs, questions)


def test_a_post_judges_each_pair_once(monkeypatch):
    from chunklab_core.reports.post02 import tables as post02

    made = []
    original = slot_metrics.judge_context

    def counting(context, slots, threshold=0.90):
        made.append((context, tuple(slots), threshold))
        return original(context, slots, threshold)

    monkeypatch.setattr(slot_metrics, "judge_context", counting)
    corpora = {"tiny": _corpus()}
    result = rm.run_matrix(corpora, ["fixed_500", "fixed_1000", "recursive_500"], ["bm25"], ks=(1, 3, 5),
                           progress=False)
    after_matrix = len(made)
    post02.budget_intervals(result, [100, 1000, 4000], "all-MiniLM-L6-v2", 50, 1)
    for run in result.runs.values():
        budget.recall_token_curve(run)
        slot_metrics.score_slots(run, (1, 3))
    assert after_matrix > 0 and len(made) >= after_matrix
    twice = [key for key, n in Counter(made).items() if n > 1]
    assert not twice, f"judged more than once in one execution: {twice[:3]}"
    assert slot_metrics.JUDGMENTS.computed == len(made) == len(slot_metrics.JUDGMENTS)


def test_a_post_counts_each_text_once(monkeypatch):
    from chunklab_core.reports.post02 import tables as post02

    encoded = []
    real = tokens.encoding()

    class Counting:
        def encode_ordinary(self, text):
            encoded.append(text)
            return real.encode_ordinary(text)

        def __getattr__(self, name):
            return getattr(real, name)

    monkeypatch.setattr(tokens, "TOKEN_COUNTS", tokens.TokenCountCache())
    monkeypatch.setattr(tokens, "encoding", lambda: Counting())
    corpora = {"tiny": _corpus()}
    strategies = ["fixed_500", "fixed_1000", "recursive_500"]
    result = rm.run_matrix(corpora, strategies, ["bm25"], ks=(1, 3, 5), progress=False)
    post02.chunk_health(result, corpora, strategies)
    post02.budget_intervals(result, [100, 1000], "all-MiniLM-L6-v2", 50, 1)
    assert encoded and not [t for t, n in Counter(encoded).items() if n > 1]
    assert tokens.TOKEN_COUNTS.encoded == len(encoded) == len(tokens.TOKEN_COUNTS)


def test_cached_counts_equal_encoding_each_text():
    enc = tokens.encoding()
    texts = ["hello world", "", "tiktoken is great!", "<|endoftext|> is text here", "hello world",
             "caf\u00e9 \u4e2d\u6587 \U0001f600", "lone \ud800 surrogate", "  spaces\n\nand\tTabs  ",
             FILLER, FILLER[:-3]]
    expected = [len(enc.encode(t, disallowed_special=())) for t in texts]
    cache = tokens.TokenCountCache()
    first = cache.counts(texts)
    assert first.dtype == np.int64 and first.tolist() == expected
    assert cache.counts(list(reversed(texts))).tolist() == expected[::-1]  # from the cache
    assert cache.encoded == len(set(texts)) == len(cache)
    assert tokens.count_tokens_many(texts).tolist() == expected == [tokens.count_tokens(t) for t in texts]
    with pytest.raises(ValueError, match="cl100k_base"):
        cache.counts(["x"], tokenizer="o200k_base")
