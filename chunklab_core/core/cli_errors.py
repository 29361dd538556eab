"""A command's user errors printed as their message alone: no traceback, a non-zero exit.

Handles: :func:`user_errors`, a decorator for a command's ``main``: the exception types it is
given (each stage names its own: a bad records line, a missing records folder, a sheet that
cannot be imported, a backend that is not installed) are caught, their message (which names
the file and the fix) is printed to stderr prefixed with the program's name, and ``main``
returns 2. Anything else still raises with its traceback: that is a bug, and the traceback is
what a bug report needs.

Not handled: choosing which errors are the user's (the caller lists them), Ctrl-C (Python's
default, exit status 130 from the shell).
"""

from __future__ import annotations

import functools
import os
import sys
from typing import Callable

USER_ERROR_STATUS = 2


def user_errors(*types: type[BaseException]) -> Callable[[Callable[..., int]], Callable[..., int]]:
    """Wrap ``main`` so an exception of one of ``types`` prints ``prog: message`` and returns 2."""
    def wrap(main: Callable[..., int]) -> Callable[..., int]:
        @functools.wraps(main)
        def run(*args, **kwargs) -> int:
            try:
                return main(*args, **kwargs)
            except types as err:
                prog = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else ""
                if not prog or prog.endswith(".py"):  # python -m package.module
                    spec = getattr(sys.modules.get("__main__"), "__spec__", None)
                    prog = spec.name if spec is not None else main.__module__
                print(f"{prog}: {err}", file=sys.stderr)
                return USER_ERROR_STATUS
        return run
    return wrap
