"""Stage 3, retrieval: from chunks and a question to a ranked list.

Holds: BM25, dense (sentence-transformers, with the embedding cache, the ONNX export and the
assembly of the shipped models), hybrid (RRF), top-k selection, the retrieval run's data type
and the retriever factory, and the index footprint. Not held: relevance and metrics
(``evaluation``). Imports ``core``, ``data``, ``chunking``.
"""
