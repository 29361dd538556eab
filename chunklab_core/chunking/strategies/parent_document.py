"""Parent document (``characters.parent_document``): small children indexed, their parent returned."""

from chunklab_core.chunking.registry import register_strategy
from chunklab_core.chunking.characters import parent_document

register_strategy("parent_doc_250_1000", parent_document, {"parent_size": 1000, "child_size": 250},
                  "Parent document (250→1000 chars)", default=True, max_chars=250,
                  sizes={"parent_size": "chars", "child_size": "chars"}, check=False)
