"""Second-stage scorers: a tiny CrossEncoder built here, and recorded LLM scores replayed."""

import json

import numpy as np
import pytest

from chunklab_core.llm.records import CallStore, RecordedLLM, ReplayMiss
from chunklab_core.llm.relevance import p_yes_from_logprobs, parse_relevance, relevance_messages
from chunklab_core.llm.testing import BackendUsed, ScriptedLLM
from chunklab_core.rerank.scorers import CrossEncoderScorer, LLMRelevanceScorer


def test_parse_relevance_reads_logprobs_labels_and_rejects_free_text():
    reply = json.dumps({"verdict": "YES", "logprob_YES": np.log(0.6), "logprob_NO": np.log(0.2)})
    label, score, kind = parse_relevance(reply)
    assert (label, kind) == ("YES", "p_yes") and score == pytest.approx(0.75)
    assert parse_relevance('"NO"') == ("NO", 0.0, "label")
    assert parse_relevance("yes") == ("YES", 1.0, "label")
    assert parse_relevance("maybe yes") == ("unparsed", None, "unparsed")
    assert p_yes_from_logprobs(-1000.0, 0.0) == pytest.approx(0.0)


def test_the_question_comes_before_the_passage_so_the_prefix_is_shared():
    a = relevance_messages("Who?", "passage one")[1]["content"]
    b = relevance_messages("Who?", "passage two")[1]["content"]
    assert a.startswith("Question: Who?") and a[: a.index("passage")] == b[: b.index("passage")]


def _reply(messages, schema, options):
    yes = "Paris" in messages[1]["content"].split("Passage:")[1]
    return json.dumps({"verdict": "YES" if yes else "NO", "logprob_YES": -0.1 if yes else -3.0,
                       "logprob_NO": -3.0 if yes else -0.1})


def test_recorded_llm_scores_replay_with_no_model(tmp_path):
    store = CallStore(tmp_path / "rerank.jsonl")
    texts = ["Lyon is big.", "Paris is the capital.", "Nice has a beach."]
    recorder = LLMRelevanceScorer(RecordedLLM(ScriptedLLM(_reply), store, "record"))
    recorded = recorder.score("Capital of France?", texts)
    assert recorded.argmax() == 1 and recorded[1] > 0.9
    lines = (tmp_path / "rerank.jsonl").read_text().splitlines()
    assert len(lines) == 3  # one line per call

    replayer = LLMRelevanceScorer(RecordedLLM(ScriptedLLM(fail=True), CallStore(store.path), "replay"))
    assert replayer.score("Capital of France?", texts).tolist() == recorded.tolist()
    assert all(c["replayed"] for c in replayer.calls) and replayer.calls[1]["score_kind"] == "p_yes"
    with pytest.raises(ReplayMiss):
        replayer.score("Capital of Italy?", texts)
    with pytest.raises(BackendUsed):
        LLMRelevanceScorer(RecordedLLM(ScriptedLLM(fail=True), CallStore(store.path), "replay_or_record")).score(
            "Another question?", texts)


def test_unparseable_reply_scores_between_the_labels(tmp_path):
    scorer = LLMRelevanceScorer(RecordedLLM(ScriptedLLM("I think so"), CallStore(tmp_path / "s.jsonl"), "record"))
    assert scorer.score("q?", ["a"]).tolist() == [0.5]
    assert scorer.calls[0]["label"] == "unparsed"


@pytest.fixture(scope="module")
def tiny_cross_encoder(tmp_path_factory):
    """A randomly initialised 1-layer BERT cross-encoder, saved to a temporary folder."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizer

    folder = tmp_path_factory.mktemp("tiny-cross-encoder")
    words = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "capital", "of", "france", "paris", "is", "the",
             "lyon", "big", "?", "."]
    (folder / "vocab.txt").write_text("\n".join(words) + "\n")
    torch.manual_seed(0)
    config = BertConfig(vocab_size=len(words), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=32, max_position_embeddings=64, num_labels=1)
    BertForSequenceClassification(config).save_pretrained(folder)
    BertTokenizer(str(folder / "vocab.txt")).save_pretrained(folder)
    return folder


def test_cross_encoder_from_a_local_folder(tiny_cross_encoder):
    scorer = CrossEncoderScorer(tiny_cross_encoder)
    texts = ["paris is the capital .", "lyon is big .", "the capital"]
    scores = scorer.score("capital of france ?", texts)
    assert scores.shape == (3,) and np.isfinite(scores).all()
    assert len(set(np.round(scores, 6))) > 1  # random weights still separate different inputs
    again = scorer.score_many(["capital of france ?"], [texts])[0]
    np.testing.assert_allclose(again, scores, rtol=1e-5)
    from sentence_transformers import CrossEncoder

    direct = CrossEncoder(str(tiny_cross_encoder), device="cpu").predict([("capital of france ?", t) for t in texts])
    np.testing.assert_allclose(scores, np.asarray(direct).ravel(), rtol=1e-5)


def test_cross_encoder_missing_folder_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        CrossEncoderScorer(tmp_path / "nope")
