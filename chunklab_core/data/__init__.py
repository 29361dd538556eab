"""Stage 1, data: where documents and questions come from.

Holds: the data-set registry (download or mirror, checksums), SQuAD, the long-document
corpora (CUAD, NQ, ...), the reader of your own documents (.txt/.md/.docx/.html/.pdf with
their headings) and questions file, and validation advice on gold strings. Not held:
chunking (``chunking``), anything about retrieval or scores. Imports only ``core``.
"""
