"""Test helpers shared by the answer-study and recording tests (not a test module).

``tiny_corpus`` (three documents, three questions), scripted answerer/judge replies,
``scripted_models`` (the recorded answerer and two judges of a study, on ``ScriptedLLM``), and
``kill_child_after_lines`` (run a recording in a child process and SIGKILL it mid-run).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

from chunklab_core.core.corpus import Corpus, Document, Question
from chunklab_core.llm.records import CallStore, RecordedLLM
from chunklab_core.llm.testing import ScriptedLLM
from chunklab_core.llm.wiring import MeteredLLM

STRATEGIES = ["fixed_500", "fixed_1000"]


def tiny_corpus() -> Corpus:
    filler = "Lorem ipsum dolor sit amet. " * 20
    docs = [Document("d0", "The capital of France is Paris. " + filler),
            Document("d1", filler + "The tallest mountain is Everest, in Nepal."),
            Document("d2", "Bananas are yellow fruit. " + filler)]
    questions = [Question("q0", "What is the capital of France?", "d0", (("Paris",),)),
                 Question("q1", "Which is the tallest mountain?", "d1", (("Everest",),)),
                 Question("q2", "What colour are bananas?", "d2", (("yellow",),))]
    return Corpus("tiny", docs, questions)


def scripted_answer(messages, schema, options):
    question = messages[-1]["content"].rsplit("Question:", 1)[-1]
    return {"capital": "Paris", "mountain": "K2", "bananas": "not in the context"}[
        next(word for word in ("capital", "mountain", "bananas") if word in question)]


def scripted_judge(messages, schema, options):
    answer = messages[-1]["content"]
    if "YES" in json.dumps(schema):
        return json.dumps({"verdict": "YES" if "Paris" in answer else "NO"})
    return json.dumps({"verdict": "correct" if "Paris" in answer else "wrong"})


def scripted_models(root, mode="replay_or_record", fail=False, respond=lambda reply: reply):
    """The answerer and the judges ``big`` and ``small``, recorded under ``root``;
    ``respond`` wraps each scripted reply (e.g. to add a delay)."""
    os.makedirs(root, exist_ok=True)  # a records folder must exist

    def wrap(stage, reply, name):
        backend = ScriptedLLM(respond(reply), model=name, fail=fail)
        return MeteredLLM(RecordedLLM(backend, CallStore.for_stage(stage, root), mode))
    return {"answerer": wrap("answers_big", scripted_answer, "big"),
            "big": wrap("judges_big", scripted_judge, "big"),
            "small": wrap("judges_small", scripted_judge, "small")}


def kill_child_after_lines(code: str, path, lines: int, timeout_s: float = 60) -> int:
    """Run ``python -c code path``, SIGKILL it once ``path`` holds ``lines`` lines; its return code."""
    child = subprocess.Popen([sys.executable, "-c", code, str(path)],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if path.exists() and path.read_bytes().count(b"\n") >= lines:
            break
        assert child.poll() is None, "the child finished or died before it could be killed"
        time.sleep(0.01)
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    return child.returncode
