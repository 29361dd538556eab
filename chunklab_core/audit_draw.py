"""Drawing post 06's hand-grading sample from post 05's recorded answers.

Handles: the population table (every answered item of the recorded post-05 study with its
verdicts and the reference passage a grader reads), and the CLI that writes the population,
the blind sheet and the key under ``data/audit/`` with :func:`audit_sample.draw_audit_sample`
(strata: the graders' pass/fail patterns, disagreements oversampled).
It refuses to overwrite a sheet that already holds grades.

CLI: ``python -m chunklab_core.audit_draw [--n 48] [--seed 6] [--out data/audit]``.

The reference passage is the paragraph holding the gold answer: for SQuAD the paragraph of
the question's evidence span, for Natural Questions the paragraph around the first verbatim
occurrence of the gold answer (cut to :data:`MAX_PASSAGE` characters around it); when the
gold is nowhere in the page, the first retrieved context, marked as such.
Not handled: grading (``grade``), the analysis (``audit_report``).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from .corpus import Corpus, Question
from .paths import DATA_DIR

MAX_PASSAGE = 1500
POPULATION_COLUMNS = ["item_id", "corpus", "qid", "strategy", "question", "reference", "answer",
                      "judge_qwen15_3way", "judge_qwen15_yesno", "judge_qwen05_3way",
                      "reference_grader", "passage"]


def _paragraph_around(text: str, start: int, end: int) -> str:
    """The blank-line- or newline-delimited paragraph holding ``text[start:end]``, capped."""
    left = max(text.rfind("\n\n", 0, start), text.rfind("\n", 0, start))
    right_candidates = [i for i in (text.find("\n", end),) if i >= 0]
    right = min(right_candidates) if right_candidates else len(text)
    left = left + 1 if left >= 0 else 0
    if right - left > MAX_PASSAGE:
        half = (MAX_PASSAGE - (end - start)) // 2
        left, right = max(left, start - half), min(right, end + half)
    return text[left:right].strip()


def reference_passage(corpus: Corpus, question: Question, fallback: str = "") -> str:
    """The passage holding the question's gold answer (see the module docstring)."""
    from .longdocs import locate

    document = corpus.doc(question.doc_id)
    if question.evidence_spans:
        _, start, end = question.evidence_spans[0]
        return _paragraph_around(document.text, start, end)
    for answer in question.answers:
        spots = locate(document.text, answer) if answer.strip() else []
        if spots:
            return _paragraph_around(document.text, *spots[0])
    return f"(gold answer not found in the page; first retrieved context) {fallback}"


def population_table(study, corpora: dict) -> pd.DataFrame:
    """Post 05's items with verdicts and reference passage, in :data:`POPULATION_COLUMNS`."""
    table = study.table.copy()
    passages = []
    for corpus_name, qid, contexts in zip(table["corpus"], table["qid"], table["contexts"]):
        corpus = corpora[corpus_name][0]
        question = next(q for q in corpus.questions if q.qid == qid)
        passages.append(reference_passage(corpus, question, contexts[0] if contexts else ""))
    table["passage"] = passages
    return table[POPULATION_COLUMNS].reset_index(drop=True)


def main(argv: list[str] | None = None) -> int:
    from .answer_study import DEFAULT_STRATEGIES, load_study, study_corpus
    from .llm.wiring import make_models
    from .audit_sample import draw_audit_sample
    from .sheets import read_sheet, write_key, write_sheet

    parser = argparse.ArgumentParser(description="Draw post 06's blind hand-grading sample.")
    parser.add_argument("--n", type=int, default=48)
    parser.add_argument("--seed", type=int, default=6)
    parser.add_argument("--out", type=Path, default=DATA_DIR / "audit")
    parser.add_argument("--squad-questions", type=int, default=200)
    parser.add_argument("--nq-questions", type=int, default=20)
    parser.add_argument("--study-seed", type=int, default=20260729)
    parser.add_argument("--force", action="store_true", help="overwrite an ungraded sheet")
    args = parser.parse_args(argv)
    sheet_path = args.out / "post05_sheet.csv"
    if sheet_path.exists():
        _, rows = read_sheet(sheet_path)
        graded = sum(bool(r.get("grade", "").strip()) for r in rows)
        if graded or not args.force:
            raise SystemExit(f"{sheet_path} exists ({graded} graded rows); it is never overwritten "
                             "with grades in it, and an ungraded one only with --force")
    corpora = {"squad": (study_corpus("squad"), args.squad_questions),
               "nq": (study_corpus("nq"), args.nq_questions)}
    study = load_study(corpora, DEFAULT_STRATEGIES, args.study_seed, make_models(mode="replay"))
    population = population_table(study, corpora)
    sheet, key = draw_audit_sample(population, args.n, seed=args.seed, scale="pass/fail")
    args.out.mkdir(parents=True, exist_ok=True)
    # the passages are dataset text: only the sampled ones (in the sheet) are committed
    population.drop(columns="passage").to_csv(args.out / "post05_population.csv", index=False,
                                              lineterminator="\n")
    write_key(key, args.out / "post05_key.csv")
    write_sheet(sheet, sheet_path)
    print(f"population: {len(population)} items; sheet: {sheet_path} ({len(sheet)} items); "
          f"key: {args.out / 'post05_key.csv'} (keep it away from the grader)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
