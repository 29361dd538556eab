"""Recursive splitting under a character ceiling (``characters.recursive_characters``)."""

from chunklab_core.chunking.registry import register_strategy
from chunklab_core.chunking.sizing import Sizing
from chunklab_core.chunking.characters import recursive_characters

register_strategy("recursive_500", recursive_characters, {"max_chars": 500}, "Recursive 500 chars", default=True,
                  max_chars=500, sizes={"max_chars": "chars"}, check=False,
                  sizing=Sizing("recursive", {"size": "max_chars"}, "recursive_chars_{size}", "Recursive {size} characters"))
