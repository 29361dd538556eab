"""Second-stage scorers for the reranking stage: each scores (question, candidate texts) pairs.

Handles three scorers with one method, ``score(question, texts) -> np.ndarray`` (higher is
more relevant), plus ``score_many`` for a batch of questions:

* :class:`EmbeddingScorer`: cosine similarity under a sentence-transformers bi-encoder (the
  series uses all-mpnet-base-v2 over BM25 or MiniLM candidates), through ``dense.DenseRetriever``
  and so through the on-disk embedding cache: each distinct candidate text is encoded once, ever.
* :class:`CrossEncoderScorer`: any ``sentence_transformers.CrossEncoder`` saved in a local
  folder (hub switched off); its ``predict`` output is the score.
* :class:`LLMRelevanceScorer`: a local LLM asked YES/NO per candidate (``llm.relevance``)
  through a recorded model (``llm.records.RecordedLLM``), so a replay needs no model; the
  score is p(YES) when the backend gives it, else the label (1/0). Each call's label, score,
  latency and prompt tokens are kept in ``calls`` for the cost tables; an unparseable reply
  scores 0.5 (between the labels, ties keep first-stage order) and is counted.

:class:`RecordedScorer` puts the embedding re-scorer behind the run store (``make runs`` records
its scores, ``make all`` replays them without a model).

Not handled: batching across questions for the LLM (one call per pair), GPU settings.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence

import numpy as np

UNPARSED_SCORE = 0.5


class EmbeddingScorer:
    """Cosine similarity of question and candidate under one bi-encoder (cached embeddings)."""

    def __init__(self, model: str = "all-mpnet-base-v2", **dense_options):
        from chunklab_core.retrieval.dense import DenseRetriever

        self.retriever = DenseRetriever(model, **dense_options)
        self.name = self.retriever.label

    def score_many(self, questions: Sequence[str], candidates: Sequence[Sequence[str]]) -> list[np.ndarray]:
        """Scores of each question's candidates; every distinct text is embedded once."""
        if len(questions) != len(candidates):
            raise ValueError(f"{len(questions)} questions but {len(candidates)} candidate lists")
        flat = [t for texts in candidates for t in texts]
        passages = self.retriever.embed(flat) if flat else np.zeros((0, 1), np.float32)
        queries = self.retriever.embed(list(questions), prefix=self.retriever.query_prefix)
        out, start = [], 0
        for row, texts in enumerate(candidates):
            block = passages[start:start + len(texts)]
            out.append((block @ queries[row]).astype(np.float64) if len(texts) else np.zeros(0))
            start += len(texts)
        return out

    def score(self, question: str, texts: Sequence[str]) -> np.ndarray:
        return self.score_many([question], [texts])[0]


class RecordedScorer:
    """The embedding re-scorer through the run store: its scores recorded once, replayed by ``make all``.

    ``score_many`` asks the store (``retrieval.recorded_runs.RunStore.keyed``, kind
    ``rescores``) for the scores of exactly these questions and candidates under ``model``
    (keyed by their sha256); only a miss builds the :class:`EmbeddingScorer`, so a replay needs
    no model. Scores are the scorer's float32 cosines, stored exactly.
    """

    def __init__(self, model: str = "all-mpnet-base-v2", store=None, **dense_options):
        from chunklab_core.retrieval.model_assembly import canonical_label

        self.model, self.name, self.options = model, canonical_label(model), dense_options
        self._store, self._scorer = store, None

    @property
    def store(self):
        from chunklab_core.retrieval.recorded_runs import default_store

        return self._store if self._store is not None else default_store()

    def _live(self) -> EmbeddingScorer:
        if self._scorer is None:
            self._scorer = EmbeddingScorer(self.model, **self.options)
        return self._scorer

    def score_many(self, questions: Sequence[str], candidates: Sequence[Sequence[str]]) -> list[np.ndarray]:
        from chunklab_core.retrieval.recorded_runs import texts_sha256

        if len(questions) != len(candidates):
            raise ValueError(f"{len(questions)} questions but {len(candidates)} candidate lists")
        lengths = np.array([len(c) for c in candidates], dtype=np.int64)
        key = {"scorer": "embedding", "model": self.name, "questions": texts_sha256(questions),
               "candidates": texts_sha256([t for texts in candidates for t in texts]),
               "lengths": texts_sha256([str(n) for n in lengths])}

        def compute():
            scores = self._live().score_many(questions, candidates)
            flat = np.concatenate(scores) if scores else np.zeros(0)
            return {"scores": flat.astype(np.float32), "lengths": lengths}

        arrays = self.store.keyed("rescores", key, compute,
                                  f"{self.name} re-scoring {len(questions)} questions' {int(lengths.sum())} candidates")
        flat = arrays["scores"].astype(np.float64)
        bounds = np.concatenate([[0], np.cumsum(arrays["lengths"])])
        return [flat[bounds[i]:bounds[i + 1]] for i in range(len(questions))]

    def score(self, question: str, texts: Sequence[str]) -> np.ndarray:
        return self.score_many([question], [texts])[0]


class CrossEncoderScorer:
    """A sentence-transformers CrossEncoder from a local folder; ``predict`` gives the score."""

    def __init__(self, folder: str | os.PathLike, batch_size: int = 32, device: str = "cpu"):
        folder = Path(folder)
        if not folder.is_dir():
            raise FileNotFoundError(f"cross-encoder folder {folder} does not exist (a local model folder is needed; "
                                    "nothing is downloaded)")
        os.environ["HF_HUB_OFFLINE"] = "1"
        os.environ["TRANSFORMERS_OFFLINE"] = "1"
        from sentence_transformers import CrossEncoder

        self.model = CrossEncoder(str(folder), device=device, local_files_only=True)
        self.batch_size = batch_size
        self.name = folder.name

    def score(self, question: str, texts: Sequence[str]) -> np.ndarray:
        if not len(texts):
            return np.zeros(0)
        scores = self.model.predict([(question, t) for t in texts], batch_size=self.batch_size,
                                    show_progress_bar=False, convert_to_numpy=True)
        return np.asarray(scores, dtype=np.float64).reshape(len(texts), -1)[:, -1]

    def score_many(self, questions: Sequence[str], candidates: Sequence[Sequence[str]]) -> list[np.ndarray]:
        return [self.score(q, texts) for q, texts in zip(questions, candidates)]


class LLMRelevanceScorer:
    """Pointwise YES/NO relevance from a recorded LLM (``RecordedLLM`` or ``MeteredLLM``)."""

    def __init__(self, llm, name: str = "llm"):
        self.llm = llm
        self.name = name
        self.calls: list[dict] = []

    def score(self, question: str, texts: Sequence[str]) -> np.ndarray:
        from chunklab_core.llm.relevance import RELEVANCE_SCHEMA, parse_relevance, relevance_messages

        scores = np.zeros(len(texts))
        for i, text in enumerate(texts):
            reply = self.llm.call(relevance_messages(question, text), RELEVANCE_SCHEMA, max_tokens=1)
            label, score, kind = parse_relevance(reply.text)
            scores[i] = UNPARSED_SCORE if score is None else score
            self.calls.append({"question": question, "position": i, "label": label, "score": scores[i],
                               "score_kind": kind, "seconds": reply.latency_s, "prompt_tokens": reply.prompt_tokens,
                               "replayed": reply.replayed, "key": reply.key})
        return scores

    def score_many(self, questions: Sequence[str], candidates: Sequence[Sequence[str]]) -> list[np.ndarray]:
        return [self.score(q, texts) for q, texts in zip(questions, candidates)]


def make_llm_scorer(mode: str = "replay", root=None, model: str = "qwen-1.5b", stage: str = "rerank_qwen15",
                    n_threads: int | None = None) -> LLMRelevanceScorer:
    """The recorded Qwen2.5-Coder YES/NO scorer of post 07 (stage ``data/records/<stage>.jsonl``).

    Nothing is loaded here; the model is loaded on the first call that is not recorded.
    """
    from chunklab_core.llm.records import CallStore, RecordedLLM
    from chunklab_core.llm.relevance import LlamaCppYesNoBackend

    store = CallStore.for_stage(stage, root, make_target="llm-rerank")
    recorded = RecordedLLM(lambda: LlamaCppYesNoBackend(model, n_threads=n_threads), store, mode)
    return LLMRelevanceScorer(recorded, name=f"{model} YES/NO")
