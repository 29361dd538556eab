"""Post 07 (reranking): ``tables`` (the stage per cell, depth and scorer comparisons, sample labels),
``cost`` (what each re-scorer reads and how long it takes), ``figures`` (depth against its
ceiling, the index footprint) and ``prose`` with ``prose.md`` (its sentences)."""
