"""Retrieval within the question's document (retrieval.scope) and questions some measure can score
(evaluation.scoreability), on tiny hand-made corpora.

Pinned: a scoped ranking never leaves the question's document and equals the corpus-wide
scores masked to the document *before* the top k (an independent numpy computation, not a
filtered shallow list); a scoped and a cross-document cell are two store entries, neither ever
read as the other; labels and cell descriptions carry the scope; the scoreability counts of a
three-question fixture.
"""

from __future__ import annotations

import shutil

import numpy as np
import pandas as pd
import pytest

from chunklab_core.core.corpus import Chunk, Corpus, Document, Question
from chunklab_core.evaluation import scoreability
from chunklab_core.evaluation.scoring import run_cell
from chunklab_core.reports.samples import corpus_sample_label as sample_label_of
from chunklab_core.retrieval.bm25 import BM25Index
from chunklab_core.retrieval.cell_search import search_cell
from chunklab_core.retrieval.recorded_runs import Cell, RunStore, RunStoreError, corpus_sample_label
from chunklab_core.retrieval.scope import DocumentScope, check_scope, restrict, scoped_search

# Two "contracts" whose words overlap, and one template question asked of each.
DOCS = [
    Document("c1", "The term of this agreement is five years. Payment is due monthly. "
                   "Either party may terminate on notice. The governing law is Delaware."),
    Document("c2", "This agreement expires after two years. The term may renew. Payment terms: net thirty. "
                   "The governing law is New York. Termination requires cause."),
    Document("c3", "Unrelated notes about payment and the governing law of contracts in general, term after term."),
]
QUESTIONS = [
    Question("q1", "What is the term of this agreement and the governing law?", "c1", (("five years",),)),
    Question("q2", "What is the term of this agreement and the governing law?", "c2", (("two years",),)),
]


def _corpus(scope: str = "document") -> Corpus:
    corpus = Corpus("tiny", list(DOCS), list(QUESTIONS))
    corpus.scope = scope
    return corpus


def _sentence_chunks(corpus: Corpus) -> list[Chunk]:
    chunks = []
    for doc in corpus.documents:
        start = 0
        for piece in doc.text.split(". "):
            end = start + len(piece)
            chunks.append(Chunk(f"{doc.doc_id}-{start}", doc.doc_id, start, end, start, end))
            start = end + 2
    return chunks


def test_restrict_keeps_each_querys_document_in_order_on_a_hand_fixture():
    scope = DocumentScope(np.array([0, 1, 0, 1, 0]), np.array([0, 1]))
    ids = np.array([[1, 0, 3, 2, 4], [4, 3, -1, -1, -1]])
    scores = np.array([[9.0, 8, 7, 6, 5], [4.0, 3, 0, 0, 0]])
    got_ids, got_scores = restrict(ids, scores, scope, depth=2)
    assert got_ids.tolist() == [[0, 2], [3, -1]]
    assert got_scores.tolist() == [[8.0, 6.0], [3.0, 0.0]]
    assert scope.deepest() == 3  # document 0 holds three texts


def test_a_scoped_bm25_ranking_never_leaves_the_document_and_masks_before_the_top_k():
    corpus = _corpus()
    chunks = _sentence_chunks(corpus)
    texts = [corpus.doc(c.doc_id).text[c.start:c.end] for c in chunks]
    queries = [q.text for q in corpus.questions]
    scope = DocumentScope.of(corpus, chunks)
    index = BM25Index()
    index.fit(texts)
    ids, scores = scoped_search(lambda k: index.search(queries, k), len(texts), scope, depth=2)
    text_docs = np.array([c.doc_id for c in chunks])
    for row, question in enumerate(corpus.questions):
        assert set(text_docs[ids[row][ids[row] >= 0]]) == {question.doc_id}
    # independent: every text's score, the other documents masked to -inf, then the top 2 (ties: lower index)
    _, full_scores = index.search(queries, len(texts))
    full_ids, _ = index.search(queries, len(texts))
    dense_scores = np.empty((len(queries), len(texts)))
    np.put_along_axis(dense_scores, full_ids, full_scores, axis=1)
    for row, question in enumerate(corpus.questions):
        masked = np.where(text_docs == question.doc_id, dense_scores[row], -np.inf)
        expected = np.lexsort((np.arange(len(texts)), -masked))[:2]
        assert ids[row].tolist() == expected.tolist()
    # a cross-document top 2 leaves the document for the second question: the scope changes the answer
    across, _ = index.search(queries, 2)
    assert not all(set(text_docs[row]) == {q.doc_id} for row, q in zip(across, corpus.questions))


def test_scoped_and_cross_document_cells_are_distinct_store_entries(tmp_path):
    corpus = _corpus()
    chunks = _sentence_chunks(corpus)
    texts = [corpus.doc(c.doc_id).text[c.start:c.end] for c in chunks]
    queries = [q.text for q in corpus.questions]
    scope = DocumentScope.of(corpus, chunks)
    label = corpus_sample_label(corpus)
    store = RunStore(tmp_path, mode="record", log=lambda line: None)
    scoped = search_cell(label, "sentences", "bm25", texts, queries, 3, store=store, scope=scope)
    across = search_cell(label, "sentences", "bm25", texts, queries, 3, store=store)
    scoped_path = store.path(Cell(label, "sentences", "bm25", scope="document"))
    across_path = store.path(Cell(label, "sentences", "bm25"))
    assert scoped_path != across_path and scoped_path.exists() and across_path.exists()
    assert store.load(scoped_path).meta["cell"]["scope"] == "document"
    assert "scope" not in store.load(across_path).meta["cell"]  # the records made before scopes read the same
    assert store.load(scoped_path).meta["scope"] == scope.provenance()
    assert scoped.ids.shape[1] == scope.deepest()  # each document's whole ranking is recorded
    assert not np.array_equal(scoped.ids[:, :2], across.ids[:, :2])
    # replayed, each is its own record
    replay = RunStore(tmp_path, mode="replay")
    assert np.array_equal(search_cell(label, "sentences", "bm25", texts, queries, 3, store=replay, scope=scope).ids,
                          scoped.ids)
    assert np.array_equal(search_cell(label, "sentences", "bm25", texts, queries, 3, store=replay).ids, across.ids)
    # a cross-document record copied over the scoped one is never replayed as scoped, nor the reverse
    shutil.copy(across_path, tmp_path / "across.npz")
    shutil.copy(scoped_path, tmp_path / "scoped.npz")
    shutil.copy(across_path, scoped_path)
    with pytest.raises(RunStoreError, match="holds another cell"):
        search_cell(label, "sentences", "bm25", texts, queries, 3, store=replay, scope=scope)
    shutil.copy(tmp_path / "scoped.npz", across_path)
    # (refused by the shape check of retrieval.store_checks first: the scoped record is deeper than its path says)
    with pytest.raises(RunStoreError, match="holds another cell|is not what its path says"):
        search_cell(label, "sentences", "bm25", texts, queries, 3, store=replay)
    # a changed assignment of texts to documents makes a scoped record stale
    shutil.copy(tmp_path / "across.npz", across_path)
    shutil.copy(tmp_path / "scoped.npz", scoped_path)
    moved = DocumentScope(scope.text_docs[::-1].copy(), scope.query_docs)
    with pytest.raises(RunStoreError, match="documents changed"):
        search_cell(label, "sentences", "bm25", texts, queries, 3, store=replay, scope=moved)


def test_scoped_hybrid_fuses_scoped_parts_and_stays_in_the_document(tmp_path):
    from chunklab_core.retrieval.registry import registered

    if "hybrid" not in registered():
        pytest.fail("the hybrid retriever is not registered")
    corpus = _corpus()
    chunks = _sentence_chunks(corpus)
    texts = [corpus.doc(c.doc_id).text[c.start:c.end] for c in chunks]
    scope = DocumentScope.of(corpus, chunks)

    class Words:  # a stand-in embedding retriever: word overlap (no model)
        identity = "words"

        def fit(self, fitted):
            self.sets = [set(t.lower().split()) for t in fitted]

        def search(self, queries, k):
            scores = np.array([[len(set(q.lower().split()) & s) for s in self.sets] for q in queries], float)
            order = np.lexsort((np.broadcast_to(np.arange(len(self.sets)), scores.shape), -scores), axis=1)[:, :k]
            return order, np.take_along_axis(scores, order, axis=1)

        def truncated_mask(self, fitted):
            return np.zeros(len(fitted), bool)

    store = RunStore(tmp_path, mode="record", log=lambda line: None)
    result = search_cell("tiny", "sentences", "hybrid", texts, [q.text for q in corpus.questions], 5,
                         model="words", engines={"dense": Words}, store=store, scope=scope)
    text_docs = np.array([c.doc_id for c in chunks])
    for row, question in enumerate(corpus.questions):
        assert set(text_docs[result.ids[row][result.ids[row] >= 0]]) == {question.doc_id}


def test_run_cell_of_a_document_scoped_corpus_ranks_within_the_document_to_its_whole_length(tmp_path):
    corpus = _corpus()
    chunks = _sentence_chunks(corpus)
    run = run_cell(corpus, "sentences", "bm25", k_max=2, chunks=chunks,
                   store=RunStore(tmp_path, mode="live"))
    for row, question in enumerate(corpus.questions):
        returned = [run.contexts[i][0] for i in run.ranked_deep[row] if i >= 0]
        assert set(returned) == {question.doc_id}
        assert len(returned) == sum(c.doc_id == question.doc_id for c in chunks)  # the whole document
    assert run.scope_contexts.tolist() == [sum(c.doc_id == q.doc_id for c in chunks) for q in corpus.questions]
    from chunklab_core.evaluation.budget import budget_run

    _, binds = budget_run(run, 10_000)  # the whole document returned: its length, not the depth, ends the reading
    assert not binds.any()
    from chunklab_core.evaluation.budget import recall_at_budget

    assert not recall_at_budget(run, [16, 10_000])["depth_binds"].any()  # the per-budget table agrees
    everywhere = run_cell(_corpus("corpus"), "sentences", "bm25", k_max=2, chunks=chunks,
                          store=RunStore(tmp_path, mode="live"))
    assert {run.contexts[i][0] for i in everywhere.ranked_deep[1] if i >= 0} == {"c1", "c2", "c3"}


def test_labels_and_cell_descriptions_carry_the_scope():
    assert sample_label_of("cuad", _corpus()) == "CUAD, 2 questions from 2 contracts, each searched within its contract"
    assert sample_label_of("cuad", _corpus("corpus")) == "CUAD, 2 questions from 2 contracts"
    assert "within the question's document" in Cell("x", "s", "bm25", scope="document").describe()
    assert "across all documents" in Cell("x", "s", "bm25").describe()
    assert Cell("x", "s", "bm25", scope="document").relative_path() != Cell("x", "s", "bm25").relative_path()
    with pytest.raises(ValueError, match="not one of corpus, document"):
        check_scope("paragraph")


def test_the_loader_scopes_the_corpora_whose_questions_name_their_document():
    from chunklab_core.data.corpora import QUESTION_SCOPE

    assert QUESTION_SCOPE["cuad"] == "document" and QUESTION_SCOPE["qasper"] == "document"
    assert QUESTION_SCOPE.get("squad", "corpus") == "corpus"


def test_a_scope_naming_a_document_that_is_not_loaded_is_a_clear_error():
    with pytest.raises(ValueError, match="not in the corpus"):
        DocumentScope.from_ids(["a"], ["a"], ["b"])


def _scoreability_corpus() -> Corpus:
    doc = Document("p1", "We compare to a logistic regression baseline and to BERT. The data has 5,000 tweets.")
    questions = [
        Question("verbatim", "What baselines?", "p1", (("logistic regression baseline",),)),
        Question("paraphrase", "How large?", "p1", (("roughly five thousand short posts",),)),
        Question("no-gold", "Why?", "p1", ()),
    ]
    corpus = Corpus("papers", [doc], questions)
    corpus.source = {"name": "papers"}
    return corpus


def test_scoreability_counts_on_a_fixture():
    table = scoreability.question_table(_scoreability_corpus()).set_index("qid")
    assert table.loc["verbatim", ["recall", "ndcg", "token_recall", "any"]].tolist() == [True, True, True, True]
    assert not table.loc["verbatim", "span_recall"]  # no character offsets given: span recall cannot score it
    assert not table.loc["paraphrase", "any"] and not table.loc["no-gold", "any"]
    counts = scoreability.document_counts({"papers": _scoreability_corpus()})
    assert counts.iloc[0].to_dict() == {"corpus": "papers", "questions": 3, "recall": 1, "ndcg": 1,
                                        "span_recall": 0, "token_recall": 1, "no measure": 2}
    kept = scoreability.keep_scoreable(_scoreability_corpus())
    assert [q.qid for q in kept.questions] == ["verbatim"]
    assert kept.source == {"name": "papers", "scoreable_only": 0.9} and len(kept.documents) == 1
    whole = Corpus("all", [DOCS[0]], [Question("q", "t", "c1", (("five years",),))])
    assert scoreability.keep_scoreable(whole) is whole  # nothing to drop: the same corpus, the same sample
    # a question that names no document (own questions may not): credited where any document credits it
    loose = Corpus("own", list(DOCS), [Question("q", "t", "", (("two years",),)), Question("r", "t", "", (("mars",),))])
    table = scoreability.question_table(loose).set_index("qid")
    assert table.loc["q", "any"] and not table.loc["r", "any"]


def test_retrieved_counts_count_questions_credited_in_some_cell():
    frame = pd.DataFrame({"corpus": ["a"] * 4, "qid": ["q1", "q1", "q2", "q2"],
                          "recall@10": [0.0, 1.0, 0.0, 0.0], "ndcg@10": [0.2, 0.0, 0.0, np.nan]})
    counts = scoreability.retrieved_counts(frame, 10).set_index("measure")
    assert counts.loc["recall", "credited in a retrieved context"] == 1
    assert counts.loc["ndcg", "credited in a retrieved context"] == 1
    assert counts.loc["recall", "questions"] == 2 and "span_recall" not in counts.index
    with_offsets = Question("o", "t", "p1", (("BERT",),), evidence_spans=(("p1", 55, 59),))
    corpus = Corpus("x", _scoreability_corpus().documents, [with_offsets])
    assert scoreability.question_table(corpus).loc[0, "span_recall"]


def test_post02_scope_section_counts_what_the_cross_document_setting_measured():
    from chunklab_core.reports.post02 import scope as section
    from chunklab_core.reports.samples import labels_for

    unscoreable = Question("q3", "Which court?", "c3", (("the supreme court of mars",),))
    corpus = Corpus("cuad", list(DOCS), [*QUESTIONS, unscoreable])
    corpus.scope, corpus.source = "document", {"name": "cuad"}
    state = section.well_posed({"cuad": corpus})
    assert [q.qid for q in state.corpora["cuad"].questions] == ["q1", "q2"]
    facts = section.cross_document_facts(state).iloc[0]
    assert (facts["questions"], facts["distinct question texts"], facts["most documents one text asks about"],
            facts["questions asked of several documents"]) == (3, 2, 2, 2)
    assert np.isnan(facts["top 5 from another document, least"])  # no recorded cross-document cell asked
    text = section.scope_text(state, section.cross_document_facts(state), labels_for(state.corpora))
    assert "asked 3 questions in only 2 distinct texts over 3 documents" in text
    assert "up to 2 different golds" in text and "No measure can credit 1 of the 3 questions in CUAD" in text
    view = section.scoreability_view(state)
    assert view.iloc[0]["no measure can score (dropped)"] == 1 and view.iloc[0]["questions loaded"] == 3


def test_post02_scope_section_measures_recorded_cells_named_as_the_notebook_names_them(monkeypatch):
    """The notebook passes strategy names (not specs): each cell computed across all documents (live
    here), every chunk returned, one of the three from the question's own contract: 2/3 elsewhere."""
    from chunklab_core.reports.post02 import scope as section

    monkeypatch.setenv("CHUNKLAB_RUNS", "live")
    state = section.well_posed({"cuad": _corpus()})
    facts = section.cross_document_facts(state, ["fixed_500"], ["bm25"], "all-MiniLM-L6-v2", 5).iloc[0]
    assert facts["cells"] == 1  # documents under 500 characters: one chunk each, three in all
    assert facts["top 5 from another document, least"] == pytest.approx(2 / 3)
    assert facts["top 5 from another document, largest"] == pytest.approx(2 / 3)


def test_post02_scope_text_for_questions_each_asked_of_one_document():
    """QASPER's case: no question text is asked of two documents (the 'facts_unique' sentence)."""
    from chunklab_core.reports.post02 import scope as section
    from chunklab_core.reports.samples import labels_for

    corpus = Corpus("qasper", list(DOCS), [QUESTIONS[0], Question("q9", "Which baselines do they use?", "c3",
                                                                    (("payment",),))])
    corpus.scope, corpus.source = "document", {"name": "qasper"}
    state = section.well_posed({"qasper": corpus})
    text = section.scope_text(state, section.cross_document_facts(state), labels_for(state.corpora))
    assert "asked 2 questions in 2 distinct texts over 3 documents; no text is asked of two documents" in text
