"""Class 4 of issue 49: stored files are checked structurally on every load, and never used when wrong.

Each tampering below re-computes the file's sha256 (as an attacker would), so only the structural
checks (``retrieval.store_checks``, ``evaluation.judgment_checks``) and the sampled recount can
catch it; each is tried on every loader it reaches: the replay (token counts, word pieces,
judgments), verify-runs' stale list, its per-file check and its full pass.
"""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from chunklab_core.chunking import chunk_corpus
from chunklab_core.core import tokens
from chunklab_core.core.corpus import Corpus, Document, Question
from chunklab_core.evaluation import judgment_checks, judgment_store, slot_metrics
from chunklab_core.evaluation.scoring import run_cell
from chunklab_core.reports import run_recording
from chunklab_core.retrieval.recorded_runs import RunStore, RunStoreError

WORDS = ["river", "bank", "money", "loan", "water", "fish", "bread", "cold", "stone", "green", "light", "tower"]
MODEL = "all-MiniLM-L6-v2"


def fixture_corpus() -> Corpus:
    rng = np.random.default_rng(3)
    texts = [" ".join(" ".join(rng.choice(WORDS, 6)) + f" item{i}." for i in range(start, start + 150))
             for start in (0, 150, 300)]
    documents = [Document(f"d{j}", text) for j, text in enumerate(texts)]
    questions = [Question(f"q{i}", f"which item{i} {WORDS[i % 12]}", f"d{i // 150}", ((f"item{i}",),))
                 for i in range(0, 450, 15)]
    return Corpus("fixture", documents, questions)


@pytest.fixture(autouse=True)
def empty_memos():
    slot_metrics.JUDGMENTS.clear()
    tokens.TOKEN_COUNTS.clear()
    yield
    slot_metrics.JUDGMENTS.clear()
    tokens.TOKEN_COUNTS.clear()


@pytest.fixture
def recorded(tmp_path):
    """A recorded cell with its judgments, token counts and word pieces: (root, corpus, chunks, texts, contexts)."""
    corpus = fixture_corpus()
    chunks = chunk_corpus(corpus.documents, "fixed_500")
    run = run_cell(corpus, "fixed_500", "bm25", k_max=5, chunks=chunks, store=RunStore(tmp_path, "record"))
    slot_metrics.judge_run(run, 0.9, store=judgment_store.JudgmentStore(tmp_path, "record"))
    texts = [corpus.doc(c.doc_id).text[c.start:c.end] for c in chunks]
    contexts = [corpus.doc(d).text[s:e] for d, s, e in judgment_store.cell_contexts(chunks)]
    from chunklab_core.retrieval.dense import word_pieces

    tokenizer = judgment_store.tokenizer_identity(MODEL)
    assert judgment_store.JudgmentStore(tmp_path, "record").add_piece_counts(
        corpus, "fixed_500", texts, tokenizer, word_pieces(texts, MODEL))
    assert len(texts) > 2 * judgment_checks.SAMPLE, "the sample does not cover the cell"
    return tmp_path, corpus, chunks, texts, contexts, tokenizer


def rewrite(path, root, change_meta=lambda meta: meta, **arrays):
    """Rewrite a stored file with changed arrays and a re-computed sha256 (a tampering that passes the digest)."""
    record = RunStore(root, "replay").load(path) if path.exists() else None
    extra = dict(record.extra) if record is not None else {}
    extra.update(arrays)
    RunStore(root, "record").write(path, change_meta(dict(record.meta)), **extra)


def judgments_file(root):
    return judgment_store.stored_files(root)[0]


def every_loader(root, corpus, chunks, texts, contexts, tokenizer) -> dict[str, str]:
    """The message each loader gives for the stored file (``""``: it loaded and was used)."""
    path = judgments_file(root)
    found = {}
    attempts = {
        "token counts": lambda: judgment_store.JudgmentStore(root, "replay").token_counts(corpus, "fixed_500", texts, contexts),
        "word pieces": lambda: judgment_store.JudgmentStore(root, "replay").piece_counts(corpus, "fixed_500", texts, tokenizer),
        "stale list": lambda: [line for line in judgment_store.stale_files(root) if "unusable" in line],
        "verify file": lambda: judgment_store.verify_file(path, corpus, chunks, slot_metrics.judge_context,
                                                          slot_metrics.ContextJudgment),
    }
    for name, attempt in attempts.items():
        try:
            result = attempt()
            found[name] = "" if not isinstance(result, list) or not result else "; ".join(result)
        except RunStoreError as error:
            found[name] = str(error)
    return found


def test_an_untouched_cell_loads_everywhere(recorded):
    root, corpus, chunks, texts, contexts, tokenizer = recorded
    assert every_loader(root, corpus, chunks, texts, contexts, tokenizer) == {
        "token counts": "", "word pieces": "", "stale list": "", "verify file": ""}
    assert run_recording.check_every_file(RunStore(root, "replay"))[0] == 0


def test_tripled_token_counts_with_a_recomputed_checksum_are_caught_when_used(recorded):
    root, corpus, chunks, texts, contexts, tokenizer = recorded
    path = judgments_file(root)
    record = RunStore(root, "replay").load(path)
    rewrite(path, root, chunk_tokens=record.extra["chunk_tokens"] * 3, context_tokens=record.extra["context_tokens"] * 3)
    found = every_loader(root, corpus, chunks, texts, contexts, tokenizer)
    assert "sampled counts differ from counting again" in found["token counts"]
    assert str(path) in found["token counts"] and "make runs" in found["token counts"]
    assert "a stored token count differs from counting again" in found["verify file"]
    assert found["word pieces"] == "", "the word pieces are untouched and still usable"


def test_one_tampered_count_in_the_sample_is_caught_and_outside_it_verify_counts_every_one(recorded):
    root, corpus, chunks, texts, contexts, tokenizer = recorded
    path = judgments_file(root)
    counts = RunStore(root, "replay").load(path).extra["chunk_tokens"].copy()
    rows = judgment_checks.sample_rows(len(texts), str(path) + "chunk tokens")
    outside = next(i for i in range(len(texts)) if i not in rows)
    counts[outside] += 1
    rewrite(path, root, chunk_tokens=counts)
    found = every_loader(root, corpus, chunks, texts, contexts, tokenizer)
    assert found["token counts"] == "", "outside the on-use sample"
    assert "differs from counting again" in found["verify file"], "verify-runs counts every entry of its files"
    counts[rows[0]] += 5
    rewrite(path, root, chunk_tokens=counts)
    found = every_loader(root, corpus, chunks, texts, contexts, tokenizer)
    assert f"text {rows[0]}: stored {counts[rows[0]]}" in found["token counts"]


@pytest.mark.parametrize("array, cut", [("chunk_tokens", 1), ("context_tokens", 1), ("pieces", 10), ("codes", 1),
                                        ("keys", 1), ("judged", 1)])
def test_an_array_shorter_than_its_provenance_counts_is_refused_by_every_loader(recorded, array, cut):
    root, corpus, chunks, texts, contexts, tokenizer = recorded
    path = judgments_file(root)
    extra = RunStore(root, "replay").load(path).extra
    name = judgment_store.PIECES + judgment_store.pieces_key(tokenizer) if array == "pieces" else array
    if len(extra[name]) <= cut:
        raise AssertionError(f"{name} holds {len(extra[name])} entries in this fixture")
    rewrite(path, root, **{name: extra[name][:-cut]})
    found = every_loader(root, corpus, chunks, texts, contexts, tokenizer)
    for loader, message in found.items():
        assert "are not usable" in message and str(path) in message and "make runs" in message, (loader, message)
    failures, bad = run_recording.check_every_file(RunStore(root, "replay"))
    assert failures == 1 and bad == {path}


def test_a_short_array_whose_provenance_was_changed_too_is_caught_by_the_texts(recorded):
    root, corpus, chunks, texts, contexts, tokenizer = recorded
    path = judgments_file(root)
    extra = RunStore(root, "replay").load(path).extra

    def fewer(meta):
        meta["chunks"] = {**meta["chunks"], "n": meta["chunks"]["n"] - 1}
        meta["pieces"] = {}
        return meta

    extra = {k: v for k, v in extra.items() if not k.startswith(judgment_store.PIECES)}
    RunStore(root, "record").write(path, fewer(dict(RunStore(root, "replay").load(path).meta)),
                                   **{**extra, "chunk_tokens": extra["chunk_tokens"][:-1]})
    message = every_loader(root, corpus, chunks, texts, contexts, tokenizer)["token counts"]
    assert f"{len(texts) - 1} stored counts for {len(texts)} texts" in message


def test_word_pieces_tampered_within_their_length_are_caught_when_used(recorded):
    root, corpus, chunks, texts, contexts, tokenizer = recorded
    path = judgments_file(root)
    name = judgment_store.PIECES + judgment_store.pieces_key(tokenizer)
    rewrite(path, root, **{name: RunStore(root, "replay").load(path).extra[name] * 2})
    found = every_loader(root, corpus, chunks, texts, contexts, tokenizer)
    assert "word pieces of all-MiniLM-L6-v2" in found["word pieces"] and "differ" in found["word pieces"]
    assert found["token counts"] == ""


def test_a_ranking_copied_under_a_judgments_name_gives_the_projects_message(recorded, capsys):
    root, corpus, chunks, texts, contexts, tokenizer = recorded
    path = judgments_file(root)
    shutil.copyfile(path.parent / "bm25.npz", path)
    found = every_loader(root, corpus, chunks, texts, contexts, tokenizer)
    for loader, message in found.items():
        assert "is a ranking file under a judgments name" in message and "make runs" in message, (loader, message)
        assert "NoneType" not in message
    assert run_recording.verify(sample=1, root=root) == 1
    out = capsys.readouterr().out
    assert "FAIL" in out and "is a ranking file under a judgments name" in out and "Traceback" not in out


def test_a_judgments_file_under_a_ranking_name_or_another_cell_is_refused(recorded):
    root, corpus, chunks, texts, contexts, tokenizer = recorded
    path = judgments_file(root)
    ranking = path.parent / "bm25.npz"
    shutil.copyfile(path, ranking)
    with pytest.raises(RunStoreError, match="is a judgments file under a ranking's name"):
        RunStore(root, "replay").load(ranking)
    other = root / path.parts[-3] / "fixed_1000" / path.name
    other.parent.mkdir()
    shutil.move(str(path), other)
    with pytest.raises(RunStoreError, match=r"holds another cell.*fixture.*fixed_500"):
        judgment_store.JudgmentStore(root, "replay")._load(other)
    renamed = other.parent / "judgments@0.8.npz"
    shutil.move(str(other), renamed)
    with pytest.raises(RunStoreError, match="holds another cell"):
        RunStore(root, "replay").load(renamed)


def test_a_threshold_other_than_its_name_is_refused(recorded):
    root, *_ = recorded
    path = judgments_file(root)
    rewrite(path, root, lambda meta: {**meta, "threshold": 0.5})
    with pytest.raises(RunStoreError, match=r"records threshold 0.5, its name says 0.9"):
        RunStore(root, "replay").load(path)


@pytest.mark.parametrize("change", ["rows short", "an id beyond the texts", "scores short", "mask short"])
def test_a_ranking_whose_arrays_disagree_with_its_provenance_is_refused(recorded, change):
    root, *_ = recorded
    path = judgments_file(root).parent / "bm25.npz"
    record = RunStore(root, "replay").load(path)
    n_texts = record.meta["texts"]["n"]
    from chunklab_core.retrieval.recorded_runs import pack_ids

    ids = pack_ids(record.ids, n_texts)
    if change == "rows short":
        rewrite(path, root, ids=ids[:-1])
    elif change == "an id beyond the texts":
        bad = record.ids.copy()
        bad[0, 0] = n_texts + 3
        rewrite(path, root, ids=pack_ids(bad, n_texts + 10))
    elif change == "scores short":
        rewrite(path, root, ids=ids, scores=record.scores[:-2])
    else:
        rewrite(path, root, ids=ids, scores=record.scores, truncated=np.packbits(np.zeros(n_texts - 9, bool)))
    with pytest.raises(RunStoreError, match=r"is not what its path says.*make runs"):
        RunStore(root, "replay").load(path)


def test_verify_runs_full_pass_names_every_broken_file_not_a_sample(recorded, capsys):
    root, corpus, chunks, texts, contexts, tokenizer = recorded
    path = judgments_file(root)
    extra = RunStore(root, "replay").load(path).extra
    rewrite(path, root, chunk_tokens=extra["chunk_tokens"][:-1])
    keyed = root / "rescores" / "0123456789abcdef.npz"
    RunStore(root, "record").write(keyed, {"format": 1, "kind": "rescores", "key": {"a": 1}}, scores=np.zeros(3))
    failures, bad = run_recording.check_every_file(RunStore(root, "replay"))
    out = capsys.readouterr().out
    assert failures == 2 and bad == {path, keyed}
    assert "checked the digests and structure of all 3 stored files: 2 failed" in out
    assert "its key is recorded as rescores/" in out and "chunk_tokens holds" in out
    assert out.count("make runs") >= 2


def test_the_structure_check_itself_on_hand_made_arrays():
    meta = {"questions": {"n": 2}, "contexts": {"n": 3, "sha256": "x"}, "chunks": {"n": 3, "sha256": "y"},
            "gold": {"sha256": "z"}, "pieces": {}}
    good = {"judged": np.packbits(np.array([[1, 0, 1], [0, 1, 0]], bool), axis=1), "keys": np.array([0, 4]),
            "codes": np.array([0, 0]), "fills": np.zeros((1, 1), bool), "first": np.zeros((1, 1)),
            "grades": np.zeros(1), "widths": np.ones(1), "chunk_tokens": np.ones(3), "context_tokens": np.ones(3)}
    assert judgment_checks.structure_problems(meta, good, "pieces_") == []
    cases = {"keys": (np.array([4, 0]), "keys are not sorted"), "codes": (np.array([0, 1]), "a code lies outside"),
             "widths": (np.array([2]), "width exceeds"), "context_tokens": (np.array([1, -1, 1]), "negative count"),
             "judged": (np.zeros((2, 1), np.uint8), "a stored judgment is of a pair not marked judged")}
    for name, (value, message) in cases.items():
        problems = judgment_checks.structure_problems(meta, {**good, name: value}, "pieces_")
        assert any(message in p for p in problems), (name, problems)
    assert "lacks keys" in judgment_checks.structure_problems(meta, {k: v for k, v in good.items() if k != "keys"},
                                                              "pieces_")[0]
    assert "word pieces stored for ['abc']" in judgment_checks.structure_problems(
        meta, {**good, "pieces_abc": np.ones(3)}, "pieces_")[0]


@pytest.mark.parametrize("spans, n, message", [
    (np.array([[0, 0, 10, 0, 10]] * 3), 4, r"spans are \(3, 5\), not \(4 chunks, 5\)"),
    (np.array([[0, 10, 5, 0, 10]] * 3), 3, "a span ends before it starts"),
    (np.array([[0, 0, 10]] * 3), 3, r"spans are \(3, 3\)"),
])
def test_a_model_cut_chunks_file_whose_spans_disagree_is_refused(tmp_path, spans, n, message):
    path = tmp_path / "c-1d-1q-0" / "semantic_embedding" / f"dense@{MODEL}.chunks.npz"
    meta = {"format": 1, "cell": {"corpus": "c-1d-1q-0", "strategy": "semantic_embedding", "model": MODEL},
            "documents_sha256": "x", "n_chunks": n}
    RunStore(tmp_path, "record").write(path, meta, spans=spans)
    with pytest.raises(RunStoreError, match=message):
        RunStore(tmp_path, "replay").load(path)
    moved = tmp_path / "c-1d-1q-0" / "fixed_500" / path.name
    moved.parent.mkdir()
    RunStore(tmp_path, "record").write(moved, {**meta, "n_chunks": len(spans)}, spans=spans)
    with pytest.raises(RunStoreError, match="holds another cell"):
        RunStore(tmp_path, "replay").load(moved)
