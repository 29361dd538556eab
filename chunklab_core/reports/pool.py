"""The candidate pool in words: the sentences, views and texts posts 02, 08 and 00 show.

The computation lives in the decision stage (``chunklab_core.decision``: the pool and its
budgets in ``decision.candidates``, the per-question scores at matched cost and the window
facts in ``decision.scores``, the verdicts, equivalence at the margin δ and the budget rule in
``decision.engine``, the per-budget and per-setting views in ``decision.guide``), the same one
chunklab-own decides with; this module re-exports what the posts read and words it. Handles:

* :func:`pool_tables`: the engine run over a matrix (the one computation post 02 makes and posts
  08 and 00 read back from its CSVs, :func:`committed_tables`);
* :func:`setting_sentences`: one sentence per setting (templates ``pool.md``), the pick at every
  budget first, then the recommended budget, its equivalents within ±δ, its verdict, the window
  share of a pick or equivalent the model reads less than 80% of, and the fit rule generated from
  ``FIT_SHARE``; :func:`compact_guide` the table a builder scans; :func:`rule_text` the rules
  in words (margin, simplicity order, fit share, floor, measures' token units);
* :func:`measure_table`, :func:`depth_text`, :func:`measures_text`: the measure per corpus and the
  recorded depth in words.

Not handled: any number (the decision stage computes every one).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Mapping, Sequence

import pandas as pd

from chunklab_core.chunking import strategy_label
from chunklab_core.core import numbers
from chunklab_core.core.csv_cells import read_frame
from chunklab_core.decision.candidates import (BUDGETS, COLUMNS, DOCUMENTED_DEFAULT, LIBRARY, MEASURE_NAMES,  # noqa: F401
                                               MEASURE_UNITS, MEASURES, POOL, SERIES, SIMPLICITY_WORDS, TOKENIZER,
                                               candidates, measure_of)
from chunklab_core.decision.engine import (BELOW_FLOOR, DECIDED, DOES_NOT_FIT, FIT_SHARE, FLOOR,  # noqa: F401
                                           LIST_SEPARATOR, SETTING, UNDECIDED, candidate_name, margin_column)
from chunklab_core.decision.guide import READ_SHARE, budget_guide, robustness, setting_guide  # noqa: F401
from chunklab_core.decision.margin import DEFAULT_MARGIN
from chunklab_core.decision.scores import (beyond_window, budget_per_question, budget_scores, chunk_facts,  # noqa: F401
                                           model_window,
                                           extend, fixed_k_per_question, window_share)
from chunklab_core.reports import samples
from chunklab_core.reports.templates import Templates

COMPACT_NAMES = 1  # a compact sentence names this many equivalents, then counts the rest (the CSV lists them)
FEW_DOCUMENTS = 10  # below this many documents the document-resampled interval is unreliable (post 03)
PROSE = Templates(__file__, "pool.md")


REASONS = ("reason.short", "reason.long")  # the templates decision.candidates.MEASURES names


def measure_table(corpora: Sequence[str] | None = None) -> pd.DataFrame:
    """corpus, measure (the one that decides), shown beside (the other), reason."""
    names = list(corpora) if corpora is not None else list(MEASURES)
    rows = []
    for name in names:
        measure = measure_of(name)
        other = "span" if measure == "containment" else "containment"
        rows.append({"corpus": name, "measure": MEASURE_NAMES[measure], "shown beside": MEASURE_NAMES[other],
                     "reason": PROSE.fill(REASONS[REASONS.index(MEASURES[name][1])]),
                     "unit": MEASURE_UNITS[measure]})
    return pd.DataFrame(rows)


def check_measures(computed: pd.DataFrame) -> list[str]:
    """Corpora where post 02's data-driven choice (``long_evidence.corpus_measures``: column
    ``measure``) differs from the declared one; empty when they agree."""
    return [row["corpus"] for _, row in computed.iterrows()
            if row["corpus"] in MEASURES and row["measure"] != measure_of(row["corpus"])]


def label_of(samples_of: Mapping[str, str] | None):
    """The engine's sample namer: the label given for a corpus (with how many questions have gold
    when fewer than all), else ``samples.sample_label``."""
    def name(corpus: str, questions: int, documents: int, total: int) -> str:
        given = (samples_of or {}).get(corpus)
        if not given:
            return samples.sample_label(corpus, questions, documents)
        return given + (f" ({questions:,} with gold)" if total != questions else "")
    return name


def setting_table(budgets: pd.DataFrame, fixed, facts, k: int, resamples: int, seed: int,
                  samples_of: Mapping[str, str] | None = None, source: str = "pool",
                  margin: float = DEFAULT_MARGIN) -> pd.DataFrame:
    """``decision.engine.setting_table`` with each corpus named by its sample label."""
    from chunklab_core.decision import engine

    return engine.setting_table(budgets, fixed, facts, k, resamples, seed, label_of(samples_of), source, margin)


def pool_tables(matrix, model: str, k: int, resamples: int, seed: int, labels: Mapping[str, str] | None = None,
                budgets: Sequence[int] = BUDGETS, source: str = "pool",
                margin: float = DEFAULT_MARGIN) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(the engine's long table, its setting guide) of the pool's runs of ``matrix`` for ``model``:
    the one computation post 02 makes and posts 08 and 00 read (:func:`budget_guide` of the first
    is the per-budget view, :func:`robustness` the margins' table)."""
    chunks = {key: value for key, value in matrix.chunks.items() if key[1] in POOL}
    facts = chunk_facts(type(matrix)(matrix.per_question, matrix.runs, chunks, matrix.truncated), model)
    scores = budget_per_question(matrix, model, budgets, strategies=POOL)
    fixed = fixed_k_per_question(matrix, model, k)
    table = setting_table(scores, fixed, facts, k, resamples, seed, labels, source, margin)
    return table, setting_guide(table, margin)


def depth_report(table: pd.DataFrame) -> pd.DataFrame:
    """The (setting, strategy, budget) rows where the recorded depth ended some question's
    reading before its budget was spent (``depth binds`` > 0)."""
    return table.loc[table["depth binds"] > 0, ["corpus", "retriever", "strategy", "budget", "depth binds"]]


def _listed(value) -> str:
    """A list cell as text ("" for an empty cell read back from a CSV as NaN)."""
    return "" if value is None or (isinstance(value, float) and math.isnan(value)) else str(value)


def _flag(value) -> bool:
    from chunklab_core.decision.guide import _flag as flag

    return flag(value)


def fit_rule() -> str:
    """The fit rule in words, generated from ``FIT_SHARE``."""
    return PROSE.fill("rule.fit", share=numbers.number(FIT_SHARE, 0, scale="percent"),
                      rest=numbers.number(1 - FIT_SHARE, 0, scale="percent"))


def settle_counts(guide: pd.DataFrame) -> list[int | None]:
    """The questions that would settle each undecided setting of ``guide`` at its margin (its
    ``what would decide``, from ``decision.margin.questions_to_settle``); None: more than the cap."""
    out = []
    for _, row in guide[guide["verdict"] == UNDECIDED].iterrows():
        text = str(row["what would decide"]).replace(",", "")
        out.append(int(text) if text.isdigit() else None)
    return out


def margin_text(guide: pd.DataFrame, margin: float = DEFAULT_MARGIN) -> str:
    """Why δ, beside what it costs: the margin's reason (a difference a builder would notice,
    ``decision.margin``) and, computed from ``guide`` (:func:`setting_guide` at ``margin``), how
    many questions the undecided settings would need to be settled at it, against those measured."""
    needed = settle_counts(guide)
    per_hundred = numbers.number(margin * 100, 0)
    if not needed:
        return PROSE.fill("margin.why.settled", margin=numbers.number(margin, 2), per_hundred=per_hundred,
                          settings=numbers.count(len(guide), "setting"))
    undecided = guide[guide["verdict"] == UNDECIDED]
    pairs = [(n, int(q)) for n, q in zip(needed, undecided["questions"]) if n is not None]
    capped = len(needed) - len(pairs)
    parts = [f"about {min(n for n, _ in pairs):,} to {max(n for n, _ in pairs):,}" if pairs else "",
             f"{capped} more than 100,000" if capped else ""]
    ratios = [n / q for n, q in pairs]
    from chunklab_core.decision.margin import SETTLE_POWER

    return PROSE.fill("margin.why", margin=numbers.number(margin, 2), per_hundred=per_hundred,
                      power=numbers.number(SETTLE_POWER, 0, scale="percent"),
                      undecided=numbers.count(len(needed), "undecided setting"), settings=len(guide),
                      needed=", ".join(p for p in parts if p),
                      measured=f"{int(undecided['questions'].min()):,} to {int(undecided['questions'].max()):,}",
                      times=(numbers.span(min(ratios), max(ratios), 1) if ratios else "unknown"))


def rule_text(margin: float = DEFAULT_MARGIN, short: bool = False, guide: pd.DataFrame | None = None) -> str:
    """How to read the guide: the margin, equivalence, the simplicity order, the budget rule, fit,
    floor, windows and the token unit of each measure (``short``: the note post 00 shows, pointing
    to post 02 and docs/decision.md for the rest); with ``guide``, the margin's reason and the
    questions it would take to settle the undecided settings follow (:func:`margin_text`)."""
    why = (" " + margin_text(guide, margin)) if guide is not None else ""
    if short:
        return PROSE.fill("rule.short", margin=numbers.number(margin, 2), tokenizer=TOKENIZER,
                          smallest=f"{min(BUDGETS):,}", largest=f"{max(BUDGETS):,}") + why
    units = "; ".join(f"{MEASURE_NAMES[m]}: {MEASURE_UNITS[m]}" for m in MEASURE_NAMES)
    from chunklab_core.decision.margin import TOST_ALPHA

    return PROSE.fill("rule", margin=numbers.number(margin, 2), alpha=numbers.number(TOST_ALPHA, 1, scale="percent"), half=numbers.number(margin / 2, 3),
                      double=numbers.number(margin * 2, 2), order=SIMPLICITY_WORDS, fit=fit_rule(),
                      floor=numbers.number(FLOOR, 2), read=numbers.number(READ_SHARE, 0, scale="percent"),
                      tokenizer=TOKENIZER, smallest=f"{min(BUDGETS):,}", largest=f"{max(BUDGETS):,}",
                      units=units) + why


def _setting_name(row) -> str:
    from chunklab_core.retrieval.registry import setting_name

    return f"{row['sample']}, {setting_name(row['retriever'], row['model'])}"


def _window_note(row, window) -> str:
    below = _listed(row.get("reads below", ""))
    if not below:
        return ""
    return " " + PROSE.fill("use.reads", names=below, window=window,
                            read=numbers.number(READ_SHARE, 0, scale="percent"))


def setting_sentences(guide: pd.DataFrame, budgets: pd.DataFrame | None = None, margin: float = DEFAULT_MARGIN,
                      windows: Mapping[str, int] | None = None, compact: bool = False) -> list[str]:
    """One sentence per setting of ``setting_guide`` (templates ``pool.md``): unless ``compact``,
    the pick at every budget first (``budgets``, :func:`budget_guide`), then the recommended
    budget, its pick and equivalents, the verdict, and the notes (still rising, window share,
    fit, few documents). ``windows``: each model's window in word pieces, named beside a window share."""
    out = []
    for _, row in guide.iterrows():
        setting = row["retriever"] if compact else _setting_name(row)
        lead = ""
        if not compact and budgets is not None and not budgets.empty:
            here = budgets[(budgets["corpus"] == row["corpus"]) & (budgets["retriever"] == row["retriever"])
                           & (budgets["model"] == row["model"])].sort_values("budget")
            lead = PROSE.fill("budget.picks", parts="; ".join(
                f"{int(b['budget']):,}: {b['use']} ({numbers.number(b['score'])}, {b['verdict']})"
                for _, b in here.iterrows())) + " "
        if row["verdict"] == BELOW_FLOOR:
            out.append(lead + PROSE.fill("floor", setting=setting, tokens=f"{int(row['tokens']):,}",
                                         floor=numbers.number(FLOOR, 2), measure=row["measure"], use=row["use"],
                                         score=numbers.number(row["score"])))
            continue
        equivalents = _listed(row["equivalents"])
        if compact and equivalents.count(LIST_SEPARATOR) >= COMPACT_NAMES:
            named = equivalents.split(LIST_SEPARATOR)
            equivalents = PROSE.fill("use.more", names=LIST_SEPARATOR.join(named[:COMPACT_NAMES]),
                                     more=len(named) - COMPACT_NAMES)
        ties = _listed(row["ties"])  # identical on every question: equivalent too, listed as such
        good = (PROSE.fill("use.equivalent", names=equivalents, margin=numbers.number(margin, 2)) if equivalents
                else "" if ties else PROSE.fill("use.alone", margin=numbers.number(margin, 2)))
        if ties:
            good += PROSE.fill("use.ties", names=ties)
        verdict = (PROSE.fill("use.decided") if row["verdict"] == DECIDED
                   else PROSE.fill("use.undecided.short" if compact else "use.undecided",
                                   questions=row["what would decide"], margin=numbers.number(margin, 2)))
        notes = ""
        if _flag(row.get("still rising")):
            notes += " " + PROSE.fill("use.rising.short" if compact else "use.rising", tokens=f"{int(row['tokens']):,}",
                                      gain=numbers.number(row["last gain"], signed=True))
        if float(row.get("depth binds", 0) or 0) > 0:
            notes += " " + PROSE.fill("use.depth.short" if compact else "use.depth",
                                      share=numbers.number(row["depth binds"], 0, scale="percent"))
        window = (windows or {}).get(row["model"])
        notes += _window_note(row, f"{window:,}" if window else "the model's")
        if not compact and _listed(row.get("does not fit", "")):
            notes += " " + PROSE.fill("use.fit", names=_listed(row["does not fit"]), tokens=f"{int(row['tokens']):,}")
        if few_documents(row):  # the compact sentence (post 00) keeps the caveat its source (post 02) states
            notes += " " + PROSE.fill("use.few.short" if compact else "use.few", documents=int(row["documents"]),
                                      few=FEW_DOCUMENTS)
        out.append(lead + PROSE.fill("use.short" if compact else "use", setting=setting, use=row["use"], tokens=f"{int(row['tokens']):,}",
                                     measure=row["measure"], score=numbers.number(row["score"]), good=good,
                                     verdict=verdict, notes=notes))
    return out


def few_documents(row) -> bool:
    """True when a setting rests on fewer than :data:`FEW_DOCUMENTS` documents resampled as clusters
    (its document-resampled interval is unreliable, post 03): every view of the setting says so."""
    return int(row["documents"]) < FEW_DOCUMENTS and str(row["design"]).startswith("documents")


FLOOR_MARK = f" ({BELOW_FLOOR})"  # after a budget's pick whose leader scores under FLOOR, in every table of picks


def floor_marks(guide: pd.DataFrame, budgets: pd.DataFrame) -> dict[tuple, set[int]]:
    """Per setting (corpus, retriever, model) of ``guide``: the budgets whose verdict in ``budgets``
    (:func:`budget_guide`) is below floor, the same verdict post 02's sentences print beside each pick."""
    below = budgets[budgets["verdict"] == BELOW_FLOOR]
    return {keys: set(int(b) for b in part["budget"]) for keys, part in below.groupby(SETTING, sort=False)}


def compact_guide(guide: pd.DataFrame, budgets: pd.DataFrame | None = None) -> pd.DataFrame:
    """The guide as a builder scans it: setting, the pick at every budget (``at B``, marked
    :data:`FLOOR_MARK` where that budget is below floor: ``budgets``, :func:`budget_guide`, is
    needed for the marks), then the recommended budget, its pick, its equivalents and the verdict."""
    from chunklab_core.retrieval.registry import setting_name

    table = pd.DataFrame({"setting": [f"{s}, {setting_name(r, m)}" for s, r, m in
                                      zip(guide["sample"], guide["retriever"], guide["model"])]})
    marks = floor_marks(guide, budgets) if budgets is not None and not budgets.empty else {}
    keys = list(zip(*(guide[c] for c in SETTING)))
    for column in [c for c in guide.columns if c.startswith("at ") and c[3:].replace(",", "").isdigit()]:
        budget = int(column[3:].replace(",", ""))
        table[column] = [_listed(v) + (FLOOR_MARK if _listed(v) and budget in marks.get(k, ()) else "")
                         for v, k in zip(guide[column], keys)]
    table["use"] = guide["use"].to_numpy()
    table["tokens"] = guide["tokens"].to_numpy()
    table["equivalents"] = guide["equivalents"].map(_listed).to_numpy()
    table["verdict"] = guide["verdict"].to_numpy()
    return table


def robustness_view(table: pd.DataFrame, margin: float = DEFAULT_MARGIN) -> pd.DataFrame:
    """:func:`robustness` with each margin named (0: the rule before a margin was declared)."""
    found = robustness(table, margin)
    names = {0.0: "no margin: the rule before", round(margin / 2, 6): "δ/2", round(margin, 6): "δ",
             round(margin * 2, 6): "2δ"}
    return found.assign(margin=[f"{m:g} ({names.get(round(m, 6), '')})".replace(" ()", "") for m in found["margin"]])


def committed_tables(data_dir=None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(``02_pool.csv``, ``02_pool_guide.csv``) as post 02 wrote them (``data_dir``, default
    ``data/``): what post 08's builder section shows, so the two posts cannot differ."""
    from chunklab_core.core.paths import DATA_DIR

    folder = Path(data_dir) if data_dir is not None else DATA_DIR
    missing = [name for name in ("02_pool.csv", "02_pool_guide.csv") if not (folder / name).exists()]
    if missing:
        raise FileNotFoundError(f"{', '.join(missing)} missing in {folder}: execute post 02 first "
                                f"(make notebooks/02_retrievers.ipynb)")
    return (read_frame(folder / "02_pool.csv", keep_default_na=False, na_values=[""]),
            read_frame(folder / "02_pool_guide.csv", keep_default_na=False, na_values=[""]))


def measures_view(corpora: Sequence[str], labels: Mapping[str, str] | None = None) -> pd.DataFrame:
    """:func:`measure_table` with each corpus named by its sample label."""
    table = measure_table(corpora)
    return table.assign(corpus=[(labels or {}).get(c, c) for c in table["corpus"]])


def depth_text(table: pd.DataFrame, depth: int) -> str:
    """Whether the recorded depth fills every budget (:func:`depth_report`), naming the cells where it does not."""
    binds = depth_report(table)
    if binds.empty:
        return PROSE.fill("depth.fills", depth=depth)
    names = [f"{strategy_label(r['strategy'])} at {int(r['budget']):,} tokens ({r['corpus']}, {r['retriever']}: "
             f"{numbers.number(r['depth binds'], 1, scale='percent')} of its questions)" for _, r in binds.iterrows()]
    return PROSE.fill("depth.binds", depth=depth, cells=numbers.count(len(binds), "cell"), names="; ".join(names))


def measures_text(computed: pd.DataFrame, labels: Mapping[str, str] | None = None) -> str:
    """Whether post 02's data-driven measure per corpus (:func:`check_measures`) agrees with the declared one."""
    differ = check_measures(computed)
    if not differ:
        return PROSE.fill("measures.agree")
    return PROSE.fill("measures.differ", names=", ".join((labels or {}).get(c, c) for c in differ))
