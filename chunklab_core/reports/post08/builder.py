"""Post 08, section 3: is my framework's default good enough? Library defaults against the series' strategies.

Handles: the builder section's views of the candidate pool (``reports.pool``, the computation
posts 02 and 00 read too): :func:`pool_compact` (one row per setting with each library
splitter's verdict at the recommended budget), :func:`pool_counts` and :func:`pool_text` (the
section's reading, then one sentence per setting, with the pick at each smaller budget).

Not handled: retrieval (``evaluation.matrix.run_matrix``), the figure (``post08.figures``), the
sentences (``post08.prose``).
"""

from __future__ import annotations

import pandas as pd

from chunklab_core.chunking import strategy_label
from chunklab_core.core import numbers
from chunklab_core.stats import claims

CELL = ["corpus", "retriever", "model"]



# ---------------------------------------------------------------- the candidate pool at matched cost
def pool_compact(table: pd.DataFrame, guide: pd.DataFrame) -> pd.DataFrame:
    """One row per setting of :func:`chunklab_core.reports.pool.setting_guide`: the setting, what to
    use at how many tokens, the verdict (decided or not), and per library splitter its verdict at
    that budget (``leader`` where it leads there) and, where the retriever embeds chunks, the share
    of its chunk word pieces the embedding model reads (``reads``); each library column's header says
    in how many settings it cannot be ruled out at the recommended budget."""
    from chunklab_core.reports import pool

    libraries = [s for s in pool.LIBRARY if s in set(table["strategy"])]
    decision = pool.margin_column("decision", pool.DEFAULT_MARGIN)  # the guide's rule: ±δ, both designs
    at = table.merge(guide[["corpus", "retriever", "model", "tokens"]], on=CELL)
    at = at[at["budget"] == at["tokens"]]
    compared = at[at[decision] != pool.DOES_NOT_FIT]
    kept = {name: int(((compared["strategy"] == name) & (compared[decision] != claims.RULED_OUT)).sum())
            for name in libraries}
    shown = {name: int((compared["strategy"] == name).sum()) for name in libraries}
    header = {name: f"{strategy_label(name)}, kept in {kept[name]} of {numbers.count(shown[name], 'setting')} compared"
              for name in libraries}
    rows = []
    for _, g in guide.iterrows():
        part = at[(at["corpus"] == g["corpus"]) & (at["retriever"] == g["retriever"]) & (at["model"] == g["model"])]
        record = {"setting": f"{g['sample']}, {g['retriever']}", "use": g["use"], "tokens": int(g["tokens"]),
                  "verdict": g["verdict"]}
        for name in libraries:
            found = part[part["strategy"] == name]
            word = "" if found.empty else found[decision].iloc[0]
            beyond = found["beyond window"].iloc[0] if len(found) and "beyond window" in found else float("nan")
            record[header[name]] = word + (f" · reads {numbers.number(1 - float(beyond), 0, scale='percent')}"
                                           if word and not pd.isna(beyond) else "")
        rows.append(record)
    return pd.DataFrame(rows)


def pool_counts(table: pd.DataFrame, guide: pd.DataFrame) -> dict[str, int]:
    """Counts for the builder's sentence: settings, library candidates at the recommended budgets,
    how many of them cannot be ruled out, settings a library splitter is recommended in, decided settings."""
    from chunklab_core.reports import pool

    at = table.merge(guide[["corpus", "retriever", "model", "tokens"]], on=CELL)
    at = at[(at["budget"] == at["tokens"]) & at["strategy"].isin(list(pool.LIBRARY))]
    compared = at[at["verdict"] != pool.DOES_NOT_FIT]
    decision = pool.margin_column("decision", pool.DEFAULT_MARGIN)
    words = compared[decision].value_counts() if decision in compared else pd.Series(dtype=int)
    defaults = [s for s, what in pool.LIBRARY.items() if what == pool.DOCUMENTED_DEFAULT]
    return {"settings": len(guide), "library": len(compared), "not compared": len(at) - len(compared),
            "kept": int((words.sum() - words.get(claims.RULED_OUT, 0)) if len(words) else 0),  # at ±δ, as the guide
            "equivalent": int(compared[pool.margin_column("decision", pool.DEFAULT_MARGIN)].isin(
                ["leader", "equivalent"]).sum()) if pool.margin_column("decision", pool.DEFAULT_MARGIN) in compared else 0,
            "library_used": int(guide["strategy"].isin(list(pool.LIBRARY)).sum()),
            "default_used": int(guide["strategy"].isin(defaults).sum()),
            "decided": int((guide["verdict"] == pool.DECIDED).sum()),
            "leads": int(words.get("leader", 0)), "equivalent at margin": int(words.get("equivalent", 0)),
            "undecided": int(words.get("undecided", 0)), "ruled out at margin": int(words.get("ruled out", 0))}


def pool_text(table: pd.DataFrame, guide: pd.DataFrame, csv: str, windows: dict | None = None) -> str:
    """The builder section's reading of the pool (template ``builder.md``), then one sentence per
    setting, then how to read them (``pool.rule_text``); ``windows``: each model's window in word pieces."""
    from chunklab_core.reports import pool
    from chunklab_core.reports.templates import Templates

    counts = pool_counts(table, guide)
    text = Templates(__file__, "builder.md").fill(
        "pool", settings=numbers.count(counts["settings"], "setting"),
        libraries=numbers.count(len([s for s in pool.LIBRARY if s in set(table["strategy"])]), "library splitter"),
        budgets=", ".join(f"{b:,}" for b in pool.BUDGETS), tokenizer=pool.TOKENIZER, kept=counts["kept"],
        library=counts["library"], not_compared=counts["not compared"],
        library_used=numbers.count(counts["library_used"], "setting"),
        default_used=numbers.count(counts["default_used"], "setting"),
        decided=numbers.count(counts["decided"], "setting"), equivalent=counts["equivalent"],
        margin=numbers.number(pool.DEFAULT_MARGIN, 2), csv=csv)
    sentences = pool.setting_sentences(guide, pool.budget_guide(table), windows=windows)
    return text + "\n\n" + "\n\n".join(sentences) + "\n\n" + pool.rule_text()


def answer(table: pd.DataFrame, guide: pd.DataFrame) -> str:
    """The post's answer in a paragraph (under 150 words), counted by :func:`pool_counts` from post 02's pool."""
    from chunklab_core.reports import pool
    from chunklab_core.reports.templates import Templates

    counts = pool_counts(table, guide)
    return Templates(__file__, "builder.md").fill(
        "answer", settings=numbers.count(counts["settings"], "setting"), leads=counts["leads"],
        library=counts["library"], equivalent=counts["equivalent at margin"], undecided=counts["undecided"],
        ruled_out=counts["ruled out at margin"], margin=numbers.number(pool.DEFAULT_MARGIN, 2),
        library_used=numbers.count(counts["library_used"], "setting"),
        default_used=numbers.count(counts["default_used"], "setting"))
