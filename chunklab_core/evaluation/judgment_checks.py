"""A stored judgments file checked before any of it is used: its arrays against the counts it records, its counts against the texts.

Handles, for ``evaluation.judgment_store`` (whose files hold the slot judgments, token counts and
word pieces of one cell):

* :func:`structure_problems` -- on every load, before use: the required arrays are there;
  ``judged`` is (questions, contexts) bits; ``keys`` are sorted, distinct, inside the judged
  pairs; ``codes`` index the table of distinct judgments, whose arrays (``fills``, ``first``,
  ``grades``, ``widths``) have one row each; ``chunk_tokens`` has one count per chunk and
  ``context_tokens`` one per context, as the provenance counts them, none negative; every
  word-piece array (``pieces_<key>``) has one count per chunk and is declared in the provenance
  (and every declared one is present).
* :func:`sampled_count_problems` -- when a cell's counts are about to be used (a replay reads
  them instead of counting): a seeded sample of :data:`SAMPLE` chunks and contexts is counted
  again (cl100k_base, or the embedding model's tokenizer for word pieces) and must agree. A file
  whose counts were multiplied and whose checksum was then re-computed passes its sha256 and its
  lengths, not this; ``make verify-runs`` counts every entry of its sampled files again.

A file that fails is a ``RunStoreError`` naming the file, what is wrong and the command that
rebuilds it (``make runs``); it is never used.

Not handled: judging again (``judgment_store.verify_file``, sampled by ``make verify-runs``).
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

SAMPLE = 16  # chunks and contexts counted again each time a cell's stored counts are used
REQUIRED = ("judged", "keys", "codes", "fills", "first", "grades", "widths")


def structure_problems(meta: dict, arrays: dict[str, np.ndarray], pieces_prefix: str) -> list[str]:
    """What is wrong with the arrays of a judgments file given its provenance ``meta`` (empty: nothing)."""
    try:
        n_q, n_ctx, n_chunks = (int(meta["questions"]["n"]), int(meta["contexts"]["n"]), int(meta["chunks"]["n"]))
        for part in ("contexts", "chunks", "gold"):
            str(meta[part]["sha256"])
    except (KeyError, TypeError, ValueError):
        return ["its provenance does not count its questions, contexts and chunks or lacks their digests"]
    missing = [name for name in REQUIRED if name not in arrays]
    if missing:
        return [f"it lacks {', '.join(missing)}"]
    problems = []
    judged, keys, codes = arrays["judged"], arrays["keys"].astype(np.int64), arrays["codes"].astype(np.int64)
    if judged.shape != (n_q, (n_ctx + 7) // 8):
        problems.append(f"judged is {judged.shape}, not ({n_q} questions, {n_ctx} contexts as bits)")
    n_table = len(arrays["grades"])
    table = {name: len(arrays[name]) for name in ("fills", "first", "grades", "widths")}
    if len(set(table.values())) != 1:
        problems.append(f"the table of judgments has rows of unequal counts ({table})")
    if len(codes) != len(keys):
        problems.append(f"{len(keys)} keys but {len(codes)} codes")
    elif len(codes) and (codes.min() < 0 or codes.max() >= n_table):
        problems.append(f"a code lies outside the {n_table} stored judgments")
    if len(keys) and ((np.diff(keys) <= 0).any() or keys.min() < 0 or keys.max() >= n_q * max(n_ctx, 1)):
        problems.append("keys are not sorted distinct pairs of the cell")
    elif len(keys) and not problems and n_ctx:
        bits = np.unpackbits(judged, axis=1, count=n_ctx).astype(bool)
        if not bits[keys // n_ctx, keys % n_ctx].all():
            problems.append("a stored judgment is of a pair not marked judged")
    widths = arrays["widths"].astype(np.int64)
    if len(widths) and (widths.min() < 0 or widths.max() > np.shape(arrays["fills"])[-1]):
        problems.append("a judgment's width exceeds its stored slots")
    for name, n, what in (("chunk_tokens", n_chunks, "chunk"), ("context_tokens", n_ctx, "context")):
        if name in arrays:
            counts = arrays[name]
            if counts.shape != (n,):
                problems.append(f"{name} holds {len(counts)} counts, not one per {what} ({n})")
            elif n and counts.min() < 0:
                problems.append(f"{name} holds a negative count")
    if ("chunk_tokens" in arrays) != ("context_tokens" in arrays):
        problems.append("it holds the chunk or the context token counts, not both")
    stored = {name[len(pieces_prefix):] for name in arrays if name.startswith(pieces_prefix)}
    declared = set(meta.get("pieces", {}) or {})
    if stored != declared:
        problems.append(f"word pieces stored for {sorted(stored)} but declared for {sorted(declared)}")
    for key in sorted(stored):
        counts = arrays[pieces_prefix + key]
        if counts.shape != (n_chunks,):
            problems.append(f"word pieces {key} hold {len(counts)} counts, not one per chunk ({n_chunks})")
        elif n_chunks and counts.min() < 0:
            problems.append(f"word pieces {key} hold a negative count")
    return problems


def sample_rows(n: int, seed_text: str, size: int = SAMPLE) -> list[int]:
    """A seeded sample of ``size`` of ``range(n)`` (the seed from ``seed_text``: the same file, the same rows)."""
    if n <= size:
        return list(range(n))
    seed = int.from_bytes(seed_text.encode("utf-8")[:8].ljust(8, b"\0"), "little") ^ n
    return sorted(np.random.default_rng(seed).choice(n, size=size, replace=False).tolist())


def sampled_count_problems(what: str, texts: Sequence[str], stored, count: Callable[[list[str]], Sequence[int]],
                           seed_text: str) -> list[str]:
    """``[problem]`` when a seeded sample of ``texts`` counted again by ``count`` differs from ``stored``
    (or ``stored`` has not one count per text)."""
    stored = np.asarray(stored)
    if len(stored) != len(texts):
        return [f"{what}: {len(stored)} stored counts for {len(texts)} texts"]
    rows = sample_rows(len(texts), seed_text + what)
    if not rows:
        return []
    fresh = np.asarray(count([texts[i] for i in rows]), dtype=np.int64)
    differ = [i for i, value in zip(rows, fresh.tolist()) if int(stored[i]) != value]
    if differ:
        i = differ[0]
        return [f"{what}: {len(differ)} of {len(rows)} sampled counts differ from counting again "
                f"(text {i}: stored {int(stored[i])}, counted {int(fresh[rows.index(i)])})"]
    return []
