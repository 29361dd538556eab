"""Benchmark: replaying posts from their recorded runs and calls, cold and warm, with a profile.

For each post named (default ``05_answers``), a fresh Python process executes the code cells of
``notebooks/src/NN_*.ipynb`` in order (the parameters cell first, then the overrides given with
``--set``; ``WRITE_OUTPUTS`` is always False, so nothing under data/ or figures/ is written),
with ``CHUNKLAB_RUNS=replay`` as ``make all`` runs them. It reports, per post:

* **cold**: wall and CPU seconds of the first execution in the fresh process (imports, data
  loading from .cache/raw, every in-process memo empty: what a fresh clone pays after
  ``make data``); the kernel start of papermill is not included;
* **warm**: the same cells executed again in the same process (modules imported, the
  judge-once and count-once memos of ``evaluation.slot_metrics`` and ``core.tokens`` full);
* with ``--profile N``: the top N functions by cumulative time of the cold execution
  (cProfile, CPU time; the profiler slows the cold execution, which is then marked so).

``--pythonpath DIR`` runs another checkout's ``chunklab_core`` (e.g. the previous commit's, for
a before/after ratio on the same machine). For post 05 it also prints the model time the
replayed calls took when they were recorded. Usage:
``python scripts/bench_replay.py 02_retrievers --set 'CORPORA=["nq"]' [--profile 25] [--no-warm]``;
``--tokens nq`` also times counting a cell's chunks one by one against tiktoken's batch.
CPU time is the process's (all threads); on a shared machine wall time is not a measure of
the code alone, so both are printed.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_POSTS = ("05_answers",)


def notebook_of(post: str) -> Path:
    """notebooks/src/<post>.ipynb, or the one source whose name starts with ``post`` (``02``)."""
    exact = ROOT / "notebooks" / "src" / f"{post}.ipynb"
    if exact.is_file():
        return exact
    found = sorted((ROOT / "notebooks" / "src").glob(f"{post}*.ipynb"))
    if len(found) != 1:
        raise SystemExit(f"no single notebook source matches {post!r}: {[p.name for p in found]}")
    return found[0]


def _child(source: str, overrides: str, out: str, warm: bool, top: int) -> int:
    """Runs in the fresh process: execute the cells (cold, profiled), again (warm), write JSON."""
    import cProfile
    import io
    import pstats
    import time

    import matplotlib

    matplotlib.use("Agg")
    import nbformat
    import yaml

    nb = nbformat.read(source, as_version=4)
    cells = [c for c in nb.cells if c.cell_type == "code"]
    params = [c for c in cells if "parameters" in c.metadata.get("tags", [])]
    body = [c.source for c in cells if c not in params]
    settings = {name: yaml.safe_load(value) for name, value in json.loads(overrides).items()}

    def execute() -> tuple[float, float, dict]:
        from IPython.display import display

        namespace: dict = {"__name__": "__bench__", "display": display}  # a kernel's builtin
        for cell in params:
            exec(compile(cell.source, "<parameters>", "exec"), namespace)
        unknown = sorted(set(settings) - set(namespace))
        if unknown:
            raise SystemExit(f"{source}: no parameter(s) {unknown}")
        namespace.update(settings)
        if "WRITE_OUTPUTS" in namespace:
            namespace["WRITE_OUTPUTS"] = False
        start, cpu = time.perf_counter(), time.process_time()
        for i, code in enumerate(body):
            exec(compile(code, f"<cell {i}>", "exec"), namespace)
        import matplotlib.pyplot as plt

        plt.close("all")
        return time.perf_counter() - start, time.process_time() - cpu, namespace

    profile = cProfile.Profile(time.process_time) if top else None
    if profile:
        profile.enable()
    cold_wall, cold_cpu, namespace = execute()
    result = {"cold_wall": cold_wall, "cold_cpu": cold_cpu, "profile": ""}
    if profile:
        profile.disable()
        stream = io.StringIO()
        pstats.Stats(profile, stream=stream).sort_stats("cumulative").print_stats(top)
        result["profile"] = stream.getvalue()
    if "05_answers" in source:
        result["recorded_model_seconds"] = recorded_model_seconds(namespace)
    if warm:
        result["warm_wall"], result["warm_cpu"], _ = execute()
    Path(out).write_text(json.dumps(result))
    return 0


def recorded_model_seconds(namespace: dict) -> float:
    """Sum of the recorded latencies of the distinct calls post 05 used (its parameters)."""
    from chunklab_core.answers.study import load_study
    from chunklab_core.data.corpora import load_corpus
    from chunklab_core.llm.wiring import make_models

    corpora = {name: (load_corpus(name, squad_articles=namespace["ARTICLES"], seed=namespace["SEED"]), n)
               for name, n in namespace["CORPORA"].items()}
    study = load_study(corpora, namespace["STRATEGIES"], namespace["SEED"], make_models(mode="replay"))
    return float(study.calls["seconds"].sum())


def bench_token_counting(corpus_name: str, strategy: str = "fixed_500", repeats: int = 3) -> str:
    """Counting a cell's chunk texts: one by one (``encode_ordinary``, what ``core.tokens`` does)
    against tiktoken's ``encode_ordinary_batch`` (its thread pool), best of ``repeats``; the counts
    are checked equal first."""
    import time

    from chunklab_core.chunking import chunk_corpus
    from chunklab_core.core.tokens import encoding
    from chunklab_core.data.corpora import load_corpus

    corpus = load_corpus(corpus_name)
    texts = [corpus.doc(c.doc_id).text[c.start:c.end] for c in chunk_corpus(corpus.documents, strategy)]
    enc = encoding()
    if [len(enc.encode_ordinary(t)) for t in texts] != [len(x) for x in enc.encode_ordinary_batch(texts)]:
        raise SystemExit("encode_ordinary and encode_ordinary_batch disagree")

    def best(run) -> float:
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            run()
            times.append(time.perf_counter() - start)
        return min(times)

    one = best(lambda: [enc.encode_ordinary(t) for t in texts])
    batch = best(lambda: enc.encode_ordinary_batch(texts))
    return (f"token counts of {len(texts):,} {strategy} chunks of {corpus_name}: one by one {one:.2f} s, "
            f"encode_ordinary_batch {batch:.2f} s (batch / one by one = {batch / one:.2f}; "
            f"{os.cpu_count()} CPUs)")


def bench_post(post: str, settings: dict[str, str], pythonpath: str | None, warm: bool, top: int) -> dict:
    source = notebook_of(post)
    env = dict(os.environ, CHUNKLAB_RUNS="replay", MPLBACKEND="Agg")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (pythonpath or str(ROOT), env.get("PYTHONPATH", "")) if p)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "result.json"
        command = [sys.executable, str(Path(__file__).resolve()), "--child", str(source), json.dumps(settings),
                   str(out), "--top", str(top)] + ([] if warm else ["--no-warm"])
        done = subprocess.run(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True)
        if done.returncode != 0:
            raise SystemExit(f"{post} failed:\n{done.stderr[-4000:]}")
        return json.loads(out.read_text())


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "--child":
        top = int(argv[argv.index("--top") + 1]) if "--top" in argv else 0
        return _child(argv[1], argv[2], argv[3], "--no-warm" not in argv, top)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("posts", nargs="*", default=list(DEFAULT_POSTS), help="e.g. 02_retrievers or 02")
    parser.add_argument("--set", action="append", default=[], metavar="NAME=YAML",
                        help="override a parameter of every post named (YAML value), e.g. 'CORPORA=[\"nq\"]'")
    parser.add_argument("--pythonpath", help="the checkout whose chunklab_core to run (default this one)")
    parser.add_argument("--profile", type=int, default=0, metavar="N",
                        help="profile the cold execution and list its top N functions by cumulative time")
    parser.add_argument("--no-warm", action="store_true", help="execute once (cold) only")
    parser.add_argument("--tokens", metavar="CORPUS", help="also time token counting one by one against "
                        "tiktoken's batch on a corpus's fixed_500 chunks (e.g. nq)")
    args = parser.parse_args(argv)
    settings = {}
    for item in args.set:
        name, sep, value = item.partition("=")
        if not sep:
            parser.error(f"--set takes NAME=VALUE, got {item!r}")
        settings[name] = value
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at the start"
          + (f"; chunklab_core from {args.pythonpath}" if args.pythonpath else ""))
    if args.tokens:
        print(bench_token_counting(args.tokens), flush=True)
    for post in args.posts:
        result = bench_post(post, settings, args.pythonpath, not args.no_warm, args.profile)
        line = (f"{post}: cold{' (profiled)' if args.profile else ''} {result['cold_wall']:.1f} s wall, "
                f"{result['cold_cpu']:.1f} s CPU")
        if "warm_wall" in result:
            line += f"; warm {result['warm_wall']:.1f} s wall, {result['warm_cpu']:.1f} s CPU"
        print(line + (f" (overrides: {settings})" if settings else ""), flush=True)
        recorded = result.get("recorded_model_seconds")
        if recorded:
            print(f"  the same answer and judge calls took {recorded:,.0f} s of model time when recorded "
                  f"(probe calls not included): the cold replay is {recorded / result['cold_wall']:,.0f}x faster")
        if result["profile"]:
            print(result["profile"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
