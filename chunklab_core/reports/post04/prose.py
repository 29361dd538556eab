"""Post 04's sentences, built from its tables: what was generated, overlap, retrieval, trend, takeaways.

Handles: every paragraph the notebook shows between its tables (the generation counts and call
options, the per-corpus overlap verdicts, the retrieval comparison per corpus, the overlap →
BM25-advantage trend, the counts of validity checks, and the takeaways). A paired interval is
worded by :func:`interval_direction`, which asks :func:`chunklab_core.stats.claims.interval_side`
(the series' one test of "the interval excludes 0") on which side of 0 it lies, if any. Not handled:
computing the tables (``post04.study``, ``questions.retrieval_comparison``) or the claims about correlated
cells and flagged questions (``post04.claims``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from chunklab_core.reports.markdown import share
from chunklab_core.stats import claims


def interval_direction(low: float, high: float, above: str, below: str, neither: str) -> str:
    """``above`` when the interval [low, high] lies above 0, ``below`` when below, else ``neither``."""
    return {1: above, -1: below, 0: neither}[claims.interval_side(low, high)]


def separated_cells(group: pd.DataFrame) -> tuple[int, int]:
    """How many rows' paired intervals (``low``, ``high``) lie above 0 and how many below 0."""
    sides = [interval_direction(low, high, "above", "below", "") for low, high in zip(group["low"], group["high"])]
    return sides.count("above"), sides.count("below")


def generation_text(generations: pd.DataFrame, every_nq: bool) -> str:
    """Paragraphs per corpus, and the share of replies still unparsed after the retry."""
    counts = generations.groupby("corpus")["passage_id"].size()
    unparsed = int((generations["status"] != "ok").sum())
    return (f"{counts.get('squad', 0)} SQuAD paragraphs and {counts.get('nq', 0)} Natural Questions paragraphs"
            f"{' (every eligible one)' if every_nq else ''}. "
            f"Unparsed after the retry: {share(unparsed, len(generations))}; those passages keep their human "
            "question in the counts below but have no generated question to compare.")


def options_text(options: Mapping, system_prompt: str) -> str:
    """The options every generation call ran with, and the system prompt, quoted."""
    return (f"Options of every call: temperature {options['temperature']}, seed {options['seed']}, at most "
            f"{options['max_tokens']} tokens. The prompt (system message; the user message is `Passage:` followed by "
            "the passage):\n\n```text\n" + system_prompt + "\n```")


def overlap_text(overlap_summary: pd.DataFrame, overlap_paired: pd.DataFrame, corpus_labels: Mapping,
                 human_labels: Mapping) -> str:
    """One bullet per corpus: human and generated overlap with intervals, and the paired difference's verdict."""
    lines = []
    by_set = overlap_summary.set_index(["corpus", "set"])
    for row in overlap_paired.to_dict("records"):
        human, gen = by_set.loc[(row["corpus"], "human")], by_set.loc[(row["corpus"], "generated")]
        verdict = interval_direction(row["low"], row["high"], "generated questions copy more",
                                     "generated questions copy less",
                                     "not separable from the human questions' overlap")
        lines.append(f"* **{corpus_labels[row['corpus']]}**: {human_labels[row['corpus']]} "
                     f"{human['mean overlap']:.2f} [{human['low']:.2f}, {human['high']:.2f}], generated "
                     f"{gen['mean overlap']:.2f} [{gen['low']:.2f}, {gen['high']:.2f}]; paired over {row['passages']} "
                     f"passages, generated − human = {row['generated − human']:+.2f} [{row['low']:+.2f}, "
                     f"{row['high']:+.2f}]: {verdict}.")
    return "\n".join(lines)


def retrieval_text(comparison: pd.DataFrame, questions: pd.DataFrame, corpora: Mapping, retrievers: Sequence[str],
                   dense_model: str, answer_share: float, metric: str, corpus_labels: Mapping) -> str:
    """The retrieval set-up, then one bullet per corpus: the range of generated − human and the separated cells."""
    generated = questions[questions["set"] == "generated"]
    fallback = int((generated["relevance"] == "passage overlap").sum())
    lines = [f"Retrievers: {', '.join(retrievers)} ({dense_model} for dense); haystacks: "
             + ", ".join(f"{len(c.documents)} {name} documents" for name, c in corpora.items())
             + f". Relevant: a context holding at least {answer_share:.0%} of an answer occurrence. "
             f"Generated questions whose answer is not in their passage (lenient relevance): "
             f"{share(fallback, len(generated))}."]
    for corpus, group in comparison.groupby("corpus", sort=False):
        up, down = separated_cells(group)
        lines.append(f"* **{corpus_labels[corpus]}**: generated − human {metric} ranges from "
                     f"{group['generated − human'].min():+.2f} to {group['generated − human'].max():+.2f} over "
                     f"{len(group)} cells; the paired interval excludes 0 upwards in {up} and downwards in {down}.")
    return "\n".join(lines)


def trend_text(trend: pd.DataFrame, corpus_labels: Mapping) -> str:
    """One bullet per corpus (and pooled): the slope of BM25's advantage on overlap, with its verdict."""
    return "\n".join(
        f"* **{corpus_labels.get(r.corpus, 'Both corpora pooled')}** ({r.questions} questions, {r.passages} passages): "
        f"slope {r.slope:+.2f} [{r.low:+.2f}, {r.high:+.2f}]"
        + interval_direction(r.low, r.high, ": overlap predicts BM25's advantage.",
                             ": overlap predicts a *dense* advantage.",
                             ": no trend that this sample can separate from zero.")
        for r in trend.itertuples())


def flagged_generated(checks: pd.DataFrame, names: Sequence[str]) -> tuple[int, int]:
    """Generated questions on which at least one of the checks ``names`` fires, and all generated questions."""
    generated = checks[checks["set"] == "generated"]
    return int(generated[list(names)].any(axis=1).sum()), len(generated)


def check_count_text(checks: pd.DataFrame, name: str, has_examples: bool) -> str:
    """How many generated questions one check flags, leading into its examples when there are some."""
    generated = checks[checks["set"] == "generated"]
    return (f"**{name}**: {share(int(generated[name].sum()), len(generated))} generated questions"
            + (", for example:" if has_examples else "."))


def takeaways(overlap_paired: pd.DataFrame, comparison: pd.DataFrame, trend: pd.DataFrame | None, clean_text: str,
              flagged: tuple[int, int], metric: str, corpus_labels: Mapping, human_labels: Mapping) -> str:
    """The post's takeaways as bullets, each computed from a table above (``trend`` None: no BM25/dense trend)."""
    points = []
    for row in overlap_paired.to_dict("records"):
        points.append(f"On {corpus_labels[row['corpus']]} generated questions share "
                      f"{row['generated − human']:+.2f} [{row['low']:+.2f}, {row['high']:+.2f}] more of their words "
                      f"with the passage than {human_labels[row['corpus']]} do: "
                      + interval_direction(row["low"], row["high"], "a real gap.", "the generator copies less.",
                                           "no gap this sample can show."))
    for corpus, group in comparison.groupby("corpus", sort=False):
        up, down = separated_cells(group)
        points.append(f"On {corpus_labels[corpus]}, generated questions score higher than the human ones in {up} and "
                      f"lower in {down} of {len(group)} strategy × retriever cells (paired intervals excluding 0); "
                      f"mean difference {group['generated − human'].mean():+.2f} {metric}.")
    if trend is not None:
        pooled = trend[trend["corpus"] == "both"].iloc[0]
        points.append(f"Overlap against BM25's advantage over dense retrieval, both corpora pooled: slope "
                      f"{pooled['slope']:+.2f} [{pooled['low']:+.2f}, {pooled['high']:+.2f}] "
                      + interval_direction(pooled["low"], pooled["high"], "(BM25 gains where words are copied).",
                                           "(dense gains where words are copied).", "(not separable from zero)."))
    points.append("Without the generated questions a check flags: " + clean_text)
    points.append(f"At least one validity check fires on {share(*flagged)} generated questions, "
                  "and the rules miss whole kinds of error (above): read a sample before trusting a score computed "
                  "on generated questions, and on your own documents, where there is no human set, measure the "
                  "overlap anyway.")
    return "\n".join(f"* {p}" for p in points)
