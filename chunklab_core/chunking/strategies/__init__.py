"""The chunking strategies, one module per strategy function, each registering its named settings.

Handles: completing :data:`chunklab_core.chunking.STRATEGIES` when ``chunklab_core.chunking`` is
imported: the series' modules in their declared order (post 01's, post 02's, then post 08's
library splitters), then any other module in this folder (a strategy a user dropped here), then
the entry points of group ``chunklab.strategies`` (an outside package's). A new strategy is one
module here: its function ``(text, **params) -> [(start, end, ctx_start, ctx_end), ...]`` and one
``chunking.register_strategy`` call (docs/extending.md).

Not handled: the span contract and the registry itself (``chunking``), the cutting code of the
series' strategies (``characters``, ``token_windows``, ``sentences``, ``semantic``, ``structure``,
``library_splitters``, ``chroma_semantic``, ``llm_split``).
"""

from chunklab_core.core.members import discover

BUILTIN = ("fixed_characters", "recursive_characters", "sentence_window", "parent_document", "semantic_tfidf",
           "fixed_tokens", "recursive_tokens", "structure_aware", "semantic_embedding", "whole_document",
           "library_splitters")

discover(__name__, __path__, BUILTIN, "strategies")
