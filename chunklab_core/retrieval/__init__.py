"""Stage 3, retrieval: from chunks and a question to a ranked list.

Modules: ``bm25`` (BM25, batched over queries), ``dense`` (sentence-transformers retrieval,
query/passage prefixes), ``embedding_cache`` (embeddings on disk, checked shards),
``onnx_embedding`` (the ONNX export of a shipped model), ``model_assembly`` (all-mpnet-base-v2
from its PyPI parts), ``model_windows`` (a model cut to a shorter window, ``<model>@<N>``, as its own model), ``hybrid`` (reciprocal-rank fusion), ``topk`` (top-k selection with a
fixed tie rule), ``retrievers`` (one module per retriever, each registering itself), ``run`` (the one retriever factory and the ``RetrievalRun`` record later
stages read), ``footprint`` (what a strategy costs in the index: chunks, stride, postings), ``registry`` (the
``Retriever`` protocol and one spec per retriever), ``recorded_runs`` (the run store: rankings
recorded once with their provenance, replayed by ``make all``), ``store_checks`` (every
stored file's kind, cell and array lengths checked on load), ``run_plan`` (the planning pass of
``make runs RUNS_CLUSTER=...``: the cells to record, none computed), ``cell_search`` (one cell's
ranking through the run store, hybrid fused from its stored components), ``scope`` (retrieval
across the corpus or within the question's document); ``make runs`` and
``make verify-runs`` live in ``reports.run_recording``, since they execute the posts.

Not held: relevance and metrics (``evaluation``). Imports ``core``, ``data``, ``chunking``.
"""

from chunklab_core.retrieval import retrievers  # noqa: E402,F401  (completes the registry, whatever is imported first)
