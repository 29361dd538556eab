"""The candidate pool, its budgets and measures, and the order that says which candidate is simplest.

Handles:

* the pool (:data:`SERIES`, :data:`LIBRARY`, :data:`POOL`): the series' strategies (``series.json`` beside
  this module, the one list, which post 02's line in ``reports/posts.py`` reads too), and each
  library splitter at its documented default (``"default"`` only where the library documents
  it, checked against the installed libraries' signatures: LangChain's recursive
  ``TextSplitter`` 4,000/200 characters (its TokenText splitter at the same sizes runs on
  cl100k_base, not its default gpt2, and its label says so), LlamaIndex's ``SentenceSplitter``
  1,024/200, chonkie's chunkers 2,048 characters); LangChain recursive 1,000/200 is its docs'
  example and semchunk has no default size (512 is chosen here), and their labels say so.
  :func:`candidates` gives a setting's candidates;
* the budgets (:data:`BUDGETS`: doubling from 256 to 8,192 tokens of :data:`TOKENIZER`);
* one declared measure per corpus (:data:`MEASURES`): token span recall where gold is an evidence
  span in long documents (CUAD, Chroma's corpora), containment recall where gold is a short
  answer string (SQuAD, NQ, QASPER, your documents), and the token unit each counts in
  (:data:`MEASURE_UNITS`);
* the simplicity order (:func:`simplicity`): no model before a model (a strategy that cuts with
  an embedding model, a retriever that embeds), then fewer declared parameters, then fewer
  tokens per context read, then pool order. It breaks exact ties and picks among equivalents.

Not handled: scores (``decision.scores``), verdicts (``decision.engine``), sentences (``reports.pool``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Mapping, Sequence

from chunklab_core.core.tokens import ENCODING_NAME
from chunklab_core.evaluation.budget import MATCHED_BUDGETS

SERIES_FILE = Path(__file__).with_name("series.json")  # the one list: post 02 reads it too (reports/posts.py)
SERIES: tuple[str, ...] = tuple(json.loads(SERIES_FILE.read_text(encoding="utf-8"))["strategies"])
DOCUMENTED_DEFAULT = "documented default"
LIBRARY: Mapping[str, str] = {
    "lc_recursive_default": DOCUMENTED_DEFAULT,
    "lc_recursive_1000_200": "the docs' example",
    "lc_token_default": "its documented sizes, on cl100k_base (its default tokenizer, gpt2, is not shipped offline)",
    "llama_sentence_default": DOCUMENTED_DEFAULT,
    "chonkie_token_default": DOCUMENTED_DEFAULT,
    "chonkie_sentence_default": DOCUMENTED_DEFAULT,
    "chonkie_recursive_default": DOCUMENTED_DEFAULT,
    "semchunk_512": "a size chosen here (semchunk has no default size)",
}
POOL = SERIES + tuple(LIBRARY)
BUDGETS = MATCHED_BUDGETS  # doubling from 256 to 8,192 tokens of TOKENIZER
TOKENIZER = ENCODING_NAME
COLUMNS = {"containment": "recall", "span": "token_recall"}
MEASURE_NAMES = {"containment": "containment recall", "span": "token span recall"}
MEASURE_UNITS = {
    "containment": "the share of a question's gold answer strings found whole (normalised text) in the contexts read",
    "span": "the share of the gold evidence's word tokens (regex \\w+ tokens of the text, not cl100k_base "
            "tokens) that the contexts read cover",
}
REASON_SHORT, REASON_LONG = "reason.short", "reason.long"  # the reason's template names (reports/pool.md)
MEASURES: Mapping[str, tuple[str, str]] = {
    "squad": ("containment", REASON_SHORT), "nq": ("containment", REASON_SHORT),
    "qasper": ("containment", REASON_SHORT), "own": ("containment", REASON_SHORT),
    "cuad": ("span", REASON_LONG), "chroma": ("span", REASON_LONG),
}
# chonkie's specs take an ``embed`` parameter that only its semantic kind uses: these kinds cut without a model
_NO_MODEL_KINDS = ("token", "sentence", "recursive")


def candidates(corpus: str, retriever: str, model: str, available: Sequence[str] | None = None) -> list[str]:
    """The pool's strategies for one setting, in pool order (those of ``available`` when given:
    a cell that did not run is not a candidate). The same pool in every setting."""
    del corpus, retriever, model  # one pool for every setting; the arguments name what it is for
    return [s for s in POOL if available is None or s in set(available)]


def measure_of(corpus: str) -> str:
    """``containment`` or ``span``: the declared measure of a corpus (:data:`MEASURES`)."""
    if corpus not in MEASURES:
        raise KeyError(f"no declared measure for corpus {corpus!r}; declared: {', '.join(MEASURES)}")
    return MEASURES[corpus][0]


def cuts_with_model(strategy: str) -> bool:
    """Whether a strategy cuts with an embedding model (its spec's ``needs_embedding``, except
    chonkie's token, sentence and recursive kinds, whose ``embed`` parameter is unused)."""
    from chunklab_core.chunking import STRATEGIES

    spec = STRATEGIES.get(strategy)
    if spec is None:
        return False
    return bool(spec.needs_embedding) and spec.params.get("kind") not in _NO_MODEL_KINDS


def parameters(strategy: str) -> int:
    """The declared parameters of a strategy (its spec's ``params`` less the model it is given)."""
    from chunklab_core.chunking import STRATEGIES

    spec = STRATEGIES.get(strategy)
    return 0 if spec is None else len([p for p in spec.params if p != "embed"])


def simplicity(strategy: str, tokens_per_context: float, retriever_embeds: bool = False) -> tuple:
    """The order's key, smaller first: (models used, parameters, tokens per context, pool order).
    ``retriever_embeds`` counts the retriever's own model where candidates differ in retriever
    (chunklab-own's overall scope); within a setting every candidate shares it."""
    order = POOL.index(strategy) if strategy in POOL else len(POOL)
    tokens = tokens_per_context if tokens_per_context == tokens_per_context else float("inf")  # NaN last
    return (int(cuts_with_model(strategy)) + int(retriever_embeds), parameters(strategy), tokens, order, strategy)


SIMPLICITY_WORDS = ("no model before a model (chunking with an embedding model counts as one), then fewer "
                    "declared parameters, then fewer tokens per context read")
