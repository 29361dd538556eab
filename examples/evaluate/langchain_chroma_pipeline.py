"""A small pipeline from outside the series, and its outputs as ``chunklab-evaluate`` reads them.

The pipeline is what a user might build with common libraries: LangChain's
``RecursiveCharacterTextSplitter`` (1,000 characters, 200 overlap, its default separators),
all-MiniLM-L6-v2 embeddings (sentence-transformers, the copy shipped with the project's
environment, the hub switched off) and an embedded chromadb collection (in memory, cosine
space, HNSW), over the first ``--articles`` articles of the SQuAD v1.1 dev set read from the data
mirror; each question retrieves its top 10 chunks and the top 5 are packed as the context. There
is no generator (no LLM), so the records carry no answer: the scorecard's funnel stops at the
packed context and says so.

Writes into ``--out`` (default ``examples/evaluate/langchain_chroma/``, replaced whole, each file
written only after the whole pipeline ran): ``records.jsonl`` (qid, query, doc_id,
gold_snippets as one slot of SQuAD's answer alternatives, retrieved ids and texts, context ids
and texts, retrieval latency), ``chunks.jsonl`` (chunk_id, doc_id, start, end, text),
``documents.jsonl``, ``chunk_vectors.npy`` and ``query_vectors.npy`` (float32, one row per
chunk / record line), and ``records_400.jsonl``: the same pipeline with 400-character chunks (80
overlap), for ``--against``.

Run: ``CHUNKLAB_DATA_MIRROR=/path/to/mirror python examples/evaluate/langchain_chroma_pipeline.py``
(about a minute on two CPU cores). Not a benchmark: one small corpus, one seed.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

HERE = Path(__file__).resolve().parent
SEED = 20260729


def squad_articles(mirror: Path, n_articles: int, per_article: int, seed: int):
    """The first ``n_articles`` articles of SQuAD v1.1 dev (paragraphs joined by a blank line)
    and up to ``per_article`` of each article's questions (a seeded sample), with their answers."""
    data = json.loads(gzip.open(mirror / "squad-v1.1-dev.json.gz", "rt", encoding="utf-8").read())["data"]
    rng = random.Random(seed)
    documents, questions = {}, []
    for index, article in enumerate(data[:n_articles]):
        doc_id = f"squad-{index:02d}"
        documents[doc_id] = "\n\n".join(p["context"] for p in article["paragraphs"])
        items = [(qa["id"], qa["question"], [a["text"] for a in qa["answers"]])
                 for p in article["paragraphs"] for qa in p["qas"]]
        for qid, question, answers in sorted(rng.sample(items, min(per_article, len(items)))):
            questions.append({"qid": qid, "query": question, "doc_id": doc_id,
                              "gold_snippets": [list(dict.fromkeys(answers))]})  # one slot: the alternatives
    return documents, questions


def split(documents: dict[str, str], size: int, overlap: int) -> list[dict]:
    """LangChain's recursive splitter; ``start_index`` gives each chunk's character offset."""
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    splitter = RecursiveCharacterTextSplitter(chunk_size=size, chunk_overlap=overlap, add_start_index=True)
    chunks = []
    for doc_id, text in documents.items():
        for i, piece in enumerate(splitter.create_documents([text])):
            start = piece.metadata["start_index"]
            assert text[start:start + len(piece.page_content)] == piece.page_content
            chunks.append({"chunk_id": f"{doc_id}:{size}:{i}", "doc_id": doc_id, "start": start,
                           "end": start + len(piece.page_content), "text": piece.page_content})
    return chunks


def pipeline(documents, questions, model, size: int, overlap: int, k: int = 10, packed: int = 5):
    """Chunk, embed, index in chromadb, retrieve; returns (records, chunks, chunk vectors, query vectors)."""
    import chromadb

    chunks = split(documents, size, overlap)
    vectors = model.encode([c["text"] for c in chunks], batch_size=32, normalize_embeddings=True).astype(np.float32)
    queries = model.encode([q["query"] for q in questions], batch_size=32, normalize_embeddings=True).astype(np.float32)
    client = chromadb.EphemeralClient()
    name = f"squad-{size}"
    if name in [c.name for c in client.list_collections()]:
        client.delete_collection(name)
    collection = client.create_collection(name, metadata={"hnsw:space": "cosine"}, embedding_function=None)
    collection.add(ids=[c["chunk_id"] for c in chunks], embeddings=vectors.tolist(),
                   documents=[c["text"] for c in chunks])
    records = []
    for question, vector in zip(questions, queries):
        started = time.perf_counter()
        hits = collection.query(query_embeddings=[vector.tolist()], n_results=k, include=["documents"])
        latency = 1000 * (time.perf_counter() - started)
        ids, texts = hits["ids"][0], hits["documents"][0]
        records.append({**question, "retrieved_ids": ids, "retrieved_texts": texts, "context_ids": ids[:packed],
                        "context_texts": texts[:packed], "latency_ms": {"retrieval": round(latency, 1)}})
    client.delete_collection(name)
    return records, chunks, vectors, queries


def _jsonl(rows) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)


MARKER = ".chunklab-example"


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default=str(HERE / "langchain_chroma"))
    p.add_argument("--articles", type=int, default=6)
    p.add_argument("--per-article", type=int, default=30)
    args = p.parse_args(argv)
    from chunklab_core.core.output_dirs import output_folder_problem

    # the committed example folder is this script's own output; any other --out goes through the guard
    # (never a folder of yours, a tracked or an irreplaceable one; only an earlier output of this script)
    if Path(args.out).resolve() != (HERE / "langchain_chroma").resolve():
        problem = output_folder_problem(args.out, MARKER)
        if problem:
            raise SystemExit(f"langchain_chroma_pipeline: {problem}")
    from sentence_transformers import SentenceTransformer

    from chunklab_core.retrieval.model_assembly import resolve_model  # the shipped MiniLM's folder, no download

    mirror = Path(os.environ.get("CHUNKLAB_DATA_MIRROR", "data/mirror"))
    documents, questions = squad_articles(mirror, args.articles, args.per_article, SEED)
    model = SentenceTransformer(str(resolve_model("minilm")[1]), device="cpu", local_files_only=True)
    records, chunks, vectors, queries = pipeline(documents, questions, model, 1000, 200)
    records_400, *_ = pipeline(documents, questions, model, 400, 80)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    tmp.chmod(0o755)  # mkdtemp's 0700 would outlive the rename
    try:
        (tmp / "records.jsonl").write_text(_jsonl(records), encoding="utf-8")
        (tmp / "records_400.jsonl").write_text(_jsonl(records_400), encoding="utf-8")
        (tmp / "chunks.jsonl").write_text(_jsonl(chunks), encoding="utf-8")
        (tmp / "documents.jsonl").write_text(_jsonl({"doc_id": d, "text": t} for d, t in documents.items()),
                                             encoding="utf-8")
        np.save(tmp / "chunk_vectors.npy", vectors)
        np.save(tmp / "query_vectors.npy", queries)
        if out.resolve() != (HERE / "langchain_chroma").resolve():
            from chunklab_core.core.output_dirs import write_marker

            write_marker(tmp, MARKER, "examples/evaluate/langchain_chroma_pipeline.py")
        if out.exists():
            shutil.rmtree(out)
        tmp.rename(out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    print(f"wrote {out}: {len(records)} records, {len(chunks)} chunks of {len(documents)} articles")


if __name__ == "__main__":
    main()
