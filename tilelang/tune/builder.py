"""Building candidates, in worker processes.

A build is lower + compile of one scheduled module. The work crosses a process
boundary as text (the module printed as TVMScript, the target as its string), so any
``concurrent.futures.Executor`` can run it: the default local process pool, a Dask
``Client.get_executor()``, Ray's executor. The compiled artifact lands in the
content-hashed compile cache (``tilelang.runtime.cache``), so the main process loads
it without compiling again when it builds the same text for measuring.
"""

from __future__ import annotations

import time

import attrs


@attrs.frozen
class BuildResult:
    """The outcome of :func:`build_candidate`: ``ok``, the error text, and seconds."""

    ok: bool
    error: str | None = None
    seconds: float = 0.0


def build_candidate(mod_text: str, target: str) -> BuildResult:
    """Parse, lower and compile ``mod_text`` for ``target`` (runs in a worker)."""
    import tilelang
    from tilelang.errors import TileLangError

    start = time.perf_counter()
    try:
        tilelang.build(tilelang.parse(mod_text), target=target)
    except (TileLangError, ValueError, TypeError, RuntimeError) as exc:
        return BuildResult(False, f"{type(exc).__name__}: {exc}", time.perf_counter() - start)
    return BuildResult(True, None, time.perf_counter() - start)
