"""The timing every benchmark here reports: the median over ``repeat`` runs of the mean
seconds of ``number`` calls, after one warm-up call (compilation, caches, page faults).
Imported by the bench_*.py scripts, which run with this folder first on ``sys.path``."""

from __future__ import annotations

import statistics
import time


def median_time(fn, number: int = 1, repeat: int = 7) -> float:
    """Median over ``repeat`` runs of the mean seconds of ``number`` calls of ``fn()``."""
    fn()
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        runs.append((time.perf_counter() - start) / number)
    return statistics.median(runs)
