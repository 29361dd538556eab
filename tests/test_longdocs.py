"""Long-document loaders against the real files (mirror) and tiny hand-made fixtures."""

from __future__ import annotations

import gzip
import json
import os
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from chunklab_core.data import longdocs
from chunklab_core.core.corpus import Corpus, Document, Question
from chunklab_core.data.registry import MIRROR_ENV
from chunklab_core.core.paths import PROJ_ROOT
from chunklab_core.core.text import normalize

MIRROR = Path(os.environ.get(MIRROR_ENV) or PROJ_ROOT.parent / "shared" / "data")
needs_mirror = pytest.mark.skipif(not MIRROR.is_dir(), reason=f"data mirror {MIRROR} not present")


@pytest.fixture(scope="module")
def mirror():
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(MIRROR_ENV, str(MIRROR))
        yield MIRROR


@pytest.fixture(scope="module")
def loaded(mirror):
    """Every loader's corpus, loaded once for the module (deduplicated and raw)."""
    corpora = {name: load() for name, load in longdocs.LOADERS.items()}
    for name, load in [("nq-raw", longdocs.load_nq_longdocs), ("qasper-raw", longdocs.load_qasper_papers),
                       ("cuad-raw", longdocs.load_cuad_contracts)]:
        corpora[name] = load(dedupe=False)
    return corpora


def _raw_rows(filename: str) -> list[dict]:
    with gzip.open(MIRROR / filename, "rt", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


# --- the README's counts -------------------------------------------------------------------

@needs_mirror
@pytest.mark.parametrize("name, docs, questions", [
    ("nq-raw", 21, 109), ("qasper-raw", 23, 184), ("cuad-raw", 23, 154),
    ("qmsum", 35, 244), ("chroma", 5, 472),
])
def test_counts_match_the_data_readme(loaded, name, docs, questions):
    corpus = loaded[name]
    assert (len(corpus.documents), len(corpus.questions)) == (docs, questions)


@needs_mirror
@pytest.mark.parametrize("name, verbatim", [("nq-raw", 105), ("qasper-raw", 80), ("cuad-raw", 154)])
def test_verbatim_answer_counts_match_the_readme(loaded, name, verbatim):
    """README: answers occurring after case/whitespace normalisation (yes/no included)."""
    corpus = loaded[name]
    normalized = {d.doc_id: normalize(d.text) for d in corpus.documents}
    found = sum(normalize(q.answers[0]) in normalized[q.doc_id] for q in corpus.questions)
    assert found == verbatim


@needs_mirror
@pytest.mark.parametrize("name, docs, questions", [("nq-longdocs", 20, 104), ("qasper-papers", 20, 161),
                                                   ("cuad-contracts", 20, 130)])
def test_dedupe_removes_exactly_the_repeated_rows(loaded, name, docs, questions):
    deduped, raw = loaded[name], loaded[name.split("-")[0] + "-raw"]
    assert (len(deduped.documents), len(deduped.questions)) == (docs, questions)
    assert len({d.text for d in deduped.documents}) == docs
    def triples(corpus):
        return {(corpus.doc(q.doc_id).text, q.text, q.answers[0]) for q in corpus.questions}
    assert triples(deduped) == triples(raw)
    assert len(triples(deduped)) == len(deduped.questions)


@needs_mirror
def test_repeated_rows_are_recorded_on_the_kept_document(loaded):
    harry = loaded["nq-longdocs"].doc("nq-0001")
    assert harry.meta["rows"] == [1, 20]
    assert [e["evaluation"] for e in harry.meta["leval"]] == ["f1", "LLM"]


# --- gold, tags and spans -------------------------------------------------------------------

@needs_mirror
def test_nq_locatability_and_tags(loaded):
    corpus = loaded["nq-longdocs"]
    stats = longdocs.gold_locatability(corpus)
    assert (stats["with_gold"], stats["locatable"], stats["not_locatable"]) == (104, 102, 2)
    tagged = [q.qid for q in corpus.questions if "gold-not-verbatim" in q.tags]
    assert tagged == stats["not_locatable_qids"] == ["nq-0001-01", "nq-0001-04"]
    assert all(len(q.gold_slots) == 1 and q.gold_slots[0] == q.answers for q in corpus.questions)
    assert "<H1>" in corpus.doc("nq-0000").text and corpus.doc("nq-0000").title == "The Handmaid 's Tale ( TV series )"


@needs_mirror
def test_qasper_yes_no_and_unanswerable_have_no_gold_slot(loaded):
    corpus = loaded["qasper-papers"]
    tags = Counter(t for q in corpus.questions for t in q.tags)
    assert tags == {"gold-not-verbatim": 85, "yes-no": 22, "unanswerable": 1}
    for q in corpus.questions:
        no_slot = {"yes-no", "unanswerable"} & set(q.tags)
        assert (q.gold_slots == ()) == bool(no_slot)
        if no_slot:
            assert normalize(q.answers[0]) in {"yes", "no", "unanswerable"}
    stats = longdocs.gold_locatability(corpus)
    assert (stats["without_gold"], stats["locatable"], stats["not_locatable"]) == (23, 53, 85)


@needs_mirror
@pytest.mark.parametrize("name", ["cuad-contracts", "cuad-raw"])
def test_cuad_spans_are_the_first_occurrence_of_the_answer(loaded, name):
    corpus = loaded[name]
    for q in corpus.questions:
        ((doc_id, start, end),) = q.evidence_spans
        text = corpus.doc(doc_id).text
        assert doc_id == q.doc_id and text[start:end] == q.answers[0]
        assert text.find(q.answers[0]) == start
        assert ("ambiguous-span" in q.tags) == (text.count(q.answers[0]) > 1)
    assert longdocs.gold_locatability(corpus)["not_locatable"] == 0


@needs_mirror
def test_qmsum_spans_cover_the_inclusive_turn_ranges(loaded):
    corpus = loaded["qmsum"]
    rows = _raw_rows("qmsum-test.jsonl.gz")
    n_spans = 0
    for q in corpus.questions:
        meeting = rows[int(q.doc_id.split("-")[1])]
        item = meeting["specific_query_list"][int(q.qid.split("-")[2])]
        assert q.text == item["query"] and q.answers == (item["answer"],)
        assert q.gold_slots == () and q.tags == ("span-only",)
        lines = [f"{t['speaker']}: {t['content']}" for t in meeting["meeting_transcripts"]]
        for (doc_id, start, end), (first, last) in zip(q.evidence_spans, item["relevant_text_span"], strict=True):
            assert corpus.doc(doc_id).text[start:end] == "\n".join(lines[int(first) : int(last) + 1])
            n_spans += 1
    assert n_spans == 286
    first = corpus.questions[0]
    assert corpus.doc("qmsum-0000").text[first.evidence_spans[0][1]:].startswith("Barry Hughes: Perfectly happy.")


def test_render_transcript_offsets():
    text, offsets = longdocs.render_transcript([{"speaker": "A", "content": "hi"}, {"speaker": "Bo", "content": ""}])
    assert text == "A: hi\nBo: "
    assert offsets == [(0, 5), (6, 10)]
    assert [text[s:e] for s, e in offsets] == ["A: hi", "Bo: "]


@needs_mirror
def test_chroma_references_reproduce_their_excerpts(loaded):
    corpus = loaded["chroma"]
    assert [d.doc_id for d in corpus.documents] == [f"chroma-{c}" for c in longdocs.CHROMA_CORPORA]
    assert {d.title: len(d.text) for d in corpus.documents} == {
        "chatlogs": 40000, "finance": 737905, "pubmed": 500000, "state_of_the_union": 48051, "wikitexts": 118372}
    assert Counter(q.doc_id for q in corpus.questions) == {
        "chroma-chatlogs": 56, "chroma-finance": 97, "chroma-pubmed": 99,
        "chroma-state_of_the_union": 76, "chroma-wikitexts": 144}
    spans = [(q, span) for q in corpus.questions for span in q.evidence_spans]
    assert len(spans) == 790
    for q in corpus.questions:
        assert len(q.gold_slots) == len(q.evidence_spans) >= 1
        for (alternative,), (doc_id, start, end) in zip(q.gold_slots, q.evidence_spans):
            assert doc_id == q.doc_id and corpus.doc(doc_id).text[start:end] == alternative
    assert sum("ambiguous-span" in q.tags for q in corpus.questions) == 68


@needs_mirror
def test_chroma_subset_keeps_qids_and_rejects_unknown_ids(loaded, mirror):
    subset = longdocs.load_chroma(["wikitexts", "chatlogs"])
    assert subset.name == "chroma-chatlogs+wikitexts"
    assert [d.doc_id for d in subset.documents] == ["chroma-chatlogs", "chroma-wikitexts"]
    full = {q.qid: q for q in loaded["chroma"].questions}
    assert len(subset.questions) == 200 and all(full[q.qid] == q for q in subset.questions)
    with pytest.raises(ValueError, match="unknown Chroma corpus ids \\['news'\\]"):
        longdocs.load_chroma(["news"])


@needs_mirror
def test_qids_unique_and_stable(loaded):
    for name, corpus in loaded.items():
        qids = [q.qid for q in corpus.questions]
        assert len(set(qids)) == len(qids), name
        assert all(q.doc_id in {d.doc_id for d in corpus.documents} for q in corpus.questions)
    assert loaded["nq-longdocs"].questions[2].qid == "nq-0000-02"
    assert loaded["qmsum"].questions[0].qid == "qmsum-0000-00"
    assert loaded["chroma"].questions[0].qid == "chroma-state_of_the_union-000"


@needs_mirror
@pytest.mark.parametrize("name", ["nq-longdocs", "qmsum", "chroma"])
def test_loaders_are_deterministic(loaded, name):
    again = longdocs.LOADERS[name]()
    assert again.documents == loaded[name].documents and again.questions == loaded[name].questions


# --- helpers on tiny fixtures ---------------------------------------------------------------

def test_locate_exact_then_case_and_whitespace_insensitive():
    assert longdocs.locate("a cat, a cat", "cat") == [(2, 5), (9, 12)]
    assert longdocs.locate("The  Big\nDog", "big dog") == [(5, 12)]
    assert longdocs.locate("abc", "xyz") == []
    assert longdocs.locate("abc", "") == []


def _tiny() -> Corpus:
    docs = [Document("d1", "Alpha beta gamma."), Document("d2", "Delta  epsilon."), Document("d3", "Zeta.")]
    qs = [
        Question("q1", "?", "d1", (("BETA",),)),
        Question("q2", "?", "d1", (("beta",), ("omega", "gamma"))),
        Question("q3", "?", "d2", (("delta epsilon",),)),
        Question("q4", "?", "d2", (("alpha",),)),           # in d1, not in its own document
        Question("q5", "?", "d2", ()),                       # no gold
        Question("q6", "?", "", (("zeta",),)),               # corpus-wide
    ]
    return Corpus("tiny", docs, qs)


def test_gold_locatability_on_a_hand_fixture():
    stats = longdocs.gold_locatability(_tiny())
    assert stats == {"corpus": "tiny", "questions": 6, "without_gold": 1, "with_gold": 5, "locatable": 4,
                     "not_locatable": 1, "not_locatable_qids": ["q4"]}


def test_sample_questions_follows_the_stated_procedure():
    corpus = _tiny()
    sample = longdocs.sample_questions(corpus, 3, seed=7)
    order = np.random.default_rng(7).permutation(6)
    assert [q.qid for q in sample.questions] == [corpus.questions[i].qid for i in sorted(order[:3])]
    assert sample.documents == corpus.documents
    assert sample.name == "tiny-sample-3q-seed7"
    assert longdocs.sample_questions(corpus, 3, seed=7).questions == sample.questions


def test_sample_questions_cap_and_referenced_documents():
    corpus = _tiny()
    capped = longdocs.sample_questions(corpus, 3, seed=1, max_per_doc=1, documents="referenced")
    per_doc = Counter(q.doc_id for q in capped.questions)
    assert per_doc == {"d1": 1, "d2": 1, "": 1}
    assert [d.doc_id for d in capped.documents] == ["d1", "d2"]
    with pytest.raises(ValueError, match="only 3 available with at most 1 per document"):
        longdocs.sample_questions(corpus, 4, seed=1, max_per_doc=1)
    with pytest.raises(ValueError, match="only 6 available"):
        longdocs.sample_questions(corpus, 7, seed=1)
    with pytest.raises(ValueError, match="'all' or 'referenced'"):
        longdocs.sample_questions(corpus, 2, seed=1, documents="some")
