"""Post 01 (the SQuAD chunking benchmark): the benchmark run, its tables, its figures and its sentences.

Modules: ``benchmark`` (the seeded sample, every strategy under one retriever, the recall@k
leader's paired verdicts, answers cut by chunk boundaries, the larger sample's verdicts),
``tables`` (the tables the post shows and writes), ``figures`` (recall at k, recall against
returned tokens, chunk sizes) and ``prose`` with its templates ``prose.md`` (the sentences
between the tables).
"""
