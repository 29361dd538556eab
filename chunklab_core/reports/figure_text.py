"""The caption and the alt text of every figure of the series, one entry per figure name.

Handles: :data:`FIGURES` (figure name -> :class:`FigureText`) and :func:`figure_text`, which
:func:`chunklab_core.reports.plots.show_figure` calls for the caption it prints under a figure
and the alt text the website writes into ``<img alt>``. The caption says what the figure shows
and how to read it; the alt text describes it for a reader who cannot see it (the kind of chart,
its axes, its panels and what its marks mean). Neither types a result: the numbers are in the
tables beside each figure. Not handled: drawing (each post's ``figures`` module).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FigureText:
    """A figure's caption (shown under it) and alt text (read out in its place)."""

    caption: str
    alt: str


FIGURES: dict[str, FigureText] = {
    "01_recall_at_k": FigureText(
        "recall@k of each chunking strategy under BM25 as k grows, with the 95% interval of each point as a band.",
        "Line chart: one line per chunking strategy, recall@k (share of questions with the answer in the top k) "
        "on the vertical axis against k on the horizontal axis, each line with a shaded 95% interval band."),
    "01_recall_vs_tokens": FigureText(
        "what each strategy finds against what it costs: recall@k against the mean tokens returned at the same k; "
        "a curve further up and to the left finds more for fewer tokens.",
        "Line chart on a logarithmic token axis: one curve per chunking strategy through k = 1 to 10, recall on the "
        "vertical axis against the mean number of tokens returned on the horizontal axis."),
    "01_chunk_sizes": FigureText(
        "how large each strategy's indexed chunks are, in tokens (box: middle half; whiskers and dots: the rest).",
        "Horizontal box plots on a logarithmic axis: one row per chunking strategy, the distribution of chunk "
        "sizes in tokens."),
    "02_matrix": FigureText(
        "each corpus read by the measure its gold supports (the axis names it), at k chunks: one row per chunking "
        "strategy, one marker per retriever with its 95% interval (documents resampled where questions share "
        "them); markers whose intervals overlap are not told apart by this figure (the paired verdicts are in the "
        "tables).",
        "Dot-and-whisker plots, one panel per corpus: chunking strategies as rows, the corpus's measure (containment "
        "recall or token span recall at k) on the horizontal axis, a circle for BM25, a square for dense and a "
        "triangle for hybrid retrieval, each with a horizontal 95% interval."),
    "02_recall_vs_tokens": FigureText(
        "each corpus's declared measure (containment recall, or token span recall where gold is a long span) "
        "within a context budget of cl100k_base tokens, one row per kind of document and one column per "
        "retriever, each point with its 95% interval; where a line flattens, more context stops paying. A budget "
        "where a strategy's first context overflows too often for the pool's fit rule is not drawn (not compared "
        "there).",
        "Small multiples: one row per corpus and one column per retriever, one line per chunking strategy, the "
        "corpus's measure on the vertical axis against the context budget in tokens on a logarithmic horizontal "
        "axis, each point with a vertical 95% interval bar."),
    "03_intervals": FigureText(
        "each strategy's score with its 95% bootstrap interval; overlapping intervals alone do not decide a "
        "comparison (the paired differences do).",
        "Dot-and-whisker plot: one row per strategy, the score as a dot and its 95% interval as a horizontal bar."),
    "03_width_vs_questions": FigureText(
        "how the interval narrows as questions are added: measured mean width against the square-root law.",
        "Log-log line chart: mean 95% interval width on the vertical axis against the number of questions, "
        "measured points beside the square-root law line."),
    "03_leader_probability": FigureText(
        "in simulation, the mean probability of being best that the truly better candidate gets, by the number "
        "of questions.",
        "Line chart: probability of being best of the truly better of two candidates on the vertical axis "
        "against the number of questions on the horizontal axis."),
    "04_overlap": FigureText(
        "how many of a question's words its passage shares, for people's questions and generated ones "
        "(cumulative share of questions).",
        "Cumulative distribution curves, one panel per corpus: word overlap between question and passage on the "
        "horizontal axis, share of questions on the vertical axis, one curve for human and one for generated "
        "questions."),
    "04_retrieval": FigureText(
        "generated minus human questions: the paired difference in retrieval score per cell, with its 95% "
        "interval; an interval right of 0 means generated questions are easier.",
        "Dot-and-whisker plot: one row per corpus, strategy and retriever, the paired difference as a dot with "
        "its 95% interval, a vertical line at 0."),
    "04_overlap_vs_advantage": FigureText(
        "each question's BM25 minus dense advantage against its word overlap, and the mean advantage per overlap "
        "bin with its 95% interval.",
        "Scatter plot per corpus: word overlap on the horizontal axis, BM25 minus dense score on the vertical "
        "axis, points coloured by question set, with binned means and intervals."),
    "05_pass_shares": FigureText(
        "share of answers passed per strategy, by each grader, with 95% intervals: where graders disagree, the "
        "markers of one strategy part.",
        "Dot-and-whisker plot, one panel per corpus: strategies on the vertical axis, share of answers passed on "
        "the horizontal axis, one marker shape per grader with its 95% interval."),
    "05_confusions": FigureText(
        "what each LLM judge said (columns) for each verdict of the rule-based reference grader (rows), as counts.",
        "Grid of count tables, one per judge: rows are the reference grader's verdicts, columns the judge's, "
        "each cell shaded by and labelled with its count."),
    "05_cost": FigureText(
        "median seconds per item in each stage (answering, each judge), one bar per corpus and strategy; "
        "descriptive timings without intervals.",
        "Stacked horizontal bar chart: one bar per corpus and strategy, segments for the median seconds of "
        "answering and of each judge."),
    "06_kappa": FigureText(
        "Cohen's kappa of each judge against the audit's grades, with 95% intervals: design-weighted for all of "
        "post 05's answers (filled) and on the sheet as drawn (open).",
        "Dot-and-whisker plot per scale: judges as rows, kappa on the horizontal axis with 95% intervals, filled "
        "markers for the population estimate and open ones for the sample."),
    "06_confusion": FigureText(
        "each judge's verdict (rows) against the audit's grade (columns), as counts on the graded sheet.",
        "Grid of count tables, one per judge: rows are the judge's verdicts, columns the audit's grades, each "
        "cell labelled with its count."),
    "06_accuracy": FigureText(
        "accuracy of post 05's answers estimated three ways per judge (judge only, grades only, the two "
        "combined by prediction-powered inference), with 95% intervals.",
        "Dot-and-whisker plot: judges as rows, accuracy on the horizontal axis, one marker per estimator with "
        "its 95% interval."),
    "06_paired": FigureText(
        "judge-only accuracy minus the accuracy by the audit's grades, paired, with 95% intervals: right of 0, "
        "the judge is lenient; left, strict.",
        "Dot-and-whisker plot: judges as rows, the paired difference on the horizontal axis with 95% intervals "
        "and a vertical line at 0, one marker per scale variant."),
    "06_judge_pairs": FigureText(
        "the judges' agreement with each other (Cohen's kappa on the binary scale), each pair with its 95% "
        "interval.",
        "Dot-and-whisker plot: one row per pair of judges, kappa on the horizontal axis with its 95% interval."),
    "07_depth": FigureText(
        "what reranking the first N candidates reaches (solid) against what it could reach, the first stage's "
        "hit@N (dashed), with the top k before reranking as a faint line.",
        "Line chart per sample: depth N on the horizontal axis, hit rate on the vertical axis, solid lines for "
        "after reranking, dashed for the ceiling, one colour per strategy."),
    "07_footprint": FigureText(
        "what each chunking strategy costs in the index: chunks, indexed tokens, duplication and index sizes "
        "(descriptive, no intervals).",
        "Small multiples, one row per corpus: bar charts of chunk count, indexed tokens, duplication and BM25 "
        "and vector index sizes per strategy."),
    "08_report_recall": FigureText(
        "Chroma's report re-run: the re-run's mean per chunker (bars, with a question-level interval) beside "
        "the two published tables (markers).",
        "Bar charts, one panel per metric: one bar per chunker with its interval, markers for the published "
        "values."),
    "08_builder": FigureText(
        "at the budget each retriever's setting is recommended at, every candidate's shortfall from the leader "
        "(leader minus candidate, with its paired 95% interval), one panel per kind of document; colour: "
        "verdict, marker: retriever.",
        "Forest plot, one panel per kind of document: candidates as rows, the leader-minus-candidate difference "
        "on the horizontal axis with 95% intervals, marker shape by retriever, colour by verdict, a vertical "
        "line at 0."),
}


def figure_text(name: str) -> FigureText:
    """The caption and alt text of the figure ``name`` (``KeyError`` naming this module when it has none)."""
    try:
        return FIGURES[name]
    except KeyError:
        raise KeyError(f"figure {name!r} has no caption and alt text: add it to "
                       "chunklab_core/reports/figure_text.py (FIGURES)") from None
