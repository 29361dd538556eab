"""Post 02 (retrievers, long documents): the report package.

Modules: ``tables`` (the tables the post shows and writes), ``figures`` (its heatmaps and
token curves), ``prose`` (sentences about the corpora and the main tables, ``prose.md``),
``claims`` (readings and verdicts of the large tables, ``claims.md``), ``long_evidence``
(containment beside token span recall, ``long_evidence.md``), ``structure`` (headings and one
chunk per section, ``structure.md``), ``truncation`` (chunks cut by the embedding model,
``truncation.md``) and ``window`` (model or window: the second model cut to the first's window,
``window.md``). Every corpus is named by its sample label (``reports.samples``).
"""
