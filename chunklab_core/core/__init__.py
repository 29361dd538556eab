"""Stage 0, core: what every stage shares and no stage owns.

Modules: ``paths`` (the folders, and which of them are irreplaceable), ``seeds`` (the series'
one default seed), ``text`` and ``sentence_split`` (normalisation, sentences of many scripts),
``tokens`` (cl100k_base counts), ``corpus`` (documents, questions, chunks), ``headings`` (the
heading model shared by every document format), ``textmatch`` (fuzzy gold matching),
``atomic_files`` (write-then-rename), ``hashing`` (a file's sha256), ``snapshot`` (what changed under a folder),
``versions`` (library versions shown in every post), ``cli_errors`` (a command's user errors as
their message alone, no traceback), ``signals`` (SIGTERM and SIGHUP handled like Ctrl-C, children
stopped the same way), ``html_safety`` (data shown as text on every page the project writes), ``numbers`` (the one way the series writes an
estimate with its interval, a count, a range), ``output_dirs`` (the one guard of every output
folder a command writes), ``csv_cells`` (CSV cells that cannot start a spreadsheet formula), ``members`` (the registries whose
members find themselves: a folder scan and entry points, a scoped context for tests),
``bounds`` (the allowed range of every number a user gives: options, config keys, parameters).

Holds nothing that knows about a data set, a chunker, a retriever, a metric or a report;
imports no other stage.
"""
