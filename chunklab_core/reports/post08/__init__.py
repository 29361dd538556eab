"""Post 08 (library splitters and Chroma's report): ``tables`` (the published values, the report's
rows, neighbouring rows paired), ``builder`` (library defaults against the series' strategies:
the long table, the compact one, the cheapest setting kept), ``figures`` and ``prose`` with
``prose.md`` (its sentences)."""
