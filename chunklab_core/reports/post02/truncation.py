"""Post 02's truncation section: chunks cut by the embedding model, and the misses that causes.

Handles: the prose summary of ``MatrixResult.truncated`` (chunks longer than a dense model's
maximum sequence length, per model and the worst cell), and real questions that BM25 finds in
its top k while dense retrieval misses them because the gold lies past the part of the chunk
the model reads. The sentences live in ``truncation.md`` (:mod:`chunklab_core.reports.templates`);
each corpus is named by its sample label (``labels``: :func:`chunklab_core.reports.samples.labels_for`).
Not handled: counting truncated chunks (``evaluation.matrix``), the rest of
the post (``reports.post02.tables``).
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from chunklab_core.chunking import strategy_label
from chunklab_core.core import numbers
from chunklab_core.evaluation.matrix import MatrixResult
from chunklab_core.reports.templates import Templates
from chunklab_core.retrieval.registry import BASELINE, needs_model, spec

PROSE = Templates(__file__, "truncation.md")

__all__ = ["truncation_text", "miss_examples"]


def truncation_text(truncated: pd.DataFrame, labels: Mapping[str, str]) -> str:
    """Chunks each model truncates (of all it embedded), and the cell with the largest share cut."""
    if truncated is None or truncated.empty:
        return PROSE.fill("none")
    worst = truncated.sort_values("share truncated", ascending=False).iloc[0]
    total = truncated.groupby("model")[["chunks", "truncated"]].sum()
    models = "; ".join(PROSE.fill("model", model=model, truncated=f"{int(r['truncated']):,}", chunks=f"{int(r['chunks']):,}",
                                  share=numbers.number(r['truncated'] / r['chunks'], 1, scale="percent")) for model, r in total.iterrows())
    return PROSE.fill("summary", models=models, strategy=strategy_label(worst["strategy"]),
                      sample=labels.get(worst["corpus"], worst["corpus"]), model=worst["model"],
                      share=numbers.number(worst['share truncated'], 1, scale="percent"))


def miss_examples(matrix: MatrixResult, model: str, k: int, labels: Mapping[str, str], max_examples: int = 3,
                  width: int = 140) -> list[str]:
    """Questions BM25 answers in its top k and dense misses, where the gold sits past the dense
    model's maximum sequence length inside the BM25 hit (a truncation miss)."""
    from chunklab_core.core.textmatch import match_text

    examples: list[str] = []
    used: set[str] = set()
    for (corpus, run_model, strategy, retriever), dense_run in matrix.runs.items():
        if not spec(retriever).stored or not needs_model(retriever) or run_model != model:
            continue
        if any(c.ctx_start != c.start or c.ctx_end != c.end for c in dense_run.chunks):
            continue  # the model embeds the indexed span, not the wider returned context
        if len(examples) >= max_examples:
            break
        bm25_run = matrix.runs.get((corpus, model, strategy, BASELINE))
        if bm25_run is None:
            continue
        for index, q in enumerate(dense_run.corpus.questions):
            if len(q.gold_slots) != 1 or len(examples) >= max_examples or q.qid in used:
                continue
            dense_hit = any(_holds(dense_run, c, q) for c in dense_run.ranked[index, :k] if c >= 0)
            if dense_hit:
                continue
            for c in bm25_run.ranked[index, :k]:
                if c < 0 or not _holds(bm25_run, c, q):
                    continue
                text = bm25_run.context_text(c)
                # contexts are the indexed spans here, one per chunk: context c is chunk c, and the
                # recorded run says whether the model cut it
                if dense_run.truncated is None or not dense_run.truncated[int(c)]:
                    break
                cut = _visible_chars(model, text)
                position = match_text(text).find(match_text(q.gold_slots[0][0]))
                if position < cut:
                    break
                used.add(q.qid)
                examples.append(PROSE.fill(
                    "miss", sample=labels.get(corpus, corpus), strategy=strategy_label(strategy), question=q.text,
                    gold=repr(q.gold_slots[0][0]), length=f"{len(text):,}", position=f"{position:,}", model=model,
                    cut=f"{cut:,}", k=k))
                break
    return examples or [PROSE.fill("no_miss", k=k, model=model)]


def _holds(run, context_index: int, question) -> bool:
    from chunklab_core.evaluation.gold_slots import slot_found

    return slot_found(run.context_text(int(context_index)), question.gold_slots[0])


def _visible_chars(model: str, text: str) -> int:
    """Characters of ``text`` covered by the model's first max_seq_length tokens (its tokenizer
    only, ``dense.model_tokenizer``: no model is run)."""
    from chunklab_core.retrieval.dense import model_tokenizer

    tokenizer, max_seq_length = model_tokenizer(model)
    encoded = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True, truncation=False, verbose=False)
    offsets = encoded["offset_mapping"]
    limit = max_seq_length - 2
    return offsets[min(limit, len(offsets)) - 1][1] if offsets else 0
