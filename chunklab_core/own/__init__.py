"""Stage 11, own: the series applied to your documents (``chunklab-own``).

Modules: ``config`` (the YAML config, validated), ``recommendation`` (which chunking, by the
series' verdict rule), ``report`` (the report notebook's tables and prose), ``cli``
(``validate`` / ``run``; writes only into its own output folder).

Not held: the stages it calls, and the series' posts (``reports``).
"""
