"""The tables and the page of ``chunklab-own answers`` (and the page writer ``chunklab-own audit`` shares).

Handles, from the item table of :func:`chunklab_core.own.answers.answer_items`:

* :func:`accuracy_table`: per cell and grader (each judge's verdict column and the reference
  grader), the share of answers graded correct (strict: ``correct`` or ``YES``; lenient also
  counts ``partial``) with a 95% percentile bootstrap interval over the questions
  (:func:`chunklab_core.stats.bootstrap.bootstrap_ci`; one answer per question and cell);
* :func:`cell_differences`: with several cells, each cell minus the first (the leader) by each
  grader, paired over the same questions (:func:`~chunklab_core.stats.bootstrap.paired_difference_ci`),
  worded by the series' one rule (:func:`chunklab_core.stats.claims.pair_verdict`);
* :func:`part_ways`: where retrieval and answer part ways, per cell and grader: the gold was
  retrieved (every slot in the top k) but the answer is not correct, and the gold was not
  retrieved but the answer is correct, with the two agreeing counts;
* :func:`cost_table`: calls, tokens in and out and model seconds per stage (answer, each judge),
  as recorded (a replay reports what the recording run paid);
* :func:`render_page`: sections (heading, prose, table) as Markdown and as HTML, every string
  HTML-escaped (``html.escape``; tables through ``DataFrame.to_html``, which escapes).

Not handled: running the models (``own.answers``), the audit (``own.audit``).
"""

from __future__ import annotations

import html
from typing import Sequence

import numpy as np
import pandas as pd

from chunklab_core.answers.verdicts import binary_scores, grader_name
from chunklab_core.core.csv_cells import frame_csv
from chunklab_core.stats.bootstrap import bootstrap_ci, paired_difference_ci
from chunklab_core.stats.claims import pair_verdict

REFERENCE_COLUMN = "reference_grader"


def graders(judge_columns: Sequence[str]) -> list[str]:
    """The verdict columns reported: every judge's, then the reference grader."""
    return [*judge_columns, REFERENCE_COLUMN]


def _wide(table: pd.DataFrame, column: str, lenient: bool) -> pd.DataFrame:
    """Questions x cells of 0/1 scores of ``column`` (complete questions only)."""
    scored = table.assign(score=binary_scores(table[column], lenient))
    wide = scored.pivot(index="qid", columns="strategy", values="score")
    return wide[list(dict.fromkeys(table["strategy"]))].dropna()


def accuracy_table(table: pd.DataFrame, judge_columns: Sequence[str], resamples: int = 10_000,
                   seed: int = 0) -> pd.DataFrame:
    """Per cell and grader: answers, strict and lenient accuracy, strict 95% interval (module docstring)."""
    rows = []
    for column in graders(judge_columns):
        strict, lenient = _wide(table, column, False), _wide(table, column, True)
        if strict.empty:
            continue
        interval = bootstrap_ci(strict.to_numpy(), resamples=resamples, seed=seed)
        for i, cell in enumerate(strict.columns):
            rows.append({"cell": cell, "grader": grader_name(column), "column": column,
                         "answers": int(len(strict)), "accuracy": float(interval.mean[i]),
                         "low": float(interval.low[i]), "high": float(interval.high[i]),
                         "lenient accuracy": float(lenient[cell].mean())})
    return pd.DataFrame(rows)


def cell_differences(table: pd.DataFrame, judge_columns: Sequence[str], resamples: int = 10_000,
                     seed: int = 0) -> pd.DataFrame:
    """Each cell minus the first cell, per grader, paired over questions; empty with one cell."""
    rows = []
    for column in graders(judge_columns):
        wide = _wide(table, column, False)
        if wide.shape[1] < 2 or len(wide) < 2:
            continue
        first = wide.columns[0]
        for cell in wide.columns[1:]:
            interval = paired_difference_ci(wide[cell].to_numpy(), wide[first].to_numpy(), resamples, seed)
            rows.append({"grader": grader_name(column), "cell": cell, "minus": first, "questions": len(wide),
                         "difference": float(interval.mean), "low": float(interval.low),
                         "high": float(interval.high),
                         "verdict": pair_verdict(cell, first, interval.low, interval.high)})
    return pd.DataFrame(rows)


def part_ways(table: pd.DataFrame, judge_columns: Sequence[str]) -> pd.DataFrame:
    """Per cell and grader: counts of (gold retrieved?, answer correct?) (module docstring)."""
    rows = []
    retrieved = table["passage_retrieved"].astype(bool).to_numpy()
    for column in graders(judge_columns):
        correct = binary_scores(table[column], False).astype(bool)
        for cell in dict.fromkeys(table["strategy"]):
            mine = (table["strategy"] == cell).to_numpy()
            r, c = retrieved[mine], correct[mine]
            rows.append({"cell": cell, "grader": grader_name(column), "answers": int(mine.sum()),
                         "retrieved, correct": int((r & c).sum()),
                         "retrieved, not correct": int((r & ~c).sum()),
                         "not retrieved, correct": int((~r & c).sum()),
                         "not retrieved, not correct": int((~r & ~c).sum())})
    return pd.DataFrame(rows)


def cost_table(table: pd.DataFrame) -> pd.DataFrame:
    """Per stage: calls, tokens in and out, seconds (total and per item) from the ``cost_*`` columns."""
    stages = sorted({c[len("cost_"):].rsplit("_", 1)[0].removesuffix("_tokens")
                     for c in table.columns if c.startswith("cost_") and c.endswith("_calls")})
    rows = []
    for stage in stages:
        get = lambda name: table.get(f"cost_{stage}_{name}", pd.Series(0.0, index=table.index)).fillna(0)  # noqa: E731
        seconds = get("seconds")
        rows.append({"stage": stage, "calls": int(get("calls").sum()), "tokens in": int(get("tokens_in").sum()),
                     "tokens out": int(get("tokens_out").sum()), "seconds": float(seconds.sum()),
                     "median seconds per item": float(np.median(seconds)) if len(seconds) else np.nan})
    return pd.DataFrame(rows)


def markdown_table(frame: pd.DataFrame, digits: int = 3) -> str:
    """A pipe table (pipes in cells escaped), floats to ``digits`` decimals."""
    def cell(value) -> str:
        if isinstance(value, (float, np.floating)):
            return "" if np.isnan(value) else f"{value:.{digits}f}"
        return str(value).replace("|", "\\|").replace("\n", " ")

    header = "| " + " | ".join(str(c) for c in frame.columns) + " |"
    rule = "|" + "---|" * len(frame.columns)
    body = ["| " + " | ".join(cell(v) for v in row) + " |" for row in frame.itertuples(index=False)]
    return "\n".join([header, rule, *body])


def render_page(title: str, sections: Sequence[tuple[str, str, pd.DataFrame | None]]) -> tuple[str, str]:
    """``(markdown, html)`` of a report: a title, then per section a heading, prose and a table.

    HTML: every string escaped with ``html.escape``; tables by ``DataFrame.to_html(escape=True)``.
    """
    md = [f"# {title}", ""]
    body = [f"<h1>{html.escape(title)}</h1>"]
    for heading, prose, frame in sections:
        md += [f"## {heading}", "", prose, ""]
        body += [f"<h2>{html.escape(heading)}</h2>"]
        body += [f"<p>{html.escape(p)}</p>" for p in prose.split("\n\n") if p.strip()]
        if frame is not None and len(frame):
            md += [markdown_table(frame), ""]
            body.append(frame.to_html(index=False, escape=True, float_format=lambda v: f"{v:.3f}", na_rep=""))
    style = ("body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;line-height:1.45}"
             "table{border-collapse:collapse;margin:0.5rem 0 1.5rem}td,th{border:1px solid #ccc;padding:2px 8px}")
    page = (f"<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{html.escape(title)}</title>"
            f"<style>{style}</style></head><body>" + "\n".join(body) + "</body></html>\n")
    return "\n".join(md), page


def model_identities(records_dir) -> dict[str, dict]:
    """Per records file (stage): the model identity of its last record (backend, model, sha256/digest)."""
    import json
    from pathlib import Path

    out = {}
    for path in sorted(Path(records_dir).glob("*.jsonl")):
        last = None
        with open(path, encoding="utf-8") as handle:
            for line in handle:
                if line.strip():
                    last = line
        if last:
            try:
                out[path.stem] = json.loads(last).get("identity", {})
            except ValueError:
                continue
    return out


def answers_sections(result, cells, resamples: int, seed: int, identities: dict, elapsed_s: float) -> tuple[list, dict]:
    """The report's sections and tables of an :class:`chunklab_core.own.answers.AnswerRun`."""
    table = result.table
    accuracy = accuracy_table(table, result.judge_columns, resamples, seed)
    differences = cell_differences(table, result.judge_columns, resamples, seed)
    ways = part_ways(table, result.judge_columns)
    cost = cost_table(table)
    who = "; ".join(f"{stage}: {ident.get('model')} ({ident.get('backend')}"
                    + (f", sha256 {ident['sha256'][:12]}…" if ident.get("sha256") else "")
                    + (f", digest {ident['digest'][:12]}" if ident.get("digest") else "") + ")"
                    for stage, ident in identities.items())
    coverage = (f"{result.complete_questions} of {result.planned_questions} planned questions answered and judged "
                f"({len(table)} answers) for {len(cells)} setting(s): {', '.join(dict.fromkeys(table['strategy']))}. "
                f"Models: {who or 'none recorded'}. The reference of every answer is the question's gold snippets "
                "(alternatives joined by ' OR ', every slot needed, joined by ' AND '): phrases copied from your documents, not written "
                "answers, so a right answer worded differently depends on the judge's tolerance, and the rule-based "
                "reference grader agrees with retrieval partly by construction. A judge that shares the answering "
                "model grades its own model's answers (self-preference is possible; the audit measures it).")
    strict = accuracy.sort_values(["cell", "grader"]) if len(accuracy) else accuracy
    acc_text = ("Share of answers graded correct (strict; YES counts as correct), 95% percentile bootstrap "
                "intervals over your questions; lenient also counts partial. "
                + "; ".join(f"{r['cell']} by {r['grader']}: {r['accuracy']:.3f} [{r['low']:.3f}, {r['high']:.3f}]"
                            for _, r in strict.iterrows()) + ".")
    diff_text = ("Each setting minus the first (the recommended one), paired over the same questions, worded by "
                 "the series' one rule." if len(differences) else
                 "One setting answered: nothing to compare (add --candidates to answer every setting that cannot "
                 "be ruled out).")
    ways_text = ("Where retrieval and the answer part ways: the gold was retrieved (every slot in the top k) but "
                 "the answer is not graded correct (the model failed to use it), or the gold was not retrieved "
                 "but the answer is graded correct (found elsewhere, or a lenient grader).")
    cost_text = (f"Model calls as recorded (a replay shows what the recording run paid). This command took "
                 f"{elapsed_s:.1f} s of wall time here, including retrieval.")
    sections = [("What was answered", coverage, None), ("Answer accuracy per setting and grader", acc_text, accuracy),
                ("Settings compared", diff_text, differences), ("Where retrieval and answer part ways", ways_text, ways),
                ("Cost", cost_text, cost)]
    return sections, {"accuracy": accuracy, "differences": differences, "part_ways": ways, "cost": cost}


def write_answers(out, result, cells, corpus, args, k: int, seed: int, models: dict, elapsed_s: float) -> None:
    """Write the tables, ``answers.json``, ``population.csv``, ``report.md``/``.html`` and ``summary.txt``
    into ``out`` (each atomically; ``records/`` is not touched)."""
    import json
    from pathlib import Path

    from chunklab_core.core.atomic_files import atomic_write_text
    from chunklab_core.own.answers import population

    out = Path(out)
    identities = model_identities(out / "records")
    sections, tables = answers_sections(result, cells, args.resamples, 0, identities, elapsed_s)
    csv = lambda frame: frame_csv(frame, index=False)  # noqa: E731  (no formula cell, CR/LF quoted)
    atomic_write_text(out / "answers.csv", csv(result.table))
    atomic_write_text(out / "population.csv", csv(population(result)))
    for name, frame in tables.items():
        atomic_write_text(out / f"{name}.csv", csv(frame))
    manifest = {"docs": str(Path(args.docs).resolve()), "questions": str(Path(args.questions).resolve()),
                "cells": [list(c) for c in cells], "k": k, "seed": seed, "n_questions": args.n_questions,
                "planned_questions": result.planned_questions, "complete_questions": result.complete_questions,
                "answers": len(result.table), "backend": args.backend, "models": identities,
                "judge_columns": result.judge_columns, "yesno_columns": result.yesno_columns,
                "mode": "replay" if args.replay else "replay_or_record", "seconds": round(elapsed_s, 1),
                "new_calls": sum(getattr(getattr(m, "recorded", m), "new_calls", 0) for m in models.values())}
    atomic_write_text(out / "answers.json", json.dumps(manifest, indent=2, ensure_ascii=False) + "\n")
    markdown, page = render_page("Are the answers on your documents right?", sections)
    atomic_write_text(out / "report.md", markdown + "\n")
    atomic_write_text(out / "report.html", page)
    accuracy = tables["accuracy"]
    lines = [sections[0][1], ""]
    lines += [f"  {r['cell']:<40} {r['grader']:<28} {r['accuracy']:.3f} [{r['low']:.3f}, {r['high']:.3f}]"
              for _, r in accuracy.iterrows()]
    lines += ["", f"{manifest['new_calls']} new model call(s) this run; report: {out / 'report.html'}",
              f"next: chunklab-own audit draw --answers {out}"]
    atomic_write_text(out / "summary.txt", "\n".join(lines) + "\n")
