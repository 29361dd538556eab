"""Stage 12, reports: the code behind each post, and the posts' shared helpers.

Holds: one module or subpackage per post (``post00`` findings ... ``post07`` reranking),
shared helpers (plots, verdict tables, reference results), running a notebook safely
(``notebook_run``) and the static website. Only this stage imports ``reports``; nothing in
the library depends on it.
"""
