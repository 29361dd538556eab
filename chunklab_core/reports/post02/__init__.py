"""Post 02 (retrievers, long documents): the report package.

Modules: ``answer`` (the post's answer, first: the computation it needs, made once, and its
words, ``answer.md``), ``scope`` (questions searched within their document, ``scope.md``),
``tables`` (the tables the post shows and writes), ``intervals`` (the figures' means with 95%
intervals), ``figures`` (one panel per corpus in its measure, and the measure within a context
budget), ``prose`` (sentences about the corpora and the main tables, ``prose.md``), ``claims``
(readings and verdicts of the large tables, ``claims.md``), ``long_evidence`` (containment beside
token span recall, ``long_evidence.md``), ``structure`` (headings and one chunk per section,
``structure.md``), ``truncation`` (chunks cut by the embedding model, ``truncation.md``) and ``window``
(model or window: the second model cut to the first's window, ``window.md``).
Every corpus is named by its sample label (``reports.samples``).
"""
