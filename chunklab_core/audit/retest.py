"""Judge stability under sampling: the post-05 judges re-asked at temperature > 0 on audit items.

Post 05 records every verdict at temperature 0 (greedy decoding), and its temperature-0
retest (:mod:`chunklab_core.answers.probes`) measures only the runtime's determinism. This
module asks how much a verdict depends on decoding: a seeded subset of the audit sample's
items is judged again by the three-way judges with the same prompt at ``temperature`` (0.7
by default) and several sampling seeds (one recorded call each, through the recorded-call
layer :mod:`chunklab_core.llm.records`, stage ``judge_retest_<judge>`` under
``data/records``, append-only; post 06 replays them).

Handles: the subset (:func:`retest_items`: ``n`` items of the key's first wave, drawn with a seed, with
their texts and temperature-0 verdicts from the population), the recorded calls
(:func:`run_retest`; in replay mode an item with a missing record ends the run, so a partial
recording gives the items recorded so far), and the summary (:func:`retest_summary`: per
judge, the share of sampled verdicts that differ from the temperature-0 verdict, the share
of items whose pass/fail changes in at least one sample, each with a 95% interval that
resamples questions, and ``unparsed`` counts).

CLI (records; ~6 s per 1.5B call on a laptop CPU):
``chunklab-judge-retest [--items 30] [--samples 3] [--temperature 0.7]``.

Not handled: the yes/no judge (its prompt is a different question), other temperatures in
one run (pass ``--temperature``; each is its own set of records).
"""

from __future__ import annotations

import argparse
from typing import Sequence

import numpy as np
import pandas as pd

from chunklab_core.core import bounds
from chunklab_core.core.cli_errors import user_errors
from chunklab_core.core.csv_cells import restored_frame, torn_table_problem
from chunklab_core.data.registry import DataError
from chunklab_core.llm.records import user_error_types
from chunklab_core.audit.loading import audit_error_types
from chunklab_core.answers.verdicts import UNPARSED, binary_labels
from chunklab_core.audit.loading import AuditError, resolve_path
from chunklab_core.audit.topup import WAVE
from chunklab_core.core.paths import AUDIT_DIR, AUDIT_SAMPLE, RECORDS_DIR

RETEST_JUDGES = {"qwen15": "qwen-1.5b", "qwen05": "qwen-0.5b"}
DEFAULT_TEMPERATURE = 0.7


def verdict_column(judge: str) -> str:
    """The population's temperature-0 verdict column of a retested judge (its three-way prompt)."""
    return f"judge_{judge}_3way"


def _first_wave(key: pd.DataFrame, population: pd.DataFrame) -> pd.DataFrame:
    """The key's rows of the first wave, in key order (all rows without a ``wave`` column)."""
    if WAVE not in population.columns:
        return key
    waves = pd.to_numeric(population[WAVE], errors="coerce").fillna(1).astype(int)  # as topup reads it
    wave = waves.set_axis(population["item_id"]).loc[key["source_item_id"]].to_numpy()
    return key[wave == wave.min()]


def retest_items(key: pd.DataFrame, population: pd.DataFrame, n: int, seed: int,
                 judges: Sequence[str] = tuple(RETEST_JUDGES)) -> pd.DataFrame:
    """``n`` items of the audit key (seeded), with question, reference, answer, qid and temperature-0 verdicts.

    The items are drawn from the sample's first wave only (the key's rows whose population row
    has the smallest ``wave``; every row when the population has no ``wave`` column): a top-up
    (:mod:`chunklab_core.audit.topup`) appends a later wave to the key, and drawing from the
    whole key would then give a different subset than the one recorded, so the replay would
    find records for only some of its items.
    """
    first_wave = _first_wave(key, population)
    if not 1 <= n <= len(first_wave):
        raise ValueError(f"n must lie in [1, {len(first_wave)}] (the first wave's items), got {n}")
    picked = np.sort(np.random.default_rng(seed).choice(len(first_wave), n, replace=False))
    rows = first_wave.iloc[picked]
    texts = population.set_index("item_id").loc[rows["source_item_id"]]
    table = pd.DataFrame({"item_id": rows["item_id"].to_numpy(),
                          "source_item_id": rows["source_item_id"].to_numpy()})
    for column in ("qid", "question", "reference", "answer"):
        table[column] = texts[column].to_numpy()
    for judge in judges:
        table[f"t0_{judge}"] = texts[verdict_column(judge)].to_numpy()
    return table


def retest_models(mode: str = "replay", root=None, n_threads: int | None = None,
                  judges: dict[str, str] | None = None) -> dict:
    """Recorded judges writing to (or replaying) ``judge_retest_<name>.jsonl``; nothing is loaded here."""
    from chunklab_core.llm.records import CallStore, RecordedLLM
    from chunklab_core.llm.wiring import make_backend

    models = {}
    for name, model in (judges or RETEST_JUDGES).items():
        store = CallStore.for_stage(f"judge_retest_{name}", root, make_target="audit-retest")
        models[name] = RecordedLLM(make_backend("llamacpp", model, n_threads), store, mode)
    return models


def run_retest(items: pd.DataFrame, models: dict, samples: int = 3,
               temperature: float = DEFAULT_TEMPERATURE, progress: bool = False) -> pd.DataFrame:
    """Verdicts (item_id, qid, judge, sample, label), one recorded call per item, judge and seed.

    Sample ``s`` uses ``seed = s`` (1..samples). Stops at the first item with a missing
    record in replay mode; every earlier item is complete.
    """
    from chunklab_core.llm.judges import judge_three_way
    from chunklab_core.llm.records import ReplayMiss

    if samples < 1 or temperature <= 0:
        raise ValueError("need samples >= 1 and temperature > 0")
    rows = []
    iterator = items.itertuples(index=False)
    if progress:
        from tqdm.auto import tqdm

        iterator = tqdm(iterator, total=len(items), desc="retest at temperature "
                        f"{temperature}", unit="item")
    for item in iterator:
        try:
            done = [{"item_id": item.item_id, "qid": item.qid, "judge": name, "sample": s,
                     "label": judge_three_way(llm, item.question, item.reference, item.answer,
                                              temperature=temperature, seed=s).label}
                    for name, llm in models.items() for s in range(1, samples + 1)]
        except ReplayMiss:
            break
        rows += done
    return pd.DataFrame(rows, columns=["item_id", "qid", "judge", "sample", "label"])


def retest_summary(verdicts: pd.DataFrame, items: pd.DataFrame, resamples: int = 10_000,
                   seed: int = 0, confidence: float = 0.95) -> pd.DataFrame:
    """Per judge: verdicts that differ from temperature 0, items whose pass/fail changes, with intervals."""
    from chunklab_core.audit.paired import weighted_mean_ci

    rows = []
    for judge, group in verdicts.groupby("judge", sort=False):
        merged = group.merge(items[["item_id", f"t0_{judge}"]], on="item_id")
        merged["changed"] = merged["label"] != merged[f"t0_{judge}"]
        merged["flipped"] = binary_labels(merged["label"]) != binary_labels(merged[f"t0_{judge}"])
        per_item = merged.groupby("item_id").agg(qid=("qid", "first"), changed=("changed", "mean"),
                                                 flipped=("flipped", "any"))
        ones = np.ones(len(per_item))
        row = {"judge": judge, "items": len(per_item),
               "samples per item": int(group.groupby("item_id").size().max()),
               "unparsed": int((group["label"] == UNPARSED).sum())}
        for name, values in (("verdicts changed", per_item["changed"]),
                             ("items with a pass/fail flip", per_item["flipped"].astype(float))):
            result = weighted_mean_ci(values.to_numpy(dtype=float), ones, per_item["qid"],
                                      resamples, seed, confidence)
            row.update({name: result.estimate, f"{name} low": result.low,
                        f"{name} high": result.high})
        rows.append(row)
    return pd.DataFrame(rows)


@user_errors(DataError, *user_error_types(), *audit_error_types())
def main(argv: list[str] | None = None) -> int:
    from chunklab_core.audit.sheets import read_key

    parser = argparse.ArgumentParser(description="Record the judges' verdicts at temperature > 0 "
                                                 "on a subset of the audit sample.")
    parser.add_argument("--key", default=str(AUDIT_DIR / f"{AUDIT_SAMPLE}_key.csv"))
    parser.add_argument("--population", default=str(AUDIT_DIR / f"{AUDIT_SAMPLE}_population.csv"))
    parser.add_argument("--items", type=bounds.int_in("questions"), default=30)
    parser.add_argument("--samples", type=bounds.int_in("sample"), default=3)
    parser.add_argument("--temperature", type=bounds.float_in("temperature"), default=DEFAULT_TEMPERATURE)
    parser.add_argument("--seed", type=bounds.int_in("seed"), default=13)
    parser.add_argument("--threads", type=bounds.int_in("threads"), default=None)
    parser.add_argument("--mode", default="replay_or_record",
                        choices=("replay", "replay_or_record", "record"))
    args = parser.parse_args(argv)
    torn = [torn_table_problem(resolve_path(path)) for path in (args.key, args.population)]
    if any(torn):  # never retest from half a file
        raise AuditError([f"{problem}; restore it (git checkout) or draw the sample again" for problem in torn if problem])
    key = read_key(resolve_path(args.key))
    population = restored_frame(pd.read_csv(resolve_path(args.population), dtype=str, keep_default_na=False))
    items = retest_items(key, population, args.items, args.seed)
    verdicts = run_retest(items, retest_models(args.mode, n_threads=args.threads), args.samples,
                          args.temperature, progress=True)
    print(f"{verdicts['item_id'].nunique()} of {len(items)} items recorded "
          f"({len(verdicts)} verdicts) under {RECORDS_DIR}/judge_retest_*.jsonl")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
