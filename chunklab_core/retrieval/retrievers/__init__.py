"""The retrievers, one module each, every one registering itself in ``retrieval.registry``.

Handles: completing :data:`chunklab_core.retrieval.registry.RETRIEVER_SPECS` when the retrieval
package is imported: the series' retrievers in their order (``bm25``, ``dense``, ``hybrid``), then
any other module in this folder (a retriever a user dropped here), then the entry points of
group ``chunklab.retrievers`` (an outside package's). A new retriever is one module here: its
class (``fit(texts)``, ``search(queries, k) -> (ids, scores)``) and one ``register_retriever``
call (docs/extending.md).

Not handled: the ranking code of the series' retrievers (``retrieval.bm25``, ``retrieval.dense``,
``retrieval.hybrid``), the run store (``recorded_runs``).
"""

from chunklab_core.core.members import discover

BUILTIN = ("bm25", "dense", "hybrid")  # the series' retrievers, in the tables' order

discover(__name__, __path__, BUILTIN, "retrievers")
