"""``chunklab-own questions`` on a small fixture corpus with a scripted model: the passage draw,
the checks, the recorded calls (resume and replay), the file, its review, and what a run on
generated questions says (held-out check, post 04's numbers, questions at the margin)."""

from __future__ import annotations

import argparse
import json
import math
import re

import numpy as np
import pandas as pd
import pytest
import yaml

from chunklab_core.core import paths
from chunklab_core.data.loaders import load_folder, load_user_corpus
from chunklab_core.llm.testing import BackendUsed, ScriptedLLM
from chunklab_core.own import generate, held_out, passages, review
from chunklab_core.questions.checks import near_duplicates

THINGS = [("lantern", "lit", "1891", "Ada Quill"), ("fog horn", "tested", "1902", "Bram Osei"),
          ("gallery", "painted", "1911", "Cora Lind"), ("boiler", "replaced", "1923", "Dov Marsh"),
          ("radio mast", "raised", "1934", "Eli Fenn"), ("slipway", "extended", "1947", "Fay Drum"),
          ("oil house", "rebuilt", "1958", "Gus Tarn"), ("bell", "recast", "1961", "Hal Vey"),
          ("pier", "lengthened", "1972", "Ivy Royle"), ("stairs", "relaid", "1983", "Jon Kest"),
          ("cistern", "sealed", "1994", "Kit Alder"), ("beacon", "automated", "2005", "Lou Brand")]
FILLER = "Visitors often ask about it, and the keepers kept careful notes on the work and its cost in the logbook."


def paragraph(thing, verb, year, person):
    return f"The {thing} was {verb} in {year} by {person}. {FILLER} {FILLER}"


@pytest.fixture
def docs(tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    for number, start in enumerate((0, 5, 9)):
        stop = {0: 5, 5: 9, 9: 12}[start]
        body = "\n\n".join(paragraph(*t) for t in THINGS[start:stop])
        (folder / f"doc{number}.md").write_text(f"# Document {number}\n\n{body}\n", encoding="utf-8")
    return folder


def good_reply(messages, schema, options):
    """A question about the passage's first fact, its year copied from the passage."""
    passage = messages[1]["content"]
    thing, verb, year = re.search(r"The (.+?) was (\w+) in (\d{4})", passage).groups()
    return json.dumps({"question": f"In which year was the {thing} {verb}?", "answer": year})


def faulty_reply(messages, schema, options):
    """Good replies, except: the bell's question refers to "this document", the boiler's answer is not in the
    passage, the pier's question gives its answer away, and the beacon's reply is unreadable twice."""
    passage = messages[1]["content"]
    if "The bell" in passage:
        return json.dumps({"question": "In which year was the bell of this document recast?", "answer": "1961"})
    if "The boiler" in passage:
        return json.dumps({"question": "In which year was the boiler replaced?", "answer": "1931"})
    if "The pier" in passage:
        return json.dumps({"question": "Who is Ivy Royle?", "answer": "Ivy Royle"})
    if "The beacon" in passage:
        return "no JSON here"
    return good_reply(messages, schema, options)


def args_for(docs, out, **extra):
    base = dict(docs=str(docs), out=str(out), n=None, report=None, seed=0, server=None, model=None, threads=None,
                replay=False, force=False, no_progress=True)
    return argparse.Namespace(**{**base, **extra})


def test_unparsed_status_is_the_generators():
    from chunklab_core.questions.generation import UNPARSED

    assert generate.UNPARSED == UNPARSED


def test_allocation_gives_every_document_one_then_shares_by_supply():
    # hand-computed: one each (1, 1, 1); 2 left over documents 0 and 2 with 2 and 5 spare:
    # shares 2*2/7 = 0.57 and 2*5/7 = 1.43 -> floors 0 and 1, the last by the larger remainder (0.57) to doc 0
    assert passages.allocation([3, 1, 6], 5) == [2, 1, 2]
    assert passages.allocation([3, 1, 6], 100) == [3, 1, 6]
    assert passages.allocation([3, 0, 6], 2) == [1, 0, 1]
    assert sum(passages.allocation([7, 2, 9, 4], 11)) == 11


def test_document_passages_merge_short_blocks_and_cover_the_document(docs):
    text = (docs / "doc0.md").read_text(encoding="utf-8")
    cut = passages.document_passages("doc0.md", text)
    assert len(cut) == 5  # the heading travels with the first paragraph
    assert cut[0].text.startswith("# Document 0\n\nThe lantern")
    assert all(text[p.start:p.end] == p.text for p in cut)
    long_text = " ".join(["A sentence of some length that goes on."] * 100)
    pieces = passages.document_passages("long", long_text)
    assert len(pieces) > 1 and all(len(p.text) <= passages.MAX_CHARS for p in pieces)


def test_stratified_draw_represents_every_document_and_is_seeded(docs):
    documents = load_folder(docs)
    drawn = passages.stratified_draw(documents, 4, seed=3)
    assert len(drawn) == 4 and {p.doc_id for p in drawn} == {"doc0.md", "doc1.md", "doc2.md"}
    assert drawn == passages.stratified_draw(documents, 4, seed=3)
    assert passages.supply(documents) == 12


def test_earlier_duplicates_flag_the_later_of_each_near_duplicate_pair():
    questions = ["When was the lantern lit?", "Who painted the gallery?", "When was the lantern lit ?",
                 "Who painted the gallery"]
    flags = [c.flag for c in generate.earlier_duplicates(questions)]
    assert flags == [False, False, True, True]
    both = [c.flag for c in near_duplicates(questions, generate.DUPLICATE_THRESHOLD)]
    assert both == [True, True, True, True]  # near_duplicates flags both members of each pair; one is kept here


def test_questions_command_writes_checked_entries_and_replays_without_a_model(docs, tmp_path, capsys):
    out = tmp_path / "questions.yaml"
    assert generate.command(args_for(docs, out), llm=ScriptedLLM(faulty_reply)) == 0
    text = out.read_text(encoding="utf-8")
    assert text.startswith(generate.HEADER_START)
    header, entries = review.read_file(out)
    assert len(entries) == 12 and all(e.fields["source"] == "generated" for e in entries)
    flagged = {e.fields["id"]: e.reasons for e in entries if e.reasons}
    by_query = {e.fields["query"]: e for e in entries}
    assert by_query["In which year was the bell of this document recast?"].reasons[0].startswith("context-dependent")
    assert any(r.startswith("answer not in passage") for r in by_query["In which year was the boiler replaced?"].reasons)
    assert any(r.startswith("answer in question") for r in by_query["Who is Ivy Royle?"].reasons)
    assert any(r.startswith("unparsed") for e in entries for r in e.reasons)
    assert len(flagged) == 4
    for entry in entries:  # every entry carries its seven check results
        assert len(entry.fields["checks"]) == 7
    corpus = load_user_corpus(docs, out)  # the flagged ones are commented out: the loader reads the other 8
    assert len(corpus.questions) == 8 and {q.source for q in corpus.questions} == {"generated"}
    for question in corpus.questions:  # the gold is the document's own text, in the question's document
        assert question.gold_slots[0][0] in corpus.doc(question.doc_id).text
    assert "8 pass the checks, 4 flagged" in capsys.readouterr().out
    # replay: the same file from the records, no model touched
    before = text
    assert generate.command(args_for(docs, out, replay=True), llm=ScriptedLLM(fail=True)) == 0
    assert out.read_text(encoding="utf-8") == before


def test_questions_command_resumes_after_an_interruption(docs, tmp_path):
    out = tmp_path / "questions.yaml"

    class Interrupted(ScriptedLLM):
        def _generate(self, messages, schema, options):
            if len(self.calls) == 5:
                raise KeyboardInterrupt
            return super()._generate(messages, schema, options)

    with pytest.raises(KeyboardInterrupt):
        generate.command(args_for(docs, out, n=6), llm=Interrupted(good_reply))
    assert not out.exists()  # a failed run leaves no file
    second = ScriptedLLM(good_reply)
    assert generate.command(args_for(docs, out, n=6), llm=second) == 0
    assert len(second.calls) == 1  # the five finished calls were replayed


def test_questions_command_refuses_a_file_it_did_not_write_and_bad_n(docs, tmp_path, capsys):
    mine = tmp_path / "mine.yaml"
    mine.write_text("questions: []\n", encoding="utf-8")
    assert generate.command(args_for(docs, mine), llm=ScriptedLLM(good_reply)) == 1
    assert "not written by chunklab-own questions" in capsys.readouterr().err
    assert mine.read_text(encoding="utf-8") == "questions: []\n"
    assert generate.command(args_for(docs, tmp_path / "q.yaml", n=0), llm=ScriptedLLM(good_reply)) == 1
    assert generate.command(args_for(docs, tmp_path / "q.yaml", replay=True), llm=ScriptedLLM(fail=True)) == 1


def test_default_count_comes_from_a_report_and_is_bounded_by_the_documents(docs, tmp_path):
    documents = load_folder(docs)
    run = tmp_path / "run"
    run.mkdir()
    (run / "recommendation.json").write_text(json.dumps({"questions at margin": {"questions": 7}}), encoding="utf-8")
    assert planned(documents, None, run)[0] == 7
    (run / "recommendation.json").write_text(json.dumps({"questions at margin": {"questions": 500}}), encoding="utf-8")
    count, why = planned(documents, None, run)
    assert count == 12 and "bounded by the 12 passages" in why
    assert planned(documents, None, None) == (12, f"default {generate.DEFAULT_N}, bounded by the 12 passages the "
                                                  "documents hold")
    assert planned(documents, 2, None)[0] == 3  # raised to one per document


def planned(documents, n, report):
    return generate.planned_n(documents, n, report)


def test_review_accepts_rejects_and_edits_and_keeps_the_file_readable(docs, tmp_path):
    out = tmp_path / "questions.yaml"
    generate.command(args_for(docs, out), llm=ScriptedLLM(faulty_reply))
    header, entries = review.read_file(out)
    assert review.render(header, entries) == out.read_text(encoding="utf-8")  # read and write round-trip
    session = review.Review(out, docs)
    bell = next(i for i, e in enumerate(session.entries) if "bell" in e.fields["query"])
    good = next(i for i, e in enumerate(session.entries) if not e.reasons)
    session.decide(bell, "accept")
    session.decide(good, "reject")
    boiler = next(i for i, e in enumerate(session.entries) if "boiler" in e.fields["query"])
    state = session.decide(boiler, "edit", gold="1923")
    assert state["items"][boiler]["reasons"] == [] and state["items"][boiler]["active"]
    questions = {q.qid: q for q in load_user_corpus(docs, out).questions}
    assert session.entries[bell].fields["id"] in questions
    assert session.entries[good].fields["id"] not in questions
    assert questions[session.entries[boiler].fields["id"]].gold_slots == (("1923",),)
    _, again = review.read_file(out)
    assert again[good].decision == "rejected" and again[bell].decision == "accepted"


def test_review_server_checks_host_and_secret_and_escapes(docs, tmp_path):
    import http.client
    import threading

    out = tmp_path / "q<b>.yaml"
    generate.command(args_for(docs, out), llm=ScriptedLLM(good_reply))
    session = review.Review(out, docs)
    server = review.make_server(session)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]

    def post(path, body, host="127.0.0.1"):
        connection = http.client.HTTPConnection("127.0.0.1", port)
        data = json.dumps(body)
        connection.request("POST", path, data, {"Host": host, "Content-Type": "application/json"})
        response = connection.getresponse()
        return response.status, json.loads(response.read())

    try:
        connection = http.client.HTTPConnection("127.0.0.1", port)
        connection.request("GET", "/")
        page = connection.getresponse().read().decode()
        assert "q&lt;b&gt;.yaml" in page and "q<b>.yaml" not in page and "innerHTML" not in page
        assert post("/api/state", {})[0] == 403
        assert post("/api/state", {"secret": session.secret}, host="evil.example")[0] == 403
        status, state = post("/api/state", {"secret": session.secret})
        assert status == 200 and len(state["items"]) == 12
        assert post("/api/decide", {"secret": session.secret, "index": 99, "decision": "accept"})[0] == 400
        status, state = post("/api/decide", {"secret": session.secret, "index": 0, "decision": "reject"})
        assert status == 200 and state["items"][0]["decision"] == "rejected"
    finally:
        server.shutdown()
        server.server_close()


def test_held_out_check_confirms_a_clear_leader_and_says_when_it_does_not():
    rng = np.random.default_rng(0)
    n = 60
    wide = pd.DataFrame({"A": (rng.random(n) < 0.9).astype(float), "B": (rng.random(n) < 0.3).astype(float)})
    result = held_out.held_out_check(wide, "A", resamples=2_000, seed=1)
    assert result["confirmed"] is True and result["text"].startswith("confirmed: A")
    assert result["selection questions"] + result["held-out questions"] == n
    other = held_out.held_out_check(wide, "B", resamples=2_000, seed=1)
    assert other["confirmed"] is False and other["text"].startswith("not confirmed: on a random half")
    few = held_out.held_out_check(wide.head(6), "A", resamples=2_000, seed=1)
    assert few["confirmed"] is None and few["text"].startswith("not checked")


def test_held_out_check_decides_by_the_engine_not_by_cannot_be_ruled_out():
    """A leads clearly on the selection half; on the held-out half B leads by one answer in 30 with an
    interval across ±0.02. The old rule (select_winner) says A "cannot be ruled out" there, which
    confirmed it; the engine says undecided at ±0.02, so the line says not confirmed."""
    from chunklab_core.stats.selection import select_winner

    n = 60
    select, hold = held_out._halves(n, 1)
    a, b = np.zeros(n), np.zeros(n)
    a[select[:10]] = 1.0  # selection half: A answers 10 questions B misses
    b[hold[:3]] = 1.0  # held-out half: B answers 3 that A misses, A 2 that B misses
    a[hold[3:5]] = 1.0
    wide = pd.DataFrame({"A": a, "B": b})
    old = select_winner(wide.to_numpy()[hold], ["A", "B"], resamples=2_000, seed=1)
    assert old.leader == "B" and "A" in old.candidates  # the old rule would have confirmed A
    result = held_out.held_out_check(wide, "A", resamples=2_000, seed=1)
    assert result["pick"] == "A" and result["held-out word"] == "undecided" and result["confirmed"] is False
    assert result["text"].startswith("not confirmed: A, picked on one half (30 questions), is undecided at ±0.02")


def test_questions_at_margin_is_the_engines_figure_with_documents_in_proportion():
    from chunklab_core.decision.margin import questions_to_settle

    needed = questions_to_settle(100, 0.0, -0.1, 0.1, 0.02)
    result = held_out.questions_at_margin(needed, "undecided", 100, n_documents=20, margin=0.02)
    assert result["questions"] == needed and result["documents"] == math.ceil(needed * 20 / 100)
    assert f"about {needed:,} questions" in result["text"]
    decided = held_out.questions_at_margin(None, "decided", 10, 5)
    assert decided["questions"] is None and decided["text"].startswith("none needed: decided")


def test_post04_numbers_are_read_from_its_committed_tables():
    measure = held_out.post04_measure()
    table = pd.read_csv(paths.TABLES_DIR / "04_retrieval.csv")
    nq = table[table["corpus"] == "nq"]
    assert measure.mean_gap == pytest.approx(nq["generated − human"].mean())
    assert measure.cells == len(nq) and 0 < measure.flagged < measure.generated
    notebook = json.loads((paths.NOTEBOOKS_DIR / "src" / "04_questions.ipynb").read_text(encoding="utf-8"))
    source = "".join("".join(cell["source"]) for cell in notebook["cells"])
    assert f'METRIC = "{held_out.POST04_METRIC}"' in source
    line = held_out.generated_line(8, 8, measure)
    assert f"{measure.mean_gap:+.2f}" in line and f"{measure.flagged} of {measure.generated}" in line
    assert "not quoted" in held_out.generated_line(8, 8, None)


def test_a_run_on_generated_questions_says_so_and_holds_half_out(docs, tmp_path):
    from chunklab_core.own.pipeline import compute

    out = tmp_path / "questions.yaml"
    generate.command(args_for(docs, out), llm=ScriptedLLM(good_reply))
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump({"strategies": ["fixed_tokens_512_o64", "structure_sections"],
                                      "retrievers": ["bm25"], "k": 5, "resamples": 1000}), encoding="utf-8")
    result = compute(str(docs), str(out), str(config))
    box = dict(result.box)
    assert box["questions"].startswith("all questions generated from your documents")
    assert box["held out"].startswith(("confirmed", "not confirmed", "not checked"))
    record = result.record()
    assert record["generated questions"]["generated"] == 12
    assert record["held out"]["confirmed"] in (True, False)
    assert "to decide" in box and list(box).index("to decide") > list(box).index("decision")
    assert list(box).index("held out") == list(box).index("verdict at k chunks") + 1
