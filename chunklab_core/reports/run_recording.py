"""``make runs`` and ``make verify-runs``: record the posts' retrieval runs, and check them.

Handles:

* :func:`check_every_file`, the first step of ``make verify-runs``: every stored file (all of
  them, not a sample) is loaded, its sha256 checked and its structure checked (kind and cell by
  its path, array lengths against its provenance); each failure names the file and ``make runs``.
* :func:`record` executes each post that retrieves (its source notebook, with its own
  parameters; only statistics-only parameters such as ``RESAMPLES`` are lowered, which no
  ranking depends on) with ``CHUNKLAB_RUNS=record`` into a temporary file that is then
  deleted: every ranking the post asks for is replayed when recorded and current, otherwise
  computed and written (atomically, one cell at a time: kill it any time, the next run
  continues). The cells' progress bar and ETA (``evaluation.matrix.run_matrix``'s bar) and one
  line per recorded cell are printed as they come. Nothing but ``data/runs`` is written.
* :func:`verify` draws a seeded sample of recorded cells, rebuilds each cell's inputs from its
  provenance (the corpus loader's arguments, the strategy and its options), recomputes the
  ranking from scratch with a fresh retriever and an empty embedding cache, and fails unless
  the ids and their order are identical and the recorded scores agree within 1e-6 relative
  (``|live - stored| <= 1e-6 * max(1, |live|)``: scores are stored as float32, whose spacing
  near a BM25 score of 30 is about 2e-6); dense cells within 32 float32 epsilons (3.8e-6, the
  encoder's float32 noise between batches: :data:`DENSE_SCORE_TOLERANCE`). Ids may differ only
  inside a run of ranks whose live scores tie within twice the cell's tolerance (:func:`ranking_differences`): float noise between two
  encodings reorders chunks whose scores tie (identical texts embed identically in one batch
  and an ulp apart in another), and that is the only difference tolerated. The cell verified
  is the one the file's path names; a file whose provenance names another cell fails.

Not handled: recording LLM calls (``llm.records`` and the recorders of posts 04, 05, 07).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from chunklab_core.core import bounds
from chunklab_core.core import paths
from chunklab_core.core.seeds import DEFAULT_SEED
from chunklab_core.retrieval.recorded_runs import (MODE_ENV, SCORE_DEPTH, Cell, RunStore, RunStoreError,
                                                   texts_sha256)
from chunklab_core.reports.posts import recorded_posts
from chunklab_core.retrieval.registry import needs_model
from chunklab_core.core.cli_errors import command_edge

# The posts that retrieve, in the order `make runs` records them, and the parameters lowered
# for the recording pass (statistics only: no ranking depends on them).
POSTS = recorded_posts()  # from the one list of posts (reports.posts)
RECORDING_PARAMETERS = {"RESAMPLES": 200, "WRITE_OUTPUTS": False}
SCORE_TOLERANCE = 1e-6  # BM25: float64 arithmetic, float32 storage (spacing ~2e-6 near a score of 30, relative 6e-8)
# Dense: the encoder's float32 arithmetic. One text encoded in a differently composed batch (other
# padding) moves its vector by a few float32 ulps per component, so a cosine moves by up to about
# sqrt(dimension) ulps; observed 1.07e-6 (chroma parent_doc_250_1000, all-MiniLM-L6-v2, 384 dims).
# 32 float32 epsilons (3.8e-6) covers that with margin and stays far below any real score change.
DENSE_SCORE_TOLERANCE = 32 * float(np.finfo(np.float32).eps)
TIE_TOLERANCE = 2 * SCORE_TOLERANCE  # two scores each within SCORE_TOLERANCE of the recorded ones


def score_tolerance(retriever: str) -> float:
    """The relative score tolerance of a recorded cell's retriever (BM25 or dense)."""
    return DENSE_SCORE_TOLERANCE if needs_model(retriever) else SCORE_TOLERANCE
TIE_MARGIN = 20  # ranks searched past the recorded depth, so a tie across the cut-off is seen whole


def tie_blocks(scores: np.ndarray, tolerance: float = TIE_TOLERANCE) -> np.ndarray:
    """Per rank of one descending score list, the id of its tie block: consecutive ranks whose
    scores differ by at most ``tolerance * max(1, |score|)`` share a block."""
    scores = np.asarray(scores, np.float64)
    if scores.size == 0:
        return np.zeros(0, np.int64)
    gaps = np.abs(np.diff(scores)) > tolerance * np.maximum(1.0, np.abs(scores[1:]))
    return np.concatenate([[0], np.cumsum(gaps)])


def ranking_differences(live_ids: np.ndarray, live_scores: np.ndarray, recorded_ids: np.ndarray,
                        tolerance: float = TIE_TOLERANCE) -> tuple[int, int]:
    """``(queries whose ids differ at all, queries whose ids differ beyond ties)``.

    ``live_ids``/``live_scores`` may be deeper than ``recorded_ids`` (a few ranks past the
    recorded depth, so a tie across the cut-off is seen whole). A differing rank passes only
    when the recorded id there is in the live tie block of that rank (:func:`tie_blocks`): the
    same chunk set, ordered differently among scores equal within ``tolerance``.
    """
    live_ids, recorded_ids = np.asarray(live_ids, np.int64), np.asarray(recorded_ids, np.int64)
    depth = recorded_ids.shape[1] if recorded_ids.ndim == 2 else 0
    if live_ids.ndim != 2 or live_ids.shape[0] != recorded_ids.shape[0] or live_ids.shape[1] < depth:
        return len(recorded_ids), len(recorded_ids)
    differ = np.flatnonzero((live_ids[:, :depth] != recorded_ids).any(axis=1))
    beyond = 0
    for q in differ:
        blocks = tie_blocks(np.asarray(live_scores, np.float64)[q, :live_ids.shape[1]], tolerance)
        for rank in np.flatnonzero(live_ids[q, :depth] != recorded_ids[q]):
            if recorded_ids[q, rank] not in set(live_ids[q, blocks == blocks[rank]]):
                beyond += 1
                break
    return len(differ), beyond


def record(posts=POSTS, kernel: str = "chunklab", yaml_parameters: str | None = None) -> int:
    """Execute each post in record mode; 0 when every post ran, else the first failure's status.

    ``yaml_parameters``: papermill ``-y`` parameters for every post (e.g. ``"MODELS: [all-MiniLM-L6-v2]"``
    records the first model's cells of post 02 before the slower second model's).
    """
    env = dict(os.environ, **{MODE_ENV: "record"})
    for post in posts:
        source = paths.NOTEBOOKS_DIR / "src" / f"{post}.ipynb"
        if not source.exists():
            print(f"no notebook {source}", file=sys.stderr)
            return 2
        from chunklab_core.reports.notebook_run import notebook_parameters

        known = notebook_parameters(source)
        options = []
        for name, value in RECORDING_PARAMETERS.items():
            if name in known:
                options += ["-p", name, str(value)]
        started = time.perf_counter()
        print(f"== make runs: {post} (record mode)", file=sys.stderr, flush=True)
        with tempfile.TemporaryDirectory(prefix="chunklab-runs-") as tmp:
            command = [sys.executable, "-m", "papermill", "--kernel", kernel, "--log-output",
                       "--no-progress-bar", str(source), str(Path(tmp) / f"{post}.ipynb"), *options,
                       *(["-y", yaml_parameters] if yaml_parameters else [])]
            status = subprocess.call(command, env=env, cwd=paths.PROJ_ROOT)
        print(f"== {post}: {'done' if status == 0 else f'failed ({status})'} in "
              f"{time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)
        if status:
            return status
    return 0


def recorded_cells(store: RunStore) -> list[Path]:
    return [p for p in store.cells() if not p.name.endswith(".chunks.npz")]


def _inputs(meta: dict, chunks_store: RunStore, with_scope: bool = False):
    """The texts and queries of a recorded cell, rebuilt from its provenance; ``with_scope``: and
    its document scope (``retrieval.scope.DocumentScope``; ``None`` for a cell ranked across the corpus)."""
    from chunklab_core.retrieval.scope import DocumentScope

    corpus, chunks = _rebuild(meta, chunks_store)
    texts = [corpus.doc(c.doc_id).text[c.start:c.end] for c in chunks]
    if not with_scope:
        return texts, [q.text for q in corpus.questions]
    scope = DocumentScope.of(corpus, chunks) if meta["cell"].get("scope", "corpus") != "corpus" else None
    return texts, [q.text for q in corpus.questions], scope


def _rebuild(meta: dict, chunks_store: RunStore):
    """The corpus and chunks of a recorded cell (or stored judgments), rebuilt from its provenance."""
    from chunklab_core.chunking import STRATEGIES, chunk_corpus
    from chunklab_core.data.corpora import load_corpus
    from chunklab_core.evaluation.matrix import needs_embedding
    from chunklab_core.retrieval.recorded_runs import corpus_sample_label

    source = dict(meta["corpus_source"])
    if not source:
        raise RunStoreError(f"cell {meta['cell']} records no corpus source; it cannot be rebuilt")
    name = source.pop("name")
    rerank = source.pop("rerank_corpus", None)
    scoreable = {"scoreable_only": source.pop("scoreable_only", None)}
    if rerank is not None:  # post 07's corpora: a seeded question order (and NQ's verbatim gold only)
        from chunklab_core.rerank.study import rerank_corpus

        corpus = rerank_corpus(name, **rerank)
    else:
        corpus = load_corpus(name, **{k: v for k, v in source.items() if v is not None or k == "n_documents"})
        from chunklab_core.evaluation.scoreability import scoreable_again  # questions no measure can score: dropped

        corpus = scoreable_again(corpus, scoreable)
    if corpus_sample_label(corpus) != meta["cell"]["corpus"]:
        raise RunStoreError(f"the corpus rebuilt from {meta['corpus_source']} is sample "
                            f"{corpus_sample_label(corpus)}, not {meta['cell']['corpus']}")
    strategy = meta["cell"]["strategy"]
    if needs_embedding(strategy):  # cut with the recorded model's chunks (verified by their own digest)
        from chunklab_core.evaluation.matrix import _chunks

        chunks = _chunks(corpus, STRATEGIES[strategy], meta["cell"].get("model") or "all-MiniLM-L6-v2", None, chunks_store)
    else:
        options = dict(meta.get("strategy_options") or {})
        if "complete" in STRATEGIES[strategy].params:  # an LLM-cut strategy: its recorded calls, replayed
            from chunklab_core.llm.wiring import make_chunker_llm

            options["complete"] = make_chunker_llm("replay").complete
        chunks = chunk_corpus(corpus.documents, strategy, **options)
    return corpus, chunks


def check_every_file(store: RunStore, only: list[Path] | None = None) -> tuple[int, set[Path]]:
    """The cheap full pass before any sampled recomputation: every file under the store's root is
    loaded (its sha256) and checked structurally (its kind and cell by its path, array lengths against
    its provenance: ``retrieval.store_checks``, ``evaluation.judgment_checks``). Prints one FAIL line
    per file that fails, with the command that rebuilds it; ``(failures, the files that failed)``.
    ``only``: these files instead of all (``make verify-runs VERIFY_ARGS='--cell ...'``)."""
    from chunklab_core.evaluation.judgment_store import JudgmentStore

    judgments = JudgmentStore(store.root, mode="replay")
    files = sorted(store.root.rglob("*.npz")) if store.root.exists() else []
    if only is not None:
        files = [p for p in only if p.exists()]
    bad: set[Path] = set()
    started = time.perf_counter()
    for path in files:
        try:
            store.load(path)
            if path.name.startswith("judgments@"):
                judgments._load(path)
        except RunStoreError as error:
            print(f"FAIL {path.relative_to(store.root)}: {error}", flush=True)
            bad.add(path)
    print(f"checked the digests and structure of {'the' if only is not None else 'all'} {len(files)} stored "
          f"files: {len(bad)} failed "
          f"({time.perf_counter() - started:.1f} s)", flush=True)
    return len(bad), bad


def verify_judgments(store: RunStore, sample: int, seed: int, max_texts: int | None = None,
                     skip: set[Path] = frozenset()) -> int:
    """Stored judgments and token counts (``evaluation.judgment_store``): every file whose scoring
    version or tokenizer is not current fails; ``sample`` seeded files are rebuilt from their
    provenance and checked (digests current, a sample of judgments judged again, every count
    counted again). Returns the number of failures."""
    from chunklab_core.evaluation import judgment_store, slot_metrics

    failures = 0
    for line in judgment_store.stale_files(store.root):
        if ": unusable (" in line:  # already named by the full pass
            continue
        print(f"FAIL {line}: stale stored judgments; run `make runs`")
        failures += 1
    files = [p for p in judgment_store.stored_files(store.root) if p not in skip]
    metas = {p: store.load(p).meta for p in files}
    eligible = [p for p in files if metas[p].get("corpus_source")
                and (max_texts is None or metas[p]["chunks"]["n"] <= max_texts)]
    rng = np.random.default_rng(seed)
    chosen = [eligible[i] for i in sorted(rng.choice(len(eligible), size=min(sample, len(eligible)), replace=False))]
    for path in chosen:
        started = time.perf_counter()
        corpus, chunks = _rebuild(metas[path], store)
        problems = judgment_store.verify_file(path, corpus, chunks, slot_metrics.judge_context,
                                              slot_metrics.ContextJudgment, seed=seed, root=store.root)
        failures += bool(problems)
        for problem in problems:
            print(f"FAIL {problem}")
        if not problems:
            checked = "judgments, token counts and word pieces" if metas[path].get("pieces") else \
                "judgments and token counts"
            print(f"ok   {path.relative_to(store.root)}: {checked} current "
                  f"({time.perf_counter() - started:.1f} s)", flush=True)
    print(f"checked {len(chosen)} of {len(files)} stored judgment files (seed {seed})")
    return failures


def verify(sample: int = 3, seed: int = DEFAULT_SEED, max_texts: int | None = None,
           root: Path | None = None, model: str | None = None, named: list[str] | None = None) -> int:
    """Recompute ``sample`` seeded recorded cells from scratch; 0 when all are identical.

    ``max_texts``: only cells of at most that many chunks; ``model``: only BM25 cells and dense
    cells of that model (e.g. a machine without the second model assembled); ``named``: these
    cells (paths relative to the store's root) instead of a sample.
    """
    from chunklab_core.retrieval.run import make_retriever

    store = RunStore(root, mode="replay")
    if not recorded_cells(store):
        print(f"no recorded runs under {store.root}; record them with `make runs`", file=sys.stderr)
        return 1
    broken, bad = check_every_file(store, [store.root / name for name in named] if named else None)  # every
    # file, cheaply, before the sampled recomputation
    cells = [p for p in recorded_cells(store) if p not in bad]
    metas = {}
    for path in list(cells):
        try:
            metas[path] = store.load(path).meta
        except RunStoreError:  # --cell: a file not named is not checked, and not used either
            cells.remove(path)
    rebuildable = [p for p in cells if metas[p].get("corpus_source")]
    if len(rebuildable) < len(cells):  # e.g. post 04's generated questions: not a loader's corpus
        print(f"{len(cells) - len(rebuildable)} recorded cells have questions that no corpus loader rebuilds "
              "(post 04's generated questions, post 05's question subsets); they are not sampled here", file=sys.stderr)
    eligible = [p for p in rebuildable if (max_texts is None or metas[p]["texts"]["n"] <= max_texts)
                and (model is None or metas[p]["cell"]["model"] in (None, model))]
    if not eligible:
        print(f"no recorded cell has at most {max_texts} texts", file=sys.stderr)
        return 1
    rng = np.random.default_rng(seed)
    chosen = [eligible[i] for i in sorted(rng.choice(len(eligible), size=min(sample, len(eligible)), replace=False))]
    if named:
        chosen = [store.root / name for name in named]
        absent = [str(p) for p in chosen if p not in rebuildable]
        if absent:
            print(f"not recorded cells that a corpus loader rebuilds: {absent}", file=sys.stderr)
            return 1
    failures = 0
    with tempfile.TemporaryDirectory(prefix="chunklab-verify-") as cache:
        for path in chosen:
            record = store.load(path)
            meta = record.meta
            label = path.relative_to(store.root)
            inside = Cell(**meta["cell"])
            if inside.relative_path() != Path(label):
                print(f"FAIL {label}: the file's provenance names another cell ({inside.describe()}, recorded as "
                      f"{inside.relative_path()}); delete {label} and run `make runs` to record its own cell")
                failures += 1
                continue
            texts, queries, scope = _inputs(meta, store, with_scope=True)
            if texts_sha256(texts) != meta["texts"]["sha256"] or texts_sha256(queries) != meta["queries"]["sha256"]:
                print(f"FAIL {label}: the rebuilt inputs differ from the recorded ones (stale record)")
                failures += 1
                continue
            started = time.perf_counter()
            # built by its registered spec; a model gets a fresh, empty cache: every vector computed again
            name = meta["cell"]["retriever"]
            options = {"model": meta["cell"]["model"], "cache_dir": cache} if needs_model(name) else {}
            engine = make_retriever(name, **options)
            engine.fit(texts)
            live_depth = min(meta["depth"] + TIE_MARGIN, len(texts))
            if scope is not None:  # a scoped cell: its scope rebuilt, every question ranked within its document
                from chunklab_core.retrieval.scope import scoped_search

                if meta.get("scope") != scope.provenance():
                    print(f"FAIL {label}: the rebuilt documents of its texts and questions differ from the recorded "
                          "scope (stale record)")
                    failures += 1
                    continue
                ids, scores = scoped_search(lambda k: engine.search(queries, k), len(texts), scope, live_depth)
            else:
                ids, scores = engine.search(queries, live_depth)
            tolerance = score_tolerance(meta["cell"]["retriever"])
            differ, beyond = ranking_differences(ids, scores, record.ids, 2 * tolerance)
            width = record.scores.shape[1]
            live = np.asarray(scores, dtype=np.float64)[:, :width]
            # scores are stored as float32: agreement is relative, |live - stored| <= 1e-6 * max(1, |live|)
            gap = float(np.max(np.abs(live - record.scores) / np.maximum(1.0, np.abs(live)))) if width else 0.0
            ok = beyond == 0 and gap <= tolerance
            failures += not ok
            detail = ("ids identical" if not differ else
                      f"{differ} queries differ, {beyond} beyond ties (scores equal within {2 * tolerance:.2g} relative)")
            print(f"{'ok  ' if ok else 'FAIL'} {label}: {len(texts)} texts, {len(queries)} queries, depth "
                  f"{meta['depth']}: {detail}, max relative score gap {gap:.2e} (tolerance {tolerance:.2g}, "
                  f"first {SCORE_DEPTH} ranks), "
                  f"{time.perf_counter() - started:.1f} s", flush=True)
    print(f"verified {len(chosen) - failures} of {len(chosen)} sampled cells (seed {seed}, of {len(eligible)} "
          f"eligible, {len(cells)} recorded)")
    if not named:
        failures += verify_judgments(store, sample, seed, max_texts, skip=bad)
    return 1 if failures or broken else 0


def summary(root: Path | None = None) -> list[dict]:
    """One row per recorded file: cell, texts, queries, depth, seconds, bytes."""
    store = RunStore(root, mode="replay")
    rows = []
    for path in store.cells():
        meta = store.load(path).meta
        rows.append({"file": str(path.relative_to(store.root)), "texts": meta.get("texts", {}).get("n"),
                     "queries": meta.get("queries", {}).get("n"), "depth": meta.get("depth"),
                     "seconds": meta.get("seconds"), "bytes": path.stat().st_size})
    return rows


@command_edge
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="chunklab-runs", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    rec = sub.add_parser("record", help="record every missing or stale run of the posts (resumable)")
    rec.add_argument("posts", nargs="*", default=list(POSTS), help=f"posts to record (default: {' '.join(POSTS)})")
    rec.add_argument("--yaml", default=None, help="papermill -y parameters for every post (a first, partial pass)")
    ver = sub.add_parser("verify", help="recompute a seeded sample of recorded cells from scratch")
    ver.add_argument("--sample", type=bounds.int_in("sample"), default=3)
    ver.add_argument("--seed", type=bounds.int_in("seed"), default=DEFAULT_SEED)
    ver.add_argument("--max-texts", type=bounds.int_in("chars"), default=None, help="only cells with at most this many texts")
    ver.add_argument("--model", default=None, help="only BM25 cells and dense cells of this model")
    ver.add_argument("--cell", action="append", default=None,
                     help="verify this cell (path under data/runs, repeatable) instead of a sample")
    sub.add_parser("list", help="the recorded files, their sizes and recording times")
    args = parser.parse_args(argv)
    try:
        if args.command == "record":
            return record(args.posts, yaml_parameters=args.yaml)
        if args.command == "verify":
            return verify(args.sample, args.seed, args.max_texts, model=args.model, named=args.cell)
        rows = summary()
        for row in rows:
            print(json.dumps(row))
        print(f"{len(rows)} files, {sum(r['bytes'] for r in rows) / 1e6:.1f} MB", file=sys.stderr)
        return 0
    except RunStoreError as error:
        print(f"chunklab-runs: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
