"""The llvm backend against NumPy (and the C backend, and TVM when importable), in one run.

    python benchmarks/bench_matmul.py [--number N] [--repeat R] [--target "llvm -num-cores=2"]

Rows, each in ms, GFLOP/s (GB/s for the window sum) and the ratio to NumPy's time:

- mm_relu 128, naive (samples/mm_relu.tir) and with SEED §2's schedule
  (samples/mm_relu_decomposed.tir), through llvm and through C;
- the 1024^3 float32 matmul with a hand schedule in .tir (samples/matmul_1024_tuned.tir:
  packed B, an 8x32 register tile in "local" scope, vectorised, k unrolled, parallel);
- the 1M-element window sum B[i] = A[i] + A[i+1] + A[i+2], parallel and vectorised.

Bars: the 1024 matmul at least as fast as NumPy (aim: 400 GFLOP/s, the nominal AVX-512
peak of 2 cores; the last row gives the fraction of the peak *measured* on this machine by
fma_peak.c, which on AMD Zen 4 is half the nominal figure);
the window sum at most 0.5x NumPy's time; §2's mm_relu through llvm at least as fast as
through C. Other work on the machine makes single numbers noisy: every row is timed in
the same run, and each time is the median of ``repeat`` runs.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from fma_peak import measured_peak_gflops
from timing import median_time

import tilelang

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "samples"

WINDOW = 1 << 20
WINDOW_SUM = f"""
@T.prim_func
def window_sum(A: T.Buffer(({WINDOW + 2},), "float32"), B: T.Buffer(({WINDOW},), "float32")):
    T.func_attr({{"global_symbol": "window_sum", "tir.noalias": True}})
    for io in T.parallel({WINDOW // 4096}):
        for jo in range(256):
            for ji in T.vectorized(16):
                B[io * 4096 + jo * 16 + ji] = (
                    A[io * 4096 + jo * 16 + ji] + A[io * 4096 + jo * 16 + ji + 1]
                    + A[io * 4096 + jo * 16 + ji + 2]
                )
"""


def tilelang_timer(mod, target, name, args, number, repeat):
    lib = tilelang.build(mod, target=target)
    fn = lib[name]
    return median_time(lambda: fn(*args), number, repeat), lib


def tvm_timer(text, name, args, target, number, repeat):
    """TVM's time for the same .tir, or None when TVM is not installed."""
    try:
        import tvm
        from tvm.script import from_source
    except ImportError:
        return None
    try:
        lib = tvm.build(from_source(text), target=target.replace("-num-cores", "--num-cores"))
        nd = [tvm.nd.array(a) for a in args]
        return median_time(lambda: lib[name](*nd), number, repeat)
    except Exception as exc:  # an unsupported spelling must not hide our numbers
        print(f"   (TVM could not build {name}: {type(exc).__name__}: {exc})")
        return None


def row(label, seconds, work, unit, numpy_seconds):
    rate = work / seconds / 1e9
    ratio = f"{seconds / numpy_seconds:6.2f}x NumPy" if numpy_seconds else ""
    print(f"{label:<46} {seconds * 1e3:9.3f} ms {rate:8.1f} {unit:<7} {ratio}")


def bench_mm_relu(target, number, repeat, rng):
    a, b = rng.random((128, 128), "float32"), rng.random((128, 128), "float32")
    c = np.zeros((128, 128), "float32")
    flops = 2 * 128**3
    numpy_time = median_time(lambda: np.maximum(a @ b, 0, out=c), number, repeat)
    row("mm_relu 128: NumPy", numpy_time, flops, "GFLOP/s", numpy_time)
    times = {}
    for sample, label in (("mm_relu", "naive"), ("mm_relu_decomposed", "SEED §2 schedule")):
        mod = tilelang.parse_file(SAMPLES / f"{sample}.tir")
        for tgt in (target, "c"):
            seconds, lib = tilelang_timer(mod, tgt, "mm_relu", (a, b, c), number, repeat)
            np.testing.assert_allclose(c, np.maximum(a @ b, 0), rtol=1e-4)
            times[sample, tgt] = seconds
            row(f"mm_relu 128 {label} [{tgt.split()[0]}]", seconds, flops, "GFLOP/s", numpy_time)
        tvm_seconds = tvm_timer(
            (SAMPLES / f"{sample}.tir").read_text(), "mm_relu", (a, b, c), target, number, repeat
        )
        if tvm_seconds is not None:
            row(f"mm_relu 128 {label} [TVM]", tvm_seconds, flops, "GFLOP/s", numpy_time)
    ratio = times["mm_relu_decomposed", target] / times["mm_relu_decomposed", "c"]
    print(f"   §2 schedule: llvm time / C time = {ratio:.2f} (bar: <= 1)")


def bench_matmul_1024(target, number, repeat, rng):
    n = 1024
    a, b = rng.random((n, n), "float32"), rng.random((n, n), "float32")
    c = np.zeros((n, n), "float32")
    flops = 2 * n**3
    path = SAMPLES / "matmul_1024_tuned.tir"
    seconds, _ = tilelang_timer(
        tilelang.parse_file(path), target, "matmul", (a, b, c), number, repeat
    )
    # NumPy after ours: OpenBLAS's threads spin after a call and would slow ours down.
    np.testing.assert_allclose(c, a @ b, rtol=1e-4)
    numpy_time = median_time(lambda: np.matmul(a, b, out=c), number, repeat)
    row("matmul 1024: NumPy", numpy_time, flops, "GFLOP/s", numpy_time)
    row(f"matmul 1024 hand schedule [{target}]", seconds, flops, "GFLOP/s", numpy_time)
    tvm_seconds = tvm_timer(path.read_text(), "matmul", (a, b, c), target, number, repeat)
    if tvm_seconds is not None:
        row("matmul 1024 hand schedule [TVM]", tvm_seconds, flops, "GFLOP/s", numpy_time)
    peak = measured_peak_gflops()
    print(
        f"   measured fp32 FMA peak of this machine: {peak:.1f} GFLOP/s; hand schedule "
        f"{flops / seconds / 1e9 / peak:.0%} of it, NumPy {flops / numpy_time / 1e9 / peak:.0%}"
    )


def bench_window_sum(target, number, repeat, rng):
    a = rng.random(WINDOW + 2, "float32")
    b = np.zeros(WINDOW, "float32")
    traffic = a.nbytes + b.nbytes  # bytes a single pass must move

    def numpy_in_place():  # NumPy without temporaries: two passes over B
        np.add(a[:-2], a[1:-1], out=b)
        np.add(b, a[2:], out=b)

    numpy_time = median_time(lambda: a[:-2] + a[1:-1] + a[2:], number, repeat)
    in_place_time = median_time(numpy_in_place, number, repeat)
    mod = tilelang.parse(WINDOW_SUM)
    seconds, _ = tilelang_timer(mod, target, "window_sum", (a, b), number, repeat)
    np.testing.assert_allclose(b, a[:-2] + a[1:-1] + a[2:], rtol=1e-6)
    row("window sum 1M: NumPy", numpy_time, traffic, "GB/s", numpy_time)
    row("window sum 1M: NumPy with out=", in_place_time, traffic, "GB/s", numpy_time)
    row(f"window sum 1M [{target}]", seconds, traffic, "GB/s", numpy_time)
    tvm_seconds = tvm_timer(WINDOW_SUM, "window_sum", (a, b), target, number, repeat)
    if tvm_seconds is not None:
        row("window sum 1M [TVM]", tvm_seconds, traffic, "GB/s", numpy_time)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--number", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--target", default="llvm -num-cores=2")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    print(f"target: {args.target}; medians of {args.repeat} runs of {args.number} calls")
    # The window sum runs first: after a BLAS call OpenBLAS's threads spin for a while,
    # and on 2 cores they steal the cores from OpenMP's (a 0.08 ms region took 0.7 ms).
    bench_window_sum(args.target, args.number, args.repeat, rng)
    bench_mm_relu(args.target, args.number, args.repeat, rng)
    bench_matmul_1024(args.target, args.number, args.repeat, rng)


if __name__ == "__main__":
    main()
