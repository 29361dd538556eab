"""Stored judgments and token counts beside the recorded rankings: a replay reads, not recomputes.

Handles: one file per (corpus sample, strategy, threshold) cell of the run store,
``data/runs/<corpus sample>/<strategy>/judgments@<threshold>.npz`` (beside the cell's rankings;
two dots in the name, so ``RunStore.cells`` does not list it as a ranking), holding

* the slot judgments (``slot_metrics.ContextJudgment``) of the (question, context) pairs the
  posts judged: ``judged`` (n_questions, n_contexts) as ``numpy.packbits`` rows (which pairs
  are stored), ``keys`` (row * n_contexts + context, sorted) and ``codes`` for the pairs whose
  judgment is not the zero judgment (no slot filled, grade 0: most pairs), into a table of
  distinct judgments (``fills``, ``first``, ``grades``, ``widths``);
* the cl100k_base token count of every chunk (``chunk_tokens``) and of every context
  (``context_tokens``) of the cell;
* the word pieces of every chunk under an embedding model's own tokenizer (``pieces_<key>``,
  one array per tokenizer, special tokens included, as sentence-transformers counts them): what
  ``reports.pool.chunk_facts`` reads for the share of a chunk beyond the model's window. Keyed
  by the sha256 of the model folder's ``tokenizer.json`` and the ``tokenizers`` version
  (:func:`tokenizer_identity`), so another tokenizer is never read as this one.

Checked before use (:mod:`chunklab_core.evaluation.judgment_checks`): on every load, the file's
kind, its cell by its path and every array's length against the counts its provenance records
(a file that fails is a ``RunStoreError`` naming it and ``make runs``, never used); when a cell's
token counts or word pieces are read instead of counted, a seeded sample of them is counted again.

Content-addressed: the provenance records the sha256 of the cell's context texts and chunk
texts (``core.hashing.texts_sha256``), of the questions' ids and gold slots, the threshold, the
tokenizer (name and tiktoken version) and :data:`SCORING_VERSION`. A part whose digests or
version differ from the current inputs is stale and is not used (the judgments are then made,
the counts counted, as without a store); ``make verify-runs`` lists stale files and recomputes a
seeded sample of stored judgments and counts from scratch (:func:`verify`).

Modes follow the run store (``CHUNKLAB_RUNS``): ``live`` (and your own documents) never read
or write; ``replay`` reads; ``record`` (``make runs``) reads and adds what it judged that was
not stored (the file is rewritten atomically).

Not handled: judging itself (``slot_metrics.judge_context``), other thresholds than the ones
recorded, the post-01 relevance rule (``scoring.relevant_contexts``).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Sequence

import numpy as np

from chunklab_core.core import paths
from chunklab_core.core.hashing import texts_sha256
from chunklab_core.evaluation import judgment_checks

#: Bump when what ``slot_metrics.judge_context`` returns changes (``gold_slots``, ``textmatch``,
#: the partial-coverage rule): every stored judgment is then stale.
SCORING_VERSION = 1
KIND = "judgments"
FORMAT_VERSION = 1


def _tokenizer() -> dict:
    from chunklab_core.core.tokens import ENCODING_NAME
    from chunklab_core.retrieval.embedding_cache import library_versions

    return {"name": ENCODING_NAME, "tiktoken": library_versions(("tiktoken",))["tiktoken"]}


def gold_sha256(questions) -> str:
    """sha256 over every question's id and gold slots, in order (canonical JSON)."""
    kept = tuple(questions)  # frozen questions: the same objects in the same order have the same digest
    key = tuple(map(id, kept))
    found = _GOLD.get(key)
    if found is None:
        found = _GOLD[key] = (kept, _gold_sha256(kept))  # the objects kept alive: their ids stay theirs
    return found[1]


def _gold_sha256(questions) -> str:
    payload = [[q.qid, [list(slot) for slot in q.gold_slots]] for q in questions]
    return hashlib.sha256(json.dumps(payload, ensure_ascii=False).encode("utf-8", "surrogatepass")).hexdigest()


#: Prefix of a stored word-piece array: ``pieces_<key>``, ``key`` from :func:`pieces_key`.
PIECES = "pieces_"


def tokenizer_identity(model: str) -> dict:
    """What an embedding model's word-piece counts depend on: the sha256 of its folder's
    ``tokenizer.json`` and the ``tokenizers`` library's version (the model's name is kept so that
    ``make verify-runs`` can count again)."""
    from chunklab_core.retrieval.embedding_cache import library_versions
    from chunklab_core.retrieval.model_assembly import resolve_model

    name, folder = resolve_model(model)
    path = Path(folder) / "tokenizer.json"
    return {"model": name, "tokenizer_json_sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
            "tokenizers": library_versions(("tokenizers",))["tokenizers"]}


def _current_identity(model: str, found: dict | None = None) -> dict | None:
    """:func:`tokenizer_identity` of ``model`` here, None when it is not assembled here
    (``found``: identities already looked up, by model)."""
    found = {} if found is None else found
    if model not in found:
        try:
            found[model] = tokenizer_identity(model)
        except (FileNotFoundError, OSError, ValueError):
            found[model] = None
    return found[model]


def pieces_key(tokenizer: dict) -> str:
    """The array key of a tokenizer's stored word pieces: 16 hex digits of its ``tokenizer.json``."""
    return tokenizer["tokenizer_json_sha256"][:16]


def file_name(threshold: float) -> str:
    return f"judgments@{float(threshold):g}.npz"


def _corpus_label(corpus) -> str:
    from chunklab_core.retrieval.recorded_runs import corpus_sample_label

    key = id(corpus)
    found = _LABELS.get(key)
    if found is None or found[0] is not corpus:
        found = _LABELS[key] = (corpus, corpus_sample_label(corpus))
    return found[1]


_LABELS: dict[int, tuple[object, str]] = {}
_DIGESTS: dict[tuple, tuple[object, object, str]] = {}
_GOLD: dict[tuple, tuple[tuple, str]] = {}


def _contexts_sha256(run) -> str:
    """sha256 of a run's context texts (kept per contexts list: every run of a cell shares it)."""
    key = (id(run.contexts), id(run.corpus), len(run.contexts))
    found = _DIGESTS.get(key)
    if found is None or found[0] is not run.contexts or found[1] is not run.corpus:
        found = _DIGESTS[key] = (run.contexts, run.corpus,
                                 texts_sha256([run.context_text(i) for i in range(len(run.contexts))]))
    return found[2]


@dataclass
class CellJudgments:
    """A cell's stored part, unpacked: which pairs are judged and their judgment numbers."""

    path: Path
    meta: dict
    judged: np.ndarray  # (n_q, n_ctx) bool
    keys: np.ndarray  # sorted int64 row * n_ctx + ctx of the non-zero judgments
    codes: np.ndarray  # int64 into the table
    fills: np.ndarray
    first: np.ndarray
    grades: np.ndarray
    widths: np.ndarray
    chunk_tokens: np.ndarray | None
    context_tokens: np.ndarray | None
    pieces: dict[str, np.ndarray]  # word pieces per chunk, by tokenizer key (meta["pieces"] says whose)

    def judgment(self, code: int, make):
        """Stored judgment ``code`` as ``make(fills, first_alternative, grade)`` (``slot_metrics.ContextJudgment``)."""
        width = int(self.widths[code])
        return make(tuple(bool(x) for x in self.fills[code, :width]),
                               tuple(int(x) for x in self.first[code, :width]), int(self.grades[code]))


def zero_judgment(width: int, make):
    """What ``judge_context`` returns for a context that fills no slot and is no partial evidence."""
    return make((False,) * width, (-1,) * width, 0)


class JudgmentStore:
    """The stored judgments and counts under a run-store root, in one mode."""

    def __init__(self, root: str | Path | None = None, mode: str | None = None) -> None:
        from chunklab_core.retrieval.recorded_runs import current_mode

        self.root = Path(root) if root is not None else paths.RUNS_DIR
        self.mode = current_mode() if mode is None else mode
        self._loaded: dict[Path, CellJudgments | None] = {}
        self._recounted: set[tuple[Path, str]] = set()  # (file, part) whose sampled recount agreed
        self.read = 0  # pairs whose judgment was read from a stored file
        self.counted_read = 0  # cells whose token counts were read
        self.pieces_read = 0  # cells whose word pieces were read

    def active(self, corpus) -> bool:
        from chunklab_core.retrieval.recorded_runs import LIVE_CORPORA

        return self.mode in ("replay", "record") and corpus.name not in LIVE_CORPORA

    def path(self, corpus, strategy: str, threshold: float) -> Path:
        from chunklab_core.retrieval.recorded_runs import _safe

        return self.root / _corpus_label(corpus) / _safe(strategy) / file_name(threshold)

    def _load(self, path: Path) -> CellJudgments | None:
        if path in self._loaded:
            return self._loaded[path]
        from chunklab_core.retrieval.recorded_runs import RunStore, RunStoreError

        record = RunStore(self.root, mode="replay").load(path)  # its sha256, its kind and cell by its path
        cell = None
        if record is not None:
            a, meta = record.extra, record.meta
            problems = ([f"it is not a judgments file (kind {meta.get('kind')!r})"] if meta.get("kind") != KIND
                        else judgment_checks.structure_problems(meta, a, PIECES))
            if problems:
                raise RunStoreError(f"the stored judgments {path} are not usable: {'; '.join(problems)}; "
                                    "delete the file and run `make runs` to judge and count the cell again")
            n_q, n_ctx = meta["questions"]["n"], meta["contexts"]["n"]
            judged = np.unpackbits(a["judged"], axis=1, count=n_ctx).astype(bool) if n_ctx else np.zeros((n_q, 0), bool)
            cell = CellJudgments(path, meta, judged, a["keys"].astype(np.int64), a["codes"].astype(np.int64),
                                 a["fills"].astype(bool), a["first"].astype(np.int64), a["grades"].astype(np.int64),
                                 a["widths"].astype(np.int64),
                                 a["chunk_tokens"].astype(np.int64) if "chunk_tokens" in a else None,
                                 a["context_tokens"].astype(np.int64) if "context_tokens" in a else None,
                                 {name[len(PIECES):]: a[name].astype(np.int64) for name in a if name.startswith(PIECES)})
        self._loaded[path] = cell
        self._recounted = {done for done in self._recounted if done[0] != path}
        return cell

    # ---- what is current --------------------------------------------------------------
    @staticmethod
    def judgments_stale(meta: dict, contexts_digest: str, gold_digest: str, threshold: float) -> str | None:
        """Why the stored judgments do not apply (None when they do)."""
        if meta.get("format") != FORMAT_VERSION:
            return f"format {meta.get('format')} is not {FORMAT_VERSION}"
        if meta.get("scoring_version") != SCORING_VERSION:
            return f"the scoring version changed ({meta.get('scoring_version')} -> {SCORING_VERSION})"
        if float(meta.get("threshold", -1)) != float(threshold):
            return f"threshold {meta.get('threshold')} recorded, {threshold} asked"
        if meta["contexts"]["sha256"] != contexts_digest:
            return "the context texts changed"
        if meta["gold"]["sha256"] != gold_digest:
            return "the questions or their gold changed"
        return None

    @staticmethod
    def tokens_stale(meta: dict, chunks_digest: str, contexts_digest: str) -> str | None:
        """Why the stored token counts do not apply (None when they do)."""
        if meta.get("format") != FORMAT_VERSION:
            return f"format {meta.get('format')} is not {FORMAT_VERSION}"
        if meta.get("tokenizer") != _tokenizer():
            return f"the tokenizer changed ({meta.get('tokenizer')} -> {_tokenizer()})"
        if meta["chunks"]["sha256"] != chunks_digest or meta["contexts"]["sha256"] != contexts_digest:
            return "the chunk or context texts changed"
        return None

    # ---- token counts -----------------------------------------------------------------
    def token_counts(self, corpus, strategy: str, texts: Sequence[str], context_texts: Sequence[str],
                     threshold: float = 0.90) -> tuple[np.ndarray, np.ndarray] | None:
        """Stored (chunk, context) token counts of a cell when current, else None."""
        if not self.active(corpus):
            return None
        cell = self._load(self.path(corpus, strategy, threshold))
        if cell is None or cell.chunk_tokens is None:
            return None
        if self.tokens_stale(cell.meta, texts_sha256(texts), texts_sha256(context_texts)) is not None:
            return None
        from chunklab_core.core.tokens import TOKEN_COUNTS, encoding

        def count(some):  # encoded here, not through TOKEN_COUNTS: the memo is seeded from this file
            return [len(encoding().encode_ordinary(text)) for text in some]

        self._sampled(cell, "tokens", lambda: [judgment_checks.sampled_count_problems(
            what, list(these), stored, count, str(cell.path))
            for what, these, stored in (("chunk tokens", texts, cell.chunk_tokens),
                                        ("context tokens", context_texts, cell.context_tokens))])
        self.counted_read += 1
        TOKEN_COUNTS.seed(list(texts), cell.chunk_tokens.tolist())  # chunk health, pool facts: read, not encoded
        return cell.chunk_tokens.copy(), cell.context_tokens.copy()

    # ---- word pieces of an embedding model's tokenizer ---------------------------------
    def piece_counts(self, corpus, strategy: str, texts: Sequence[str], tokenizer: dict,
                     threshold: float = 0.90) -> np.ndarray | None:
        """Stored word pieces of a cell's chunk ``texts`` under ``tokenizer``
        (:func:`tokenizer_identity`) when current, else None."""
        if not self.active(corpus):
            return None
        cell = self._load(self.path(corpus, strategy, threshold))
        key = pieces_key(tokenizer)
        if cell is None or key not in cell.pieces:
            return None
        if self.pieces_stale(cell.meta, key, tokenizer, texts_sha256(texts)) is not None:
            return None
        from chunklab_core.retrieval.dense import word_pieces

        self._sampled(cell, key, lambda: [judgment_checks.sampled_count_problems(
            f"word pieces of {tokenizer['model']}", list(texts), cell.pieces[key],
            lambda some: word_pieces(some, tokenizer["model"]), str(cell.path))])
        self.pieces_read += 1
        return cell.pieces[key].copy()

    def _sampled(self, cell: CellJudgments, part: str, check) -> None:
        """Raise ``RunStoreError`` naming ``cell``'s file when ``check()`` (sampled recounts) finds a
        difference; a part found right is not counted again while the file is loaded."""
        from chunklab_core.retrieval.recorded_runs import RunStoreError

        if (cell.path, part) in self._recounted:
            return
        problems = [p for group in check() for p in group]
        if not problems:
            self._recounted.add((cell.path, part))
        else:
            raise RunStoreError(f"the stored counts of {cell.path} are not the texts' counts: {'; '.join(problems)}; "
                                "delete the file and run `make runs` to count the cell again")

    @staticmethod
    def pieces_stale(meta: dict, key: str, tokenizer: dict, chunks_digest: str) -> str | None:
        """Why the stored word pieces under ``key`` do not apply (None when they do)."""
        recorded = meta.get("pieces", {}).get(key)
        if recorded is None:
            return f"no word pieces of tokenizer {key}"
        if recorded.get("tokenizer") != tokenizer:
            return f"the tokenizer changed ({recorded.get('tokenizer')} -> {tokenizer})"
        if recorded.get("chunks_sha256") != chunks_digest or meta["chunks"]["sha256"] != chunks_digest:
            return "the chunk texts changed"
        return None

    def add_piece_counts(self, corpus, strategy: str, texts: Sequence[str], tokenizer: dict, counts,
                         threshold: float = 0.90) -> bool:
        """Record mode: keep ``counts`` (the word pieces of the chunk ``texts``) in the cell's file,
        beside its judgments (a cell without a judgments file, or whose chunks changed, is left
        alone: ``make runs`` writes the judgments first). True when written."""
        if self.mode != "record" or not self.active(corpus):
            return False
        from chunklab_core.retrieval import run_plan
        from chunklab_core.retrieval.recorded_runs import RunStore

        if run_plan.plan_file() is not None:
            return False
        path = self.path(corpus, strategy, threshold)
        digest = texts_sha256(texts)
        cell = self._load(path)
        if cell is None or cell.meta["chunks"]["sha256"] != digest or len(counts) != len(texts):
            return False
        key = pieces_key(tokenizer)
        if key in cell.pieces and self.pieces_stale(cell.meta, key, tokenizer, digest) is None:
            return False
        record = RunStore(self.root, mode="replay").load(path)
        meta = dict(record.meta)
        meta["pieces"] = {**meta.get("pieces", {}), key: {"tokenizer": tokenizer, "chunks_sha256": digest}}
        RunStore(self.root, mode="record").write(path, meta, **{**record.extra,
                                                                 PIECES + key: np.asarray(counts, dtype=np.int32)})
        self._loaded.pop(path, None)
        return True

    # ---- judgments --------------------------------------------------------------------
    def stored_codes(self, run, threshold: float, memo, make) -> np.ndarray | None:
        """Memo numbers of the stored judgments of ``run.ranked`` ((n_q, depth), -1 where not stored);
        ``make`` builds a judgment (``slot_metrics.ContextJudgment``), ``memo`` numbers it."""
        if not self.active(run.corpus):
            return None
        cell = self._load(self.path(run.corpus, run.strategy, threshold))
        if cell is None:
            return None
        if self.judgments_stale(cell.meta, _contexts_sha256(run), gold_sha256(run.corpus.questions), threshold):
            return None
        ranked = np.asarray(run.ranked, dtype=np.int64)
        n_q, n_ctx = cell.judged.shape
        valid = ranked >= 0
        rows = np.broadcast_to(np.arange(n_q)[:, None], ranked.shape)
        safe = np.where(valid, ranked, 0)
        stored = valid & cell.judged[rows, safe] if n_ctx else np.zeros(ranked.shape, bool)
        widths = np.array([len(q.gold_slots) for q in run.corpus.questions], dtype=np.int64)
        stored &= (widths > 0)[:, None]
        out = np.full(ranked.shape, -1, dtype=np.int64)
        if not stored.any():
            return out
        zero_codes = {int(w): memo.code(zero_judgment(int(w), make)) for w in np.unique(widths[widths > 0])}
        row_zero = np.array([zero_codes.get(int(w), -1) for w in widths], dtype=np.int64)
        out[stored] = np.broadcast_to(row_zero[:, None], ranked.shape)[stored]
        keys = rows * n_ctx + safe
        position = np.searchsorted(cell.keys, keys)
        position = np.minimum(position, max(len(cell.keys) - 1, 0))
        nonzero = stored & (cell.keys[position] == keys) if len(cell.keys) else np.zeros(ranked.shape, bool)
        if nonzero.any():
            table = {int(c): memo.code(cell.judgment(int(c), make)) for c in np.unique(cell.codes[position[nonzero]])}
            out[nonzero] = [table[int(c)] for c in cell.codes[position[nonzero]]]
        self.read += int(stored.sum())
        return out

    def add(self, run, threshold: float, codes: np.ndarray, fresh: np.ndarray, memo, make) -> None:
        """Record mode: write the judgments of ``run.ranked`` at ``fresh`` positions into the cell's file."""
        if self.mode != "record" or not self.active(run.corpus) or not fresh.any():
            return
        from chunklab_core.retrieval import run_plan

        if run_plan.plan_file() is not None:  # a cluster's planning pass: placeholder rankings, judge nothing in
            return
        path = self.path(run.corpus, run.strategy, threshold)
        contexts_digest, gold_digest = _contexts_sha256(run), gold_sha256(run.corpus.questions)
        n_q, n_ctx = len(run.corpus.questions), len(run.contexts)
        cell = self._load(path)
        judged = np.zeros((n_q, n_ctx), dtype=bool)
        entries: dict[int, object] = {}
        if cell is not None and self.judgments_stale(cell.meta, contexts_digest, gold_digest, threshold) is None:
            judged |= cell.judged
            entries.update({int(k): cell.judgment(int(c), make) for k, c in zip(cell.keys, cell.codes)})
        ranked = np.asarray(run.ranked, dtype=np.int64)
        added = 0
        for row, rank in np.argwhere(fresh).tolist():
            ctx = int(ranked[row, rank])
            if judged[row, ctx]:
                continue
            judged[row, ctx] = True
            added += 1
            judgment = memo.judgments[int(codes[row, rank])]
            if judgment.grade or any(judgment.fills):
                entries[row * n_ctx + ctx] = judgment
        if not added:
            return
        self._write(path, run, threshold, judged, entries, contexts_digest, gold_digest, cell)

    def _write(self, path: Path, run, threshold: float, judged: np.ndarray, entries: dict, contexts_digest: str,
               gold_digest: str, previous: CellJudgments | None = None) -> None:
        """Write the cell's file; the word pieces of ``previous`` (the file as it was) are kept
        when the chunk texts are unchanged."""
        from chunklab_core.core.tokens import count_tokens_many
        from chunklab_core.retrieval.recorded_runs import RunStore, _code_version

        keys = np.array(sorted(entries), dtype=np.int64)
        table: dict[object, int] = {}
        codes = np.array([table.setdefault(entries[int(k)], len(table)) for k in keys], dtype=np.int32)
        distinct = list(table)
        width = max((len(j.fills) for j in distinct), default=0)
        fills = np.zeros((len(distinct), width), dtype=bool)
        first = np.full((len(distinct), width), -1, dtype=np.int16)
        for i, j in enumerate(distinct):
            fills[i, :len(j.fills)] = j.fills
            first[i, :len(j.first_alternative)] = j.first_alternative
        chunk_texts = [run.corpus.doc(c.doc_id).text[c.start:c.end] for c in run.chunks]
        context_texts = [run.context_text(i) for i in range(len(run.contexts))]
        chunk_tokens = np.asarray(run.chunk_tokens if run.chunk_tokens is not None else count_tokens_many(chunk_texts))
        context_tokens = np.asarray(run.context_tokens if run.context_tokens is not None
                                    else count_tokens_many(context_texts))
        meta = {"format": FORMAT_VERSION, "kind": KIND, "cell": {"corpus": _corpus_label(run.corpus),
                                                                 "strategy": run.strategy},
                "scoring_version": SCORING_VERSION, "threshold": float(threshold),
                "questions": {"n": len(run.corpus.questions)},
                "contexts": {"n": len(run.contexts), "sha256": contexts_digest},
                "chunks": {"n": len(chunk_texts), "sha256": texts_sha256(chunk_texts)},
                "gold": {"n": len(run.corpus.questions), "sha256": gold_digest},
                "corpus_source": getattr(run.corpus, "source", None) or {},
                "tokenizer": _tokenizer(), "code": _code_version(),
                "recorded_at": datetime.now(timezone.utc).isoformat(timespec="seconds")}
        kept = {}
        if previous is not None and previous.pieces and previous.meta["chunks"]["sha256"] == meta["chunks"]["sha256"]:
            meta["pieces"] = previous.meta.get("pieces", {})
            kept = {PIECES + key: counts.astype(np.int32) for key, counts in previous.pieces.items()}
        RunStore(self.root, mode="record").write(
            path, meta, judged=np.packbits(judged, axis=1), keys=keys, codes=codes, fills=fills, first=first,
            grades=np.array([j.grade for j in distinct], dtype=np.int8),
            widths=np.array([len(j.fills) for j in distinct], dtype=np.int16),
            chunk_tokens=chunk_tokens.astype(np.int32), context_tokens=context_tokens.astype(np.int32), **kept)
        self._loaded.pop(path, None)


_DEFAULT: dict[tuple[str, str], JudgmentStore] = {}


def default_store() -> JudgmentStore:
    """One store per (root, mode) for this process (as ``recorded_runs.default_store``)."""
    from chunklab_core.retrieval.recorded_runs import current_mode

    key = (str(paths.RUNS_DIR), current_mode())
    if key not in _DEFAULT:
        _DEFAULT[key] = JudgmentStore(paths.RUNS_DIR, key[1])
    return _DEFAULT[key]


def stored_files(root: str | Path | None = None) -> list[Path]:
    """Every stored judgments file under the run store's root, sorted."""
    root = Path(root) if root is not None else paths.RUNS_DIR
    return sorted(root.rglob("judgments@*.npz")) if root.exists() else []


def cell_contexts(chunks) -> list[tuple[str, int, int]]:
    """A cell's distinct contexts in first-seen order, as ``scoring.run_cell`` lays them out."""
    return list(dict.fromkeys((c.doc_id, c.ctx_start, c.ctx_end) for c in chunks))


def verify_file(path: Path, corpus, chunks, judge, make, sample: int = 200, seed: int = 0,
                root: str | Path | None = None) -> list[str]:
    """Problems of one stored file against the current inputs (empty when current and correct).

    Stale parts (scoring version, threshold, contexts, gold, tokenizer, chunk texts) are named;
    when the judgments are current, a seeded sample of ``sample`` stored pairs (half of them
    non-zero judgments where there are enough) is judged again from scratch
    (``judge``: ``slot_metrics.judge_context``; ``make``: its ``ContextJudgment``) and every stored
    token count is counted again (``tokens.count_tokens``); any difference is a problem.
    """
    from chunklab_core.core.tokens import count_tokens

    store = JudgmentStore(root if root is not None else Path(path).parents[2], mode="replay")
    cell = store._load(Path(path))
    if cell is None:
        return [f"{path}: not a stored judgments file"]
    meta = cell.meta
    contexts = cell_contexts(chunks)
    context_texts = [corpus.doc(d).text[s:e] for d, s, e in contexts]
    chunk_texts = [corpus.doc(c.doc_id).text[c.start:c.end] for c in chunks]
    problems = []
    reason = store.judgments_stale(meta, texts_sha256(context_texts), gold_sha256(corpus.questions),
                                   meta.get("threshold", -1))
    if reason:
        problems.append(f"{path}: stale judgments ({reason}); run `make runs` to judge the cell again")
    token_reason = store.tokens_stale(meta, texts_sha256(chunk_texts), texts_sha256(context_texts))
    if token_reason:
        problems.append(f"{path}: stale token counts ({token_reason}); run `make runs`")
    elif ([count_tokens(t) for t in chunk_texts] != cell.chunk_tokens.tolist()
          or [count_tokens(t) for t in context_texts] != cell.context_tokens.tolist()):
        problems.append(f"{path}: a stored token count differs from counting again")
    problems += _verify_pieces(path, store, meta, cell, chunk_texts)
    if reason:
        return problems
    rng = np.random.default_rng(seed)
    pairs = np.argwhere(cell.judged)
    n_ctx = cell.judged.shape[1]
    nonzero = np.isin(pairs[:, 0] * n_ctx + pairs[:, 1], cell.keys)
    some, none = pairs[nonzero], pairs[~nonzero]
    take_some = min(len(some), sample // 2)
    take_none = min(len(none), sample - take_some)
    chosen = (some[rng.choice(len(some), size=take_some, replace=False)].tolist() if take_some else []) + \
        (none[rng.choice(len(none), size=take_none, replace=False)].tolist() if take_none else [])
    questions = corpus.questions
    for row, ctx in chosen:
        key = row * n_ctx + ctx
        position = int(np.searchsorted(cell.keys, key))
        stored = (cell.judgment(int(cell.codes[position]), make)
                  if position < len(cell.keys) and cell.keys[position] == key
                  else zero_judgment(len(questions[row].gold_slots), make))
        fresh = judge(context_texts[ctx], questions[row].gold_slots, meta["threshold"])
        if fresh != stored:
            problems.append(f"{path}: question {questions[row].qid}, context {contexts[ctx]}: stored {stored}, "
                            f"judged again {fresh} (bump judgment_store.SCORING_VERSION and run `make runs`)")
    return problems


def _verify_pieces(path: Path, store: JudgmentStore, meta: dict, cell: CellJudgments,
                   chunk_texts: Sequence[str]) -> list[str]:
    """Problems of a file's stored word pieces: stale (another tokenizer, changed chunk texts) or a
    count that differs from counting every chunk again (``retrieval.dense.word_pieces``)."""
    from chunklab_core.retrieval.dense import word_pieces

    problems = []
    digest = texts_sha256(chunk_texts)
    for key, recorded in sorted(meta.get("pieces", {}).items()):
        model = recorded["tokenizer"]["model"]
        current = _current_identity(model)
        if current is None:
            problems.append(f"{path}: word pieces of {model} cannot be counted again here (not assembled)")
            continue
        reason = store.pieces_stale(meta, key, current, digest)
        if reason:
            problems.append(f"{path}: stale word pieces of {model} ({reason}); run `make runs`")
        elif word_pieces(chunk_texts, model).tolist() != cell.pieces[key].tolist():
            problems.append(f"{path}: a stored word-piece count of {model} differs from counting again")
    return problems


def stale_files(root: str | Path | None = None) -> list[str]:
    """Stored files whose scoring version, format, tokenizer or word-piece tokenizer is not the
    current one (no rebuild needed; a model that is not assembled here is not checked)."""
    store = JudgmentStore(root, mode="replay")
    out = []
    current: dict[str, dict | None] = {}
    from chunklab_core.retrieval.recorded_runs import RunStoreError

    for path in stored_files(store.root):
        try:
            meta = store._load(path).meta
        except RunStoreError as error:  # named (with its rebuild) by make verify-runs' full pass
            out.append(f"{path.relative_to(store.root)}: unusable ({error})")
            continue
        if meta.get("format") != FORMAT_VERSION or meta.get("scoring_version") != SCORING_VERSION:
            out.append(f"{path.relative_to(store.root)}: scoring version {meta.get('scoring_version')} "
                       f"(current {SCORING_VERSION})")
        elif meta.get("tokenizer") != _tokenizer():
            out.append(f"{path.relative_to(store.root)}: tokenizer {meta.get('tokenizer')} (current {_tokenizer()})")
        for recorded in meta.get("pieces", {}).values():
            model = recorded["tokenizer"]["model"]
            here = _current_identity(model, current)
            if here is not None and recorded["tokenizer"] != here:
                out.append(f"{path.relative_to(store.root)}: word pieces of {model} under {recorded['tokenizer']} "
                           f"(current {here})")
    return out
