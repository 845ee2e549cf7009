"""Generated C against NumPy and against hand-written C, in one run.

    python benchmarks/bench_c.py [--number N] [--repeat R]

mm_relu 128 (naive, and SEED §2's scheduled form) and a 1024^3 matmul whose tiled,
vectorised, parallel loop nest is written in .tir (matmul_tiled.tir) and, the same nest,
by hand in C (hand_matmul.c, compiled with the same compiler and flags). The bar:
generated C within 1.1x of the hand-written C.
"""

from __future__ import annotations

import argparse
import ctypes
import tempfile
from pathlib import Path

import numpy as np
from timing import median_time

import tilelang
from tilelang.runtime.compiler import SHARED_FLAGS, run_compiler

HERE = Path(__file__).resolve().parent


def compiled(path: str, target: str = "c"):
    return tilelang.build(tilelang.parse_file(HERE / path), target=target)


def hand_written(work: Path):
    lib_path = work / "hand_matmul.so"
    run_compiler(["-O3", *SHARED_FLAGS, "-o", str(lib_path), str(HERE / "hand_matmul.c")], "hand C")
    fn = ctypes.CDLL(str(lib_path)).hand_matmul
    fn.argtypes = [ctypes.c_void_p] * 3
    fn.restype = None
    return lambda a, b, c: fn(a.ctypes.data, b.ctypes.data, c.ctypes.data)


def report(name, seconds, flops, reference=None, ref_name=""):
    line = f"{name:<34} {seconds * 1e3:9.3f} ms {flops / seconds / 1e9:8.2f} GFLOP/s"
    if reference is not None:
        line += f"   {seconds / reference:5.2f}x {ref_name}"
    print(line)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--number", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    rng = np.random.default_rng(0)

    n = 128
    a, b = (rng.standard_normal((n, n), dtype="float32") for _ in range(2))
    c = np.empty((n, n), "float32")
    expected = np.maximum(a @ b, 0)
    t_numpy = median_time(lambda: np.maximum(a @ b, 0), args.number, args.repeat)
    flops = 2 * n**3
    print(f"mm_relu {n}x{n}x{n}")
    report("numpy (maximum(a @ b, 0))", t_numpy, flops)
    for label, path in (("naive", "mm_relu.tir"), ("scheduled (SEED §2)", "mm_relu_scheduled.tir")):
        fn = compiled(path)["mm_relu"]
        fn(a, b, c)
        np.testing.assert_allclose(c, expected, rtol=1e-4, atol=1e-4)
        report(
            f"generated C, {label}",
            median_time(lambda fn=fn: fn(a, b, c), args.number, args.repeat),
            flops,
            t_numpy,
            "numpy",
        )

    n = 1024
    a, b = (rng.standard_normal((n, n), dtype="float32") for _ in range(2))
    c, c_hand = np.empty((n, n), "float32"), np.empty((n, n), "float32")
    flops = 2 * n**3
    number, repeat = max(1, args.number // 5), args.repeat
    print(f"\nmatmul {n}x{n}x{n} (tiled, vectorised, parallel)")
    t_numpy = median_time(lambda: a @ b, number, repeat)
    report("numpy (a @ b)", t_numpy, flops)
    generated = compiled("matmul_tiled.tir")["matmul"]
    with tempfile.TemporaryDirectory() as work:
        hand = hand_written(Path(work))
        generated(a, b, c)
        hand(a, b, c_hand)
        np.testing.assert_allclose(c, a @ b, rtol=1e-3, atol=1e-3)
        np.testing.assert_allclose(c, c_hand, rtol=1e-5, atol=1e-5)
        t_hand = median_time(lambda: hand(a, b, c_hand), number, repeat)
        t_gen = median_time(lambda: generated(a, b, c), number, repeat)
    report("hand-written C", t_hand, flops, t_numpy, "numpy")
    report("generated C", t_gen, flops, t_numpy, "numpy")
    ratio = t_gen / t_hand
    verdict = "within" if ratio <= 1.1 else "OVER"
    print(f"generated / hand-written: {ratio:.3f}x ({verdict} the 1.1x bar)")


if __name__ == "__main__":
    main()
