"""SIGTERM and SIGHUP treated as Ctrl-C, and child processes stopped the way Ctrl-C stops them.

What ``timeout``, CI runners, ``kill`` and a closed terminal send is SIGTERM or SIGHUP; Python's
default for both is to die at once, skipping every ``finally`` (temporary files stay, a child
papermill and its kernel run on). Handles:

* :func:`signals_as_interrupt`: a context manager under which SIGTERM and SIGHUP raise
  :class:`Interrupted` (a ``KeyboardInterrupt``) in the main thread, exactly where Ctrl-C would,
  so the same clean-up runs; the previous handlers come back on exit. Outside the main thread
  it does nothing (Python only lets the main thread set handlers).
* :func:`run_child`: ``subprocess.call`` for a child that must not outlive us. The child runs in
  its own process group; on Ctrl-C, SIGTERM or SIGHUP it gets SIGINT (papermill then shuts its
  kernel down, as after Ctrl-C in a terminal), ``grace`` seconds to exit, then SIGKILL for its
  group; the interrupt is then raised again.
* :func:`exit_status`: the shell's status for an interrupt (130 for Ctrl-C, 128 + signal).

Not handled: SIGKILL (nothing can be), Windows (no SIGHUP; process groups differ: the child
is started normally there and only Ctrl-C is handled).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
from typing import Iterator, Sequence

SIGNALS = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name))


class Interrupted(KeyboardInterrupt):
    """SIGTERM or SIGHUP, raised where a Ctrl-C would have been; ``signum`` says which."""

    def __init__(self, signum: int):
        super().__init__(f"stopped by {signal.Signals(signum).name}")
        self.signum = signum


def _raise(signum: int, frame: object) -> None:
    raise Interrupted(signum)


@contextlib.contextmanager
def signals_as_interrupt() -> Iterator[None]:
    """Within the block, SIGTERM and SIGHUP raise :class:`Interrupted` (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {sig: signal.signal(sig, _raise) for sig in SIGNALS}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def exit_status(err: KeyboardInterrupt) -> int:
    """130 for Ctrl-C, 128 + the signal number for :class:`Interrupted`."""
    return 128 + (err.signum if isinstance(err, Interrupted) else signal.SIGINT)


def _default_sigint() -> None:
    """In the child, before exec: SIGINT back to its default, so the SIGINT that stops the child
    is not ignored when we were started with it ignored (POSIX shells start background jobs so)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def run_child(command: Sequence[str], grace: float = 30.0, **popen) -> int:
    """Run ``command`` and return its exit status; stop it like Ctrl-C when we are interrupted.

    The child gets its own process group (POSIX), so a terminal's Ctrl-C reaches it only through
    us, once: on ``KeyboardInterrupt`` (Ctrl-C, or SIGTERM/SIGHUP under
    :func:`signals_as_interrupt`) it is sent SIGINT, waited for up to ``grace`` seconds, then its
    group is killed; the interrupt is re-raised after the child is gone.
    """
    posix = os.name == "posix"
    if posix:  # a background job (`make all &` from a script) inherits SIGINT ignored; our stop is SIGINT
        popen.setdefault("preexec_fn", _default_sigint)
    with signals_as_interrupt():
        child = subprocess.Popen(list(command), **({"process_group": 0} if posix else {}), **popen)
        try:
            return child.wait()
        except KeyboardInterrupt:
            _stop(child, grace, posix)
            raise


def _stop(child: subprocess.Popen, grace: float, posix: bool) -> None:
    """SIGINT, ``grace`` seconds, then SIGKILL of the child's group; a second signal meanwhile
    is ignored (the clean-up must finish)."""
    ignored = {sig: signal.signal(sig, signal.SIG_IGN) for sig in (*SIGNALS, signal.SIGINT)} \
        if threading.current_thread() is threading.main_thread() else {}
    try:
        if child.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                (os.killpg(child.pid, signal.SIGINT) if posix else child.send_signal(signal.SIGINT))
            try:
                child.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    (os.killpg(child.pid, signal.SIGKILL) if posix else child.kill())
                child.wait()
    finally:
        for sig, handler in ignored.items():
            signal.signal(sig, handler)
