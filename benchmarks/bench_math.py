"""Vectorised float32 math in the LLVM backend against libm per element and NumPy.

    python benchmarks/bench_math.py [--number N] [--repeat R]

Elementwise ``exp``/``tanh``/``sigmoid``/``log`` over 1M float32, each built three ways
in one run: the backend's inline kernels (``T.exp``, vectorised 16 wide), the same loop
calling libm's ``expf``... through ``T.call_extern`` (what the backend emitted before
the kernels: one scalar call per element), and NumPy. Then a row softmax 4096x1024
with a hand schedule (four blocks computed per row, exp and normalise vectorised), the
same schedule with ``-fast-math`` (which lets LLVM vectorise the max/sum reductions),
against NumPy. Single thread. Times are medians of ``repeat`` runs; the machine is
shared, so read the ratios, not the absolute figures.
"""

from __future__ import annotations

import argparse

import numpy as np
from timing import median_time

import tilelang

ELEMENTWISE = """
@T.prim_func
def f(A: T.Buffer(({n},), "float32"), C: T.Buffer(({n},), "float32")):
    T.func_attr({{"tir.noalias": True}})
    for i in range({n}):
        with T.block("C"):
            vi = T.axis.spatial({n}, i)
            C[vi] = {call}
"""

SOFTMAX = """
@T.prim_func
def softmax(A: T.Buffer((4096, 1024), "float32"), B: T.Buffer((4096, 1024), "float32")):
    T.func_attr({"tir.noalias": True})
    M = T.alloc_buffer((4096,))
    E = T.alloc_buffer((4096, 1024))
    S = T.alloc_buffer((4096,))
    for i, k in T.grid(4096, 1024):
        with T.block("M"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                M[vi] = T.float32(-3.4028234663852886e38)
            M[vi] = T.max(M[vi], A[vi, vk])
    for i, k in T.grid(4096, 1024):
        with T.block("E"):
            vi, vk = T.axis.remap("SS", [i, k])
            E[vi, vk] = T.exp(A[vi, vk] - M[vi])
    for i, k in T.grid(4096, 1024):
        with T.block("S"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                S[vi] = T.float32(0)
            S[vi] = S[vi] + E[vi, vk]
    for i, k in T.grid(4096, 1024):
        with T.block("B"):
            vi, vk = T.axis.remap("SS", [i, k])
            B[vi, vk] = E[vi, vk] / S[vi]
"""

NUMPY = {
    "exp": np.exp,
    "tanh": np.tanh,
    "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
    "log": np.log,
}
LIBM = {"exp": "expf", "tanh": "tanhf", "log": "logf"}


def vectorised(mod, block, lanes=16):
    sch = tilelang.Schedule(mod)
    (loop,) = sch.get_loops(sch.get_block(block))
    _, inner = sch.split(loop, [None, lanes])
    sch.vectorize(inner)
    return sch.mod


def elementwise(name, n, libm=False):
    if libm:
        call = f'T.call_extern("float32", "{LIBM[name]}", A[vi])'
    else:
        call = f"T.{name}(A[vi])"
    mod = tilelang.parse(ELEMENTWISE.format(n=n, call=call))
    return tilelang.build(vectorised(mod, "C"), target="llvm -num-cores=1")["f"]


def scheduled_softmax(target):
    """The hand schedule: every block computed inside the row loop of ``B``; exp and
    the normalisation vectorised 16 wide."""
    sch = tilelang.Schedule(tilelang.parse(SOFTMAX))
    row = sch.get_loops(sch.get_block("B"))[0]
    for name in ("S", "E", "M"):
        sch.compute_at(sch.get_block(name), row)
    for name in ("E", "B"):
        inner = sch.get_loops(sch.get_block(name))[-1]
        _, lanes = sch.split(inner, [None, 16])
        sch.vectorize(lanes)
    return tilelang.build(sch.mod, target=target)["softmax"]


def numpy_softmax(a):
    e = np.exp(a - a.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--number", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    n = 1 << 20
    x = rng.uniform(-10, 10, n).astype("float32")
    out = np.empty_like(x)
    timed = lambda fn: median_time(fn, args.number, args.repeat)  # noqa: E731
    print(f"elementwise over {n} float32 (ms, median of {args.repeat}; ratio to NumPy)")
    print(f"{'':10}{'kernels':>10}{'libm/elem':>11}{'numpy':>9}{'kern/np':>9}{'libm/kern':>11}")
    for name, reference in NUMPY.items():
        xs = np.abs(x) + 1e-3 if name == "log" else x
        fn = elementwise(name, n)
        fn(xs, out)
        np.testing.assert_allclose(out, reference(xs), rtol=1e-6, atol=1e-30)
        t_kernel = timed(lambda fn=fn, xs=xs: fn(xs, out))
        t_numpy = timed(lambda reference=reference, xs=xs: reference(xs))
        t_libm = float("nan")
        if name in LIBM:
            libm = elementwise(name, n, libm=True)
            t_libm = timed(lambda libm=libm, xs=xs: libm(xs, out))
        print(
            f"{name:10}{t_kernel * 1e3:10.3f}{t_libm * 1e3:11.3f}{t_numpy * 1e3:9.3f}"
            f"{t_kernel / t_numpy:9.2f}{t_libm / t_kernel:11.2f}"
        )

    a = rng.standard_normal((4096, 1024), dtype="float32")
    b = np.empty_like(a)
    expected = numpy_softmax(a)
    number = max(1, args.number // 5)
    t_numpy = median_time(lambda: numpy_softmax(a), number, args.repeat)
    print("\nrow softmax 4096x1024, hand schedule (ms; ratio to NumPy)")
    print(f"{'numpy':34}{t_numpy * 1e3:9.3f}")
    for label, target in (
        ("llvm", "llvm -num-cores=1"),
        ("llvm -fast-math", "llvm -num-cores=1 -fast-math"),
    ):
        fn = scheduled_softmax(target)
        fn(a, b)
        np.testing.assert_allclose(b, expected, rtol=1e-5, atol=1e-9)
        t = median_time(lambda fn=fn: fn(a, b), number, args.repeat)
        print(f"{label:34}{t * 1e3:9.3f}{t / t_numpy:9.2f}x")


if __name__ == "__main__":
    main()
