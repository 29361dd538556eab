"""Stage 9, questions: generated questions and whether they are fit to evaluate with.

Modules: ``passages`` (the passages questions are generated from), ``generation`` (the
recorded generation; ``chunklab-record-questions``), ``checks`` (what is wrong with a
generated question), ``retrieval_comparison`` (retrieval scored on generated versus
human questions about the same passages).

Not held: post 04's tables and figures (``reports.post04``).
"""
