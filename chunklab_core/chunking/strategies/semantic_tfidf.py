"""Semantic chunking with a TF-IDF proxy for embeddings (``semantic.semantic_tfidf``); no model needed."""

from chunklab_core.chunking.registry import register_strategy
from chunklab_core.chunking.semantic import semantic_tfidf

register_strategy("semantic_tfidf", semantic_tfidf, {"percentile": 80.0, "max_chars": 500},
                  "Semantic (TF-IDF proxy, ≤500 chars)", default=True, max_chars=500, sizes={"max_chars": "chars"},
                  check=False)
