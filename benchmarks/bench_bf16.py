"""bfloat16 matmul into float32 tensorized with AVX-512 BF16, next to the default
(untensorized) schedule of the same computation, tilelang's default float32 matmul,
NumPy float32 and PyTorch bfloat16 (when installed), as a fraction of the measured
bfloat16 peak.

    python benchmarks/bench_bf16.py [--sizes 512 1024] [--repeat R]

``C[M, N] (float32) = A[M, K] (bfloat16) . B[N, K]^T (bfloat16)`` on one core:

- ``vdpbf16ps (llvm)`` / ``(c)``: samples/bf16_matmul.py's schedule, the 4x32xK tile
  tensorized with ``tilelang.intrinsics.x86.bf16_gemm``, B pre-packed in pairs of k
  (packing is not timed, as for weights);
- ``default rules bf16 (llvm)``: the same computation over B as (K, N), built with
  tilelang's default CPU schedule (bfloat16 widened to float32 in registers);
- ``default rules fp32 (llvm)``: the float32 matmul, default schedule;
- ``numpy fp32``: ``A @ B.T`` on float32 copies (NumPy has no bfloat16 GEMM);
- ``torch bf16``: ``torch.mm`` on bfloat16 tensors (float32 result cast not timed).

The last column is the fraction of the bfloat16 peak one core sustains in a vdpbf16ps
loop (benchmarks/fma_peak.py, bf16_peak.c). Run with ``OMP_NUM_THREADS=1``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
from fma_peak import measured_bf16_peak_gflops
from timing import median_time

import tilelang
from tilelang.ir import bfloat16

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "samples"))
import bf16_matmul  # noqa: E402  (the sample is the schedule under test)

PLAIN = """
@T.prim_func
def main(A: T.Buffer(({m}, {k}), "{t}"), B: T.Buffer(({k}, {n}), "{t}"), C: T.Buffer(({m}, {n}), "float32")):
    T.func_attr({{"global_symbol": "main", "tir.noalias": True}})
    for i, j, k in T.grid({m}, {n}, {k}):
        with T.block("matmul"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + T.Cast("float32", A[vi, vk]) * T.Cast("float32", B[vk, vj])
"""


def run(size: int, repeat: int, peak: float) -> None:
    rng = np.random.default_rng(0)
    a = bfloat16.to_bits(rng.standard_normal((size, size)).astype(np.float32))
    b = bfloat16.to_bits(rng.standard_normal((size, size)).astype(np.float32))
    af, bf = bfloat16.from_bits(a), bfloat16.from_bits(b)
    exact = af.astype(np.float64) @ bf.astype(np.float64).T
    flops = 2.0 * size**3
    rows = []

    def timed(label, fn, out=None):
        seconds = median_time(fn, repeat=repeat)
        if out is not None:  # float32 sums in different orders: a relative bound
            np.testing.assert_allclose(out, exact, rtol=0, atol=1e-5 * size)
        rows.append((label, seconds))

    packed = bf16_matmul.pack_b(b)
    sch = bf16_matmul.tensorized(size, size, size)
    for target in ("llvm", "c"):
        fn, c = tilelang.build(sch.mod, target=target)["main"], np.zeros((size, size), np.float32)
        timed(f"vdpbf16ps ({target})", lambda fn=fn, c=c: fn(a, packed, c), c)
    bt = np.ascontiguousarray(b.T)
    for dtype, args in (("bfloat16", (a, bt)), ("float32", (af, np.ascontiguousarray(bf.T)))):
        text = PLAIN.format(m=size, n=size, k=size, t=dtype)
        fn = tilelang.build(tilelang.parse(text), target="llvm")["main"]
        c = np.zeros((size, size), np.float32)
        label = "default rules " + ("bf16" if dtype == "bfloat16" else "fp32") + " (llvm)"
        timed(label, lambda fn=fn, c=c, args=args: fn(*args, c), c)
    bf_t = np.ascontiguousarray(bf.T)
    timed("numpy fp32", lambda: af @ bf_t)
    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None:
        ta = torch.from_numpy(af).to(torch.bfloat16)
        tb = torch.from_numpy(bf_t).to(torch.bfloat16)
        timed("torch bf16 mm", lambda: torch.mm(ta, tb))
    else:
        print("  (torch not installed: no PyTorch row)")
    base = dict(rows)["numpy fp32"]
    print(f"{size}^3 bfloat16 x bfloat16 -> float32, one core")
    for label, seconds in rows:
        gflops = flops / seconds / 1e9
        fraction = f"{gflops / peak:6.1%}" if peak else "   n/a"
        print(f"  {label:28s} {seconds * 1e3:9.2f} ms {gflops:8.1f} GFLOP/s "
              f"{base / seconds:7.2f}x numpy  {fraction} of bf16 peak")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[512, 1024])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    peak = measured_bf16_peak_gflops(1)
    print(f"bf16 peak (bf16_peak.c, one core): {peak:.1f} GFLOP/s")
    if not peak:
        print("AVX-512 BF16 not available: nothing to measure")
        return
    for size in args.sizes:
        run(size, args.repeat, peak)


if __name__ == "__main__":
    main()
