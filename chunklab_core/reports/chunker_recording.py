"""``make llm-chunker``: record the calls of Chroma's LLM chunker on post 08's slice.

Handles: chunking each document of the slice (by default three of Chroma's five corpora, the
ones small enough to record on two cores in well under an hour: chat logs, the State of the
Union address and Wikipedia, about 45,000 cl100k tokens) with ``chunking.llm_split.llm_semantic``
through the recorded model of ``llm.wiring.make_chunker_llm`` (Qwen2.5-Coder 1.5B through
llama.cpp), so every call lands in ``data/records/chunker_qwen15.jsonl`` as it finishes; a
killed run loses no finished call and the next run continues (recorded calls are served, not
re-made). Prints per document the calls, fallbacks to the window end, chunks and seconds, and
a progress bar over documents.

Not handled: the retrieval runs on the slice's chunks (``make runs`` records them when post 08
executes in record mode), the chunker itself (``chunking.llm_split``).
"""

from __future__ import annotations

import argparse
import sys
import time

from chunklab_core.core import bounds
from chunklab_core.core.cli_errors import command_edge

SLICE = ("chatlogs", "state_of_the_union", "wikitexts")


def record(corpora=SLICE, mode: str = "replay_or_record", n_threads: int | None = None, root=None,
           progress: bool = True) -> list[dict]:
    """Chunk every document of ``corpora`` with the LLM chunker, recording its calls; one row
    per document (calls, fallbacks, chunks, seconds)."""
    from tqdm import tqdm

    from chunklab_core.chunking import STRATEGIES, document_spans
    from chunklab_core.chunking.llm_split import LLMSplitStats
    from chunklab_core.data.corpora import load_corpus
    from chunklab_core.llm.wiring import make_chunker_llm

    corpus = load_corpus("chroma", chroma_corpora=list(corpora))
    llm = make_chunker_llm(mode, root, n_threads=n_threads)
    params = STRATEGIES["llm_semantic"].params
    rows = []
    for doc in tqdm(corpus.documents, desc="LLM chunker / documents", disable=not progress):
        stats, started = LLMSplitStats(), time.perf_counter()
        spans = document_spans(doc.text, "llm_semantic", complete=llm.complete, stats=stats)
        rows.append({"document": doc.doc_id, "calls": stats.calls, "fallbacks": stats.fallbacks,
                     "chunks": len(spans), "window tokens": params["window_tokens"],
                     "seconds": round(time.perf_counter() - started, 1)})
        print(f"{doc.doc_id}: {stats.calls} calls, {stats.fallbacks} fallbacks, {len(spans)} chunks, "
              f"{rows[-1]['seconds']} s", file=sys.stderr, flush=True)
    return rows


@command_edge
def main(argv: list[str] | None = None) -> int:
    """Record the LLM chunker's calls on post 08's slice (resumable; kill any time)."""
    from chunklab_core.llm.records import user_error_types

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--corpora", nargs="+", default=list(SLICE), help=f"Chroma corpora (default: {' '.join(SLICE)})")
    parser.add_argument("--threads", type=bounds.int_in("threads"), default=None, help="llama.cpp threads (default: all cores)")
    parser.add_argument("--mode", default="replay_or_record", choices=("replay_or_record", "replay", "record"))
    args = parser.parse_args(argv)
    try:
        record(args.corpora, args.mode, args.threads)
    except user_error_types() as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
