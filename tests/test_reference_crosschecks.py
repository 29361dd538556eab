"""Cross-checks against established libraries that cannot vanish, and their versions.

The reference libraries are imported at module level, never through ``pytest.importorskip``:
a missing reference library fails this file instead of turning its checks into skips. Each
comes from the ``dev`` extra (pinned in ``requirements/lock.txt``); ``test_reference_versions``
fails when an installed version lies outside the range these checks were written against.

* Prediction-powered inference against ``ppi_py`` (Angelopoulos et al.; pip ``ppi-python``),
  with ``lam=1`` (plain PPI; ``lam=None`` would be PPI++ power tuning). ddof difference:
  ``ppi_py`` computes both variance terms with ``numpy.std`` (ddof = 0), chunklab with
  ddof = 1, so chunklab's squared standard error is larger by exactly
  ``var1(f)/N**2 + var1(y - f)/n**2``; the point estimates are equal.
* Reciprocal rank fusion against ``ranx.fuse(method="rrf")`` (Bassani 2022; pip ``ranx``).
"""

from __future__ import annotations

import re
import tomllib
from importlib.metadata import version
from pathlib import Path

import numpy as np
import ppi_py
import pytest
import ranx
from packaging.specifiers import SpecifierSet
from packaging.version import Version
from scipy.stats import norm

from chunklab_core.stats.agreement import ppi_mean_ci
from chunklab_core.retrieval.hybrid import rrf_fuse
from chunklab_core.stats.stratified import stratified_ppi_mean_ci

ROOT = Path(__file__).resolve().parents[1]

# The versions these cross-checks were written and run against (lower bound = pyproject's floor).
REFERENCE_RANGES = {
    "ppi-python": ">=0.2.3,<0.3",
    "ranx": ">=0.3.21,<0.4",
    "bm25s": ">=0.3.16,<0.4",
    "rank-bm25": ">=0.2.2,<0.3",
    "pytrec-eval-terrier": ">=0.5.11,<0.6",
    "rouge-score": ">=0.1.2,<0.2",
    "scipy": ">=1.17.1,<2",
    "scikit-learn": ">=1.9.1,<2",
    "faiss-cpu": ">=1.15.1,<2",  # the approximate index of tests/test_evaluators_stages.py
    "chromadb": ">=1.5.9,<2",  # tests/test_evaluators_vector_db.py
}


def _dev_floors() -> dict[str, str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    floors = {}
    for requirement in project["dependencies"] + project["optional-dependencies"]["dev"]:
        name, _, floor = requirement.partition(">=")
        floors[name.strip()] = floor.strip()
    return floors


@pytest.mark.parametrize("package", sorted(REFERENCE_RANGES))
def test_reference_versions(package):
    installed = Version(version(package))
    assert installed in SpecifierSet(REFERENCE_RANGES[package]), (
        f"{package} {installed} is outside {REFERENCE_RANGES[package]}, the range the cross-checks "
        "were written against: install from requirements/lock.txt (make env) or re-check them")
    floor = _dev_floors()[package]
    assert SpecifierSet(REFERENCE_RANGES[package]).contains(floor) and f">={floor}" in REFERENCE_RANGES[package], (
        f"pyproject's floor {package}>={floor} and the tested range {REFERENCE_RANGES[package]} disagree")


def test_version_check_would_catch_a_wrong_version():
    assert Version("0.3.0") not in SpecifierSet(REFERENCE_RANGES["ppi-python"])
    assert Version("0.2.2") not in SpecifierSet(REFERENCE_RANGES["ppi-python"])


def _fixture(seed: int, n_all: int = 300, n_graded: int = 40):
    rng = np.random.default_rng(seed)
    judge_all = (rng.random(n_all) < 0.7).astype(float)
    graded = rng.choice(n_all, n_graded, replace=False)
    human = np.where(rng.random(n_graded) < 0.8, judge_all[graded], 1 - judge_all[graded])
    return judge_all, judge_all[graded], human


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_ppi_point_estimate_and_interval_equal_ppi_py_up_to_ddof(seed):
    judge_all, judge_graded, human = _fixture(seed)
    ours = ppi_mean_ci(judge_all, judge_graded, human, confidence=0.95).ppi
    estimate = ppi_py.ppi_mean_pointestimate(human, judge_graded, judge_all, lam=1)
    low, high = ppi_py.ppi_mean_ci(human, judge_graded, judge_all, alpha=0.05, lam=1)
    assert float(np.ravel(estimate)[0]) == pytest.approx(ours.mean, abs=1e-12)
    assert (float(np.ravel(low)[0]) + float(np.ravel(high)[0])) / 2 == pytest.approx(ours.mean, abs=1e-12)
    z = norm.ppf(0.975)
    se_ours = (ours.high - ours.low) / (2 * z)
    se_ppi_py = (float(np.ravel(high)[0]) - float(np.ravel(low)[0])) / (2 * z)
    n_all, n = len(judge_all), len(human)
    ddof_gap = judge_all.var(ddof=1) / n_all**2 + (human - judge_graded).var(ddof=1) / n**2
    assert se_ours**2 - se_ppi_py**2 == pytest.approx(ddof_gap, rel=1e-9)
    assert se_ours > se_ppi_py  # the ddof = 1 interval is the wider one


def test_stratified_ppi_point_estimate_equals_ppi_py_with_design_weights():
    rng = np.random.default_rng(5)
    strata_all = rng.choice(["agree", "split", "fail"], size=400, p=[0.6, 0.3, 0.1])
    judge_all = (rng.random(400) < 0.65).astype(float)
    graded = np.concatenate([rng.choice(np.flatnonzero(strata_all == s), 12, replace=False)
                             for s in ("agree", "split", "fail")])
    human = np.where(rng.random(len(graded)) < 0.75, judge_all[graded], 1 - judge_all[graded])
    ours = stratified_ppi_mean_ci(judge_all, strata_all, judge_all[graded], human, strata_all[graded])
    # ppi_py's weighted rectifier mean(w (Y - Yhat)) is sum_h W_h mean_h(Y - Yhat) when w_i = W_h n / n_h.
    shares = {s: np.mean(strata_all == s) for s in ("agree", "split", "fail")}
    w = np.array([shares[s] * len(graded) / 12 for s in strata_all[graded]])
    estimate = ppi_py.ppi_mean_pointestimate(human, judge_all[graded], judge_all, lam=1, w=w)
    assert float(np.ravel(estimate)[0]) == pytest.approx(ours.estimate, abs=1e-12)


def _ranx_run(ids: np.ndarray, name: str) -> ranx.Run:
    """One ranx run from an id matrix: strictly decreasing scores in rank order."""
    return ranx.Run({f"q{row}": {f"d{doc}": float(len(ranking) - position)
                                 for position, doc in enumerate(ranking) if doc >= 0}
                     for row, ranking in enumerate(ids)}, name=name)


@pytest.mark.heavy  # ranx compiles its fusion with numba on first use: about 20 s in a fresh environment
@pytest.mark.parametrize("rrf_k", [60, 1])
def test_rrf_equals_ranx_fuse(rrf_k):
    rng = np.random.default_rng(11)
    rankings = [np.stack([rng.permutation(200)[:30] for _ in range(8)]) for _ in range(3)]
    rankings[2][:, 25:] = -1  # a shorter ranking: padding is skipped
    ids, scores = rrf_fuse(rankings, k=20, rrf_k=rrf_k)
    fused = ranx.fuse([_ranx_run(r, f"r{i}") for i, r in enumerate(rankings)], norm=None, method="rrf",
                      params={"k": rrf_k}).to_dict()
    for row in range(ids.shape[0]):
        theirs = fused[f"q{row}"]
        ours = {f"d{doc}": score for doc, score in zip(ids[row], scores[row])}
        for doc, score in ours.items():
            assert score == pytest.approx(theirs[doc], rel=1e-12)
        top = sorted(theirs.values(), reverse=True)[:20]
        assert sorted(ours.values(), reverse=True) == pytest.approx(top, rel=1e-12)


def test_no_reference_check_can_turn_into_a_skip():
    """Only the optional local-LLM runtime (llm extra, built from source) may be skipped when missing."""
    allowed = {"llama_cpp"}
    found = {}
    for path in sorted((ROOT / "tests").glob("*.py")):
        for name in re.findall(r"importorskip\(\s*[\"']([\w.]+)[\"']", path.read_text(encoding="utf-8")):
            if name not in allowed:
                found.setdefault(path.name, []).append(name)
    assert not found, f"reference libraries behind importorskip (import them directly): {found}"
