"""Writing a post's tables: one call per table, atomic, and only where regenerated tables belong.

Handles: :func:`save_table` (``<folder>/<name>.csv``), :func:`save_tables` (several at the end
of a post, returning nothing so the cell shows nothing) and :func:`save_compressed_table`
(``<folder>/<name>.csv.gz``, gzip with the time stamp fixed at 0 so re-execution gives the same
bytes), both written only when the post writes outputs (``write``), both returning the table so
a cell can show what it wrote. The folder defaults to :data:`chunklab_core.core.paths.TABLES_DIR`;
a folder inside :data:`chunklab_core.core.paths.IRREPLACEABLE_DIRS` (recorded LLM calls, graded
sheets) is refused with ``ValueError``. Files are replaced atomically
(:func:`chunklab_core.core.atomic_files.atomic_write`): a killed run leaves the previous table.
The bytes are :func:`chunklab_core.core.csv_cells.frame_csv` of the table with the arguments given
(``float_format``, ``index``): pandas' ``to_csv`` bytes, except that a text cell starting with
``=``, ``+``, ``-``, ``@``, a tab or a CR gets a leading ``'`` (OWASP's rule: a model answer
``-40%`` is not a formula in a spreadsheet) and a cell holding a CR is quoted. Numbers are
numbers (``-0.5`` is written as is). Read a table back with
:func:`chunklab_core.core.csv_cells.read_frame`, which removes exactly those quotes.

Not handled: figures (:func:`chunklab_core.reports.plots.show_figure`), what goes into a table
(the post's report module), reading tables back (:func:`chunklab_core.core.csv_cells.read_frame`).
"""

from __future__ import annotations

import gzip
import io
from pathlib import Path
from typing import Mapping

import pandas as pd

from chunklab_core.core.atomic_files import atomic_write, atomic_write_text
from chunklab_core.core.csv_cells import frame_csv, frame_csv_lines
from chunklab_core.core.paths import TABLES_DIR, irreplaceable_folder_of

__all__ = ["save_table", "save_tables", "save_compressed_table", "table_path"]


def table_path(name: str, suffix: str, folder: Path | None = None) -> Path:
    """``<folder>/<name><suffix>``; ``ValueError`` for a name with a folder in it or an irreplaceable folder."""
    if not name or Path(name).name != name or name in (".", ".."):
        raise ValueError(f"a table name is a file name without folder or suffix, got {name!r}")
    target = Path(folder if folder is not None else TABLES_DIR) / f"{name}{suffix}"
    protected = irreplaceable_folder_of(target)
    if protected is not None:
        raise ValueError(f"refusing to write table {target}: {protected} holds irreplaceable inputs "
                         "(recorded calls, graded sheets), never regenerated outputs")
    return target


def save_table(frame: pd.DataFrame, name: str, write: bool, float_format: str | None = None,
               index: bool = False, folder: Path | None = None) -> pd.DataFrame:
    """With ``write``, replace ``<folder>/<name>.csv`` with ``frame_csv(frame, index=..., float_format=...)``; return ``frame``."""
    target = table_path(name, ".csv", folder)
    if write:
        atomic_write_text(target, frame_csv(frame, index=index, float_format=float_format))
    return frame


def save_tables(frames: Mapping[str, pd.DataFrame], write: bool, float_format: str | None = None,
                index: bool = False, folder: Path | None = None) -> None:
    """:func:`save_table` for each ``name: frame`` of ``frames``, in order, with the same arguments.

    Every name is checked before anything is written. Returns ``None``, so a cell ending with it
    displays nothing.
    """
    for name in frames:
        table_path(name, ".csv", folder)
    for name, frame in frames.items():
        save_table(frame, name, write, float_format=float_format, index=index, folder=folder)


def save_compressed_table(frame: pd.DataFrame, name: str, write: bool, float_format: str | None = None,
                          index: bool = False, folder: Path | None = None) -> pd.DataFrame:
    """With ``write``, replace ``<folder>/<name>.csv.gz`` (gzip, time stamp 0); return ``frame``.

    The gzip header names the file ``<name>.csv`` (not the temporary file's name), exactly as
    ``frame.to_csv(path, compression={"method": "gzip", "mtime": 0})`` writes it; the text inside
    is :func:`chunklab_core.core.csv_cells.frame_csv`'s, as :func:`save_table` writes it.
    """
    target = table_path(name, ".csv.gz", folder)
    if write:
        lines = frame_csv_lines(frame, index=index, float_format=float_format)

        def write_gzip(tmp: Path) -> None:
            with open(tmp, "wb") as raw, gzip.GzipFile(filename=target.name, mode="wb", fileobj=raw, mtime=0) as gz, \
                    io.TextIOWrapper(gz, encoding="utf-8", newline="") as text:
                for line in lines:  # row by row through a text buffer, as pandas writes: the same deflate bytes
                    text.write(line)

        atomic_write(target, write_gzip)
    return frame
