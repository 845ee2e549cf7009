"""Tuning the rules space on kernels that are not tiled reductions, in one run: the
transpose, the depthwise convolution (its padding's compute location is drawn) and
the conv2d of bench_default, each next to its default build and NumPy.

    python benchmarks/bench_tune_alone.py [--trials 16] [--scale 0.5] [--target llvm]
                                          [--work-dir DIR]

``space="rules"`` (tilelang/tune/space_rules.py) measures the default build's schedule
first, then candidates drawn around it: the transpose's tile and vector width,
parallel or serial, the padding computed at a loop of the convolution's nest, at the
root or inlined, and the tiling sizes. The tuned and default kernels are timed side by
side at the end (ratio default / tuned); the load average is printed, since timings
on a shared machine move with it.
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
from tilelang.testing import default_workloads as W
from tilelang.tune import compile_tir, tune_tir

NUMPY = {
    "transpose": lambda x, out: np.copyto(out, x.T),
}


def _time_side_by_side(workload, default, tuned, arguments) -> dict:
    times = {
        "default": median_time(lambda: default(*arguments)),
        "tuned": median_time(lambda: tuned(*arguments)),
    }
    if workload.name in NUMPY:
        times["numpy"] = median_time(lambda: NUMPY[workload.name](*arguments))
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=16)
    parser.add_argument("--scale", type=float, default=0.5, help="size scale of the workloads")
    parser.add_argument("--target", default="llvm")
    parser.add_argument("--work-dir", default=None)
    args = parser.parse_args()
    work_root = Path(args.work_dir or tempfile.mkdtemp(prefix="bench-tune-alone-"))
    print(f"load average at start: {os.getloadavg()}; {os.cpu_count()} cores")
    side = max(64, int(2048 * args.scale) // 64 * 64)
    channels = max(8, int(64 * args.scale) // 8 * 8)
    workloads = [
        W.transpose(side, side),
        W.depthwise_conv2d(channels, 56, 56),
        W.conv2d(channels, channels, 56, 56),
    ]
    rows = []
    for workload in workloads:
        mod = tilelang.parse(workload.tir)
        start = time.perf_counter()
        db = tune_tir(mod, args.target, space="rules", max_trials=args.trials,
                      work_dir=work_root / workload.name, progress=False,
                      cost_model=None)  # fmt: skip
        spent = time.perf_counter() - start
        tuned = tilelang.build(compile_tir(db, mod, args.target), args.target)[workload.name]
        default = tilelang.build(mod, args.target)[workload.name]
        arguments = workload.arguments(seed=0)
        tuned(*arguments)
        np.testing.assert_allclose(
            arguments[-1], workload.reference(*arguments[:-1]), rtol=1e-3, atol=1e-3
        )
        time.sleep(0.5)
        times = _time_side_by_side(workload, default, tuned, arguments)
        rows.append((workload.name, spent, times))
    print(f"\nspace='rules', {args.trials} trials, {args.target}; load average now: "
          f"{os.getloadavg()}")  # fmt: skip
    print(
        f"{'kernel':<12} {'tuning':>8} {'default':>11} {'tuned':>11} {'numpy':>11} {'def/tuned':>9}"
    )
    for name, spent, t in rows:
        numpy = f"{t['numpy'] * 1e3:8.3f} ms" if "numpy" in t else f"{'-':>11}"
        print(
            f"{name:<12} {spent:7.0f}s {t['default'] * 1e3:8.3f} ms {t['tuned'] * 1e3:8.3f} ms"
            f" {numpy} {t['default'] / t['tuned']:8.2f}x"
        )


if __name__ == "__main__":
    main()
