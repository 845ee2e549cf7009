"""Automatic scheduling of the 1024^3 float32 matmul on llvm, next to NumPy and the
hand schedule, in one run.

    python benchmarks/bench_tune.py [--trials 64 256] [--work-dir DIR] [--plot curve.png]

For each trial budget (cumulative: the 256-trial run continues the 64-trial one's
database), tunes with the generic space (``space="auto"``) and prints the tuning time,
the best kernel's GFLOP/s, NumPy's (``a @ b``) and samples/matmul_1024_tuned.tir's (the
hand-written BLAS-like schedule). The bar: at least NumPy; the aim: 400 GFLOP/s.
Prints the load average too: timings on a shared machine move with it.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import numpy as np
from timing import median_time

import tilelang
from tilelang.testing.workloads import matmul
from tilelang.tune import compile_tir, tune_tir

HERE = Path(__file__).resolve().parent
N = 1024
FLOP = 2 * N**3


def line(name, seconds):
    print(f"{name:<40} {seconds * 1e3:9.3f} ms {FLOP / seconds / 1e9:8.1f} GFLOP/s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, nargs="+", default=[64, 256])
    parser.add_argument("--work-dir", default=None)
    parser.add_argument("--plot", default=None)
    args = parser.parse_args()
    work_dir = args.work_dir or tempfile.mkdtemp(prefix="bench-tune-")
    print(f"load average at start: {os.getloadavg()}; {os.cpu_count()} cores")
    mod = matmul(N)
    rng = np.random.default_rng(0)
    a, b = (rng.uniform(-1, 1, (N, N)).astype("float32") for _ in range(2))
    c = np.zeros((N, N), "float32")
    expected = a @ b
    results = []
    for trials in sorted(args.trials):
        start = time.perf_counter()
        db = tune_tir(mod, "llvm", space="auto", max_trials=trials, work_dir=work_dir,
                      plot=args.plot)  # fmt: skip
        spent = time.perf_counter() - start
        lib = tilelang.build(compile_tir(db, mod, "llvm"), "llvm")
        lib["main"](a, b, c)
        np.testing.assert_allclose(c, expected, rtol=1e-3, atol=1e-3)
        kernel = lib["main"]
        # After a BLAS call OpenBLAS's threads spin for a while and, on 2 cores, take
        # them from OpenMP's: a kernel timed right after one runs at half speed.
        time.sleep(1.0)
        results.append((trials, spent, median_time(lambda f=kernel: f(a, b, c))))
    print(f"\n1024^3 float32 matmul, llvm; load average now: {os.getloadavg()}")
    for trials, spent, seconds in results:
        line(f"tuned, {trials} trials ({spent:.0f} s tuning)", seconds)
    hand_path = HERE.parent / "samples" / "matmul_1024_tuned.tir"
    if hand_path.exists():
        hand = tilelang.build(tilelang.parse_file(hand_path), "llvm")
        seconds = median_time(lambda: hand["matmul"](a, b, c))
        line("hand schedule (matmul_1024_tuned.tir)", seconds)
    line("numpy a @ b", median_time(lambda: np.matmul(a, b, out=c)))  # last: see above


if __name__ == "__main__":
    main()
