"""Post 02's sentences as Markdown templates (issue 29): each filled from hand-made values gives the
expected sentence, a wrong value set fails, every template is used, and the shown tables are narrow."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from chunklab_core.core.corpus import Corpus, Document, Question
from chunklab_core.reports.post02 import claims, long_evidence, prose, structure, tables, truncation
from chunklab_core.reports.templates import TemplateError
from chunklab_core.stats import claims as stats_claims

PACKAGE = Path(prose.__file__).parent
LABELS = {"squad": "SQuAD v1.1, 2,000 questions from 48 articles", "chroma": "Chroma's corpora, 4 questions from 2 documents"}


def test_every_template_of_post02_is_filled_by_its_module():
    """A template no code fills is a sentence the post can never show: the .md and its .py drift."""
    for md in sorted(PACKAGE.glob("*.md")):
        names = re.findall(r"^<!--\s*([\w.\-]+)\s*-->", md.read_text(encoding="utf-8"), re.MULTILINE)
        code = md.with_suffix(".py").read_text(encoding="utf-8")
        unused = [n for n in names if f'"{n}"' not in code]
        assert not unused, f"{md.name}: templates no code fills: {unused}"


def test_a_wrong_value_set_fails():
    with pytest.raises(TemplateError, match="values not passed"):
        prose.PROSE.fill("paired.corpus", sample="x")
    with pytest.raises(TemplateError, match="values passed but not used"):
        claims.PROSE.fill("stability.clean", tau="0.5")


def test_paired_counts_sentence():
    paired = pd.DataFrame({"corpus": "squad", "strategy": ["a", "b", "c"], "comparison": "dense − bm25",
                           "difference": [0.1, -0.2, 0.01],
                           "verdict": ["dense ahead", "bm25 ahead", stats_claims.NOT_TOLD_APART]})
    assert prose.describe_paired(paired, LABELS) == (
        "**SQuAD v1.1, 2,000 questions from 48 articles**, dense − bm25: dense ahead in 1, BM25 ahead in 1, "
        "cannot be told apart in 1 of 3 strategies (mean difference -0.030).")
    one = prose.describe_paired(paired.iloc[:1], LABELS)
    assert "of 1 strategy (mean difference +0.100)" in one


def test_stability_summary_uses_the_range_formatter():
    table = pd.DataFrame({"across": ["k", "corpora", "corpora"], "tau": [0.8, 0.2, 0.6]})
    assert prose.describe_stability(table) == (
        "Kendall's τ between strategy rankings — across k: mean τ 0.80 (0.80, 1 comparison); "
        "across corpora: mean τ 0.40 (0.20 to 0.60 over 2 comparisons).")
    assert prose.describe_stability(pd.DataFrame()) == "Not enough settings to compare rankings."


def _corpus() -> Corpus:
    documents = [Document("d0", "alpha"), Document("d1", "beta"), Document("d2", "gamma")]
    questions = [Question("q0", "a?", "d0", (("alpha",),)), Question("q1", "b?", "d1", (("beta",),)),
                 Question("q2", "c?", "d1", (("beta",),)), Question("q3", "d?", "d0", (("alpha",),))]
    return Corpus("chroma", documents, questions)


def test_evidence_names_each_sample_and_warns_on_few_documents():
    text = prose.evidence_text({"chroma": _corpus()}, LABELS)
    assert text == ("Chroma's corpora, 4 questions from 2 documents (of 3 documents in the corpus). With fewer "
                    "than 10 documents a cluster bootstrap is unreliable (Cameron, Gelbach & Miller 2008): read "
                    "the intervals of Chroma's corpora (2 documents) as a rough guide.")


def test_balanced_leaders_sentence():
    balanced = pd.DataFrame({"corpus": "squad", "model": ["m", "—"], "label": ["Recursive 500", "Fixed 500"],
                             "retriever": ["dense", "bm25"], "recall@5": [0.8, 0.9], "tokens / T_min": [1.04, 2.5]})
    assert prose.describe_balanced(balanced, 5, LABELS) == (
        "**SQuAD v1.1, 2,000 questions from 48 articles**: recall@5 is highest for Fixed 500 / bm25 (0.900 at "
        "2.5× the cheapest cell's tokens); the balanced leader is Recursive 500 / dense (m) (0.800 at 1.0×).")


def test_models_text_with_one_model_and_none_compared():
    assert prose.models_text([], ["m"], LABELS) == "Only one embedding model was run."
    assert prose.models_text([], ["m", "n"], LABELS) == "The second model was not run on any corpus."


def test_balanced_and_answer_counts_agree_with_their_numbers():
    verdicts = pd.DataFrame({"corpus": "squad", "lambda": 0.05, "strategy": ["A / bm25", "B / bm25", "C / bm25"],
                             "verdict": [stats_claims.NOT_RULED_OUT, stats_claims.NOT_RULED_OUT,
                                         stats_claims.RULED_OUT], "questions": 2000})
    assert claims.balanced_reading(verdicts, LABELS).endswith(
        "- SQuAD v1.1, 2,000 questions from 48 articles (2,000 with gold): λ = 0.05: **A / bm25** — no winner, "
        "1 other cell cannot be ruled out.")
    recall = pd.DataFrame({"corpus": "squad", "retriever": "bm25", "strategy": ["fixed_500", "fixed_1000"],
                           "verdict": [stats_claims.NOT_RULED_OUT, stats_claims.NOT_RULED_OUT], "questions": 30})
    text = claims.post02_answer(recall, verdicts, pd.DataFrame({"tau": [0.5]}), LABELS)
    assert "- SQuAD v1.1, 2,000 questions from 48 articles · bm25 (30 with gold): no winner — Fixed 500 chars leads, " \
           "1 other strategy cannot be ruled out" in text
    assert "0 of 1 (corpus, λ) settings name a winner" in text and "mean τ 0.50" in text
    assert "(fewer than 50 questions with gold)" in text


def test_budget_reading_writes_intervals_with_the_series_formatter():
    budget = pd.DataFrame({"corpus": "squad", "strategy": ["Fixed 500", "Fixed 1000"], "retriever": "bm25",
                           "budget": [500, 4000], "recall": [0.853, 0.991], "low": [0.821, 0.98],
                           "high": [0.874, 0.996], "questions": 2000, "depth binds": [0.0, 0.02]})
    text = claims.budget_reading(budget, "m", 100, LABELS)
    assert "SQuAD v1.1, 2,000 questions from 48 articles: Fixed 500 / bm25 at 500 tokens (0.85 [0.82, 0.87], " \
           "n = 2000), Fixed 1000 / bm25 at 4000 tokens (0.99 [0.98, 1.00], n = 2000)" in text
    assert "In 1 of 2 cells × budgets (marked †: Fixed 1000 / bm25 on SQuAD v1.1, 2,000 questions from 48 " \
           "articles) the recorded ranking of 100 chunks" in text and "(at most 2% of a cell's" in text


def test_structure_sentences():
    assert structure.fallback_label(48, 48) == "Structure-aware: paragraph packing (no headings in any of 48 documents)"
    assert structure.fallback_label(20, 18) == "Structure-aware (paragraphs in 18 of 20 documents without headings)"
    assert structure.fallback_label(5, 0) == "Structure-aware"
    summary = pd.DataFrame({"corpus": [LABELS["squad"], "x"], "documents": [48, 3], "fall back to paragraphs": [48, 0]})
    assert structure.describe_fallbacks(summary) == (
        "⚠ **SQuAD v1.1, 2,000 questions from 48 articles**: 48 of 48 documents have no heading, so "
        "structure-aware chunking falls back to paragraphs there.")
    modes = pd.DataFrame({"corpus": "NQ", "chunks": [958, 1417], "median tokens": [462.0, 341.0],
                          "recall@5": [0.7115, 0.702], "tokens@5": [2158.962, 1787.298], "questions": 104})
    assert structure.describe_section_modes(modes, 5) == (
        "On NQ (104 questions, BM25), packing gives 958 chunks (median 462 tokens) and one chunk per section "
        "1417 (median 341 tokens); recall@5 0.712 against 0.702, at 2159 against 1787 returned tokens.")


def test_long_evidence_reading():
    measures = pd.DataFrame({"corpus": ["squad"], "median gold chars": [17.0], "gold longer than chunk": [0.0],
                             "gold cut by chunking": [0.012], "measure": ["containment"]})
    table = pd.DataFrame({"corpus": "squad", "recall@5": [0.9, 0.86], "token_recall@5": [0.8, np.nan]})
    assert long_evidence.describe_measures(measures, table, 5, LABELS) == (
        "**SQuAD v1.1, 2,000 questions from 48 articles** is read by **recall (containment)**: no single chunk "
        "holds the whole gold of 1% of its questions (mean over strategies; median gold 17 characters, longer "
        "than the median chunk for 0%); span recall from 10%. Mean over its cells: containment recall@5 0.880, "
        "token span recall@5 0.800.")


def test_truncation_sentences():
    assert truncation.truncation_text(None, LABELS) == "No dense model was run, so nothing was truncated."
    assert truncation.PROSE.fill("no_miss", k=5, model="m") == "No truncation miss was found in the top 5 under m."


def _summary():
    rows = []
    for corpus in ("squad", "chroma"):
        for strategy in ("fixed_500", "fixed_1000"):
            for retriever, model in (("bm25", "—"), ("dense", "m"), ("hybrid", "m")):
                rows.append({"corpus": corpus, "model": model, "strategy": strategy, "retriever": retriever,
                             "label": "Fixed 500 chars" if strategy == "fixed_500" else "Fixed 1000 chars",
                             "recall@5": 0.5, "recall@5_low": 0.4, "recall@5_high": 0.6})
    return pd.DataFrame(rows)


def test_matrix_table_is_one_row_per_corpus_and_strategy_named_by_its_sample():
    table = tables.matrix_table(_summary(), 5, "m", LABELS)
    assert list(table.columns) == ["bm25", "dense", "hybrid"]
    assert table.index.names == ["corpus", "label"]
    assert table.index[0] == (LABELS["squad"], "Fixed 500 chars") and table.index[-1] == (LABELS["chroma"], "Fixed 1000 chars")
    assert table.iloc[0, 0] == "0.500 [0.400, 0.600]"


def test_budget_view_is_narrow_enough_to_show_whole():
    rows = [{"corpus": c, "strategy": s, "retriever": r, "budget": b, "recall": 0.5, "low": 0.4, "high": 0.6,
             "depth binds": 0.1 if b == 4000 else 0.0}
            for c in ("squad", "chroma") for s in ("Fixed 500", "Fixed 1000") for r in ("bm25", "dense", "hybrid")
            for b in (500, 1000, 2000, 4000)]
    view = tables.budget_view(pd.DataFrame(rows), LABELS)
    assert view.shape == (4, 12)  # 12 columns: under the 20 a notebook shows before cutting with "…"
    assert view.loc[(LABELS["chroma"], "Fixed 1000"), ("hybrid", 4000)] == "0.50 [0.40, 0.60] †"
    assert view.loc[(LABELS["squad"], "Fixed 500"), ("bm25", 500)] == "0.50 [0.40, 0.60]"


def test_labelled_names_corpora_by_sample_and_keeps_the_table():
    table = pd.DataFrame({"corpus": ["squad", "chroma"], "x": [1, 2]})
    shown = tables.labelled(table, LABELS)
    assert list(shown["corpus"]) == [LABELS["squad"], LABELS["chroma"]] and list(table["corpus"]) == ["squad", "chroma"]


def test_one_interval_formatter_for_the_series():
    assert not hasattr(stats_claims, "format_interval")  # core.numbers.estimate / interval write every interval


def test_the_notebook_calls_run_on_a_tiny_corpus(tmp_path):
    """Every call of notebooks/src/02_retrievers.ipynb, in its order, on a tiny BM25-only matrix
    (no model): the signatures, templates and labels fit together before the post is re-executed."""
    import matplotlib

    matplotlib.use("Agg")
    from chunklab_core.evaluation import matrix as rm
    from chunklab_core.reports.post02 import figures, intervals as post02_intervals
    from chunklab_core.reports.samples import labels_for

    filler = "Lorem ipsum dolor sit amet, consectetur adipiscing elit. " * 12
    docs = [Document("a", "# Returns\nReturns are accepted within 30 days. " + filler + "The manager signs refunds."),
            Document("b", filler + "Shipping takes 5 business days. " + filler)]
    questions = [Question("q1", "How long is the return window?", "a", (("within 30 days",),),
                          evidence_spans=(("a", 30, 44),)),
                 Question("q2", "Who signs refunds?", "a", (("manager",),)),
                 Question("q3", "How long does shipping take?", "b", (("5 business days",),))]
    corpora = {"chroma": Corpus("chroma", docs, questions)}
    strategies = ["fixed_500", "fixed_1000", "recursive_500", "structure_aware"]
    labels = labels_for(corpora)
    assert labels == {"chroma": "Chroma's corpora, 3 questions from 2 documents"}
    assert prose.evidence_text(corpora, labels).startswith("Chroma's corpora, 3 questions from 2 documents (of 2")
    assert list(tables.corpus_overview(corpora, labels)["corpus"]) == [labels["chroma"]]
    matrix = rm.run_matrix(corpora, strategies, ["bm25"], ks=(1, 3, 5, 10), progress=False)
    per_question = matrix.per_question
    summary = structure.label_fallbacks(tables.summary_with_intervals(per_question, 5, 50, 1), corpora)
    measures = long_evidence.corpus_measures(long_evidence.long_gold_shares(matrix, corpora))
    evidence = long_evidence.long_evidence_table(matrix, 5, "m", measures)
    read_by = post02_intervals.read_by_intervals(long_evidence.per_question_measures(matrix, 5, "m"), 5, measures, 50, 1)
    assert len(read_by) == len(evidence) and (read_by["low"] <= read_by["mean"]).all()
    figures.plot_matrix_by_measure(read_by, 5, labels)
    assert long_evidence.describe_measures(measures, evidence, 5, labels).startswith(f"**{labels['chroma']}** is read")
    assert tables.matrix_table(summary, 5, "m", labels).index[0][0] == labels["chroma"]
    assert long_evidence.measures_view(measures, labels)["corpus"].iloc[0] == labels["chroma"]
    assert long_evidence.long_evidence_view(evidence, 5, labels).shape == (len(strategies), 2)
    headings = structure.heading_summary(corpora, labels)
    assert structure.describe_fallbacks(headings).startswith(f"⚠ **{labels['chroma']}**: 1 of 2 documents")
    sections = structure.section_mode_table(corpora["chroma"], 5, labels["chroma"], (1, 3, 5, 10))
    assert structure.describe_section_modes(sections, 5).startswith(f"On {labels['chroma']} (3 questions, BM25)")
    health = tables.chunk_health(matrix, corpora, strategies)
    assert claims.health_reading(health, labels).startswith(f"{len(strategies)} rows (corpus × strategy).")
    assert tables.labelled(claims.health_view(health), labels)["corpus"].iloc[0] == labels["chroma"]
    paired = tables.paired_retrievers(per_question, 5, "m", 50, 1)
    assert paired.empty
    models_table, compared = tables.compare_models(per_question, 5, ["m"], 50, 1)
    assert models_table.empty and prose.models_text(compared, ["m"], labels) == "Only one embedding model was run."
    balanced = tables.balanced_matrix(summary, 5, 0.05)
    verdicts = claims.balanced_verdict_table(per_question, 5, [0.02, 0.05], 50, 1)
    assert prose.describe_balanced(balanced, 5, labels).startswith(f"**{labels['chroma']}**: recall@5 is highest")
    assert f"- {labels['chroma']} (3 with gold): λ = 0.02: " in claims.balanced_reading(verdicts, labels)
    budget = tables.budget_intervals(matrix, [500, 1000], "m", 50, 1)
    assert claims.budget_reading(budget, "m", 100, labels).startswith("A secondary view, not the one that decides")
    assert tables.budget_view(budget, labels).shape == (len(strategies), 2)
    figures.plot_budget_curves(post02_intervals.budget_intervals(matrix, [500, 1000], "m", 50, 1), labels)
    spans = tables.span_table(per_question, 5, "m")
    assert claims.span_reading(spans, 5, labels).endswith("The table below shows the 3 best cells of each corpus.")
    stability = tables.stability(per_question, 5, (1, 3, 5, 10), ["m"], 50, 1)
    assert prose.describe_stability(stability).startswith("Kendall's τ between strategy rankings — across k")
    claims.stability_reading(stability, matrix.truncated, labels)
    dropped = claims.heavily_truncated(matrix.truncated)
    assert claims.stability_without_truncation_text(stability, stability, dropped, labels).startswith("No strategy")
    assert truncation.truncation_text(matrix.truncated, labels) == "No dense model was run, so nothing was truncated."
    recall = claims.recall_verdicts(per_question, 5, "m", 50, 1)
    answer = claims.post02_answer(recall, verdicts, stability, labels)
    assert answer.startswith("**Which chunker at k chunks (a secondary view)?** Recall@k")
    assert "pool makes of it:\n- Chroma's corpora, 3 questions" in answer


def test_coverage_of_a_second_model_counts_the_store_files_and_names_where_it_is_still_recorded(tmp_path):
    """Issue 40: post 02 reads the second model where its cells are recorded and says which
    corpora are still being recorded, with the cells recorded so far (counted from the store's files)."""
    from chunklab_core.retrieval.recorded_runs import Cell, RunStore, corpus_sample_label
    from chunklab_core.retrieval.registry import needs_model, stored_retrievers

    def corpus(name):
        return Corpus(name, [Document(f"{name}-d", "some text.")], [Question(f"{name}-q", "what?", f"{name}-d", (("text",),))])

    corpora = {"squad": corpus("squad"), "chroma": corpus("chroma")}
    store = RunStore(tmp_path, mode="replay")
    retrievers = [r for r in stored_retrievers() if needs_model(r)]
    for strategy in ("a", "b"):  # squad: every cell of the model; chroma: one
        for retriever in retrievers:
            path = store.path(Cell(corpus_sample_label(corpora["squad"]), strategy, retriever, "n"))
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(b"")
    one = store.path(Cell(corpus_sample_label(corpora["chroma"]), "a", retrievers[0], "n"))
    one.parent.mkdir(parents=True, exist_ok=True)
    one.write_bytes(b"")
    coverage = tables.model_coverage(corpora, "n", ["a", "b"], store)
    cells = 2 * len(retrievers)
    assert coverage.to_dict("records") == [{"corpus": "squad", "recorded": cells, "cells": cells},
                                           {"corpus": "chroma", "recorded": 1, "cells": cells}]
    text = prose.models_text([], ["m", "n"], LABELS, coverage, ["squad"])
    assert text.startswith(f"n is read on {LABELS['squad']}. It is still being recorded on "
                           f"{LABELS['chroma']} (1 of {cells} cells recorded)")
    assert text.endswith("The second model was not run on any corpus.")
    assert prose.coverage_text(coverage, ["squad", "chroma"], "n", LABELS) == (
        f"n is read on every corpus: {LABELS['squad']}; {LABELS['chroma']}.")
    # a replay reads the second model only where every cell is recorded; a live run computes all
    assert tables.read_model_corpora(coverage, ["squad", "chroma"], mode="replay") == ["squad"]
    assert tables.read_model_corpora(coverage, ["chroma", "squad"], mode="live") == ["chroma", "squad"]
    # a corpus searched within each question's document counts its scoped cells, never the corpus-wide ones
    corpora["squad"].scope = "document"
    assert tables.model_coverage(corpora, "n", ["a", "b"], store)["recorded"].tolist() == [0, 1]
    for strategy in ("a", "b"):
        for retriever in retrievers:
            path = store.path(Cell(corpus_sample_label(corpora["squad"]), strategy, retriever, "n", "document"))
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(b"")
    assert tables.model_coverage(corpora, "n", ["a", "b"], store)["recorded"].tolist() == [cells, 1]


def test_paired_counts_call_a_side_ahead_only_where_both_designs_agree():
    """Post 02 counts retriever pairs by the rule post 00 uses: one design alone separates nothing."""
    paired = pd.DataFrame({"corpus": "squad", "comparison": "dense − bm25", "strategy": ["a", "b", "c"],
                           "difference": [0.05, 0.04, -0.03],
                           "verdict": ["dense ahead", "dense ahead", "bm25 ahead"],
                           "question verdict": ["dense ahead", stats_claims.NOT_TOLD_APART, "bm25 ahead"]})
    assert list(prose.agreed_verdicts(paired)) == ["dense ahead", stats_claims.NOT_TOLD_APART, "bm25 ahead"]
    text = prose.describe_paired(paired, LABELS)
    assert "dense ahead in 1, BM25 ahead in 1" in text and "in 1 of 3 strategies" in text
    assert len(claims.separated_pairs(paired)) == 2
