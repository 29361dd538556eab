"""The first code cell of every post, in one call: quiet progress output, display options, versions.

Handles: :func:`start_post`, which (in this order) filters tqdm's widget warning, disables the
model-loading bars of ``transformers`` (both before ``transformers`` is first imported, so call
it before importing modules that load embedding models), sets the pandas display options a
post asks for, and displays the versions of the packages the post ran with (the table the design asks
for in a post's first code cell). Not handled: the
post's parameters (its cell tagged ``parameters`` stays in the notebook) and its own imports.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import pandas as pd

from chunklab_core.core.versions import DEFAULT_PACKAGES, package_versions

_UNCHANGED = object()


def quiet_progress(models: bool = False) -> None:
    """Ignore tqdm's widget warning; with ``models``, also hide the model-loading bars of transformers."""
    from tqdm import TqdmWarning

    warnings.filterwarnings("ignore", category=TqdmWarning)  # no widget warning in the rendered post
    if models:
        from transformers.utils import logging as transformers_logging

        transformers_logging.disable_progress_bar()  # no model-loading bars in the rendered post


def start_post(packages: Sequence[str] = DEFAULT_PACKAGES, *, quiet: bool = False, quiet_models: bool = False,
               max_colwidth=_UNCHANGED, precision=_UNCHANGED, max_rows=_UNCHANGED,
               recorded: Sequence[str] = ()) -> None:
    """Set up a post's notebook and display the versions of ``packages``.

    ``quiet`` filters tqdm's widget warning, ``quiet_models`` also hides the model-loading bars
    (:func:`quiet_progress`); ``max_colwidth`` and ``precision`` set the pandas display options
    of the same names when given (``None`` is a valid ``max_colwidth``: quotes are never cut), and
    ``max_rows`` pandas' ``display.max_rows`` (``None``: a table is shown whole). Packages in
    ``recorded`` (e.g. ``llama-cpp-python``) are shown with the versions that made the recorded
    calls the post replays, so re-execution without them installed reproduces the cell.
    """
    if quiet or quiet_models:
        quiet_progress(models=quiet_models)
    if max_colwidth is not _UNCHANGED:
        pd.set_option("display.max_colwidth", max_colwidth)
    if max_rows is not _UNCHANGED:
        pd.set_option("display.max_rows", max_rows)
    if precision is not _UNCHANGED:
        pd.set_option("display.precision", precision)
    from IPython.display import display

    display(package_versions(tuple(packages), recorded=tuple(recorded)))
