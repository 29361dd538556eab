"""Chroma's chunk locating (``chunking.report_locating``) and the report view of a run
(``evaluation.report_view``).

The pinned spans below are figures, not code: Chroma's own ``chunking_evaluation`` (its
``FixedTokenChunker(250, 125)`` and ``RecursiveTokenChunker(200, 0, openai_token_count)``, each string
placed by its ``rigorous_document_search``), run once outside this project (a scratch environment with
its repository at commit d451fc4) on the first 3,000 characters of each of Chroma's five corpora.
"""

from __future__ import annotations

import numpy as np
import pytest

from chunklab_core.chunking import STRATEGIES
from chunklab_core.chunking.report_locating import ReportLocatingError, report_locate, report_spans
from chunklab_core.core.corpus import Chunk, Corpus, Document, Question
from chunklab_core.evaluation.chroma_metrics import chroma_scores
from chunklab_core.evaluation.report_view import located_as_report
from chunklab_core.retrieval.run import RetrievalRun

EXCERPT = 3000
REPORT_SPANS = {
    "chatlogs/lc_token_250_125": [(0, 1174), (560, 1737), (1175, 2330), (1737, 2921), (2330, 3000)],
    "chatlogs/lc_recursive_tok_200_0": [(0, 765), (765, 1628), (1628, 2401), (2401, 3000)],
    "finance/lc_token_250_125": [(0, 1043), (562, 1377), (1043, 1952), (1377, 2389), (1952, 3000)],
    "finance/lc_recursive_tok_200_0": [(0, 880), (880, 929), (932, 1454), (1456, 2336), (2336, 3000)],
    "pubmed/lc_token_250_125": [(0, 748), (334, 1276), (748, 1880), (1276, 2540), (1880, 3000)],
    "pubmed/lc_recursive_tok_200_0": [(0, 550), (551, 1282), (1285, 1358), (1361, 2035), (2035, 2999)],
    "state_of_the_union/lc_token_250_125": [(0, 1196), (580, 1773), (1196, 2357), (1773, 2935), (2357, 3000)],
    "state_of_the_union/lc_recursive_tok_200_0": [(0, 907), (910, 1785), (1787, 2588), (2591, 3000)],
    "wikitexts/lc_token_250_125": [(0, 1099), (477, 1704), (1099, 2366), (1705, 3000)],
    "wikitexts/lc_recursive_tok_200_0": [(1, 725), (729, 1249), (1253, 1843), (1846, 2788), (2789, 2999)],
}


def test_final_full_stop_is_dropped_before_the_search():
    assert report_locate("Alpha. Beta.", "Beta.") == (7, 11)


def test_a_repeated_string_takes_its_first_occurrence():
    text = "hello there. x hello there. y"
    assert report_locate(text, "hello there") == (0, 11)


def test_whitespace_and_case_are_ignored_when_not_found_verbatim():
    text = "One  two\nThree four"
    assert report_locate(text, "one two three") == (0, 14)  # "One  two\\nThree": 3 + 2 + 3 + 1 + 5


def test_a_string_found_by_neither_rule_raises():
    with pytest.raises(ReportLocatingError, match="fuzzy"):
        report_locate("abc def", "xyz")


@pytest.mark.parametrize("key", sorted(REPORT_SPANS))
def test_spans_equal_the_report_codes_on_each_corpus_excerpt(key):
    from chunklab_core.data.registry import open_text

    corpus_id, strategy = key.split("/")
    spec = STRATEGIES[strategy]
    text = open_text(f"chroma-{corpus_id}")[:EXCERPT]
    assert [tuple(s) for s in report_spans(text, spec.func.__name__, spec.params)] == REPORT_SPANS[key]


def _run(text, chunk_spans, ranked):
    doc = Document("d", text, "d")
    question = Question(qid="q", text="?", doc_id="d", gold_slots=(("x",),), answers=(),
                        evidence_spans=(("d", 0, 5),), source="t")
    corpus = Corpus("c", [doc], [question])
    chunks = [Chunk(i, "d", s, e, s, e) for i, (s, e) in enumerate(chunk_spans)]
    contexts = [("d", s, e) for s, e in chunk_spans]
    return RetrievalRun(corpus, "lc_token_250_125", "dense", chunks, contexts, np.array([ranked]))


def test_view_replaces_spans_one_to_one_and_keeps_the_ranking(monkeypatch):
    import chunklab_core.evaluation.report_view as view

    text = "hello world. hello world. end"
    # the series' spans: each copy where the splitter cut it; the report's: the first copy for both
    monkeypatch.setattr(view, "report_spans", lambda *_: [(0, 11), (0, 11), (26, 29)])
    run = _run(text, [(0, 12), (13, 25), (26, 29)], [1, 0, 2])
    seen = located_as_report(run, "langchain_token", {})
    assert [(c.start, c.end) for c in seen.chunks] == [(0, 11), (0, 11), (26, 29)]
    assert seen.contexts == [("d", 0, 11), ("d", 0, 11), ("d", 26, 29)]
    assert (seen.ranked == run.ranked).all()
    # two records on one span: precision sums their lengths (the report's denominator), recall counts once
    scores = chroma_scores(seen, [2])
    assert scores["chroma_recall@2"].iloc[0] == pytest.approx(1.0)
    assert scores["chroma_precision@2"].iloc[0] == pytest.approx(5 / 22)


def test_view_refuses_runs_it_cannot_pair(monkeypatch):
    import chunklab_core.evaluation.report_view as view

    monkeypatch.setattr(view, "report_spans", lambda *_: [(0, 5)])
    run = _run("hello world", [(0, 5), (6, 11)], [0, 1])
    with pytest.raises(ValueError, match="cannot be paired"):
        located_as_report(run, "langchain_token", {})


@pytest.mark.heavy
def test_every_reproduced_row_is_located_on_all_five_corpora_without_the_fuzzy_fallback():
    """The report's fuzzy sentence fallback (not reproduced) never fires on its corpora for the rows
    post 08 re-runs, and every document gives as many chunk strings as the series has chunks."""
    from chunklab_core.chunking import document_spans
    from chunklab_core.chunking.report_locating import REPORT_LOCATED
    from chunklab_core.data.longdocs import load_chroma
    from chunklab_core.reports.post08.tables import REPORT_ROWS

    corpus = load_chroma()
    rows = [s for s in REPORT_ROWS if STRATEGIES[s].func.__name__ in REPORT_LOCATED]
    assert len(rows) == 12
    for strategy in rows:
        spec = STRATEGIES[strategy]
        for doc in corpus.documents:
            spans = report_spans(doc.text, spec.func.__name__, spec.params)  # raises on a miss
            assert len(spans) == len(document_spans(doc.text, strategy)), (strategy, doc.doc_id)
