"""Structure-aware chunking (``structure.structure_aware``): cut at headings, packed or one chunk per section."""

from chunklab_core.chunking.registry import register_strategy
from chunklab_core.chunking.sizing import Sizing
from chunklab_core.chunking.structure import structure_aware

register_strategy("structure_aware", structure_aware, {"max_tokens": 512, "mode": "pack"}, "Structure-aware (≤512 tokens)",
                  max_tokens=512, uses_headings=True, sizes={"max_tokens": "tokens"}, check=False,
                  sizing=Sizing("structure", {"max": "max_tokens"}, "structure_tokens_{max}", "Structure-aware (≤{max} tokens)"))
register_strategy("structure_sections", structure_aware, {"max_tokens": 512, "mode": "section"},
                  "Structure-aware, one chunk per section (≤512 tokens)", max_tokens=512, uses_headings=True,
                  sizes={"max_tokens": "tokens"}, check=False,
                  sizing=Sizing("structure_sections", {"max": "max_tokens"}, "structure_sections_tokens_{max}",
                                "Structure-aware, one chunk per section (≤{max} tokens)"))
