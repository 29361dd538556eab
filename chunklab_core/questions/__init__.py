"""Stage 9, questions: generated questions and whether they are fit to evaluate with.

Holds: the passages questions are generated from, the recorded generation, the checks on a
generated question, and retrieval scored on generated versus human questions. Not held:
post 04's tables and figures (``reports.post04``).
"""
