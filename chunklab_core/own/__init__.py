"""Stage 11, own documents: ``chunklab-own``, the series applied to your documents.

Holds: the YAML config, the recommendation by the series' verdict rule, the report, and the
command line (``validate`` / ``run``). Writes only into its own output folder. Not held: the
stages it calls, and the series' posts (``reports``).
"""
