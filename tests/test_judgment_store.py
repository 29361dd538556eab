"""Stored judgments and token counts (evaluation.judgment_store): a replay reads the judgments and
counts recorded beside the rankings, equal to judging and counting again; a stale file (scoring
version changed, gold changed, texts changed) is not used, and verify-runs' check names it."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from chunklab_core.chunking import chunk_corpus
from chunklab_core.core import tokens
from chunklab_core.core.corpus import Corpus, Document, Question
from chunklab_core.evaluation import budget, judgment_checks, judgment_store, slot_metrics
from chunklab_core.evaluation.scoring import run_cell
from chunklab_core.retrieval.recorded_runs import RunStore

WORDS = ["river", "bank", "money", "loan", "water", "fish", "bread", "cold", "stone", "green", "light", "tower"]


def fixture_corpus(gold_of=lambda i: ((f"item{i} {WORDS[i % 12]}",), (f"item{i + 1}",))) -> Corpus:
    rng = np.random.default_rng(3)
    texts = [" ".join(" ".join(rng.choice(WORDS, 6)) + f" item{i}." for i in range(start, start + 30))
             for start in (0, 30)]
    documents = [Document(f"d{j}", text) for j, text in enumerate(texts)]
    questions = [Question(f"q{i}", f"which item{i} {WORDS[i % 12]}", f"d{i // 30}", gold_of(i))
                 for i in range(0, 60, 3)]
    return Corpus("fixture", documents, questions)


@pytest.fixture(autouse=True)
def empty_memos():
    slot_metrics.JUDGMENTS.clear()
    tokens.TOKEN_COUNTS.clear()
    yield
    slot_metrics.JUDGMENTS.clear()
    tokens.TOKEN_COUNTS.clear()


def verify(path, corpus, chunks, **options):
    """verify-runs' check of one file, with the judging of ``slot_metrics``."""
    return judgment_store.verify_file(path, corpus, chunks, slot_metrics.judge_context, slot_metrics.ContextJudgment,
                                      **options)


def zero(width: int) -> slot_metrics.ContextJudgment:
    return judgment_store.zero_judgment(width, slot_metrics.ContextJudgment)


def judged_arrays(judged: slot_metrics.RankedJudgments) -> list[np.ndarray]:
    return [judged.fills, judged.first_alternative, judged.grades, judged.tokens, judged.n_slots]


def recorded_run(corpus: Corpus, root, strategy: str = "fixed_500"):
    chunks = chunk_corpus(corpus.documents, strategy)
    run = run_cell(corpus, strategy, "bm25", k_max=5, chunks=chunks, store=RunStore(root, "record"))
    return run, chunks


def test_stored_judgments_equal_recomputed_ones_and_a_replay_judges_nothing(tmp_path):
    corpus = fixture_corpus()
    run, chunks = recorded_run(corpus, tmp_path)
    live = slot_metrics.judge_run(run, 0.9, store=judgment_store.JudgmentStore(tmp_path, "live"))
    deep = budget.budget_run(run, 500)[0]
    live_deep = slot_metrics.judge_run(deep, 0.9, store=judgment_store.JudgmentStore(tmp_path, "live"))
    computed = slot_metrics.JUDGMENTS.computed
    assert computed > 0 and live.grades.max() == 2 and (live.grades == 1).any(), "the fixture has every grade"

    recorder = judgment_store.JudgmentStore(tmp_path, "record")
    slot_metrics.judge_run(run, 0.9, store=recorder)
    slot_metrics.judge_run(deep, 0.9, store=recorder)  # the deeper pairs are added to the same file
    files = judgment_store.stored_files(tmp_path)
    assert [p.relative_to(tmp_path).parts[1:] for p in files] == [("fixed_500", "judgments@0.9.npz")]

    slot_metrics.JUDGMENTS.clear()
    replay = judgment_store.JudgmentStore(tmp_path, "replay")
    for original, again in ((live, slot_metrics.judge_run(run, 0.9, store=replay)),
                            (live_deep, slot_metrics.judge_run(deep, 0.9, store=replay))):
        for a, b in zip(judged_arrays(original), judged_arrays(again)):
            np.testing.assert_array_equal(a, b)
    assert slot_metrics.JUDGMENTS.computed == 0, "every pair was read from the stored file"
    assert replay.read == int((run.ranked >= 0).sum() + (deep.ranked >= 0).sum())

    # every judgment equals the definition (judge_context on the context text), pair by pair
    assert verify(files[0], corpus, chunks, sample=10_000) == []


def test_stored_token_counts_are_read_and_equal_counting(tmp_path, monkeypatch):
    corpus = fixture_corpus()
    run, chunks = recorded_run(corpus, tmp_path)
    slot_metrics.judge_run(run, 0.9, store=judgment_store.JudgmentStore(tmp_path, "record"))
    store = judgment_store.JudgmentStore(tmp_path, "replay")
    texts = [corpus.doc(c.doc_id).text[c.start:c.end] for c in chunks]
    contexts = [corpus.doc(d).text[s:e] for d, s, e in judgment_store.cell_contexts(chunks)]
    tokens.TOKEN_COUNTS.clear()
    chunk_counts, context_counts = store.token_counts(corpus, "fixed_500", texts, contexts)
    assert chunk_counts.tolist() == [tokens.count_tokens(t) for t in texts]
    assert context_counts.tolist() == [tokens.count_tokens(t) for t in contexts]
    assert tokens.TOKEN_COUNTS.encoded == 0 and store.counted_read == 1
    assert store.token_counts(corpus, "fixed_500", texts[:-1] + ["changed"], contexts) is None, "texts changed"
    monkeypatch.setattr(judgment_store, "_tokenizer", lambda: {"name": "cl100k_base", "tiktoken": "0.0"})
    assert store.token_counts(corpus, "fixed_500", texts, contexts) is None, "another tokenizer version"


def test_a_stale_stored_judgment_is_not_used_and_verify_names_it(tmp_path, monkeypatch):
    corpus = fixture_corpus()
    run, chunks = recorded_run(corpus, tmp_path)
    slot_metrics.judge_run(run, 0.9, store=judgment_store.JudgmentStore(tmp_path, "record"))
    path = judgment_store.stored_files(tmp_path)[0]
    live = slot_metrics.judge_run(run, 0.9, store=judgment_store.JudgmentStore(tmp_path, "live"))

    # the gold changed (one question's gold): the file is not read, the run is judged again
    changed = fixture_corpus(lambda i: (("stone",),) if i == 3 else ((f"item{i} {WORDS[i % 12]}",), (f"item{i + 1}",)))
    slot_metrics.JUDGMENTS.clear()
    replay = judgment_store.JudgmentStore(tmp_path, "replay")
    again = slot_metrics.judge_run(dataclasses.replace(run, corpus=changed), 0.9, store=replay)
    assert replay.read == 0 and slot_metrics.JUDGMENTS.computed > 0
    assert not np.array_equal(again.grades, live.grades)
    problems = verify(path, changed, chunks)
    assert len(problems) == 1 and "stale judgments (the questions or their gold changed)" in problems[0]

    # a stored judgment that differs from judging again (the scoring changed, its version not bumped)
    problems = judgment_store.verify_file(path, corpus, chunks, lambda *a: zero(2), slot_metrics.ContextJudgment,
                                          sample=10_000)
    assert problems and all("judged again" in p for p in problems)

    # the scoring version changed: not used, and listed as stale without rebuilding anything
    monkeypatch.setattr(judgment_store, "SCORING_VERSION", judgment_store.SCORING_VERSION + 1)
    slot_metrics.JUDGMENTS.clear()
    replay = judgment_store.JudgmentStore(tmp_path, "replay")
    slot_metrics.judge_run(run, 0.9, store=replay)
    assert replay.read == 0 and slot_metrics.JUDGMENTS.computed > 0
    assert [line.split(":")[0] for line in judgment_store.stale_files(tmp_path)] == [str(path.relative_to(tmp_path))]
    assert "scoring version changed" in verify(path, corpus, chunks)[0]


def test_live_mode_and_your_own_documents_never_read_or_write(tmp_path):
    corpus = fixture_corpus()
    run, _ = recorded_run(corpus, tmp_path)
    slot_metrics.judge_run(run, 0.9, store=judgment_store.JudgmentStore(tmp_path, "live"))
    own = dataclasses.replace(run, corpus=Corpus("own", corpus.documents, corpus.questions))
    slot_metrics.judge_run(own, 0.9, store=judgment_store.JudgmentStore(tmp_path, "record"))
    assert judgment_store.stored_files(tmp_path) == []


def test_stored_word_pieces_are_read_equal_counting_kept_and_verified(tmp_path, monkeypatch):
    """Post 02's share beyond the window reads each cell's word pieces from its file (count once):
    equal to counting, kept when judgments are added, not read under another tokenizer, and a
    stored count that differs from counting again is named by verify-runs' check."""
    from types import SimpleNamespace

    from chunklab_core.reports import pool
    from chunklab_core.retrieval import dense

    model = "all-MiniLM-L6-v2"
    corpus = fixture_corpus()
    run, chunks = recorded_run(corpus, tmp_path)
    slot_metrics.judge_run(run, 0.9, store=judgment_store.JudgmentStore(tmp_path, "record"))
    matrix = SimpleNamespace(runs={("fixture", "fixed_500", "bm25", model): run}, chunks={("fixture", "fixed_500"): chunks})
    texts = [corpus.doc(c.doc_id).text[c.start:c.end] for c in chunks]
    counted = dense.word_pieces(texts, model)
    assert counted.min() > 2, "every chunk has pieces besides [CLS] and [SEP]"
    live = pool.chunk_facts(matrix, model, store=judgment_store.JudgmentStore(tmp_path, "live"))
    recorder = judgment_store.JudgmentStore(tmp_path, "record")
    pd_equal = lambda a, b: a.to_dict("records") == b.to_dict("records")  # noqa: E731
    assert pd_equal(pool.chunk_facts(matrix, model, store=recorder), live)
    path = judgment_store.stored_files(tmp_path)[0]
    tokenizer = judgment_store.tokenizer_identity(model)
    stored = judgment_store.JudgmentStore(tmp_path, "replay").piece_counts(corpus, "fixed_500", texts, tokenizer)
    assert stored.tolist() == counted.tolist()

    counting = dense.word_pieces

    def no_counting(texts, name):  # only the sampled recount of judgment_checks, never the whole cell
        if len(texts) > judgment_checks.SAMPLE:
            raise AssertionError("a stored cell's word pieces were counted again")
        return counting(texts, name)

    with monkeypatch.context() as patched:
        patched.setattr(dense, "word_pieces", no_counting)
        replay = judgment_store.JudgmentStore(tmp_path, "replay")
        assert pd_equal(pool.chunk_facts(matrix, model, store=replay), live) and replay.pieces_read == 1
    assert verify(path, corpus, chunks) == []

    # judgments added later (a deeper run) rewrite the file and keep the word pieces
    deep = budget.budget_run(run, 500)[0]
    slot_metrics.judge_run(deep, 0.9, store=judgment_store.JudgmentStore(tmp_path, "record"))
    again = judgment_store.JudgmentStore(tmp_path, "replay")
    assert again.piece_counts(corpus, "fixed_500", texts, tokenizer).tolist() == counted.tolist()

    # another tokenizer (another tokenizer.json, or another tokenizers version) is never read as this one
    other = {**tokenizer, "tokenizers": "0.0"}
    assert again.piece_counts(corpus, "fixed_500", texts, other) is None
    assert judgment_store.stale_files(tmp_path) == []
    with monkeypatch.context() as patched:  # the tokenizers library upgraded: listed as stale by verify-runs
        patched.setattr(judgment_store, "tokenizer_identity", lambda name: {**tokenizer, "tokenizers": "0.0"})
        stale = judgment_store.stale_files(tmp_path)
    assert len(stale) == 1 and "word pieces of all-MiniLM-L6-v2" in stale[0]
    assert again.piece_counts(corpus, "fixed_500", texts[:-1] + ["changed"], tokenizer) is None, "texts changed"

    # a stored count that differs from counting again
    record = RunStore(tmp_path, "replay").load(path)
    key = judgment_store.PIECES + judgment_store.pieces_key(tokenizer)
    tampered = record.extra[key].copy()
    tampered[0] += 1
    RunStore(tmp_path, "record").write(path, record.meta, **{**record.extra, key: tampered})
    problems = verify(path, corpus, chunks)
    assert len(problems) == 1 and "word-piece count of all-MiniLM-L6-v2 differs from counting again" in problems[0]
