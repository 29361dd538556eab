"""A command's user errors printed as their message alone: no traceback, a non-zero exit.

Handles: :func:`user_errors`, the decorator at the edge of every command's ``main`` (each
console script of pyproject's ``[project.scripts]`` and each ``python -m`` entry the Makefile
calls; ``tests/test_cli_edges`` checks that every one is wrapped). Two kinds of errors end as
``prog: message`` on stderr and exit status 2:

- the exception types the command names (each stage names its own: a bad records line, a
  missing records folder, a sheet that cannot be imported, a backend that is not installed),
  and an output folder refused by the guard (``core.output_dirs.OutputFolderRefused``), whose
  message already names the file and the fix;
- the errors of a user's file, for every command alike (:func:`file_error_message`): an
  ``OSError`` (missing, unreadable, a folder where a file is expected, a file where a folder
  is, a full or read-only disk), a decoding or encoding error, and the parsers' errors (JSON,
  CSV, YAML, a notebook that is not JSON, a torn ``.npz``/zip archive). The message names the file -- the ``OSError``'s own
  file name, else the innermost frame of the traceback that holds the path of an existing
  file (the reader that failed) -- and says what to do.

Anything else still raises with its traceback: that is a bug, and the traceback is what a bug
report needs.

Not handled: choosing which of a stage's own errors are the user's (the caller lists them),
Ctrl-C (Python's default, exit status 130 from the shell), a file error whose traceback names
no existing file (the message then says so instead of naming one).
"""

from __future__ import annotations

import errno
import functools
import os
import sys
from pathlib import Path
from typing import Callable

USER_ERROR_STATUS = 2
WRAPPED = "__chunklab_user_errors__"  # set on a wrapped main (tests check every command has it)


def _parser_error_types() -> tuple[type[BaseException], ...]:
    """The format errors of the parsers the project reads users' files with (imported if present)."""
    import csv
    import json
    import zipfile

    found: list[type[BaseException]] = [json.JSONDecodeError, csv.Error, zipfile.BadZipFile, UnicodeError]
    yaml = sys.modules.get("yaml")
    if yaml is not None:
        found.append(yaml.YAMLError)
    nbformat_reader = sys.modules.get("nbformat.reader")
    if nbformat_reader is not None:
        found.append(nbformat_reader.NotJSONError)
    pandas_errors = sys.modules.get("pandas.errors")
    if pandas_errors is not None:
        found += [pandas_errors.ParserError, pandas_errors.EmptyDataError]
    return tuple(found)


def is_file_error(err: BaseException) -> bool:
    """True for an error of a user's file (module docstring), printed as a message by :func:`user_errors`."""
    return isinstance(err, (OSError, *_parser_error_types()))


def _existing_file(value) -> str | None:
    if isinstance(value, (str, os.PathLike)) and not isinstance(value, bytes):
        try:
            text = os.fspath(value)
            if text and len(text) < 4096 and "\n" not in text and os.path.isfile(text):
                return text
        except (TypeError, ValueError, OSError):
            return None
    return None


PATH_NAMES = ("path", "file", "filename", "filepath_or_buffer", "self", "source", "sheet", "records", "target")


def file_in_traceback(err: BaseException) -> str | None:
    """The file the failing reader was reading: the innermost traceback frame holding an existing
    file's path (names in :data:`PATH_NAMES` first, then any local), or ``None``."""
    frames = []
    tb = err.__traceback__
    while tb is not None:
        frames.append(tb.tb_frame)
        tb = tb.tb_next
    for frame in reversed(frames):
        local = frame.f_locals
        for name in (*[n for n in PATH_NAMES if n in local], *local):
            found = _existing_file(local[name])
            if found:
                return found
    return None


OS_FIXES = {
    errno.ENOENT: "no such file or folder; check the path",
    errno.EACCES: "permission denied; make it readable/writable for you (chmod, or its owner), or choose another path",
    errno.EPERM: "operation not permitted; check its permissions, or choose another path",
    errno.EISDIR: "is a folder where a file is expected; give the path of a file",
    errno.ENOTDIR: "a part of this path is a file where a folder is expected; point it at a folder (or a new path)",
    errno.EEXIST: "already exists (where this command makes a new file or folder); move it, or choose another path",
    errno.ENOSPC: "the disk is full; free some space and run again",
    errno.EROFS: "is on a read-only file system; choose a writable location",
    errno.ENAMETOOLONG: "the path is too long; choose a shorter one",
    errno.EPIPE: "the output was closed before the command finished (a pipe ended early); run it again without it",
    errno.ECONNREFUSED: "connection refused; is the server running at that address? check the address and start it",
}


def _cache_hint(name) -> str:
    """For a path inside the cache folder: which setting chose it and how to change it."""
    if name is None:
        return ""
    from chunklab_core.core import paths

    cache, path = paths.CACHE_DIR, Path(os.path.abspath(os.fsdecode(name)))
    if path != cache and cache not in path.parents:
        return ""
    chosen = f"CHUNKLAB_CACHE={os.environ['CHUNKLAB_CACHE']}" if os.environ.get("CHUNKLAB_CACHE") else "the default .cache/"
    blocked = next((p for p in (cache, *cache.parents) if p.exists() and not p.is_dir()), None)
    state = f"{blocked} is a file, not a folder" if blocked is not None else "it is inside the cache folder"
    return (f" ({state}: the cache folder comes from {chosen}; point CHUNKLAB_CACHE at a writable folder, "
            "or unset it to use .cache/ in the repository)")


def file_error_message(err: BaseException) -> str:
    """``err`` (an error of a user's file) as one line naming the file and what to do."""
    if isinstance(err, OSError):
        name = err.filename if err.filename is not None else file_in_traceback(err)
        fix = OS_FIXES.get(err.errno) or f"{err.strerror or err}; check the path and its permissions"
        where = f"{os.fsdecode(name)}: " if name is not None else ""
        also = f" (and {os.fsdecode(err.filename2)})" if getattr(err, "filename2", None) else ""
        if err.filename is None and name is None and err.strerror is None:
            return f"{err.__class__.__name__}: {err}"
        return f"{where}{fix}{also}{_cache_hint(name)}"
    name = file_in_traceback(err)
    where = f"{name}: " if name else "a file given to this command (not named by the reader): "
    import json

    nbformat_reader = sys.modules.get("nbformat.reader")
    if nbformat_reader is not None and isinstance(err, nbformat_reader.NotJSONError):
        return (f"{where}not a notebook (not valid JSON: {str(err)[:120]}); a torn or edited file: restore it "
                "(git checkout) or execute it again")
    if isinstance(err, json.JSONDecodeError):
        return (f"{where}not valid JSON ({err.msg} at line {err.lineno} column {err.colno}); a torn or edited "
                "file: restore it, or rebuild it with the command that wrote it")
    if isinstance(err, UnicodeDecodeError):
        return (f"{where}not UTF-8 text (byte {err.object[err.start:err.start + 1]!r} at position {err.start}); "
                "save it as UTF-8 and run again")
    if isinstance(err, UnicodeError):
        return (f"{where}holds text that cannot be written as UTF-8 ({err}, e.g. a lone surrogate such as "
                "\\ud83d); remove that character and run again")
    import zipfile

    if isinstance(err, zipfile.BadZipFile):
        return (f"{where}not a readable .npz/zip archive ({err}); a torn or renamed file: rebuild it with the "
                "command that wrote it")
    yaml = sys.modules.get("yaml")
    if yaml is not None and isinstance(err, yaml.YAMLError):
        first = str(err).splitlines()[0] if str(err) else err.__class__.__name__
        return f"{where}not valid YAML ({first}); fix the file (YAML's syntax) and run again"
    detail = str(err).strip().splitlines()[0] if str(err).strip() else err.__class__.__name__
    return (f"{where}not a readable CSV table ({detail[:300]}); a torn or edited file: restore it, or rebuild it "
            "with the command that wrote it")


def _prog(main: Callable) -> str:
    prog = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    if not prog or prog.endswith(".py"):  # python -m package.module
        spec = getattr(sys.modules.get("__main__"), "__spec__", None)
        prog = spec.name if spec is not None else main.__module__
    return prog


def user_errors(*types: type[BaseException]) -> Callable[[Callable[..., int]], Callable[..., int]]:
    """Wrap ``main`` so an exception of one of ``types``, or an error of a user's file
    (:func:`is_file_error`), prints ``prog: message`` and returns 2."""
    def wrap(main: Callable[..., int]) -> Callable[..., int]:
        @functools.wraps(main)
        def run(*args, **kwargs) -> int:
            try:
                return main(*args, **kwargs)
            except Exception as err:
                from chunklab_core.core.output_dirs import OutputFolderRefused

                if isinstance(err, (OutputFolderRefused, *types)):
                    message = str(err)
                elif is_file_error(err):
                    message = file_error_message(err)
                else:
                    raise
                print(f"{_prog(main)}: {message}", file=sys.stderr, flush=True)
                return USER_ERROR_STATUS
        setattr(run, WRAPPED, True)
        return run
    return wrap


def command_edge(main: Callable[..., int]) -> Callable[..., int]:
    """:func:`user_errors` with no command-specific types: the file errors only."""
    return user_errors()(main)

