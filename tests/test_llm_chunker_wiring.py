"""Chroma's LLM chunker wired into the series: ``run_matrix(chunk_options=...)``, the recorded
model of ``llm.wiring.make_chunker_llm`` and ``make llm-chunker``'s recorder
(``reports.chunker_recording``), all with a scripted model: a replay never uses a backend."""

from __future__ import annotations

import json
import re

import pytest

from chunklab_core.chunking import chunk_corpus
from chunklab_core.core.corpus import Corpus, Document, Question
from chunklab_core.evaluation.matrix import run_matrix
from chunklab_core.llm.records import CallStore, RecordedLLM, ReplayMiss
from chunklab_core.llm.testing import BackendUsed, ScriptedLLM
from chunklab_core.retrieval.recorded_runs import RunStore

TOPICS = ["water", "copper", "orbit", "violin", "glacier", "harvest"]


def every_third(messages, schema, options):
    numbers = [int(n) for n in re.findall(r"<\|start_chunk_(\d+)\|>", messages[-1]["content"])]
    return json.dumps({"split_after": numbers[2::3]})


def tiny_corpus() -> Corpus:
    text = " ".join(f"Paragraph {i} is about {TOPICS[i % 6]} and {TOPICS[i % 6]} only." for i in range(90))
    document = Document("d0", text)
    questions = [Question(f"q{i}", f"what about {w}", "d0", ((w,),)) for i, w in enumerate(TOPICS)]
    return Corpus("tiny", [document], questions)


def test_run_matrix_cuts_with_the_recorded_model_and_replays_without_it(tmp_path):
    corpus = tiny_corpus()
    recorded = RecordedLLM(ScriptedLLM(every_third, model="scripted-splitter"),
                           CallStore(tmp_path / "chunker.jsonl"), mode="replay_or_record")
    options = {"llm_semantic": {"complete": recorded.complete}}
    result = run_matrix({"tiny": corpus}, ["llm_semantic"], ["bm25"], progress=False,
                        store=RunStore(tmp_path / "runs", "record"), chunk_options=options)
    chunks = result.chunks[("tiny", "llm_semantic")]
    assert recorded.new_calls > 1 and len(chunks) > 3
    assert [(c.start, c.end) for c in chunks] == [(c.start, c.end) for c in chunk_corpus(
        corpus.documents, "llm_semantic", complete=recorded.complete)]
    replay = RecordedLLM(ScriptedLLM(fail=True, model="scripted-splitter"), CallStore(tmp_path / "chunker.jsonl"),
                         mode="replay")
    again = run_matrix({"tiny": corpus}, ["llm_semantic"], ["bm25"], progress=False,
                       store=RunStore(tmp_path / "runs", "replay"),
                       chunk_options={"llm_semantic": {"complete": replay.complete}})
    assert again.per_question.equals(result.per_question)
    assert replay.hits == recorded.new_calls and replay.new_calls == 0


def test_run_matrix_names_a_missing_model_and_a_stray_option():
    corpus = tiny_corpus()
    with pytest.raises(ValueError, match="complete"):
        run_matrix({"tiny": corpus}, ["llm_semantic"], ["bm25"], progress=False, store=RunStore(None, "live"))
    with pytest.raises(ValueError, match="not run"):
        run_matrix({"tiny": corpus}, ["fixed_500"], ["bm25"], progress=False, store=RunStore(None, "live"),
                   chunk_options={"llm_semantic": {"complete": print}})


def test_the_chunker_model_loads_nothing_and_a_replay_miss_names_the_make_target(tmp_path):
    from chunklab_core.llm.wiring import make_chunker_llm

    llm = make_chunker_llm("replay", tmp_path)
    assert llm.store.path == tmp_path / "chunker_qwen15.jsonl"
    with pytest.raises(ReplayMiss, match="llm-chunker"):
        llm.complete([{"role": "user", "content": "<|start_chunk_0|>a<|end_chunk_0|>"}])


def test_the_recorder_records_each_call_once_and_a_rerun_makes_none(tmp_path, monkeypatch):
    import chunklab_core.llm.wiring as wiring
    from chunklab_core.reports import chunker_recording

    text = " ".join(f"Line {i} on {TOPICS[i % 6]}." for i in range(150))
    monkeypatch.setattr("chunklab_core.data.corpora.load_corpus",
                        lambda name, chroma_corpora: Corpus("chroma", [Document("chroma-a", text)], []))
    scripted = ScriptedLLM(every_third, model="scripted-splitter")
    monkeypatch.setattr(wiring, "make_chunker_llm", lambda mode, root, n_threads=None: RecordedLLM(
        scripted, CallStore(tmp_path / "chunker.jsonl"), mode))
    first = chunker_recording.record(["a"], progress=False)
    assert first[0]["calls"] == len(scripted.calls) > 1 and first[0]["chunks"] > 1
    lines = (tmp_path / "chunker.jsonl").read_text().splitlines()
    assert len(lines) == len(scripted.calls)
    scripted.fail = True  # every call must now come from the records
    second = chunker_recording.record(["a"], mode="replay", progress=False)
    assert [r["chunks"] for r in second] == [r["chunks"] for r in first]
    with pytest.raises(BackendUsed):
        scripted.complete([{"role": "user", "content": "x"}])
