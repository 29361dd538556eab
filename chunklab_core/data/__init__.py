"""Stage 1, data: where documents and questions come from.

Modules: ``registry`` (the data sets: download or mirror, checksums; ``chunklab-data``),
``squad`` (SQuAD v1.1 and its seeded sample), ``longdocs`` (NQ pages, CUAD, QASPER, Chroma's
corpora), ``corpora`` (the one corpus loader, by name), ``loaders`` and ``document_text``
(your own documents: .txt/.md/.docx/.html/.pdf with their headings), ``question_file``
(your questions file), ``gold_diagnosis`` and ``gold_advice`` (why a gold string is not
found, and what to change).

Not held: chunking (``chunking``), anything about retrieval or scores. Imports only ``core``.
"""
