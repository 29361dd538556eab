"""Fixed-size character windows (``characters.fixed_characters``), without and with overlap: post 01's baseline."""

from chunklab_core.chunking.registry import register_strategy
from chunklab_core.chunking.sizing import Sizing
from chunklab_core.chunking.characters import fixed_characters
from chunklab_core.chunking.strategies._units import CHARS, OVERLAP

register_strategy("fixed_500", fixed_characters, {"size": 500, "overlap": 0}, "Fixed 500 chars", default=True,
                  max_chars=500, sizes=CHARS, check=False,
                  sizing=Sizing("fixed", OVERLAP, "fixed_chars_{size}{_o}", "Fixed {size} characters{o_label}"))
register_strategy("fixed_500_o50", fixed_characters, {"size": 500, "overlap": 50}, "Fixed 500 chars / overlap 50",
                  default=True, tiles=False, max_chars=500, sizes=CHARS, check=False)
register_strategy("fixed_500_o125", fixed_characters, {"size": 500, "overlap": 125}, "Fixed 500 chars / overlap 125",
                  default=True, tiles=False, max_chars=500, sizes=CHARS, check=False)
register_strategy("fixed_1000", fixed_characters, {"size": 1000, "overlap": 0}, "Fixed 1000 chars", default=True,
                  max_chars=1000, sizes=CHARS, check=False)
