"""Post 04 generation: passages, parsing, the single retry, ``unparsed``, recording and replay."""

from __future__ import annotations

import json

import pytest

from chunklab_core.questions import generation as qg
from chunklab_core.core.corpus import Corpus, Document, Question
from chunklab_core.llm.records import CallStore, RecordedLLM, ReplayMiss
from chunklab_core.llm.testing import BackendUsed, ScriptedLLM
from chunklab_core.core.text import normalize
from chunklab_core.questions.passages import (Passage, html_paragraph_spans, nq_answer_paragraph,
                                             sample_nq_passages, sample_squad_passages,
                                             squad_paragraph_spans)

GOOD = '{"question": "Who built the bridge?", "answer": "Ann Lee"}'


# --------------------------------------------------------------------------- parsing

@pytest.mark.parametrize("raw, expected", [
    (GOOD, ("Who built the bridge?", "Ann Lee")),
    ('  {"answer": "Ann Lee", "question": "Who built the bridge? "}\n', ("Who built the bridge?", "Ann Lee")),
    ('```json\n' + GOOD + '\n```', ("Who built the bridge?", "Ann Lee")),
    ('{"Question": "Who?", "ANSWER": "Ann"}', ("Who?", "Ann")),
    ('{"question": "Who  built\\nit?", "answer": " Ann ", "note": "extra keys are ignored"}', ("Who built it?", "Ann")),
    ("", None),
    ("   \n", None),
    ("garbage", None),
    ('{"question": "Who built the bridge?"', None),          # truncated JSON
    ('{"question": "", "answer": "Ann"}', None),              # empty question
    ('{"question": "Who?", "answer": "  "}', None),           # empty answer
    ('{"question": "Who?"}', None),                           # missing answer
    ('{"question": "Who?", "answer": 42}', None),             # not a string
    ('{"question": "Who?", "Question": "What?", "answer": "Ann"}', None),  # two question keys
    ('["Who?", "Ann"]', None),
    ('"Who built the bridge?"', None),
    ("Question: Who built the bridge? Answer: Ann Lee", None),
])
def test_parse_generation(raw, expected):
    assert qg.parse_generation(raw) == expected


def test_schema_requires_both_fields():
    assert qg.QUESTION_SCHEMA["required"] == ["question", "answer"]
    assert set(qg.QUESTION_SCHEMA["properties"]) == {"question", "answer"}


def test_first_reply_parsed_sends_schema_prompt_and_options():
    llm = ScriptedLLM(GOOD)
    result = qg.generate_question(llm, "  The bridge was built by Ann Lee in 1901.  ")
    assert result == qg.Generation("Who built the bridge?", "Ann Lee", "ok", GOOD, 1)
    (messages, schema, options), = llm.calls
    assert schema == qg.QUESTION_SCHEMA
    assert options["max_tokens"] == qg.GENERATION_MAX_TOKENS and options["temperature"] == 0.0
    assert messages[0] == {"role": "system", "content": qg.GENERATION_SYSTEM}
    assert messages[1]["content"] == "Passage:\nThe bridge was built by Ann Lee in 1901."


@pytest.mark.parametrize("replies, status, attempts, question", [
    (["garbage", GOOD], "ok", 2, "Who built the bridge?"),
    (["", GOOD], "ok", 2, "Who built the bridge?"),
    (["", ""], qg.UNPARSED, 2, ""),
    (["garbage", '{"question": "", "answer": ""}'], qg.UNPARSED, 2, ""),
])
def test_retry_once_then_unparsed(replies, status, attempts, question):
    llm = ScriptedLLM(replies)
    result = qg.generate_question(llm, "A passage.")
    assert (result.status, result.attempts, result.question, result.raw) == (status, attempts, question, replies[-1])
    assert len(llm.calls) == 2
    retry = llm.calls[1][0]
    assert retry[2] == {"role": "assistant", "content": replies[0]}
    assert retry[3] == {"role": "user", "content": qg.RETRY_USER}


@pytest.mark.parametrize("passage", ["", "   ", None])
def test_empty_passage_is_refused(passage):
    with pytest.raises(ValueError, match="passage"):
        qg.generation_messages(passage)


# --------------------------------------------------------------------------- recording and replay

def _passages() -> list[Passage]:
    texts = ["The bridge was built by Ann Lee in 1901.", "The river floods every spring.", "Garbage in."]
    return [Passage(f"p{i}", "squad", "d", 0, len(t), t, f"q{i}", f"human {i}?", ("x",), ((0, 1),))
            for i, t in enumerate(texts)]


def _reply(messages, schema, options):
    passage = messages[1]["content"]
    if "Garbage" in passage:
        return "not json"
    return json.dumps({"question": f"What about {passage.split()[-1]}", "answer": passage.split()[1]})


def test_generate_all_keeps_unparsed_rows_and_replays_without_model(tmp_path):
    store = CallStore.for_stage(qg.STAGE, tmp_path, make_target=qg.MAKE_TARGET)
    recorded = qg.generate_all(_passages(), RecordedLLM(ScriptedLLM(_reply), store, "replay_or_record"),
                               progress=False)
    assert list(recorded.columns) == list(qg.GENERATION_COLUMNS)
    assert list(recorded["status"]) == ["ok", "ok", qg.UNPARSED]
    assert list(recorded["attempts"]) == [1, 1, 2]
    assert len(store) == 4  # two first attempts, the garbage one and its retry
    replayed = qg.generate_all(_passages(), RecordedLLM(ScriptedLLM(fail=True), CallStore(store.path), "replay"),
                               progress=False)
    assert replayed.equals(recorded)


def test_replay_miss_names_the_make_target(tmp_path):
    generator = qg.make_generator("replay", root=tmp_path)  # the real 1.5B identity; nothing is loaded
    with pytest.raises(ReplayMiss, match="make llm-questions"):
        qg.generate_question(generator, "A passage that was never recorded.")


def test_scripted_replies_under_the_real_identity_replay_through_make_generator(tmp_path):
    real = qg.make_generator("replay", root=tmp_path)
    backend = ScriptedLLM(GOOD, model=real.backend.model)
    backend.identity = real.backend.identity  # same key as a real recording
    qg.generate_question(RecordedLLM(backend, real.store, "record"), "A recorded passage.")
    fresh = qg.make_generator("replay", root=tmp_path)
    assert qg.generate_question(fresh, "A recorded passage.").question == "Who built the bridge?"
    assert fresh.hits == 1 and fresh.new_calls == 0


def test_backend_is_never_used_in_replay(tmp_path):
    store = CallStore(tmp_path / "s.jsonl")
    with pytest.raises(ReplayMiss):
        qg.generate_question(RecordedLLM(ScriptedLLM(fail=True), store, "replay"), "Unrecorded.")
    with pytest.raises(BackendUsed):
        qg.generate_question(RecordedLLM(ScriptedLLM(fail=True), store, "replay_or_record"), "Unrecorded.")


# --------------------------------------------------------------------------- passages

SQUAD_TEXT = "Alpha was first.\n\nBeta came second in 1990.\n\nGamma last."


def _squad_corpus() -> Corpus:
    doc = Document("squad-00", SQUAD_TEXT)
    beta = SQUAD_TEXT.index("1990")
    gamma = SQUAD_TEXT.index("Gamma")
    questions = [
        Question("a", "Who was first?", "squad-00", (("Alpha",),), ("Alpha",), (("squad-00", 0, 5),)),
        Question("b1", "When did Beta come?", "squad-00", (("1990",),), ("1990",), (("squad-00", beta, beta + 4),)),
        Question("b2", "What year?", "squad-00", (("1990",),), ("1990",), (("squad-00", beta, beta + 4),)),
        Question("g", "Who was last?", "squad-00", (("Gamma",),), ("Gamma",), (("squad-00", gamma, gamma + 5),)),
    ]
    return Corpus("squad", [doc], questions)


def test_squad_paragraph_spans_reproduce_paragraphs():
    spans = squad_paragraph_spans(Document("d", SQUAD_TEXT))
    assert [SQUAD_TEXT[s:e] for s, e in spans] == ["Alpha was first.", "Beta came second in 1990.", "Gamma last."]


def test_squad_sampler_pairs_each_paragraph_with_one_of_its_questions():
    corpus = _squad_corpus()
    passages = sample_squad_passages(corpus, 3, seed=4)
    assert sorted(p.passage_id for p in passages) == ["squad-00-p000", "squad-00-p001", "squad-00-p002"]
    for p in passages:
        assert p.text == SQUAD_TEXT[p.start:p.end]
        assert all(p.start <= s and e <= p.end and SQUAD_TEXT[s:e] in p.human_answers for s, e in p.human_spans)
    beta = next(p for p in passages if p.passage_id.endswith("p001"))
    assert beta.human_qid in {"b1", "b2"}
    assert sample_squad_passages(corpus, 3, seed=4) == passages          # deterministic
    assert sample_squad_passages(corpus, 2, seed=4) == passages[:2]      # a prefix is the smaller sample
    with pytest.raises(ValueError, match="3 paragraphs are eligible"):
        sample_squad_passages(corpus, 4, seed=4)


NQ_TEXT = ("Page - wikipedia <H1> Page </H1> <P> </P> <Table> <Tr> <Td> 10 </Td> </Tr> </Table> "
           "<P> The show has 10 episodes , first aired in 2017 . </P> <P> Season 2 has 13 episodes and "
           "10 writers . </P> <P> It was filmed in Toronto . </P>")


def test_html_paragraph_spans_exclude_tags_and_empty_paragraphs():
    spans = html_paragraph_spans(Document("nq-0000", NQ_TEXT))
    assert [NQ_TEXT[s:e] for s, e in spans] == ["The show has 10 episodes , first aired in 2017 .",
                                                "Season 2 has 13 episodes and 10 writers .",
                                                "It was filmed in Toronto ."]


@pytest.mark.parametrize("answer, paragraph", [("13", 1), ("toronto", 2), ("10", None), ("Paris", None), ("  ", None)])
def test_nq_answer_paragraph_requires_exactly_one(answer, paragraph):
    found = nq_answer_paragraph(Document("nq-0000", NQ_TEXT), answer)
    assert (found[0] if found else None) == paragraph
    if found:
        _, (start, end), spans = found
        assert all(start <= s < e <= end and NQ_TEXT[s:e].lower() == answer.lower() for s, e in spans)


def test_nq_sampler_keeps_unique_paragraph_answers_only():
    doc = Document("nq-0000", NQ_TEXT)
    questions = [Question(f"nq-0000-0{i}", text, "nq-0000", ((a,),), (a,), source="search-query")
                 for i, (text, a) in enumerate([("how many episodes", "10"), ("season 2 episodes", "13"),
                                                ("where filmed", "Toronto"), ("season two length", "13")])]
    passages = sample_nq_passages(Corpus("nq", [doc], questions), None, seed=1)
    assert sorted(p.passage_id for p in passages) == ["nq-0000-p001", "nq-0000-p002"]
    season = next(p for p in passages if p.passage_id == "nq-0000-p001")
    assert season.human_qid in {"nq-0000-01", "nq-0000-03"} and season.human_source.startswith("real search query")
    with pytest.raises(ValueError, match="2 paragraphs are eligible"):
        sample_nq_passages(Corpus("nq", [doc], questions), 3, seed=1)


def test_real_passages_hold_their_human_answers(use_mirror):
    corpora, passages = qg.load_passages(n_squad=qg.DEFAULT_SQUAD_PASSAGES, n_nq=None)
    squad = [p for p in passages if p.corpus == "squad"]
    nq = [p for p in passages if p.corpus == "nq"]
    assert len(squad) == qg.DEFAULT_SQUAD_PASSAGES and nq
    assert len({p.passage_id for p in passages}) == len(passages)
    for p in passages:
        text = corpora[p.corpus].doc(p.doc_id).text
        assert p.text == text[p.start:p.end] and p.human_spans
        for s, e in p.human_spans:
            assert p.start <= s < e <= p.end
            assert normalize(text[s:e]) in {normalize(a) for a in p.human_answers}


def test_cli_replays_recorded_calls_and_names_the_target_when_one_is_missing(use_mirror, tmp_path, capsys):
    _, passages = qg.load_passages()
    real = qg.make_generator("replay", root=tmp_path)
    backend = ScriptedLLM(GOOD, model=real.backend.model)
    backend.identity = real.backend.identity
    qg.generate_all(passages[:2], RecordedLLM(backend, real.store, "record"), progress=False)
    assert qg.main(["--mode", "replay", "--records", str(tmp_path), "--limit", "2"]) == 0
    captured = capsys.readouterr()
    assert captured.out.split()[-3:] == ["squad", "ok", "2"] and "new=0" in captured.err
    # the command prints a miss as its message alone (core.cli_errors), exit 2
    assert qg.main(["--mode", "replay", "--records", str(tmp_path), "--limit", "3"]) == 2
    assert "make llm-questions" in capsys.readouterr().err
