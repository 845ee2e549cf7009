"""Automatic scheduling of the 1024^3 float32 matmul on llvm, next to NumPy and the
hand schedule, in one run.

    python benchmarks/bench_tune.py [--trials 64 256] [--size 1024] [--models none auto]
                                    [--spaces auto] [--confirm 3] [--work-dir DIR]
                                    [--plot curve.png]

For each space (``auto``: the default rules' space or the generic one, starting from
the default build; ``rules``: the default rules with sampled sizes; ``generic``: the
multi-level-tiling space), each cost model (``none``: random + evolutionary search;
``auto``: the learned model ranking 8x more candidates than are measured) and each
trial budget (cumulative: the 256-trial run continues the 64-trial one's database),
tunes and prints the tuning time, the best kernel's GFLOP/s, the default build's
(``tilelang.build`` with the rules), NumPy's (``a @ b``) and
samples/matmul_1024_tuned.tir's (the hand-written BLAS-like schedule). The bar: at
least NumPy; the aim: 400 GFLOP/s. ``--confirm N`` re-times the N best candidates
and the default build's schedule side by side at the end of each run (0: off).
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


def line(name, seconds, flop):
    print(f"{name:<52} {seconds * 1e3:9.3f} ms {flop / seconds / 1e9:8.1f} GFLOP/s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, nargs="+", default=[64, 256])
    parser.add_argument("--size", type=int, default=1024)
    parser.add_argument("--models", nargs="+", default=["none", "auto"])
    parser.add_argument("--spaces", nargs="+", default=["auto"],
                        choices=["auto", "rules", "generic"])  # fmt: skip
    parser.add_argument("--confirm", type=int, default=3)
    parser.add_argument("--work-dir", default=None)
    parser.add_argument("--plot", default=None)
    args = parser.parse_args()
    work_root = Path(args.work_dir or tempfile.mkdtemp(prefix="bench-tune-"))
    print(f"load average at start: {os.getloadavg()}; {os.cpu_count()} cores")
    n = args.size
    flop = 2 * n**3
    mod = matmul(n)
    rng = np.random.default_rng(0)
    a, b = (rng.uniform(-1, 1, (n, n)).astype("float32") for _ in range(2))
    c = np.zeros((n, n), "float32")
    expected = a @ b
    results = []
    runs = [(s, m, t) for s in args.spaces for m in args.models for t in sorted(args.trials)]
    for space, model, trials in runs:
        start = time.perf_counter()
        db = tune_tir(mod, "llvm", space=space, max_trials=trials,
                      work_dir=work_root / f"{space}-{model}", plot=args.plot,
                      cost_model=None if model == "none" else model,
                      confirm=args.confirm)  # fmt: skip
        spent = time.perf_counter() - start
        lib = tilelang.build(compile_tir(db, mod, "llvm"), "llvm")
        lib["main"](a, b, c)
        np.testing.assert_allclose(c, expected, rtol=1e-3, atol=1e-3)
        kernel = lib["main"]
        # After a BLAS call OpenBLAS's threads spin for a while and, on 2 cores, take
        # them from OpenMP's: a kernel timed right after one runs at half speed.
        time.sleep(1.0)
        seconds = median_time(lambda f=kernel: f(a, b, c))
        results.append((space, model, trials, spent, seconds))
    print(f"\n{n}^3 float32 matmul, llvm; load average now: {os.getloadavg()}")
    for space, model, trials, spent, seconds in results:
        line(f"{space} space, {trials} trials, model {model} ({spent:.0f} s)", seconds, flop)
    default = tilelang.build(mod, "llvm")["main"]
    line("default build (the rules)", median_time(lambda: default(a, b, c)), flop)
    hand_path = HERE.parent / "samples" / "matmul_1024_tuned.tir"
    if hand_path.exists() and n == 1024:
        hand = tilelang.build(tilelang.parse_file(hand_path), "llvm")
        seconds = median_time(lambda: hand["matmul"](a, b, c))
        line("hand schedule (matmul_1024_tuned.tir)", seconds, flop)
    line("numpy a @ b", median_time(lambda: np.matmul(a, b, out=c)), flop)  # last: see above


if __name__ == "__main__":
    main()
