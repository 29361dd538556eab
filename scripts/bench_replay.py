"""Benchmark: re-executing post 05 from its recorded LLM calls vs making those calls.

Runs the whole notebook (papermill, ``MODE="replay"``, outputs to a temporary folder) and
compares its wall time with the model time the same calls took when they were recorded
(the sum of the recorded latencies of every distinct call the post uses). Target: the whole
post in under a minute. Usage: ``python scripts/bench_replay.py [--resamples 10000]``.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]


def recorded_model_seconds(nb) -> float:
    """Sum of the recorded latencies of the distinct calls the post used (its parameters)."""
    from chunklab_core.answers.study import load_study
    from chunklab_core.data.corpora import load_corpus
    from chunklab_core.llm.wiring import make_models

    params = {}
    for cell in nb.cells:
        if "parameters" in cell.metadata.get("tags", []) or "injected-parameters" in cell.metadata.get("tags", []):
            exec(cell.source, {}, params)
    corpora = {name: (load_corpus(name, squad_articles=params["ARTICLES"], seed=params["SEED"]), n)
               for name, n in params["CORPORA"].items()}
    study = load_study(corpora, params["STRATEGIES"], params["SEED"], make_models(mode="replay"))
    return float(study.calls["seconds"].sum())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--resamples", type=int, default=10_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "05.ipynb"
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "papermill", "--kernel", "chunklab", "--no-progress-bar",
                        str(ROOT / "notebooks/src/05_answers.ipynb"), str(out),
                        "-p", "WRITE_OUTPUTS", "False", "-p", "RESAMPLES", str(args.resamples)],
                       check=True, cwd=ROOT, capture_output=True)
        wall = time.perf_counter() - start
        nb = nbformat.read(out, as_version=4)
    recorded = recorded_model_seconds(nb)
    print(f"post 05 re-executed from records: {wall:.1f} s wall (papermill, kernel start included)")
    if recorded:
        print(f"the same answer and judge calls took {recorded:,.0f} s of model time when recorded "
              f"(probe calls not included): replay is {recorded / wall:,.0f}x faster")
    print("target: under 60 s --", "met" if wall < 60 else "NOT met")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
