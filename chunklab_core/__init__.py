"""chunklab_core: the computation behind the chunklab research series.

Chunking, retrieval (BM25, dense, hybrid), retrieval metrics, bootstrap statistics,
local-LLM answering and LLM-judge grading. Notebooks hold the story; this package holds
every computation so it can be tested.
"""

__version__ = "0.1.0"
