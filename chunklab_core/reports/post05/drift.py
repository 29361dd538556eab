"""Post 05: where retrieval and answer part ways, counted per strategy and shown with real cases.

Handles: per corpus and strategy, the share of questions whose passage was retrieved next to
the share answered correctly; answers that failed although the passage was retrieved; answers
that passed although no context held a whole gold answer, split into a gold cut in two by a
chunk boundary, every gold word present but not contiguous, and neither. Not handled: the
intervals of the shares (``reports.post05.tables.answer_table``), running models (``answers.study``).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from chunklab_core.answers.metrics import squad_normalize
from chunklab_core.chunking import strategy_label
from chunklab_core.answers.verdicts import REFERENCE_COLUMN, grader_name, passed
from chunklab_core.reports.post05.tables import grader_columns


def gold_split_across_contexts(golds: Sequence[str], contexts: Sequence[str]) -> bool:
    """True when no single context holds a gold answer but the contexts joined do: the
    answer's halves sit at the end of one retrieved chunk and the start of another."""
    singles = [squad_normalize(c) for c in contexts]
    joined = squad_normalize(" ".join(contexts))
    for gold in golds:
        g = squad_normalize(gold)
        if g and not any(g in s for s in singles) and g in joined:
            return True
    return False


def gold_words_present(golds: Sequence[str], contexts: Sequence[str]) -> float:
    """Best share, over golds, of a gold's normalised tokens found in the retrieved contexts."""
    tokens = set(squad_normalize(" ".join(contexts)).split())
    shares = [np.mean([t in tokens for t in squad_normalize(g).split()]) for g in golds
              if squad_normalize(g)]
    return float(max(shares)) if shares else 0.0


def drift(study, column: str = REFERENCE_COLUMN) -> pd.DataFrame:
    """Per corpus and strategy: retrieved vs answered, and the two ways they part.

    ``retrieved_wrong``: the passage was retrieved but the answer was not passed.
    ``right_without_passage``: passed although no context held a whole gold answer, split into
    ``split_answer`` (the gold's halves in two contexts), ``gold_words_present`` (every gold
    word somewhere in the contexts, not contiguous) and ``not_in_contexts`` (the rest: the
    model's own knowledge, a paraphrase, or a lucky guess).
    """
    table = study.table.assign(ok=passed(study.table[column]).astype(bool))
    rows = []
    for (corpus, strategy), group in table.groupby(["corpus", "strategy"], sort=False):
        unexplained = group[group["ok"] & ~group["passage_retrieved"]]
        split = [gold_split_across_contexts(g, c) for g, c in zip(unexplained["golds"], unexplained["contexts"])]
        words = [gold_words_present(g, c) == 1.0 for g, c in zip(unexplained["golds"], unexplained["contexts"])]
        rows.append({
            "corpus": corpus, "strategy": strategy_label(strategy), "questions": len(group),
            "passage_retrieved": float(group["passage_retrieved"].mean()),
            "answered_correctly": float(group["ok"].mean()),
            "retrieved_wrong": int((group["passage_retrieved"] & ~group["ok"]).sum()),
            "right_without_passage": len(unexplained),
            "split_answer": int(sum(split)),
            "gold_words_present": int(sum(w and not s for w, s in zip(words, split))),
            "not_in_contexts": int(sum(not w and not s for w, s in zip(words, split))),
        })
    return pd.DataFrame(rows)


def drift_examples(study, kind: str, n: int = 5, column: str = REFERENCE_COLUMN,
                   seed: int = 0) -> pd.DataFrame:
    """Up to ``n`` seeded real cases of ``kind``: ``retrieved_wrong`` or ``right_without_passage``."""
    table = study.table.assign(ok=passed(study.table[column]).astype(bool))
    if kind == "retrieved_wrong":
        cases = table[table["passage_retrieved"] & ~table["ok"]]
    elif kind == "right_without_passage":
        cases = table[table["ok"] & ~table["passage_retrieved"]]
    else:
        raise ValueError(f"kind must be 'retrieved_wrong' or 'right_without_passage', not {kind!r}")
    if len(cases) > n:
        cases = cases.iloc[np.sort(np.random.default_rng(seed).choice(len(cases), n, replace=False))]
    judges = [c for c in grader_columns(table) if c != REFERENCE_COLUMN]
    return cases[["corpus", "strategy", "question", "reference", "answer", "reference_reason", *judges]] \
        .assign(strategy=lambda d: d["strategy"].map(strategy_label)) \
        .rename(columns={c: grader_name(c) for c in judges}).reset_index(drop=True)
