"""How long building takes with the llvm backend.

    python benchmarks/bench_compile.py [--repeat R]

- warm ``build(mm_relu, "llvm")`` in a running process, object cache warm: the default
  schedule rules, lowering, LLVM IR generation, the cache lookup and loading with MCJIT
  (bar: <= 45 ms); the same with ``auto_schedule=False``, and the rules alone (bar: they
  add <= 20 ms);
- the same build with an empty cache (the whole -O3 pipeline and code generation);
- a fresh process that parses samples/mm_relu.tir, builds it and runs it once, cache
  warm, the way ``tilec samples/mm_relu.tir --run`` does (bar: <= 0.8 s); when tilec has
  ``--run``, that command itself is timed too.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import tilelang

ROOT = Path(__file__).resolve().parents[1]
MM_RELU = ROOT / "samples" / "mm_relu.tir"

FRESH_PROCESS = f"""
import numpy as np, tilelang
lib = tilelang.build(tilelang.parse_file({str(MM_RELU)!r}), "llvm")
a = np.ones((128, 128), "float32"); c = np.empty_like(a)
lib["mm_relu"](a, a, c)
assert c[0, 0] == 128
"""


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def warm_builds(mod, repeat, **options) -> list[float]:
    tilelang.build(mod, "llvm", **options)  # fills the object cache
    return [timed(lambda: tilelang.build(mod, "llvm", **options)) for _ in range(repeat)]


def rule_times(mod, repeat) -> list[float]:
    """The default schedule rules alone (tilelang.schedule.rules.default_schedule)."""
    from tilelang.schedule.rules import default_schedule

    default_schedule(mod)
    return [timed(lambda: default_schedule(mod)) for _ in range(repeat)]


def cold_builds(mod, repeat) -> list[float]:
    times = []
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as cache:
            os.environ["TILELANG_CACHE_DIR"] = cache
            times.append(timed(lambda: tilelang.build(mod, "llvm")))
    return times


def process_runs(command, repeat) -> list[float]:
    subprocess.run(command, check=True, capture_output=True)  # warms the object cache
    return [timed(lambda: subprocess.run(command, check=True, capture_output=True))
            for _ in range(repeat)]  # fmt: skip


def tilec_has_run() -> bool:
    result = subprocess.run(
        [sys.executable, "-m", "tilelang.cli", "--help"], capture_output=True, text=True
    )
    return "--run" in result.stdout


def report(label, times, bar=None):
    median = float(np.median(times)) * 1e3
    verdict = "" if bar is None else ("  ok" if median <= bar else "  OVER THE BAR")
    limit = "" if bar is None else f"  (bar {bar:.0f} ms)"
    print(f"{label:<52} median {median:8.1f} ms  min {min(times) * 1e3:8.1f} ms{limit}{verdict}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=10)
    args = parser.parse_args()
    mod = tilelang.parse_file(MM_RELU)
    report("warm build(mm_relu, 'llvm') incl. MCJIT load", warm_builds(mod, args.repeat), 45)
    plain = warm_builds(mod, args.repeat, auto_schedule=False)
    report("  the same with auto_schedule=False", plain)
    report("  the default schedule rules alone (bar 20 ms)", rule_times(mod, args.repeat), 20)
    saved = os.environ.get("TILELANG_CACHE_DIR")
    try:
        report("cold build (empty object cache)", cold_builds(mod, max(3, args.repeat // 3)))
    finally:
        if saved is None:
            os.environ.pop("TILELANG_CACHE_DIR", None)
        else:
            os.environ["TILELANG_CACHE_DIR"] = saved
    runs = max(3, args.repeat // 3)
    fresh = process_runs([sys.executable, "-c", FRESH_PROCESS], runs)
    report("fresh process: parse + build + run mm_relu", fresh, 800)
    if tilec_has_run():
        tilec = [sys.executable, "-m", "tilelang.cli", str(MM_RELU), "--run"]
        report("tilec samples/mm_relu.tir --run", process_runs(tilec, runs), 800)
    else:
        print("tilec has no --run yet: timed the equivalent fresh process above")


if __name__ == "__main__":
    main()
