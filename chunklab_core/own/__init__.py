"""Stage 12, own: the series applied to your documents (``chunklab-own``).

Modules: ``config`` (the YAML config, validated), ``recommendation`` (which chunking, by the
series' verdict rule, and the box a user reads first), ``report`` (tables, figures, files),
``pipeline`` (the whole run computed in one call, no kernel), ``html_report`` (the escaped,
self-contained ``report.html``), ``cli`` (``validate`` / ``run``; writes only into its own
output folder), and are the answers right?
``commands`` (the ``answers`` / ``audit`` / ``check`` subcommands), ``answers`` (answers and
judges on your corpus through the recorded LLM layer), ``answers_report`` (their tables and
page), ``audit`` (a graded sample, as post 06), ``check`` (the CI gate against a baseline).

Not held: the stages it calls, and the series' posts (``reports``).
"""
