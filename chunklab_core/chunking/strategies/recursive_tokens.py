"""Recursive splitting under a token ceiling (``token_windows.recursive_tokens``), without and with overlap."""

from chunklab_core.chunking.registry import register_strategy
from chunklab_core.chunking.sizing import Sizing
from chunklab_core.chunking.token_windows import recursive_tokens

SIZES = {"max_tokens": "tokens", "overlap": "tokens"}
register_strategy("recursive_tokens_512", recursive_tokens, {"max_tokens": 512}, "Recursive 512 tokens",
                  max_tokens=512, sizes=SIZES, check=False,
                  sizing=Sizing("recursive", {"size": "max_tokens", "overlap": "overlap"}, "recursive_tokens_{size}{_o}",
                                "Recursive {size} tokens{o_label}"))
register_strategy("recursive_tokens_512_o64", recursive_tokens, {"max_tokens": 512, "overlap": 64},
                  "Recursive 512 tokens / overlap 64", tiles=False, max_tokens=512, sizes=SIZES, check=False)
