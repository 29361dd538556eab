"""The whole document as one chunk (``characters.whole_document``): the no-chunking reference."""

from chunklab_core.chunking.registry import register_strategy
from chunklab_core.chunking.characters import whole_document

register_strategy("whole_document", whole_document, {}, "Whole document", check=False)
