"""Benchmark the retrieval and augmentation evaluators against ranx and pytrec_eval on one run.

The run: 100,000 queries x 10 returned chunk ids (drawn from 1,000,000 ids, seeded), each query
with 1-5 relevant ids, about half of them among its returned ones. Every library starts from the
same Python data (lists of ids per query; ranx and pytrec_eval get the dicts they take, built
outside the timing) and computes the same measures per query:

1. retrieval: ``evaluate_retrieval`` at k = 10 (hit, P, RR, recall, F1, MAP, nDCG) against
   ranx ``evaluate`` of hit_rate, precision, mrr, recall, f1, map and ndcg at 10 (its Qrels and
   Run construction counted: that is how ranx takes a run; numba compiled beforehand, untimed),
   and against pytrec_eval (``P_10, recall_10, recip_rank, map_cut_10, ndcg_cut_10``);
2. augmentation: ``evaluate_augmentation`` (precision, noise, recall, sufficiency, duplicate
   ratio, edge placement) on the same lists as packed contexts, against ranx precision@10 and
   recall@10 (the two of its measures that are context precision and recall).

The equality of the shared numbers is checked on the same run. Ratios are ranx (or pytrec_eval)
seconds / ours: above 1 means ours is faster, in wall-clock and in process CPU seconds (on a
shared machine wall-clock includes waiting for the cores; CPU seconds count every thread).
One run, on whatever cores the machine gives; best of ``REPEATS``. Usage: ``python scripts/bench_evaluators.py [--queries N] [--repeats R]``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pytrec_eval
from ranx import Qrels, Run, evaluate

from chunklab_core.evaluators.augmentation import evaluate_augmentation
from chunklab_core.evaluators.retrieval import evaluate_retrieval

REPEATS = 3
K = 10


def make_run(n: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    ranked = rng.integers(0, 1_000_000, size=(n, K))
    n_gold = rng.integers(1, 6, size=n)
    ranked_ids = [[f"c{x}" for x in row] for row in ranked.tolist()]
    gold_ids = []
    for row, g in zip(ranked.tolist(), n_gold.tolist()):
        inside = rng.random(g) < 0.5
        picks = [f"c{row[int(rng.integers(0, K))]}" if inside[j] else f"c{int(rng.integers(0, 1_000_000))}"
                 for j in range(g)]
        gold_ids.append(list(dict.fromkeys(picks)))
    qids = [f"q{i:06d}" for i in range(n)]
    return qids, ranked_ids, gold_ids


CPU = {}


def best(fn) -> tuple[float, object]:
    """Best wall-clock seconds of REPEATS calls (and, in ``CPU``, the best process CPU seconds:
    every thread's time, ranx's numba threads included), and the last result."""
    times, cpu, out = [], [], None
    for _ in range(REPEATS):
        start, start_cpu = time.perf_counter(), time.process_time()
        out = fn()
        times.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    CPU[fn] = min(cpu)
    return min(times), out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    global REPEATS
    REPEATS = args.repeats
    qids, ranked, gold = make_run(args.queries)
    # a repeated id within a list would be collapsed by the dicts; keep lists duplicate-free
    ranked = [list(dict.fromkeys(r)) for r in ranked]
    qrels_dict = {q: {d: 1 for d in g} for q, g in zip(qids, gold)}
    run_dict = {q: {d: float(K - i) for i, d in enumerate(r)} for q, r in zip(qids, ranked)}
    metrics = [f"{m}@{K}" for m in ("hit_rate", "precision", "mrr", "recall", "f1", "map", "ndcg")]
    small_q, small_r = Qrels({q: qrels_dict[q] for q in qids[:50]}), Run({q: run_dict[q] for q in qids[:50]})
    evaluate(small_q, small_r, metrics + [f"precision@{K}", f"recall@{K}"])  # numba compilation, untimed

    t_ours, ours = best(lambda: evaluate_retrieval(qids, ranked, gold, ks=[K]))
    t_ranx, theirs = best(lambda: evaluate(Qrels(qrels_dict), Run(run_dict), metrics, return_mean=False))
    t_trec, trec = best(lambda: pytrec_eval.RelevanceEvaluator(
        qrels_dict, {f"P_{K}", f"recall_{K}", "recip_rank", f"map_cut_{K}", f"ndcg_cut_{K}"}).evaluate(run_dict))
    for ours_name, ranx_name in (("hit", "hit_rate"), ("precision", "precision"), ("rr", "mrr"), ("recall", "recall"),
                                 ("f1", "f1"), ("ndcg", "ndcg")):
        np.testing.assert_allclose(ours.values[f"{ours_name}@{K}"], theirs[f"{ranx_name}@{K}"], atol=1e-9)
    np.testing.assert_allclose(ours.values[f"ndcg@{K}"], [trec[q][f"ndcg_cut_{K}"] for q in qids], atol=1e-9)

    t_aug, aug = best(lambda: evaluate_augmentation(qids, context_ids=ranked, gold_ids=gold))
    t_ranx_aug, pr = best(lambda: evaluate(Qrels(qrels_dict), Run(run_dict), [f"precision@{K}", f"recall@{K}"],
                                           return_mean=False))
    np.testing.assert_allclose(aug.values["context_recall"], pr[f"recall@{K}"], atol=1e-9)
    full = np.array([len(r) == K for r in ranked])  # ranx divides by k; ours by the distinct ids packed
    np.testing.assert_allclose(aug.values["context_precision"][full], pr[f"precision@{K}"][full], atol=1e-9)

    cpu = list(CPU.values())  # in call order: ours, ranx, pytrec_eval, augmentation, ranx (P, R)
    n = args.queries
    print(f"{n:,} queries x {K} results; best of {REPEATS}; shared numbers equal (checked)")
    print(f"retrieval evaluator (7 measures @10):    {t_ours:7.2f} s")
    print(f"ranx evaluate (same 7 measures):         {t_ranx:7.2f} s   ratio ranx/ours {t_ranx / t_ours:5.2f}x")
    print(f"pytrec_eval (P, recall, RR, MAP, nDCG):  {t_trec:7.2f} s   ratio pytrec_eval/ours {t_trec / t_ours:5.2f}x")
    print(f"augmentation evaluator (6 measures):     {t_aug:7.2f} s")
    print(f"ranx evaluate (precision, recall @10):   {t_ranx_aug:7.2f} s   ratio ranx/ours {t_ranx_aug / t_aug:5.2f}x")
    print(f"CPU seconds: ours {cpu[0]:.2f}, ranx {cpu[1]:.2f} ({cpu[1] / cpu[0]:.2f}x), pytrec_eval {cpu[2]:.2f} "
          f"({cpu[2] / cpu[0]:.2f}x); augmentation ours {cpu[3]:.2f}, ranx {cpu[4]:.2f} ({cpu[4] / cpu[3]:.2f}x)")


if __name__ == "__main__":
    main()
