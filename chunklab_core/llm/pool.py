"""A bounded pool of LLM requests in flight: ``[fn(item) for item in items]`` with N threads.

Handles: ``map_bounded``, which runs ``fn`` on every item with at most ``concurrency`` calls
at once (a ``ThreadPoolExecutor``; ``concurrency=1`` is a plain loop in this thread) and
returns the results in item order whatever order they finish in, with a tqdm bar (rate, ETA,
and how many records this run really wrote). The first exception stops the pool: items not
yet started are cancelled, the ones running finish (their calls are recorded, since every
call is recorded the moment it returns), and the exception is raised.

Why threads: the work is waiting on a server (an OpenAI-compatible or Ollama server batches
the requests in flight); the embedded backend serialises its calls behind a lock, so more
threads do not help it. Recording stays correct at any concurrency because ``CallStore``
appends one whole fsynced line under a lock and ``RecordedLLM`` keys never depend on order
(``llm.records``).

Not handled: processes, async clients, rate limits beyond the backend's own retries.
"""

from __future__ import annotations

from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from typing import Callable, Iterable, TypeVar

T = TypeVar("T")
R = TypeVar("R")


def check_concurrency(concurrency: int) -> int:
    """``concurrency`` as an int >= 1, else ``ValueError``."""
    if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
        raise ValueError(f"concurrency must be an integer >= 1, got {concurrency!r}")
    return concurrency


def map_bounded(items: Iterable[T], fn: Callable[[T], R], concurrency: int = 1, *,
                store=None, desc: str = "LLM calls", progress: bool = True) -> list[R]:
    """``[fn(item) for item in items]`` with at most ``concurrency`` calls of ``fn`` at once.

    ``store`` (a ``CallStore``) only feeds the bar's ``new`` count. Results keep item order.
    """
    check_concurrency(concurrency)
    items = list(items)
    before = len(store) if store is not None else 0  # also loads the index before threads start
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(items), desc=desc, unit="item", dynamic_ncols=True)

    def tick() -> None:
        if bar is not None:
            if store is not None:
                bar.set_postfix(new=len(store) - before, refresh=False)
            bar.update(1)

    try:
        if concurrency == 1:
            results = []
            for item in items:
                results.append(fn(item))
                tick()
            return results
        results: list = [None] * len(items)
        with ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="llm") as pool:
            pending = {pool.submit(fn, item): i for i, item in enumerate(items)}
            while pending:
                done, _ = wait(pending, return_when=FIRST_EXCEPTION)
                for future in done:
                    index = pending.pop(future)
                    error = future.exception()
                    if error is not None:
                        for other in pending:
                            other.cancel()
                        raise error
                    results[index] = future.result()
                    tick()
        return results
    finally:
        if bar is not None:
            bar.close()
