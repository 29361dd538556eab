"""Stage 8, answers: answers generated from retrieved context, and how they are graded.

Modules: ``verdicts`` (the one verdict vocabulary: labels, pass/fail, binary labels, display
names), ``metrics`` (SQuAD EM/F1, ROUGE-L, grounding, numbers, abstention),
``reference_grader`` (the rule-based grader against the reference answers), ``probes``
(judge probes with a known right verdict), ``study`` (the answer study that records post 05's
answers and verdicts; ``chunklab-record-answers``).

Not held: the LLM backends (``llm``), the audit of the graders (``audit``), report tables
(``reports.post05``).
"""
