"""Stage 10, audit: grading samples of model output to check the LLM judges.

Modules: ``sheets`` and ``sheet_file`` (the grading sheet format; safe reading and writing with
a lock), ``terminal_grader`` (a person grades in the terminal, ``chunklab-grade``), ``grade_batch`` (grades written
by a model or a script, ``chunklab-grade-batch``), ``sample`` (the stratified blind sample),
``draw`` (drawing it from post 05's records, ``chunklab-audit-draw``), ``sizing`` (how many
items a precision target needs), ``topup`` (a second wave after the population grew),
``synthetic`` (an audit with a known truth, for tests and trying post 06), ``loading`` (reading a
graded sheet, its key and population, cross-checked; ``chunklab-blank-sheet``), ``graders``
(who graded: identity, adjudication, grader-vs-grader agreement, the words),
``paired`` (judge-only minus the accuracy by the grades, paired), ``bias`` (reference-grader advantage,
self-preference), ``retest`` (the judges again at temperature above 0, ``chunklab-judge-retest``).

Not held: post 06's tables and figures (``reports.post06``).
"""
