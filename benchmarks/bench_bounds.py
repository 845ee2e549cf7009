"""What ``bounds_check=True`` (``tilec --bounds-check``) costs, side by side in one run.

    python benchmarks/bench_bounds.py [--number N] [--repeat R]

Two kernels on the c and llvm backends, each built without and with run-time bounds
checks: the 1024^3 tiled matmul of bench_c.py (every index affine in its loops, so the
checks are proven away at compile time) and a 4M-element gather ``B[i] = A[idx[i]]``
whose index is data: it is checked on every iteration.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from timing import median_time

import tilelang

HERE = Path(__file__).resolve().parent

GATHER = """
@T.prim_func
def gather(a: T.handle, i: T.handle, b: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (n,), "float32")
    idx = T.match_buffer(i, (n,), "int32")
    B = T.match_buffer(b, (n,), "float32")
    for k in range(n):
        B[k] = A[idx[k]]
"""


def row(name, unchecked, checked, checks):
    print(f"{name:<26} {unchecked * 1e3:9.3f} ms {checked * 1e3:9.3f} ms "
          f"{checked / unchecked:6.2f}x   {checks} check(s) in the code")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--number", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    n = 1024
    a, b = (rng.standard_normal((n, n), dtype="float32") for _ in range(2))
    c = np.empty((n, n), "float32")
    size = 1 << 22
    src = rng.standard_normal(size, dtype="float32")
    idx = rng.integers(0, size, size, dtype="int32")
    out = np.empty(size, "float32")
    print(f"{'kernel':<26} {'unchecked':>12} {'checked':>12} {'ratio':>7}")
    cases = (
        ("matmul 1024^3 tiled", tilelang.parse_file(HERE / "matmul_tiled.tir"), "matmul",
         (a, b, c)),
        ("gather 4M", tilelang.parse(GATHER), "gather", (src, idx, out)),
    )  # fmt: skip
    for target in ("c", "llvm"):
        for label, mod, name, arrays in cases:
            times, checks = [], 0
            for bounds_check in (False, True):
                lib = tilelang.build(mod, target=target, bounds_check=bounds_check)
                fn = lib[name]
                times.append(
                    median_time(lambda fn=fn, arrays=arrays: fn(*arrays), args.number, args.repeat)
                )
                if bounds_check:
                    lowered = tilelang.lower(mod, bounds_check=True)
                    checks = lowered.script().count("tl.bounds_error")
            row(f"{label} ({target})", times[0], times[1], checks)


if __name__ == "__main__":
    main()
