"""Stage 14, reports: the code behind each post, and the posts' shared helpers.

Modules: one per post, or a subpackage for the larger ones (``post00`` findings, ``post01``
chunking, ``post02`` retrievers, ``post03`` uncertainty, ``post04`` generated questions,
``post05`` answers and judges, ``post06`` the judge audit, ``post07`` reranking, ``post08`` library
splitters and Chroma's report); shared
helpers: ``notebook_setup`` (a post's first cell), ``markdown`` (prose cells), ``plots``
(figures), ``figure_text`` (every figure's caption and alt text), ``tables`` (every table a post writes),
``table_views`` (wide tables as narrow views, long ones as a head, the CSV linked), ``verdict_tables`` (interval wording as tables), ``reference_results`` (published
numbers shown beside ours), ``templates`` (prose kept as Markdown templates beside a report
module, filled with computed values), ``samples`` (a sample named by its n and documents),
``site_tables`` (the website's tables as a reader expects them), ``site_style`` (the site's one style sheet, which the lab links too); ``notebook_run`` (the safe runner every Makefile notebook rule
uses), ``posts`` (the one list of posts the Makefile, ``make runs`` and post 00 derive from), ``run_recording`` (``make runs`` records the posts' retrieval runs by executing them in
record mode; ``make verify-runs`` recomputes a sample), ``chunker_recording`` (``make llm-chunker`` records
post 08's LLM chunker calls), ``run_cluster`` (``make runs`` on a Ray cluster), ``cluster_claims`` (its claims: who records which
cell, a wait that ends), ``pool`` (the one candidate pool and its
matched-budget verdicts that posts 02, 08 and 00 read), ``website`` (the static site) and ``lab`` (the site's interactive page on the
recorded runs) with ``lab_formulas`` (its formulas, one function each).

Only this stage imports ``reports``; nothing in the library depends on it.
"""
