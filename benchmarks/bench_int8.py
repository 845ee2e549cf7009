"""int8 matmul tensorized with AVX-512 VNNI, next to the best untensorized schedule,
NumPy (int32) and PyTorch (when installed), as a fraction of the measured int8 peak.

    python benchmarks/bench_int8.py [--sizes 512 1024] [--repeat R]

``C[M, N] (int32) = A[M, K] (uint8) . B[N, K]^T (int8)`` on one core:

- ``vnni (llvm)`` / ``vnni (c)``: samples/int8_matmul.py's schedule, the 4x64xK tile
  tensorized with ``tilelang.intrinsics.x86.vnni_gemm`` (``vpdpbusd`` micro-kernel),
  with B pre-packed in the VNNI panel layout (packing is not timed, as for weights);
- ``untensorized (llvm)``: the same computation over B as (K, N), tiled 4x64, the 64
  columns vectorised and the 4 rows unrolled, left to LLVM's vectoriser;
- ``numpy int32``: ``A.astype(int32) @ B.T.astype(int32)`` (NumPy has no int8 GEMM);
- ``torch``: ``torch._int_mm`` when PyTorch is installed (else the row is skipped).

The last column is the fraction of the int8 peak one core sustains in a VNNI loop
(benchmarks/fma_peak.py, vnni_peak.c); the goal for the VNNI rows is >= 50%.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
from fma_peak import measured_int8_peak_gops
from timing import median_time

import tilelang

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "samples"))
import int8_matmul  # noqa: E402  (the sample is the schedule under test)

PLAIN = """
@T.prim_func
def main(A: T.Buffer(({m}, {k}), "uint8"), B: T.Buffer(({k}, {n}), "int8"), C: T.Buffer(({m}, {n}), "int32")):
    T.func_attr({{"global_symbol": "main", "tir.noalias": True}})
    for i, j, k in T.grid({m}, {n}, {k}):
        with T.block("matmul"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = 0
            C[vi, vj] = C[vi, vj] + T.Cast("int32", A[vi, vk]) * T.Cast("int32", B[vk, vj])
"""


def untensorized(m, n, k):
    """The best plain schedule found by hand: 4x64 register tile, j vectorised."""
    sch = tilelang.Schedule(tilelang.parse(PLAIN.format(m=m, n=n, k=k)))
    i, j, r = sch.get_loops("matmul")
    i0, i1 = sch.split(i, [None, 4])
    j0, j1 = sch.split(j, [None, 64])
    sch.reorder(j0, i0, r, i1, j1)
    sch.unroll(i1)
    sch.vectorize(j1)  # loop kinds first: the update split off alone is not a reduction
    sch.decompose_reduction("matmul", r)
    return sch


def run(size: int, repeat: int, peak: float) -> None:
    rng = np.random.default_rng(0)
    a = rng.integers(0, 256, (size, size), dtype=np.uint8)
    b = rng.integers(-128, 128, (size, size), dtype=np.int8)
    expected = a.astype(np.int32) @ b.astype(np.int32).T
    ops = 2.0 * size**3
    rows = []

    def timed(label, fn, out=None, repeat=repeat):
        seconds = median_time(fn, repeat=repeat)
        if out is not None:
            np.testing.assert_array_equal(out, expected)
        rows.append((label, seconds))

    packed = int8_matmul.pack_b(b)
    vnni = int8_matmul.tensorized(size, size, size)
    for target in ("llvm", "c"):
        fn, c = tilelang.build(vnni.mod, target=target)["main"], np.zeros((size, size), np.int32)
        timed(f"vnni ({target})", lambda fn=fn, c=c: fn(a, packed, c), c)
    plain = tilelang.build(untensorized(size, size, size).mod, target="llvm")["main"]
    c, bt = np.zeros((size, size), np.int32), np.ascontiguousarray(b.T)
    timed("untensorized (llvm)", lambda: plain(a, bt, c), c)
    a32, b32 = a.astype(np.int32), b.astype(np.int32).T.copy()
    timed("numpy int32", lambda: a32 @ b32, repeat=1)  # seconds per call: once is enough
    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None and hasattr(torch, "_int_mm"):
        ta, tb = torch.from_numpy(a.astype(np.int8)), torch.from_numpy(b.T.copy())
        timed("torch _int_mm (int8 x int8)", lambda: torch._int_mm(ta, tb))
    else:
        print("  (torch not installed: no PyTorch row)")
    base = dict(rows)["numpy int32"]
    print(f"{size}^3 uint8 x int8 -> int32, one core")
    for label, seconds in rows:
        gops = ops / seconds / 1e9
        fraction = f"{gops / peak:6.1%}" if peak else "   n/a"
        print(f"  {label:28s} {seconds * 1e3:9.2f} ms {gops:8.1f} GOP/s "
              f"{base / seconds:7.2f}x numpy  {fraction} of int8 peak")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[512, 1024])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    peak = measured_int8_peak_gops(1)
    print(f"int8 VNNI peak (vnni_peak.c, one core): {peak:.1f} GOP/s")
    for size in args.sizes:
        run(size, args.repeat, peak)


if __name__ == "__main__":
    main()
