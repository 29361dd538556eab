"""Strip volatile metadata from an executed notebook so re-execution gives a clean diff.

Removes papermill's timestamps and durations, per-cell execution timings, and the kernel's
execution counts' churn is kept (they are deterministic for a linear run). Usage:
``python scripts/clean_notebook.py NOTEBOOK [...]`` (rewrites each file in place, atomically).
"""

from __future__ import annotations

import sys

import nbformat

from chunklab_core.core.atomic_files import atomic_write

VOLATILE_PAPERMILL = ("start_time", "end_time", "duration", "exception")


def clean(path: str) -> None:
    nb = nbformat.read(path, as_version=4)
    pm = nb.metadata.get("papermill", {})
    for key in VOLATILE_PAPERMILL:
        pm.pop(key, None)
    pm.pop("input_path", None)
    pm.pop("output_path", None)
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
        cell_pm = cell.metadata.get("papermill")
        if cell_pm is not None:
            for key in VOLATILE_PAPERMILL:
                cell_pm.pop(key, None)
            cell_pm.pop("status", None)
    atomic_write(path, lambda tmp: nbformat.write(nb, str(tmp)), suffix=".ipynb")


if __name__ == "__main__":
    for notebook in sys.argv[1:]:
        clean(notebook)
