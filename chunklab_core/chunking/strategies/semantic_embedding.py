"""Semantic chunking with an embedding model (``semantic``): cut where neighbouring sentences drift apart.

Each needs an embedding model (its ``embed`` parameter; ``run_matrix`` passes the first model's).
"""

from chunklab_core.chunking.registry import register_strategy
from chunklab_core.chunking.sizing import Sizing
from chunklab_core.chunking.semantic import semantic_embedding, semantic_embedding_tokens

CHARS = {"min_chars": "chars", "max_chars": "chars"}
register_strategy("semantic_embedding", semantic_embedding,
                  {"embed": None, "percentile": 80.0, "min_chars": 200, "max_chars": 1000},
                  "Semantic (embedding, 200–1000 chars)", max_chars=1000, sizes=CHARS, check=False,
                  sizing=Sizing("semantic", {"floor": "min_chars", "max": "max_chars", "percentile": "percentile"},
                                "semantic_floor{floor}_max{max}{_p}", "Semantic (embedding, floor {floor}, max {max}{p_label})"))
register_strategy("semantic_no_floor", semantic_embedding,
                  {"embed": None, "percentile": 80.0, "min_chars": 0, "max_chars": 1000},
                  "Semantic (embedding, ≤1000 chars, no floor)", max_chars=1000, sizes=CHARS, check=False)
register_strategy("semantic_embedding_tokens", semantic_embedding_tokens,
                  {"embed": None, "percentile": 80.0, "min_tokens": 200, "max_tokens": 1000},
                  "Semantic (embedding, floor 200 / max 1000 tokens)", max_tokens=1000,
                  sizes={"min_tokens": "tokens", "max_tokens": "tokens"}, check=False,
                  sizing=Sizing("semantic", {"floor": "min_tokens", "max": "max_tokens", "percentile": "percentile"},
                                "semantic_tokens_floor{floor}_max{max}{_p}",
                                "Semantic (embedding, floor {floor}, max {max} tokens{p_label})"))
