"""Stage 8, answers: answers generated from retrieved context, and how they are graded.

Holds: answer metrics (token F1, exact match, containment), the reference grader, judge
probes, the answer study that records post 05's answers and verdicts, and the one verdict
vocabulary (``verdicts``: labels, pass/fail, the binary scale, display names, confusion tables). Not held: the LLM
backends (``llm``), the audit of the graders (``audit``), report tables (``reports.post05``).
"""
