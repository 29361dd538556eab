"""SQuAD loader and the seeded sampler."""

from __future__ import annotations

import pytest

from chunklab_core.data import squad


@pytest.fixture(scope="module")
def full(mirror):
    import os

    os.environ["CHUNKLAB_DATA_MIRROR"] = str(mirror)
    return squad.load_squad_dev()


def test_counts(full):
    assert len(full.documents) == 48
    assert len(full.questions) == 10570
    assert sum(len(q.answers) for q in full.questions) == 34726


def test_spans_reproduce_answers(full):
    for q in full.questions[:2000]:
        text = full.doc(q.doc_id).text
        assert all(text[s:e] in q.answers for _, s, e in q.evidence_spans)
        assert set(q.gold_slots[0]) == set(q.answers)


def test_sampler_deterministic(full):
    a = squad.sample_corpus(full, 40, 800, seed=20260729)
    b = squad.sample_corpus(full, 40, 800, seed=20260729)
    c = squad.sample_corpus(full, 40, 800, seed=1)
    assert [q.qid for q in a.questions] == [q.qid for q in b.questions]
    assert [q.qid for q in a.questions] != [q.qid for q in c.questions]
    assert len(a.documents) == 40 and len(a.questions) == 800
    assert {q.doc_id for q in a.questions} <= {d.doc_id for d in a.documents}


@pytest.mark.parametrize("n_articles,n_questions", [(0, 10), (5, 0), (49, 10), (1, 100000)])
def test_bad_samples(full, n_articles, n_questions):
    with pytest.raises(ValueError):
        squad.sample_corpus(full, n_articles, n_questions)
