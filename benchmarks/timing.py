"""The timing every benchmark here reports: the median over ``repeat`` runs of the mean
seconds of ``number`` calls, after one warm-up call (compilation, caches, page faults).
Imported by the bench_*.py scripts, which run with this folder first on ``sys.path``."""

from __future__ import annotations

import statistics
import time

#: idle time before each measurement, for other runtimes' spinning threads to sleep
SETTLE_S = 0.3


def median_time(fn, number: int = 1, repeat: int = 7, clock=time.perf_counter) -> float:
    """Median over ``repeat`` runs of the mean seconds of ``number`` calls of ``fn()``,
    read on ``clock`` (``time.process_time``: CPU time, for one-thread code on a busy
    machine)."""
    # The thread pools of what was timed just before (OpenBLAS, PyTorch's OpenMP) keep
    # spinning for a while after their last call and take cores from the next
    # contender: 2-thread kernels timed right after a PyTorch call ran up to 2x slower.
    time.sleep(SETTLE_S)
    fn()
    runs = []
    for _ in range(repeat):
        start = clock()
        for _ in range(number):
            fn()
        runs.append((clock() - start) / number)
    return statistics.median(runs)
