"""Stage 0, core: what every stage shares and no stage owns.

Holds: project paths, text normalisation and sentence splitting, token counts, the corpus
model (documents, questions, chunks), the heading model shared by every document format,
atomic file writes, file snapshots (what changed under a folder), fuzzy text matching,
library versions. Holds nothing that knows about a data set, a chunker, a retriever, a metric
or a report; imports no other stage.
"""
