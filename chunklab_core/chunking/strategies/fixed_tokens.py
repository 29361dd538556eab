"""Fixed token windows (``token_windows.fixed_tokens``, cl100k_base), without and with overlap (post 02)."""

from chunklab_core.chunking.registry import register_strategy
from chunklab_core.chunking.sizing import Sizing
from chunklab_core.chunking.strategies._units import OVERLAP, TOKENS
from chunklab_core.chunking.token_windows import fixed_tokens

register_strategy("fixed_tokens_256", fixed_tokens, {"size": 256}, "Fixed 256 tokens", max_tokens=256, sizes=TOKENS,
                  sizing=Sizing("fixed", OVERLAP, "fixed_tokens_{size}{_o}", "Fixed {size} tokens{o_label}"), check=False)
register_strategy("fixed_tokens_512", fixed_tokens, {"size": 512}, "Fixed 512 tokens", max_tokens=512, sizes=TOKENS,
                  check=False)
register_strategy("fixed_tokens_512_o64", fixed_tokens, {"size": 512, "overlap": 64}, "Fixed 512 tokens / overlap 64",
                  tiles=False, max_tokens=512, sizes=TOKENS, check=False)
