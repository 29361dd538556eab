"""Write examples/evaluate/post05_squad_fixed500.jsonl: post 05's SQuAD run as a records file.

The series' own pipeline, exported as if it were yours: post 05's 200 SQuAD questions (post 01's
40-article sample, the same seeded draw), the ``fixed_500`` strategy under BM25 (the top 10
contexts, ids as in ``chunklab-trec``: ``doc_id:start-end``), the top 5 packed as the context,
and the recorded answer of Qwen2.5-Coder-1.5B with its latency and token counts, replayed from
``data/records`` (no model is loaded). ``gold_ids`` are post 01's relevant contexts (every
context of the collection containing the gold answer), ``gold_snippets`` and ``reference`` the
gold answers. Run from the repository root: ``python examples/make_example_records.py``.
"""

from __future__ import annotations

import json
from pathlib import Path

from chunklab_core.answers.study import build_items
from chunklab_core.core.atomic_files import atomic_write_text
from chunklab_core.core.corpus import Corpus
from chunklab_core.data.corpora import load_corpus
from chunklab_core.evaluation.scoring import run_cell
from chunklab_core.evaluation.trec_export import context_id
from chunklab_core.llm.answering import answer_question
from chunklab_core.llm.wiring import make_models

SEED, ARTICLES, QUESTIONS, STRATEGY = 20260729, 40, 200, "fixed_500"  # post 05's parameters
OUT = Path(__file__).resolve().parent / "evaluate" / "post05_squad_fixed500.jsonl"


def main() -> None:
    corpus = load_corpus("squad", squad_articles=ARTICLES, seed=SEED)
    items = build_items(corpus, [STRATEGY], QUESTIONS, SEED, k=5)
    by_qid = {q.qid: q for q in corpus.questions}
    sub = Corpus(corpus.name, corpus.documents, [by_qid[item.qid] for item in items])
    run = run_cell(sub, STRATEGY, "bm25", k_max=10)
    answerer = make_models(mode="replay")["answerer"]  # the judges are not called
    lines = []
    for row, item in enumerate(items):
        ranked = [int(c) for c in run.ranked[row] if c >= 0]
        contexts = tuple(run.context_text(c) for c in ranked[:5])
        assert contexts == item.contexts, f"{item.qid}: the top 5 of depth 10 differ from post 05's items"
        answer = answer_question(answerer, item.question, list(item.contexts))
        record = {
            "qid": item.qid, "query": item.question, "doc_id": item.doc_id,
            "gold_ids": [context_id(*run.contexts[c]) for c in run.relevant[row]],
            "gold_snippets": [list(item.golds)],  # one slot: the answer's alternatives
            "retrieved_ids": [context_id(*run.contexts[c]) for c in ranked],
            "context_ids": [context_id(*run.contexts[c]) for c in ranked[:5]],
            "context_texts": list(contexts),
            "answer": answer.text, "reference": list(item.golds),
            "latency_ms": {"generation": round(1000 * answer.latency_s, 1)},
            "tokens": {"prompt": answer.prompt_tokens, "completion": answer.completion_tokens},
        }
        lines.append(json.dumps(record, ensure_ascii=False))
    atomic_write_text(OUT, "\n".join(lines) + "\n")
    print(f"wrote {OUT} ({len(lines)} records)")


if __name__ == "__main__":
    main()
