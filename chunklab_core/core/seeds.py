"""The series' one default seed.

Every seeded draw of the series (the SQuAD sample, subsamples of long documents, the
questions post 04 generates from, the reranking slice, the audit's study items) defaults to
this one value, so "the post-01 sample" means the same 800 questions everywhere. Pass another
seed explicitly to draw a different sample.
"""

DEFAULT_SEED = 20260729
