"""``chunklab-evaluate``: the scorecard of a pipeline you already run, from its outputs.

Usage::

    chunklab-evaluate RECORDS.jsonl --out DIR [--chunks CHUNKS.jsonl [--documents DOCS.jsonl]
        [--vectors CHUNK_VECTORS.npy] [--max-chars N | --max-tokens N]] [--query-vectors Q.npy]
        [--trec-run RUN --qrels QRELS] [--against OTHER.jsonl --names A B] [--k 1 3 5 10]
        [--resamples 2000] [--seed 0]

RECORDS is optional when ``--trec-run`` and ``--qrels`` are given (the retrieval stage only).
Input errors print one line naming the file, line and field and exit with status 2 (no
traceback); the output folder is written whole or not at all (``report_files``), and an existing
one is replaced only when it holds nothing but an earlier scorecard (``core.output_dirs``: never
your inputs, the current folder, an irreplaceable or git-tracked folder, or files of yours). Progress goes
to stderr; the funnel's headline (``funnel_headline``: the step that loses the most, named only
when the rule allows) is printed to stdout. ``--against`` scores a second records file of the same queries (pipeline B) and
adds the paired comparison, worded by the series' rule.

Not handled: running your pipeline (give its outputs), an LLM judge (there is none).
"""

from __future__ import annotations

import argparse
import sys
import zipfile
from pathlib import Path

import numpy as np

from chunklab_core.core import bounds
from chunklab_core.evaluators.from_records import evaluate_records
from chunklab_core.evaluators.records import RecordsError, read_chunks, read_documents, read_records, read_trec
from chunklab_core.core.output_dirs import output_folder_problem
from chunklab_core.evaluators.funnel_headline import headline_text
from chunklab_core.evaluators.report_files import MARKER, headline_sentence, write_scorecard
from chunklab_core.evaluators.scorecard import Options, build_scorecard, compare, correct_without_gold
from chunklab_core.core.cli_errors import command_edge


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _vectors(path: str | None, what: str) -> np.ndarray | None:
    if path is None:
        return None
    try:
        m = np.load(path, allow_pickle=False)
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as err:
        raise RecordsError(f"{path}: cannot read {what} as a .npy array ({err}); give a whole .npy file "
                           "(numpy.save), one row per line") from None
    if not isinstance(m, np.ndarray):  # an .npz archive: which of its arrays is meant is not ours to guess
        names = list(getattr(m, "files", []))
        getattr(m, "close", lambda: None)()
        raise RecordsError(f"{path}: an .npz archive of {len(names)} array(s) ({', '.join(names[:5])}), not one .npy "
                           f"array; save the {what} alone: python -c \"import numpy as np; "
                           f"np.save('vectors.npy', np.load('{path}')['{names[0] if names else 'NAME'}'])\"")
    if m.ndim != 2 or not np.issubdtype(m.dtype, np.number):
        raise RecordsError(f"{path}: {what} must be a 2-D numeric array (rows x dimensions), got {m.dtype} {m.shape}")
    bad = np.argwhere(~np.isfinite(m))
    if bad.size:
        raise RecordsError(f"{path}: {what} row {int(bad[0, 0])} holds NaN or infinity")
    return m


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="chunklab-evaluate", description=__doc__.split("\n\n")[0])
    p.add_argument("records", nargs="?", help="JSON Lines, one object per query (README: Evaluate your own pipeline)")
    p.add_argument("--out", required=True, help="output folder (replaced as a whole; only an earlier scorecard's folder)")
    p.add_argument("--chunks", help="JSON Lines {chunk_id, doc_id, start, end, text?, metadata?}")
    p.add_argument("--documents", help="JSON Lines {doc_id, text}: the documents the chunks cut")
    p.add_argument("--vectors", help=".npy, one row per line of --chunks")
    p.add_argument("--query-vectors", help=".npy, one row per record")
    p.add_argument("--trec-run", help="TREC run file (qid Q0 docid rank score tag)")
    p.add_argument("--qrels", help="TREC qrels file (qid 0 docid relevance)")
    p.add_argument("--against", help="a second records file of the same queries (pipeline B)")
    p.add_argument("--names", nargs=2, default=["A", "B"], metavar=("A", "B"))
    p.add_argument("--k", nargs="+", type=bounds.int_in("k"), default=[1, 3, 5, 10])
    p.add_argument("--rerank-k", type=bounds.int_in("k"), default=5)
    p.add_argument("--max-chars", type=bounds.int_in("chars"))
    p.add_argument("--max-tokens", type=bounds.int_in("budget"))
    p.add_argument("--resamples", type=bounds.int_in("resamples"), default=2_000)
    p.add_argument("--seed", type=bounds.int_in("seed"), default=0)
    return p


def _score(path, args, chunks, documents, vectors, query_vectors, trec, options):
    records = read_records(path, progress=lambda n: _say(f"read {n:,} records ...")) if path else \
        [{"qid": q} for q in sorted(set(trec[0]) | set(trec[1]))]
    _say(f"{len(records):,} queries from {path or args.trec_run}")
    stages = evaluate_records(records, chunks, documents, vectors, query_vectors, trec, ks=args.k,
                              rerank_k=args.rerank_k, max_chars=args.max_chars, max_tokens=args.max_tokens)
    docs = [r.get("doc_id") for r in records]
    docs = docs if all(d is not None for d in docs) else None
    return build_scorecard(stages, docs, options, source=str(path or args.trec_run),
                           progress=lambda s: _say(f"intervals: {s}"))


@command_edge
def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.records is None and not (args.trec_run and args.qrels):
        parser().error("give RECORDS.jsonl, or --trec-run and --qrels")
    if bool(args.trec_run) != bool(args.qrels):
        parser().error("--trec-run and --qrels go together")
    if (args.vectors or args.documents) and not args.chunks:
        parser().error("--vectors and --documents describe the chunks: give --chunks too")
    if args.resamples < 1 or min(args.k) < 1 or args.rerank_k < 1:
        parser().error("--resamples, --k and --rerank-k must be positive")
    folder_problem = output_folder_problem(args.out, MARKER, inputs=[
        args.records, args.chunks, args.documents, args.vectors, args.query_vectors, args.trec_run, args.qrels,
        args.against])
    if folder_problem:
        _say(f"chunklab-evaluate: {folder_problem}")
        return 2
    try:
        chunks = read_chunks(args.chunks) if args.chunks else None
        documents = read_documents(args.documents) if args.documents else None
        vectors = _vectors(args.vectors, "chunk vectors")
        query_vectors = _vectors(args.query_vectors, "query vectors")
        trec = read_trec(args.trec_run, args.qrels) if args.trec_run else None
        options = Options(resamples=args.resamples, seed=args.seed)
        card = _score(args.records, args, chunks, documents, vectors, query_vectors, trec, options)
        comparison = None
        if args.against:
            other = _score(args.against, args, chunks, documents, vectors, None, None, options)
            comparison = compare(card, other, tuple(args.names))
        out = write_scorecard(card, args.out, comparison)
    except (RecordsError, ValueError) as err:
        _say(f"chunklab-evaluate: {err}")
        return 2
    flag = correct_without_gold(card.stages.get("funnel"))
    if flag is not None:
        _say(f"chunklab-evaluate: flag: {flag['n']} of {flag['of']} correct answers came from a context that holds "
             f"no gold ({', '.join(flag['qids'])}); see the scorecard's funnel")
    headline = headline_sentence(card)
    if headline is not None:
        print(headline_text(headline), flush=True)  # the funnel's headline, by the rule
    _say(f"wrote {out}/scorecard.html, scorecard.csv, scorecard.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
